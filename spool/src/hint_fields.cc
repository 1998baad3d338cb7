// The hint's sub-records in YAML (see pollux/hint_fields.h).
#include "pollux/hint_fields.h"

#include <cfloat>

namespace pollux::hint_fields {
namespace {

// Each record's fields, for its emit() and read_*() alike.
const auto limits_fields = [](auto& f, auto& l) {
  f.real("init_batch", l.init_batch, 1, kMaxBatch);
  f.real("max_batch", l.max_batch, 1, kMaxBatch);
  f.integer("min_atomic", l.min_atomic, 1, kMaxAtomic);
  f.integer("max_atomic", l.max_atomic, 1, kMaxAtomic);
  f.boolean("accumulation", l.accumulation);
};

const auto perf_fields = [](auto& f, auto& p) {
  f.real("alpha_c", p.alpha_c, 0, kMaxSeconds);
  f.real("beta_c", p.beta_c, 0, kMaxSeconds);
  f.real("alpha_n", p.alpha_n, 0, kMaxSeconds);
  f.real("beta_n", p.beta_n, 0, kMaxSeconds);
  f.real("alpha_r", p.alpha_r, 0, kMaxSeconds);
  f.real("beta_r", p.beta_r, 0, kMaxSeconds);
  f.real("gamma", p.gamma, 1, 10);
  f.optional_real("alpha_1", p.alpha_1, 0, kMaxSeconds, PerfParams{}.alpha_1);  // newer than the others
  f.optional_boolean("sharded", p.sharded, false);  // the model's form; newer still
};

const auto grad_fields = [](auto& f, auto& g) {
  f.real("sqr", g.sqr, 0, DBL_MAX);
  f.real("var", g.var, DBL_MIN, DBL_MAX);
};

const auto config_fields = [](auto& f, auto& c) {
  shape_fields(f, c);
  f.integer("accum_steps", c.accum_steps, 0, kMaxAccum);
};

const auto sample_fields = [](auto& f, auto& s) {
  shape_fields(f, s);
  f.real("grad_time", s.grad_time, kMinSeconds, kMaxSeconds);
  f.real("step_time", s.step_time, kMinSeconds, kMaxSeconds);
};

}  // namespace

void emit(yaml::Emitter& e, const BatchLimits& l) { emit_map(e, l, limits_fields); }
void emit(yaml::Emitter& e, const PerfParams& p) { emit_map(e, p, perf_fields); }
void emit(yaml::Emitter& e, const GradStats& g) { emit_map(e, g, grad_fields); }
void emit(yaml::Emitter& e, const HintConfig& c) { emit_map(e, c, config_fields); }

void emit_fields(yaml::Emitter& e, const ProfileSample& s) {
  FieldWriter w(e);
  sample_fields(w, s);
}

BatchLimits read_limits(yaml::MapReader& r) {
  const BatchLimits l = read_fields<BatchLimits>(r, limits_fields);
  if (r.ok() && l.max_batch < l.init_batch)
    r.fail("max_batch", "below init_batch " + yaml::format_number(l.init_batch));
  if (r.ok() && l.max_atomic < l.min_atomic)
    r.fail("max_atomic", "below min_atomic " + std::to_string(l.min_atomic));
  if (r.ok() && !l.valid()) r.fail("init_batch", "inconsistent limits");
  return l;
}

PerfParams read_perf(yaml::MapReader& r) {
  const PerfParams p = read_fields<PerfParams>(r, perf_fields);
  if (r.ok() && !p.valid()) r.fail("gamma", "inconsistent parameters");
  return p;
}

GradStats read_grad(yaml::MapReader& r) { return read_fields<GradStats>(r, grad_fields); }

HintConfig read_config(yaml::MapReader& r) {
  const HintConfig c = read_fields<HintConfig>(r, config_fields);
  check_shape(r, c);
  return c;
}

void emit_gpu_type(yaml::Emitter& e, std::string_view key, const std::string& name) {
  // YAML 1.1 reads these as booleans or null, and a leading digit, '.'
  // or '-' may read as a number: quoted, so that any YAML reader sees text.
  static constexpr std::string_view kWords[] = {"y", "n", "yes", "no", "on", "off", "true", "false", "null"};
  bool quote = name.empty() || !(name[0] >= 'a' && name[0] <= 'z');
  for (std::string_view w : kWords) quote = quote || name == w;
  e.plain(key);
  if (quote)
    e.string(name);
  else
    e.plain(name);
}

void emit_type_perf(yaml::Emitter& e, std::string_view key, const std::vector<HintTypePerf>& fits) {
  if (fits.empty()) return;
  e.plain(key);
  e.begin_seq();
  for (const HintTypePerf& tp : fits) {
    e.begin_map();
    emit_gpu_type(e, "gpu_type", tp.gpu_type);
    e.plain("perf"), emit(e, tp.perf);
    e.end_map();
  }
  e.end_seq();
}

ProfileSample read_sample(yaml::MapReader& r) {
  const ProfileSample s = read_fields<ProfileSample>(r, sample_fields);
  check_shape(r, s);
  return s;
}

}  // namespace pollux::hint_fields

namespace pollux::hint_fields {

std::string read_gpu_type(yaml::MapReader& r, std::string_view key) {
  std::string name = r.text(key, kGpuTypeMaxLen);
  if (r.ok() && !valid_gpu_type(name)) {
    // Quoted back only when printable: the reason stays one line.
    bool printable = true;
    for (char c : name) printable = printable && c >= 0x20 && c < 0x7f;
    r.fail(key, (printable ? "'" + name + "' is" : std::string("is")) + " not a GPU type name (1 to " +
                    std::to_string(kGpuTypeMaxLen) + " characters of a-z, 0-9, '_', '.', '-')");
  }
  return name;
}

std::vector<HintTypePerf> read_type_perf(yaml::MapReader& r, std::string_view key, const std::string& current) {
  if (!r.has(key)) return {};
  std::vector<HintTypePerf> fits = r.each(key, kHintMaxTypes, [](yaml::MapReader& item) {
    HintTypePerf tp;
    tp.gpu_type = read_gpu_type(item, "gpu_type");
    tp.perf = item.sub("perf", read_perf);
    return tp;
  });
  check_other_types(r, key, fits, current);
  return fits;
}

}  // namespace pollux::hint_fields
