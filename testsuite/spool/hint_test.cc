// parse_hint / emit_hint: round trips and every rejection path of the
// validation (doc/hint-format.md, "Validation").
#include <gtest/gtest.h>

#include <string>

#include "pollux/hint.h"
#include "spool_test_util.h"

namespace pollux {
namespace {

using test::full_hint;
using test::minimal_hint;
using test::typed_hint;

void expect_same(const Hint& a, const Hint& b) {
  EXPECT_EQ(a.version, b.version);
  EXPECT_EQ(a.job_id, b.job_id);
  EXPECT_EQ(a.uid, b.uid);
  EXPECT_EQ(a.timestamp, b.timestamp);
  EXPECT_EQ(a.restart_count, b.restart_count);
  EXPECT_EQ(a.limits.init_batch, b.limits.init_batch);
  EXPECT_EQ(a.limits.max_batch, b.limits.max_batch);
  EXPECT_EQ(a.limits.min_atomic, b.limits.min_atomic);
  EXPECT_EQ(a.limits.max_atomic, b.limits.max_atomic);
  EXPECT_EQ(a.limits.accumulation, b.limits.accumulation);
  ASSERT_EQ(a.perf.has_value(), b.perf.has_value());
  if (a.perf) {
    EXPECT_EQ(a.perf->to_array(), b.perf->to_array());
  }
  ASSERT_EQ(a.grad.has_value(), b.grad.has_value());
  if (a.grad) {
    EXPECT_EQ(a.grad->sqr, b.grad->sqr);
    EXPECT_EQ(a.grad->var, b.grad->var);
  }
  EXPECT_EQ(a.config.nodes, b.config.nodes);
  EXPECT_EQ(a.config.replicas, b.config.replicas);
  EXPECT_EQ(a.config.atomic_batch, b.config.atomic_batch);
  EXPECT_EQ(a.config.accum_steps, b.config.accum_steps);
  EXPECT_EQ(a.progress, b.progress);
  EXPECT_EQ(a.step, b.step);
  EXPECT_EQ(a.max_profiled_replicas, b.max_profiled_replicas);
  ASSERT_EQ(a.profile.size(), b.profile.size());
  for (std::size_t i = 0; i < a.profile.size(); ++i) {
    EXPECT_EQ(a.profile[i].nodes, b.profile[i].nodes);
    EXPECT_EQ(a.profile[i].replicas, b.profile[i].replicas);
    EXPECT_EQ(a.profile[i].atomic_batch, b.profile[i].atomic_batch);
    EXPECT_EQ(a.profile[i].grad_time, b.profile[i].grad_time);
    EXPECT_EQ(a.profile[i].step_time, b.profile[i].step_time);
  }
  ASSERT_EQ(a.checkpoint.has_value(), b.checkpoint.has_value());
  if (a.checkpoint) {
    EXPECT_EQ(a.checkpoint->step, b.checkpoint->step);
    EXPECT_EQ(a.checkpoint->time, b.checkpoint->time);
    EXPECT_EQ(a.checkpoint->ready_for_requeue, b.checkpoint->ready_for_requeue);
  }
  EXPECT_EQ(a.resize_signal, b.resize_signal);
  EXPECT_EQ(a.restart_seconds, b.restart_seconds);
  EXPECT_EQ(a.gpu_type, b.gpu_type);
  ASSERT_EQ(a.type_perf.size(), b.type_perf.size());
  for (std::size_t i = 0; i < a.type_perf.size(); ++i) {
    EXPECT_EQ(a.type_perf[i].gpu_type, b.type_perf[i].gpu_type);
    EXPECT_EQ(a.type_perf[i].perf.to_array(), b.type_perf[i].perf.to_array());
  }
}

TEST(HintRoundTrip, FullHintParsesBackIdentically) {
  const Hint h = full_hint();
  const std::string text = emit_hint(h);
  const HintResult r = parse_hint(text);
  ASSERT_TRUE(r) << r.error << "\n" << text;
  expect_same(h, *r.hint);
  EXPECT_EQ(emit_hint(*r.hint), text);
}

TEST(HintRoundTrip, MinimalHintWithoutOptionalSections) {
  const Hint h = minimal_hint();
  const std::string text = emit_hint(h);
  EXPECT_EQ(text.find("perf:"), std::string::npos);
  EXPECT_EQ(text.find("grad:"), std::string::npos);
  EXPECT_EQ(text.find("checkpoint:"), std::string::npos);
  EXPECT_EQ(text.find("resize_signal:"), std::string::npos);  // no agent listens: moldable
  EXPECT_EQ(text.find("restart_seconds:"), std::string::npos);  // not measured: as an older agent writes
  const HintResult r = parse_hint(text);
  ASSERT_TRUE(r) << r.error;
  expect_same(h, *r.hint);
}

TEST(HintRoundTrip, TypedHintParsesBackIdentically) {
  const Hint h = typed_hint();
  const std::string text = emit_hint(h);
  EXPECT_NE(text.find("\ngpu_type: nvidia_h100_80gb_hbm3\nperf:\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\ntype_perf:\n- gpu_type: a100\n  perf:\n    alpha_c: 0.025\n"), std::string::npos) << text;
  const HintResult r = parse_hint(text);
  ASSERT_TRUE(r) << r.error << "\n" << text;
  expect_same(h, *r.hint);
  EXPECT_EQ(emit_hint(*r.hint), text);
}

// Without a type the file is what it was before the fields existed, so an
// older plugin reads it.
TEST(HintRoundTrip, UntypedHintHasNoTypeFields) {
  const std::string text = emit_hint(full_hint());
  EXPECT_EQ(text.find("gpu_type"), std::string::npos) << text;
  EXPECT_EQ(text.find("type_perf"), std::string::npos) << text;
}

// Names YAML would read as something else are quoted, and read back.
TEST(HintRoundTrip, TypeNamesThatLookLikeNumbersOrBooleansAreQuoted) {
  Hint h = typed_hint();
  h.gpu_type = "1080";
  h.type_perf[0].gpu_type = "true";
  h.type_perf[1].gpu_type = ".5";
  const std::string text = emit_hint(h);
  EXPECT_NE(text.find("gpu_type: '1080'"), std::string::npos) << text;
  EXPECT_NE(text.find("gpu_type: 'true'"), std::string::npos) << text;
  const HintResult r = parse_hint(text);
  ASSERT_TRUE(r) << r.error << "\n" << text;
  expect_same(h, *r.hint);
}

TEST(HintRoundTrip, AllTypesWithoutACurrentOne) {
  Hint h = typed_hint();
  h.gpu_type.clear();  // a CPU run after GPU runs
  h.type_perf.resize(kHintMaxTypes, h.type_perf.front());
  for (std::size_t i = 0; i < h.type_perf.size(); ++i) h.type_perf[i].gpu_type = "t" + std::to_string(i);
  h.type_perf.back().gpu_type = std::string(kGpuTypeMaxLen, 'x');
  const HintResult r = parse_hint(emit_hint(h));
  ASSERT_TRUE(r) << r.error;
  expect_same(h, *r.hint);
}

TEST(HintRoundTrip, ExtremeButValidNumbersSurvive) {
  Hint h = full_hint();
  h.job_id = 4294967293u;
  h.uid = 4294967294u;
  h.grad->sqr = 0;
  h.grad->var = 4.9406564584124654e-300;
  h.perf->alpha_n = 1e-8;
  h.perf->gamma = 10;
  h.progress = 0.1 + 0.2;  // not exactly representable in short decimal
  h.profile.assign(kHintMaxSamples, h.profile.front());
  const HintResult r = parse_hint(emit_hint(h));
  ASSERT_TRUE(r) << r.error;
  expect_same(h, *r.hint);
}

// perf.alpha_1 came after the format's first version: a hint without it
// (an older agent's) reads as the paper's model, T_sync(1) = 0, and a
// model without it is written without it (an older plugin reads it).
TEST(HintRoundTrip, PerfWithoutAlpha1IsThePapersModel) {
  Hint h = full_hint();
  std::string text = emit_hint(h);
  const auto pos = text.find("  alpha_1: 0.011\n");
  ASSERT_NE(pos, std::string::npos) << text;
  text.erase(pos, std::string("  alpha_1: 0.011\n").size());
  const HintResult r = parse_hint(text);
  ASSERT_TRUE(r) << r.error;
  EXPECT_EQ(r.hint->perf->alpha_1, PerfParams{}.alpha_1);
  h.perf->alpha_1 = PerfParams{}.alpha_1;
  expect_same(h, *r.hint);
  EXPECT_EQ(emit_hint(h), text);
}

// perf.sharded (the model's sharded form, FSDP) came later still: written
// only when true, so that a job that is not sharded writes what it wrote
// before and an older hint reads as not sharded.
TEST(HintRoundTrip, PerfShardedIsWrittenOnlyWhenTrue) {
  Hint h = full_hint();
  ASSERT_FALSE(h.perf->sharded);
  const std::string plain = emit_hint(h);
  EXPECT_EQ(plain.find("sharded"), std::string::npos) << plain;
  HintResult r = parse_hint(plain);
  ASSERT_TRUE(r) << r.error;
  EXPECT_FALSE(r.hint->perf->sharded);

  h.perf->sharded = true;
  const std::string text = emit_hint(h);
  EXPECT_NE(text.find("  alpha_1: 0.011\n  sharded: true\n"), std::string::npos) << text;
  r = parse_hint(text);
  ASSERT_TRUE(r) << r.error;
  expect_same(h, *r.hint);
  EXPECT_TRUE(r.hint->perf->sharded);
  EXPECT_EQ(*r.hint->perf, *h.perf);
  EXPECT_EQ(emit_hint(*r.hint), text);
}

TEST(HintRoundTrip, TypePerfShardedRoundTrips) {
  Hint h = typed_hint();
  ASSERT_FALSE(h.type_perf.empty());
  h.type_perf.back().perf.sharded = true;
  const HintResult r = parse_hint(emit_hint(h));
  ASSERT_TRUE(r) << r.error;
  EXPECT_TRUE(r.hint->type_perf.back().perf.sharded);
  if (h.type_perf.size() > 1) EXPECT_FALSE(r.hint->type_perf.front().perf.sharded);
}

TEST(HintRoundTrip, EmittedFileFitsTheSizeCapWithMaximalProfile) {
  Hint h = full_hint();
  h.profile.assign(kHintMaxSamples, ProfileSample{65536, 1048576, 1.0 / 3.0, 1.0 / 7.0, 1.0 / 9.0});
  h.max_profiled_replicas = 1048576;
  h.config = HintConfig{65536, 1048576, 100000000, 1000000};
  h.gpu_type = std::string(kGpuTypeMaxLen, 'g');
  h.type_perf.assign(kHintMaxTypes, HintTypePerf{"", PerfParams{1.0 / 3, 1.0 / 7, 1.0 / 9, 1.0 / 11, 1.0 / 13,
                                                                 1.0 / 17, 1.0 + 1.0 / 3, 1.0 / 19}});
  for (std::size_t i = 0; i < kHintMaxTypes; ++i)
    h.type_perf[i].gpu_type = std::string(kGpuTypeMaxLen - 2, 'x') + std::to_string(10 + i);
  EXPECT_LT(emit_hint(h).size(), kHintMaxBytes);
}

// A rejection case: replace `from` by `to` in the emitted full hint and
// expect an error containing `reason`.
struct Rejection {
  const char* name;
  const char* from;
  const char* to;
  const char* reason;
};

std::ostream& operator<<(std::ostream& os, const Rejection& r) { return os << r.name; }

void expect_rejected(const Hint& base, const Rejection& c) {
  std::string text = emit_hint(base);
  const auto pos = text.find(c.from);
  ASSERT_NE(pos, std::string::npos) << "test setup: '" << c.from << "' not in\n" << text;
  text.replace(pos, std::string(c.from).size(), c.to);
  const HintResult r = parse_hint(text);
  ASSERT_FALSE(r) << "accepted:\n" << text;
  EXPECT_NE(r.error.find(c.reason), std::string::npos) << "error was: " << r.error;
  EXPECT_EQ(r.error.find('\n'), std::string::npos) << "not one line: " << r.error;
}

class HintRejects : public ::testing::TestWithParam<Rejection> {};
TEST_P(HintRejects, WithAOneLineReason) { expect_rejected(full_hint(), GetParam()); }

class TypedHintRejects : public ::testing::TestWithParam<Rejection> {};
TEST_P(TypedHintRejects, WithAOneLineReason) { expect_rejected(typed_hint(), GetParam()); }

const Rejection kRejections[] = {
    // Version
    {"UnknownVersion", "version: 1", "version: 2", "unsupported format version 2"},
    {"VersionZero", "version: 1", "version: 0", "unsupported format version 0"},
    {"VersionMissing", "version: 1\n", "", "version: missing"},
    {"VersionNotInteger", "version: 1", "version: one", "version: 'one' is not an integer"},
    // Identity
    {"JobIdZero", "job_id: 4242", "job_id: 0", "job_id: 0 is out of range"},
    {"JobIdNoVal", "job_id: 4242", "job_id: 4294967294", "job_id: 4294967294 is out of range"},
    {"JobIdNegative", "job_id: 4242", "job_id: -5", "job_id: -5 is out of range"},
    {"JobIdHuge", "job_id: 4242", "job_id: 99999999999999999999", "job_id: 99999999999999999999 is out of range"},
    {"JobIdFraction", "job_id: 4242", "job_id: 4242.5", "job_id: '4242.5' is not an integer"},
    {"JobIdQuoted", "job_id: 4242", "job_id: '4242'", "job_id: must not be quoted"},
    {"JobIdMissing", "job_id: 4242\n", "", "job_id: missing"},
    {"UidOutOfRange", "uid: 1000", "uid: 4294967295", "uid: 4294967295 is out of range"},
    {"UidMissing", "uid: 1000\n", "", "uid: missing"},
    {"TimestampNaN", "timestamp: 1700000000.5", "timestamp: nan", "timestamp: 'nan' is not finite"},
    {"TimestampYamlNaN", "timestamp: 1700000000.5", "timestamp: .nan", "timestamp: '.nan' is not a number"},
    {"TimestampInf", "timestamp: 1700000000.5", "timestamp: inf", "timestamp: 'inf' is not finite"},
    {"TimestampNegative", "timestamp: 1700000000.5", "timestamp: -1", "timestamp: -1 is out of range"},
    {"TimestampFuture", "timestamp: 1700000000.5", "timestamp: 1e12", "timestamp: 1e12 is out of range"},
    {"TimestampText", "timestamp: 1700000000.5", "timestamp: yesterday", "timestamp: 'yesterday' is not a number"},
    {"TimestampHexFloat", "timestamp: 1700000000.5", "timestamp: 0x10", "timestamp: '0x10' is not a number"},
    {"RestartCountTooLarge", "restart_count: 3", "restart_count: 65536", "restart_count: 65536 is out of range"},
    {"RestartCountNegative", "restart_count: 3", "restart_count: -1", "restart_count: -1 is out of range"},
    // Progress
    {"StepNegative", "step: 1200\n", "step: -1\n", "step: -1 is out of range"},
    {"StepAbove2To53", "step: 1200\n", "step: 9007199254740993\n", "step: 9007199254740993 is out of range"},
    {"ProgressNegative", "progress: 812.25", "progress: -0.5", "progress: -0.5 is out of range"},
    {"ProgressInfinite", "progress: 812.25", "progress: -inf", "progress: '-inf' is not finite"},
    {"ProgressMissing", "progress: 812.25\n", "", "progress: missing"},
    // Limits
    {"LimitsNotAMap", "limits:\n  init_batch: 64\n  max_batch: 1024\n  min_atomic: 8\n  max_atomic: 256\n  accumulation: true\n",
     "limits: 5\n", "limits: expected a map, found a scalar"},
    {"LimitsMissing", "limits:\n  init_batch: 64\n  max_batch: 1024\n  min_atomic: 8\n  max_atomic: 256\n  accumulation: true\n",
     "", "limits: missing"},
    {"InitBatchZero", "init_batch: 64", "init_batch: 0", "limits.init_batch: 0 is out of range"},
    {"InitBatchMissing", "  init_batch: 64\n", "", "limits.init_batch: missing"},
    {"MaxBatchBelowInit", "max_batch: 1024", "max_batch: 32", "limits.max_batch: below init_batch 64"},
    {"MaxBatchHuge", "max_batch: 1024", "max_batch: 2e9", "limits.max_batch: 2e9 is out of range"},
    {"MinAtomicZero", "min_atomic: 8", "min_atomic: 0", "limits.min_atomic: 0 is out of range"},
    {"MaxAtomicBelowMin", "max_atomic: 256", "max_atomic: 4", "limits.max_atomic: below min_atomic 8"},
    {"MaxAtomicHuge", "max_atomic: 256", "max_atomic: 100000001", "limits.max_atomic: 100000001 is out of range"},
    {"AccumulationNotBool", "accumulation: true", "accumulation: yes", "limits.accumulation: 'yes' is not true or false"},
    {"LimitsUnknownKey", "accumulation: true", "accumulation: true\n  min_batch: 3", "limits.min_batch: unknown key"},
    // Config
    {"ConfigNodesZero", "  nodes: 1\n  replicas: 4", "  nodes: 0\n  replicas: 4", "config.nodes: 0 is out of range"},
    {"ConfigReplicasBelowNodes", "  nodes: 1\n  replicas: 4", "  nodes: 5\n  replicas: 4", "config.replicas: fewer than nodes 5"},
    {"ConfigAtomicZero", "  atomic_batch: 32\n  accum_steps: 1", "  atomic_batch: 0\n  accum_steps: 1", "config.atomic_batch: 0 is out of range"},
    {"ConfigAccumNegative", "accum_steps: 1", "accum_steps: -1", "config.accum_steps: -1 is out of range"},
    {"ConfigMissingField", "  accum_steps: 1\n", "", "config.accum_steps: missing"},
    // Perf
    {"PerfNegativeAlpha", "alpha_c: 0.0125", "alpha_c: -0.0125", "perf.alpha_c: -0.0125 is out of range"},
    {"PerfNaN", "beta_c: 0.00025", "beta_c: NaN", "perf.beta_c: 'NaN' is not finite"},
    {"PerfHugeTime", "alpha_n: 0.004", "alpha_n: 1e7", "perf.alpha_n: 1e7 is out of range"},
    {"PerfGammaBelowOne", "gamma: 1.5", "gamma: 0.9", "perf.gamma: 0.9 is out of range"},
    {"PerfGammaAboveTen", "gamma: 1.5", "gamma: 10.5", "perf.gamma: 10.5 is out of range"},
    {"PerfMissingField", "  beta_r: 1e-04\n", "", "perf.beta_r: missing"},
    {"PerfNegativeAlpha1", "alpha_1: 0.011", "alpha_1: -0.011", "perf.alpha_1: -0.011 is out of range"},
    {"PerfShardedNotBool", "alpha_1: 0.011", "alpha_1: 0.011\n  sharded: 1", "perf.sharded: '1' is not true or false"},
    {"PerfShardedText", "alpha_1: 0.011", "alpha_1: 0.011\n  sharded: fsdp", "perf.sharded: 'fsdp' is not true or false"},
    {"PerfNotAMap", "perf:\n", "perf: [1, 2]\nxperf:\n", "perf: expected a map, found a sequence"},
    // Grad
    {"GradNegativeSqr", "sqr: 0.0625", "sqr: -0.0625", "grad.sqr: -0.0625 is out of range"},
    {"GradZeroVar", "var: 3.5", "var: 0", "grad.var: 0 is out of range"},
    {"GradInfVar", "var: 3.5", "var: 1e999", "grad.var: '1e999' is not a number"},
    {"GradUnknownKey", "var: 3.5", "var: 3.5\n  noise: 1", "grad.noise: unknown key"},
    // Profile
    {"ProfileMissing", "max_profiled_replicas: 4\nprofile:", "max_profiled_replicas: 4\nprofiles:", "profile: missing"},
    {"ProfileNotASequence", "profile:\n", "profile: 3\nxprofile:\n", "profile: expected a sequence, found a scalar"},
    {"ProfileItemNotAMap", "- {nodes: 1, replicas: 1,", "- 7\n- {nodes: 1, replicas: 1,", "profile[0]: expected a map, found a scalar"},
    {"ProfileReplicasBelowNodes", "{nodes: 1, replicas: 1,", "{nodes: 2, replicas: 1,", "profile[0].replicas: fewer than nodes 2"},
    {"ProfileZeroGradTime", "grad_time: 0.0375", "grad_time: 0", "profile[0].grad_time: 0 is out of range"},
    {"ProfileNegativeStepTime", "step_time: 0.04", "step_time: -0.04", "profile[0].step_time: -0.04 is out of range"},
    {"ProfileAtomicZero", "atomic_batch: 32, grad_time: 0.0375", "atomic_batch: 0, grad_time: 0.0375", "profile[0].atomic_batch: 0 is out of range"},
    {"ProfileMissingField", ", step_time: 0.04}", "}", "profile[0].step_time: missing"},
    {"ProfileUnknownKey", ", step_time: 0.04}", ", step_time: 0.04, gpu: 1}", "profile[0].gpu: unknown key"},
    {"MaxProfiledBelowSample", "max_profiled_replicas: 4", "max_profiled_replicas: 2", "max_profiled_replicas 2 is below a profiled sample's replicas 4"},
    {"MaxProfiledNegative", "max_profiled_replicas: 4", "max_profiled_replicas: -4", "max_profiled_replicas: -4 is out of range"},
    // Checkpoint
    {"CheckpointAfterStep", "  step: 1200\n  time", "  step: 1201\n  time", "checkpoint.step 1201 is after step 1200"},
    {"CheckpointTimeNaN", "  time: 1.7e+09", "  time: nan", "checkpoint.time: 'nan' is not finite"},
    {"CheckpointReadyNotBool", "ready_for_requeue: true", "ready_for_requeue: 1", "checkpoint.ready_for_requeue: '1' is not true or false"},
    {"CheckpointMissingReady", "\n  ready_for_requeue: true", "", "checkpoint.ready_for_requeue: missing"},
    // The resize signal the agent announces
    {"ResizeSignalZero", "resize_signal: 10", "resize_signal: 0", "resize_signal: 0 is out of range"},
    {"ResizeSignalTooLarge", "resize_signal: 10", "resize_signal: 65", "resize_signal: 65 is out of range"},
    {"ResizeSignalName", "resize_signal: 10", "resize_signal: USR1", "resize_signal: 'USR1' is not an integer"},
    // The restart time the agent measured
    {"RestartSecondsNegative", "restart_seconds: 42.5", "restart_seconds: -1", "restart_seconds: -1 is out of range"},
    {"RestartSecondsOverADay", "restart_seconds: 42.5", "restart_seconds: 86401", "restart_seconds: 86401 is out of range"},
    {"RestartSecondsInfinite", "restart_seconds: 42.5", "restart_seconds: inf", "restart_seconds: 'inf' is not finite"},
    {"RestartSecondsText", "restart_seconds: 42.5", "restart_seconds: slow", "restart_seconds: 'slow' is not a number"},
    // Structure
    {"UnknownTopLevelKey", "version: 1\n", "version: 1\ncolour: blue\n", "colour: unknown key"},
    {"DuplicateKey", "version: 1\n", "version: 1\nversion: 1\n", "duplicate key 'version'"},
    {"Alias", "uid: 1000", "uid: &u 1000\nother: *u", "anchors are not allowed"},
    {"Tag", "uid: 1000", "uid: !!int 1000", "tags are not allowed"},
};

INSTANTIATE_TEST_SUITE_P(EveryField, HintRejects,
                         ::testing::ValuesIn(kRejections),
                         [](const auto& info) { return std::string(info.param.name); });

const Rejection kTypedRejections[] = {
    {"GpuTypeUpperCase", "gpu_type: nvidia_h100", "gpu_type: NVIDIA_h100", "gpu_type: 'NVIDIA_h100_80gb_hbm3' is not a GPU type name"},
    {"GpuTypeSpace", "gpu_type: nvidia_h100_80gb_hbm3", "gpu_type: 'nvidia h100'", "gpu_type: 'nvidia h100' is not a GPU type name"},
    {"GpuTypeEmpty", "gpu_type: nvidia_h100_80gb_hbm3", "gpu_type: ''", "gpu_type: '' is not a GPU type name"},
    {"GpuTypeNewline", "gpu_type: nvidia_h100_80gb_hbm3", "gpu_type: \"a\\nb\"", "gpu_type: is not a GPU type name"},
    {"GpuTypeTooLong", "gpu_type: nvidia_h100_80gb_hbm3", "gpu_type: nvidia_h100_80gb_hbm3_nvidia_h100_80gb_hbm3_nvidia_h100_80gb_hbm3",
     "gpu_type: longer than 64 bytes"},
    {"GpuTypeNotAScalar", "gpu_type: nvidia_h100_80gb_hbm3", "gpu_type: [h100]", "gpu_type: expected a scalar, found a sequence"},
    {"TypePerfNotASequence", "type_perf:\n", "type_perf: a100\nxtype_perf:\n", "type_perf: expected a sequence, found a scalar"},
    {"TypePerfItemNotAMap", "type_perf:\n", "type_perf:\n- a100\n", "type_perf[0]: expected a map, found a scalar"},
    {"TypePerfBadName", "- gpu_type: a100", "- gpu_type: A100", "type_perf[0].gpu_type: 'A100' is not a GPU type name"},
    {"TypePerfMissingName", "- gpu_type: a100\n  perf:", "- perf:", "type_perf[0].gpu_type: missing"},
    {"TypePerfMissingPerf", "- gpu_type: a100\n  perf:", "- gpu_type: a100\n  xperf:", "type_perf[0].perf: missing"},
    {"TypePerfCurrentType", "- gpu_type: a100", "- gpu_type: nvidia_h100_80gb_hbm3",
     "type_perf[0].gpu_type: 'nvidia_h100_80gb_hbm3' is the current gpu_type"},
    {"TypePerfRepeated", "- gpu_type: tesla_v100-sxm2-16gb", "- gpu_type: a100", "type_perf[1].gpu_type: 'a100' repeats an earlier item"},
    {"TypePerfGammaOutOfRange", "gamma: 1.25", "gamma: 11", "type_perf[0].perf.gamma: 11 is out of range"},
    {"TypePerfNegativeAlpha1", "alpha_1: 0.02", "alpha_1: -1", "type_perf[1].perf.alpha_1: -1 is out of range"},
    {"TypePerfMissingField", "    beta_c: 5e-04\n", "", "type_perf[0].perf.beta_c: missing"},
    {"TypePerfUnknownKey", "- gpu_type: a100\n", "- gpu_type: a100\n  speed: 2\n", "type_perf[0].speed: unknown key"},
};

INSTANTIATE_TEST_SUITE_P(EveryField, TypedHintRejects, ::testing::ValuesIn(kTypedRejections),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(HintRejectsDocument, TooManyTypes) {
  Hint h = typed_hint();
  h.type_perf.resize(kHintMaxTypes + 1, h.type_perf.front());
  for (std::size_t i = 0; i < h.type_perf.size(); ++i) h.type_perf[i].gpu_type = "t" + std::to_string(i);
  const HintResult r = parse_hint(emit_hint(h));
  ASSERT_FALSE(r);
  EXPECT_NE(r.error.find("type_perf: 17 items, more than 16"), std::string::npos) << r.error;
}

TEST(HintRejectsDocument, SecondDocument) {
  const HintResult r = parse_hint(emit_hint(full_hint()) + "---\nversion: 1\n");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error.find("more than one document"), std::string::npos) << r.error;
}

TEST(HintRejectsDocument, NotAMap) {
  for (const char* text : {"- 1\n- 2\n", "42\n", "'hint'\n"}) {
    const HintResult r = parse_hint(text);
    ASSERT_FALSE(r) << text;
    EXPECT_NE(r.error.find("document: expected a map"), std::string::npos) << r.error;
  }
}

TEST(HintRejectsDocument, EmptyText) {
  const HintResult r = parse_hint("");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error.find("empty document"), std::string::npos) << r.error;
}

TEST(HintRejectsDocument, SyntaxError) {
  const HintResult r = parse_hint("version: 1\n  job_id: [\n");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error.rfind("line ", 0), 0u) << r.error;
}

