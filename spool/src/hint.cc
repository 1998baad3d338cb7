// The hint file: emitter, validating parser and atomic writer
// (see pollux/hint.h; ranges in doc/hint-format.md).
#include "pollux/hint.h"

#include <algorithm>
#include <cfloat>

#include "pollux/atomic_file.h"
#include "pollux/yaml_doc.h"

namespace pollux {
namespace {

// Ranges of doc/hint-format.md. Integers that Slurm stores in 32 bits stop
// below its NO_VAL markers; counts stop at 2^53 so that they survive a
// round trip through a double.
constexpr long long kMaxJobId = 4294967293LL;   // below NO_VAL (0xfffffffe)
constexpr long long kMaxUid = 4294967294LL;     // below (uid_t)-1
constexpr double kMaxTime = 1e11;               // Unix seconds
constexpr long long kMaxRestarts = 65535;       // Slurm's restart_cnt is 16 bits
constexpr double kMaxBatch = 1e9;
constexpr long long kMaxAtomic = 100000000;
constexpr long long kMaxNodes = 65536;
constexpr long long kMaxReplicas = 1048576;
constexpr long long kMaxAccum = 1000000;
constexpr long long kMaxCount = 9007199254740992LL;  // 2^53
constexpr double kMaxProgress = 1e15;
constexpr double kMaxSeconds = 1e6;  // any fitted or measured time
constexpr double kMinSeconds = 1e-9;

void emit_limits(yaml::Emitter& e, const BatchLimits& l) {
  e.begin_map();
  e.plain("init_batch"), e.number(l.init_batch);
  e.plain("max_batch"), e.number(l.max_batch);
  e.plain("min_atomic"), e.number(static_cast<long long>(l.min_atomic));
  e.plain("max_atomic"), e.number(static_cast<long long>(l.max_atomic));
  e.plain("accumulation"), e.boolean(l.accumulation);
  e.end_map();
}

void emit_perf(yaml::Emitter& e, const PerfParams& p) {
  e.begin_map();
  e.plain("alpha_c"), e.number(p.alpha_c);
  e.plain("beta_c"), e.number(p.beta_c);
  e.plain("alpha_n"), e.number(p.alpha_n);
  e.plain("beta_n"), e.number(p.beta_n);
  e.plain("alpha_r"), e.number(p.alpha_r);
  e.plain("beta_r"), e.number(p.beta_r);
  e.plain("gamma"), e.number(p.gamma);
  e.end_map();
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
  r.finish();
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
  r.finish();
  return p;
}

GradStats read_grad(yaml::MapReader& r) {
  GradStats g;
  g.sqr = r.real("sqr", 0, DBL_MAX);
  g.var = r.real("var", DBL_MIN, DBL_MAX);
  r.finish();
  return g;
}

HintConfig read_config(yaml::MapReader& r) {
  HintConfig c;
  c.nodes = static_cast<int>(r.integer("nodes", 1, kMaxNodes));
  c.replicas = static_cast<int>(r.integer("replicas", 1, kMaxReplicas));
  c.atomic_batch = static_cast<int>(r.integer("atomic_batch", 1, kMaxAtomic));
  c.accum_steps = static_cast<int>(r.integer("accum_steps", 0, kMaxAccum));
  if (r.ok() && c.replicas < c.nodes) r.fail("replicas", "fewer than nodes " + std::to_string(c.nodes));
  r.finish();
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
  r.finish();
  return s;
}

HintCheckpoint read_checkpoint(yaml::MapReader& r) {
  HintCheckpoint c;
  c.step = r.integer("step", 0, kMaxCount);
  c.time = r.real("time", 0, kMaxTime);
  c.ready_for_requeue = r.boolean("ready_for_requeue");
  r.finish();
  return c;
}

// Parses the validated fields of a document; the first problem wins.
HintResult read_hint(const yaml::Node& root) {
  HintResult res;
  yaml::MapReader r(root, "");
  Hint h;
  h.version = static_cast<int>(r.integer("version", 0, 1000000));
  if (r.ok() && h.version != kHintFormatVersion) {
    res.error = "unsupported format version " + std::to_string(h.version) + " (this reader knows " +
                std::to_string(kHintFormatVersion) + ")";
    return res;
  }
  h.job_id = static_cast<std::uint32_t>(r.integer("job_id", 1, kMaxJobId));
  h.uid = static_cast<std::uint32_t>(r.integer("uid", 0, kMaxUid));
  h.timestamp = r.real("timestamp", 0, kMaxTime);
  h.restart_count = static_cast<int>(r.integer("restart_count", 0, kMaxRestarts));
  h.step = r.integer("step", 0, kMaxCount);
  h.progress = r.real("progress", 0, kMaxProgress);
  // Each sub-map is read with its own reader; its error is copied up.
  auto sub = [&](const char* key, auto read) {
    const yaml::Node* n = r.map(key);
    using T = decltype(read(std::declval<yaml::MapReader&>()));
    if (n == nullptr) return T{};
    yaml::MapReader sr(*n, key);
    T v = read(sr);
    if (!sr.ok() && r.ok()) res.error = sr.error();
    return v;
  };
  h.limits = sub("limits", read_limits);
  if (res.error.empty()) h.config = sub("config", read_config);
  if (res.error.empty() && r.has("perf")) h.perf = sub("perf", read_perf);
  if (res.error.empty() && r.has("grad")) h.grad = sub("grad", read_grad);
  h.max_profiled_replicas = static_cast<int>(r.integer("max_profiled_replicas", 0, kMaxReplicas));
  const yaml::Node* profile = r.seq("profile", kHintMaxSamples);
  if (res.error.empty() && profile != nullptr) {
    h.profile.reserve(profile->seq.size());
    for (std::size_t i = 0; i < profile->seq.size() && res.error.empty(); ++i) {
      yaml::MapReader sr(profile->seq[i], "profile[" + std::to_string(i) + "]");
      h.profile.push_back(read_sample(sr));
      if (!sr.ok()) res.error = sr.error();
    }
  }
  if (res.error.empty() && r.has("checkpoint")) h.checkpoint = sub("checkpoint", read_checkpoint);
  if (!res.error.empty()) return res;
  if (!r.finish()) {
    res.error = r.error();
    return res;
  }
  // Cross-field consistency.
  for (const ProfileSample& s : h.profile) {
    if (s.replicas > h.max_profiled_replicas) {
      res.error = "max_profiled_replicas " + std::to_string(h.max_profiled_replicas) +
                  " is below a profiled sample's replicas " + std::to_string(s.replicas);
      return res;
    }
  }
  if (h.checkpoint && h.checkpoint->step > h.step) {
    res.error = "checkpoint.step " + std::to_string(h.checkpoint->step) + " is after step " +
                std::to_string(h.step);
    return res;
  }
  res.hint = std::move(h);
  return res;
}

}  // namespace

std::string emit_hint(const Hint& h) {
  yaml::Emitter e;
  e.begin_map();
  e.plain("version"), e.number(static_cast<long long>(h.version));
  e.plain("job_id"), e.number(static_cast<long long>(h.job_id));
  e.plain("uid"), e.number(static_cast<long long>(h.uid));
  e.plain("timestamp"), e.number(h.timestamp);
  e.plain("restart_count"), e.number(static_cast<long long>(h.restart_count));
  e.plain("step"), e.number(h.step);
  e.plain("progress"), e.number(h.progress);
  e.plain("limits"), emit_limits(e, h.limits);
  e.plain("config");
  e.begin_map();
  e.plain("nodes"), e.number(static_cast<long long>(h.config.nodes));
  e.plain("replicas"), e.number(static_cast<long long>(h.config.replicas));
  e.plain("atomic_batch"), e.number(static_cast<long long>(h.config.atomic_batch));
  e.plain("accum_steps"), e.number(static_cast<long long>(h.config.accum_steps));
  e.end_map();
  if (h.perf) e.plain("perf"), emit_perf(e, *h.perf);
  if (h.grad) {
    e.plain("grad");
    e.begin_map();
    e.plain("sqr"), e.number(h.grad->sqr);
    e.plain("var"), e.number(h.grad->var);
    e.end_map();
  }
  e.plain("max_profiled_replicas"), e.number(static_cast<long long>(h.max_profiled_replicas));
  e.plain("profile");
  e.begin_seq();
  for (const ProfileSample& s : h.profile) {
    e.begin_map(true);
    e.plain("nodes"), e.number(static_cast<long long>(s.nodes));
    e.plain("replicas"), e.number(static_cast<long long>(s.replicas));
    e.plain("atomic_batch"), e.number(s.atomic_batch);
    e.plain("grad_time"), e.number(s.grad_time);
    e.plain("step_time"), e.number(s.step_time);
    e.end_map();
  }
  e.end_seq();
  if (h.checkpoint) {
    e.plain("checkpoint");
    e.begin_map();
    e.plain("step"), e.number(h.checkpoint->step);
    e.plain("time"), e.number(h.checkpoint->time);
    e.plain("ready_for_requeue"), e.boolean(h.checkpoint->ready_for_requeue);
    e.end_map();
  }
  e.end_map();
  return e.finish();
}

HintResult parse_hint(std::string_view text) noexcept {
  HintResult res;
  try {
    if (text.size() > kHintMaxBytes) {
      res.error = std::to_string(text.size()) + " bytes, more than the limit of " +
                  std::to_string(kHintMaxBytes);
      return res;
    }
    std::string err;
    std::optional<yaml::Node> root = yaml::parse(text, err);
    if (!root) {
      res.error = err;
      return res;
    }
    return read_hint(*root);
  } catch (const std::exception& e) {
    res.hint.reset();
    res.error = std::string("cannot parse: ") + e.what();
    return res;
  }
}

HintResult read_hint_file(const std::string& path, std::uint32_t expected_uid,
                          std::uint32_t expected_job_id) noexcept {
  HintResult res;
  try {
    FileRead f = read_file_checked(path, kHintMaxBytes, static_cast<uid_t>(expected_uid));
    if (!f) {
      res.error = f.error;
      return res;
    }
    res = parse_hint(f.data);
    if (!res) {
      res.error = path + ": " + res.error;
      return res;
    }
    if (res.hint->job_id != expected_job_id) {
      res.error = path + ": job_id " + std::to_string(res.hint->job_id) + " does not match job " +
                  std::to_string(expected_job_id);
      res.hint.reset();
    } else if (res.hint->uid != expected_uid) {
      res.error = path + ": uid " + std::to_string(res.hint->uid) + " does not match the job's uid " +
                  std::to_string(expected_uid);
      res.hint.reset();
    }
    return res;
  } catch (...) {
    res.hint.reset();
    res.error = "out of memory reading " + path;
    return res;
  }
}

std::string hint_path(const std::string& spool_dir, std::uint32_t job_id) {
  std::string dir = spool_dir;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir + "/" + std::to_string(job_id) + ".hint.yaml";
}

std::string write_hint_file(const std::string& spool_dir, const Hint& hint) noexcept {
  try {
    return write_file_atomic(hint_path(spool_dir, hint.job_id), emit_hint(hint), 0644);
  } catch (const std::exception& e) {
    return std::string("cannot write hint: ") + e.what();
  }
}

}  // namespace pollux
