// The YAML document model: what it accepts, what it refuses, and that the
// emitter's numbers read back exactly.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "pollux/yaml_doc.h"

namespace pollux::yaml {
namespace {

TEST(YamlParse, BuildsMapsSequencesAndScalars) {
  std::string err;
  const auto n = parse("a: 1\nb: [x, 'y']\nc:\n  d: true\n", err);
  ASSERT_TRUE(n) << err;
  ASSERT_EQ(n->kind, Node::Kind::kMap);
  ASSERT_EQ(n->map.size(), 3u);
  EXPECT_EQ(n->find("a")->scalar, "1");
  EXPECT_EQ(n->find("b")->seq.size(), 2u);
  EXPECT_TRUE(n->find("b")->seq[0].plain);
  EXPECT_FALSE(n->find("b")->seq[1].plain);
  EXPECT_EQ(n->find("c")->find("d")->scalar, "true");
  EXPECT_EQ(n->find("c")->line, 4);
  EXPECT_EQ(n->find("zzz"), nullptr);
}

struct Refusal {
  const char* text;
  const char* reason;
};

TEST(YamlParse, RefusesWhatUntrustedInputMustNotUse) {
  const Refusal cases[] = {
      {"a: &x 1\nb: *x\n", "anchors are not allowed"},
      {"a: *x\n", "line 1"},  // undefined alias: libyaml or we refuse
      {"a: !!str 1\n", "tags are not allowed"},
      {"a: !foo {b: 1}\n", "tags are not allowed"},
      {"a: 1\na: 2\n", "line 2: duplicate key 'a'"},
      {"[1]: 2\n", "map keys must be scalars"},
      {"a: 1\n---\nb: 2\n", "more than one document"},
      {"", "empty document"},
      {"a: [1, 2\n", "line"},
      {"a: [[[[[[[[[1]]]]]]]]]\n", "nested too deeply"},
  };
  for (const Refusal& c : cases) {
    std::string err;
    EXPECT_FALSE(parse(c.text, err)) << c.text;
    EXPECT_NE(err.find(c.reason), std::string::npos) << c.text << " -> " << err;
  }
}

TEST(YamlParse, StopsAtTheNodeAndScalarLimits) {
  std::string many = "a: [";
  for (int i = 0; i < 100; ++i) many += "1, ";
  many += "1]\n";
  std::string err;
  ParseLimits limits;
  limits.max_nodes = 50;
  EXPECT_FALSE(parse(many, err, limits));
  EXPECT_NE(err.find("too many nodes"), std::string::npos) << err;
  limits = ParseLimits{};
  limits.max_scalar = 10;
  EXPECT_FALSE(parse("a: 12345678901\n", err, limits));
  EXPECT_NE(err.find("scalar too long"), std::string::npos) << err;
}

TEST(YamlEmit, NumbersReadBackExactly) {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> exp_dist(-300, 300);
  for (int i = 0; i < 2000; ++i) {
    const double v = std::pow(10.0, exp_dist(rng)) * (rng() % 2 ? 1 : -1);
    Emitter e;
    e.begin_map();
    e.plain("v");
    e.number(v);
    e.end_map();
    std::string err;
    const auto n = parse(e.finish(), err);
    ASSERT_TRUE(n) << err;
    MapReader r(*n, "");
    EXPECT_EQ(r.real("v", -std::numeric_limits<double>::max(), std::numeric_limits<double>::max()), v);
    EXPECT_TRUE(r.finish()) << r.error();
  }
}

TEST(YamlEmit, StringsAreQuotedAndSurvive) {
  Emitter e;
  e.begin_map();
  e.plain("s");
  e.string("true: it's #1\n");
  e.end_map();
  const std::string text = e.finish();
  std::string err;
  const auto n = parse(text, err);
  ASSERT_TRUE(n) << err;
  EXPECT_EQ(n->find("s")->scalar, "true: it's #1\n");
  EXPECT_FALSE(n->find("s")->plain);
}

TEST(MapReader, KeepsTheFirstErrorAndNamesThePath) {
  std::string err;
  const auto n = parse("outer:\n  x: 1\n  y: two\n  z: [1]\n", err);
  ASSERT_TRUE(n) << err;
  MapReader inner(*n->find("outer"), "outer");
  EXPECT_EQ(inner.integer("x", 0, 0), 0);  // out of range
  inner.integer("y", 0, 10);               // would fail too
  EXPECT_EQ(inner.error(), "line 2: outer.x: 1 is out of range [0, 0]");
}

TEST(MapReader, ChecksKindsAndUnknownKeys) {
  std::string err;
  const auto n = parse("a: [1]\nb: {c: 1}\nd: 1\n", err);
  ASSERT_TRUE(n) << err;
  {
    MapReader r(*n, "");
    r.real("a", 0, 1);
    EXPECT_NE(r.error().find("a: expected a scalar, found a sequence"), std::string::npos) << r.error();
  }
  {
    MapReader r(*n, "");
    EXPECT_NE(r.seq("a", 1), nullptr);
    EXPECT_NE(r.map("b"), nullptr);
    EXPECT_FALSE(r.finish());
    EXPECT_NE(r.error().find("d: unknown key"), std::string::npos) << r.error();
  }
  {
    MapReader r(*n, "");
    EXPECT_EQ(r.seq("a", 0), nullptr);
    EXPECT_NE(r.error().find("a: 1 items, more than 0"), std::string::npos) << r.error();
  }
}

}  // namespace
}  // namespace pollux::yaml
