// The agent's checkpointed state in YAML (see agent_state.h). It reuses the
// hint's record layouts and ranges (pollux/hint_fields.h).
#include "agent_state.h"

#include <algorithm>
#include <cfloat>
#include <charconv>
#include <stdexcept>

#include "pollux/hint_fields.h"
#include "pollux/yaml_doc.h"

namespace pollux::agent_detail {

using namespace hint_fields;

namespace {

void emit_times(yaml::Emitter& e, const std::vector<double>& v) {
  e.begin_seq(true);
  for (double x : v) e.number(x);
  e.end_seq();
}

std::vector<double> read_times(yaml::MapReader& r, const char* key) {
  std::vector<double> v;
  const yaml::Node* seq = r.seq(key, ProfileEntry::kWindow);
  if (seq == nullptr) return v;
  for (const yaml::Node& n : seq->seq) {
    double x = 0;
    const char* b = n.scalar.data();
    const auto res = std::from_chars(b, b + n.scalar.size(), x);
    if (n.kind != yaml::Node::Kind::kScalar || res.ec != std::errc() || res.ptr != b + n.scalar.size() ||
        !(x > 0) || !(x <= kMaxSeconds)) {
      r.fail(key, "'" + n.scalar + "' is not a time in seconds");
      return {};
    }
    v.push_back(x);
  }
  return v;
}

}  // namespace

std::string emit_agent_state(const AgentState& s) {
  yaml::Emitter e;
  e.begin_map();
  e.field("version", kAgentStateVersion);
  e.field("job_id", static_cast<long long>(s.job_id));
  e.field("restart_count", s.restart_count);
  e.field("step", s.step);
  e.field("samples", s.samples);
  e.field("progress", s.progress);
  e.field("time", s.time);
  e.plain("limits"), emit(e, s.limits);
  e.plain("config"), emit(e, s.config);
  e.plain("estimator");
  e.begin_map();
  e.field("init_batch", s.estimator_init_batch);
  e.field("sqr_biased", s.estimator.sqr_biased);
  e.field("sqr_unbias", s.estimator.sqr_unbias);
  e.field("var_biased", s.estimator.var_biased);
  e.field("var_unbias", s.estimator.var_unbias);
  e.field("updates", s.estimator.updates);
  e.end_map();
  if (s.perf) e.plain("perf"), emit(e, *s.perf);
  e.plain("profile");
  e.begin_seq();
  for (const ProfileEntry& p : s.profile) {
    e.begin_map(true);
    e.field("nodes", p.nodes);
    e.field("replicas", p.replicas);
    e.field("atomic_batch", p.atomic_batch);
    e.field("steps", p.steps);
    e.field("next", static_cast<long long>(p.next));
    e.plain("grad_times");
    emit_times(e, p.grad_times);
    e.plain("step_times");
    emit_times(e, p.step_times);
    e.end_map();
  }
  e.end_seq();
  e.end_map();
  return e.finish();
}

namespace {

GradNoiseEstimator::State read_estimator(yaml::MapReader& r, double& init_batch) {
  GradNoiseEstimator::State st;
  init_batch = r.real("init_batch", 1, kMaxBatch);
  st.sqr_biased = r.real("sqr_biased", -DBL_MAX, DBL_MAX);
  st.sqr_unbias = r.real("sqr_unbias", 0, 1);
  st.var_biased = r.real("var_biased", -DBL_MAX, DBL_MAX);
  st.var_unbias = r.real("var_unbias", 0, 1);
  st.updates = r.integer("updates", 0, kMaxCount);
  return st;
}

ProfileEntry read_entry(yaml::MapReader& r) {
  ProfileEntry p;
  p.nodes = static_cast<int>(r.integer("nodes", 1, kMaxNodes));
  p.replicas = static_cast<int>(r.integer("replicas", 1, kMaxReplicas));
  p.atomic_batch = static_cast<int>(r.integer("atomic_batch", 1, kMaxAtomic));
  p.steps = r.integer("steps", 0, kMaxCount);
  p.next = static_cast<std::size_t>(r.integer("next", 0, ProfileEntry::kWindow - 1));
  p.grad_times = read_times(r, "grad_times");
  p.step_times = read_times(r, "step_times");
  if (r.ok() && p.grad_times.size() != p.step_times.size()) r.fail("step_times", "not as many as grad_times");
  if (r.ok() && p.next >= std::max<std::size_t>(p.step_times.size(), 1)) r.fail("next", "outside the window");
  return p;
}

}  // namespace

AgentState parse_agent_state(std::string_view text) {
  std::string err;
  const std::optional<yaml::Node> root = yaml::parse(text, err);
  if (!root) throw std::runtime_error(err);
  yaml::MapReader r(*root, "");
  AgentState s;
  const long long version = r.integer("version", 0, 1000000);
  if (r.ok() && version != kAgentStateVersion)
    throw std::runtime_error("unsupported agent state version " + std::to_string(version));
  s.job_id = static_cast<std::uint32_t>(r.integer("job_id", 0, kMaxJobId));
  s.restart_count = static_cast<int>(r.integer("restart_count", 0, kMaxRestarts));
  s.step = r.integer("step", 0, kMaxCount);
  s.samples = r.integer("samples", 0, kMaxCount);
  s.progress = r.real("progress", 0, kMaxProgress);
  s.time = r.real("time", 0, kMaxTime);
  s.limits = r.sub("limits", read_limits);
  s.config = r.sub("config", read_config);
  s.estimator = r.sub("estimator", [&](yaml::MapReader& sr) { return read_estimator(sr, s.estimator_init_batch); });
  if (r.has("perf")) s.perf = r.sub("perf", read_perf);
  s.profile = r.each("profile", kHintMaxSamples, read_entry);
  if (!r.finish()) throw std::runtime_error(r.error());
  return s;
}

}  // namespace pollux::agent_detail