TEST(HintRejectsDocument, BinaryGarbage) {
  std::string junk(512, '\0');
  for (std::size_t i = 0; i < junk.size(); ++i) junk[i] = static_cast<char>((i * 131) % 256);
  EXPECT_FALSE(parse_hint(junk));
}

TEST(HintRejectsDocument, OverTheSizeCap) {
  std::string text = emit_hint(full_hint());
  text += "# " + std::string(kHintMaxBytes, 'x') + "\n";
  const HintResult r = parse_hint(text);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error.find("more than the limit"), std::string::npos) << r.error;
}

TEST(HintRejectsDocument, TooManyProfileSamples) {
  Hint h = full_hint();
  h.profile.assign(kHintMaxSamples + 1, h.profile.front());
  const HintResult r = parse_hint(emit_hint(h));
  ASSERT_FALSE(r);
  EXPECT_NE(r.error.find("profile: 257 items, more than 256"), std::string::npos) << r.error;
}

TEST(HintRejectsDocument, DeepNesting) {
  std::string text = emit_hint(minimal_hint());
  text.replace(text.find("uid: 1000"), 9, "uid: [[[[[[[[[[1]]]]]]]]]]");
  const HintResult r = parse_hint(text);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error.find("nested too deeply"), std::string::npos) << r.error;
}

TEST(HintPath, NamesTheFileAfterTheJob) {
  EXPECT_EQ(hint_path("/var/spool/slurm/pollux", 17), "/var/spool/slurm/pollux/17.hint.yaml");
  EXPECT_EQ(hint_path("/spool/", 17), "/spool/17.hint.yaml");
}

}  // namespace
}  // namespace pollux
