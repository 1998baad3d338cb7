// The hint's sub-records in YAML (see pollux/hint_fields.h).
#include "pollux/hint_fields.h"

#include <cfloat>

namespace pollux::hint_fields {

void emit(yaml::Emitter& e, const BatchLimits& l) {
  e.begin_map();
  e.field("init_batch", l.init_batch);
  e.field("max_batch", l.max_batch);
  e.field("min_atomic", l.min_atomic);
  e.field("max_atomic", l.max_atomic);
  e.field("accumulation", l.accumulation);
  e.end_map();
}

void emit(yaml::Emitter& e, const PerfParams& p) {
  e.begin_map();
  e.field("alpha_c", p.alpha_c);
  e.field("beta_c", p.beta_c);
  e.field("alpha_n", p.alpha_n);
  e.field("beta_n", p.beta_n);
  e.field("alpha_r", p.alpha_r);
  e.field("beta_r", p.beta_r);
  e.field("gamma", p.gamma);
  e.end_map();
}

void emit(yaml::Emitter& e, const GradStats& g) {
  e.begin_map();
  e.field("sqr", g.sqr);
  e.field("var", g.var);
  e.end_map();
}

void emit(yaml::Emitter& e, const HintConfig& c) {
  e.begin_map();
  e.field("nodes", c.nodes);
  e.field("replicas", c.replicas);
  e.field("atomic_batch", c.atomic_batch);
  e.field("accum_steps", c.accum_steps);
  e.end_map();
}

void emit_fields(yaml::Emitter& e, const ProfileSample& s) {
  e.field("nodes", s.nodes);
  e.field("replicas", s.replicas);
  e.field("atomic_batch", s.atomic_batch);
  e.field("grad_time", s.grad_time);
  e.field("step_time", s.step_time);
}

BatchLimits read_limits(yaml::MapReader& r) {
  BatchLimits l;
  l.init_batch = r.real("init_batch", 1, kMaxBatch);
  l.max_batch = r.real("max_batch", 1, kMaxBatch);
  l.min_atomic = static_cast<int>(r.integer("min_atomic", 1, kMaxAtomic));
  l.max_atomic = static_cast<int>(r.integer("max_atomic", 1, kMaxAtomic));
  l.accumulation = r.boolean("accumulation");
  if (r.ok() && l.max_batch < l.init_batch)
    r.fail("max_batch", "below init_batch " + yaml::format_number(l.init_batch));
  if (r.ok() && l.max_atomic < l.min_atomic)
    r.fail("max_atomic", "below min_atomic " + std::to_string(l.min_atomic));
  if (r.ok() && !l.valid()) r.fail("init_batch", "inconsistent limits");
  return l;
}

PerfParams read_perf(yaml::MapReader& r) {
  PerfParams p;
  p.alpha_c = r.real("alpha_c", 0, kMaxSeconds);
  p.beta_c = r.real("beta_c", 0, kMaxSeconds);
  p.alpha_n = r.real("alpha_n", 0, kMaxSeconds);
  p.beta_n = r.real("beta_n", 0, kMaxSeconds);
  p.alpha_r = r.real("alpha_r", 0, kMaxSeconds);
  p.beta_r = r.real("beta_r", 0, kMaxSeconds);
  p.gamma = r.real("gamma", 1, 10);
  if (r.ok() && !p.valid()) r.fail("gamma", "inconsistent parameters");
  return p;
}

GradStats read_grad(yaml::MapReader& r) {
  GradStats g;
  g.sqr = r.real("sqr", 0, DBL_MAX);
  g.var = r.real("var", DBL_MIN, DBL_MAX);
  return g;
}

HintConfig read_config(yaml::MapReader& r) {
  HintConfig c;
  c.nodes = static_cast<int>(r.integer("nodes", 1, kMaxNodes));
  c.replicas = static_cast<int>(r.integer("replicas", 1, kMaxReplicas));
  c.atomic_batch = static_cast<int>(r.integer("atomic_batch", 1, kMaxAtomic));
  c.accum_steps = static_cast<int>(r.integer("accum_steps", 0, kMaxAccum));
  if (r.ok() && c.replicas < c.nodes) r.fail("replicas", "fewer than nodes " + std::to_string(c.nodes));
  return c;
}

ProfileSample read_sample(yaml::MapReader& r) {
  ProfileSample s;
  s.nodes = static_cast<int>(r.integer("nodes", 1, kMaxNodes));
  s.replicas = static_cast<int>(r.integer("replicas", 1, kMaxReplicas));
  s.atomic_batch = r.real("atomic_batch", 1, static_cast<double>(kMaxAtomic));
  s.grad_time = r.real("grad_time", kMinSeconds, kMaxSeconds);
  s.step_time = r.real("step_time", kMinSeconds, kMaxSeconds);
  if (r.ok() && s.replicas < s.nodes) r.fail("replicas", "fewer than nodes " + std::to_string(s.nodes));
  return s;
}

}  // namespace pollux::hint_fields
