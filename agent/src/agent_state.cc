// The agent's checkpointed state in YAML (see agent_state.h). It reuses the
// hint's record layouts and ranges (pollux/hint_fields.h).
#include "agent_state.h"

#include <algorithm>
#include <cfloat>
#include <charconv>
#include <optional>
#include <stdexcept>
#include <utility>

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

// The fields of the state, the estimator and a profile entry, for
// emit_agent_state() and parse_agent_state() alike.
const auto state_fields = [](auto& f, auto& s) {
  f.integer("job_id", s.job_id, 0, kMaxJobId);
  progress_fields(f, s);
  f.integer("samples", s.samples, 0, kMaxCount);
  f.real("time", s.time, 0, kMaxTime);
  f.optional_real("save_seconds", s.save_seconds, 0, kMaxRestartSeconds, 0.0);
};

template <typename Fields, typename Real, typename State>
void estimator_fields(Fields& f, Real& init_batch, State& st) {
  f.real("init_batch", init_batch, 1, kMaxBatch);
  f.real("sqr_biased", st.sqr_biased, -DBL_MAX, DBL_MAX);
  f.real("sqr_unbias", st.sqr_unbias, 0, 1);
  f.real("var_biased", st.var_biased, -DBL_MAX, DBL_MAX);
  f.real("var_unbias", st.var_unbias, 0, 1);
  f.integer("updates", st.updates, 0, kMaxCount);
}

const auto entry_fields = [](auto& f, auto& p) {
  shape_fields(f, p);
  f.integer("steps", p.steps, 0, kMaxCount);
  f.integer("next", p.next, 0, ProfileEntry::kWindow - 1);
};

}  // namespace

namespace {

// `others` holds what a job has on the types it left, one item (gpu_type,
// value) a type. Puts `leaving` (measured on `from`) in, replacing an older
// one of `from`, takes out and returns `to`'s, if any, and keeps the
// kHintMaxTypes newest.
template <typename Item, typename Value>
std::optional<Value> exchange_by_type(std::vector<Item>& others, Value Item::*value, std::optional<Value> leaving,
                                      const std::string& from, const std::string& to) {
  const auto of = [&](const std::string& name) {
    return std::find_if(others.begin(), others.end(), [&](const Item& item) { return item.gpu_type == name; });
  };
  if (auto old = of(from); old != others.end()) others.erase(old);
  if (leaving) others.push_back(Item{from, std::move(*leaving)});
  std::optional<Value> arriving;
  if (auto mine = of(to); mine != others.end()) {
    arriving = std::move((*mine).*value);
    others.erase(mine);
  }
  if (others.size() > kHintMaxTypes) others.erase(others.begin(), others.end() - kHintMaxTypes);
  return arriving;
}

}  // namespace

bool switch_gpu_type(AgentState& s, const std::string& gpu_type) {
  if (s.gpu_type == gpu_type || s.gpu_type.empty()) {
    s.gpu_type = gpu_type;
    return false;
  }
  s.perf = exchange_by_type(s.type_perf, &HintTypePerf::perf, std::move(s.perf), s.gpu_type, gpu_type);
  std::optional<std::vector<ProfileEntry>> leaving;
  if (!s.profile.empty()) leaving = std::move(s.profile);
  s.profile = exchange_by_type(s.type_profiles, &TypeProfile::profile, std::move(leaving), s.gpu_type, gpu_type)
                  .value_or(std::vector<ProfileEntry>{});
  s.gpu_type = gpu_type;
  return true;
}

namespace {

void emit_profile(yaml::Emitter& e, FieldWriter& w, const std::vector<ProfileEntry>& profile) {
  e.begin_seq();
  for (const ProfileEntry& p : profile) {
    e.begin_map(true);
    entry_fields(w, p);
    e.plain("grad_times");
    emit_times(e, p.grad_times);
    e.plain("step_times");
    emit_times(e, p.step_times);
    e.end_map();
  }
  e.end_seq();
}

}  // namespace

std::string emit_agent_state(const AgentState& s) {
  yaml::Emitter e;
  e.begin_map();
  e.field("version", kAgentStateVersion);
  FieldWriter w(e);
  state_fields(w, s);
  e.plain("limits"), emit(e, s.limits);
  e.plain("config"), emit(e, s.config);
  e.plain("estimator");
  e.begin_map();
  estimator_fields(w, s.estimator_init_batch, s.estimator);
  e.end_map();
  if (!s.gpu_type.empty()) emit_gpu_type(e, "gpu_type", s.gpu_type);
  if (s.perf) e.plain("perf"), emit(e, *s.perf);
  e.plain("profile");
  emit_profile(e, w, s.profile);
  emit_type_perf(e, "type_perf", s.type_perf);
  if (!s.type_profiles.empty()) {
    e.plain("type_profiles");
    e.begin_seq();
    for (const TypeProfile& tp : s.type_profiles) {
      e.begin_map();
      emit_gpu_type(e, "gpu_type", tp.gpu_type);
      e.plain("profile");
      emit_profile(e, w, tp.profile);
      e.end_map();
    }
    e.end_seq();
  }
  e.end_map();
  return e.finish();
}

namespace {

GradNoiseEstimator::State read_estimator(yaml::MapReader& r, double& init_batch) {
  GradNoiseEstimator::State st;
  FieldReader f(r);
  estimator_fields(f, init_batch, st);
  return st;
}

ProfileEntry read_entry(yaml::MapReader& r) {
  ProfileEntry p = read_fields<ProfileEntry>(r, entry_fields);
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
  FieldReader f(r);
  state_fields(f, s);
  s.limits = r.sub("limits", read_limits);
  s.config = r.sub("config", read_config);
  s.estimator = r.sub("estimator", [&](yaml::MapReader& sr) { return read_estimator(sr, s.estimator_init_batch); });
  if (r.has("gpu_type")) s.gpu_type = read_gpu_type(r, "gpu_type");
  if (r.has("perf")) s.perf = r.sub("perf", read_perf);
  s.profile = r.each("profile", kHintMaxSamples, read_entry);
  s.type_perf = read_type_perf(r, "type_perf", s.gpu_type);
  if (r.has("type_profiles")) {
    s.type_profiles = r.each("type_profiles", kHintMaxTypes, [](yaml::MapReader& item) {
      TypeProfile tp;
      tp.gpu_type = read_gpu_type(item, "gpu_type");
      tp.profile = item.each("profile", kHintMaxSamples, read_entry);
      return tp;
    });
    check_other_types(r, "type_profiles", s.type_profiles, s.gpu_type);
  }
  if (!r.finish()) throw std::runtime_error(r.error());
  return s;
}

}  // namespace pollux::agent_detail
