// The hint file: emitter, validating parser and atomic writer
// (see pollux/hint.h; ranges in doc/hint-format.md).
#include "pollux/hint.h"

#include "pollux/atomic_file.h"
#include "pollux/hint_fields.h"
#include "pollux/yaml_doc.h"

namespace pollux {
namespace {

using namespace hint_fields;

// The top-level scalars after `version`, and the checkpoint's fields, for
// emit_hint() and read_hint() alike.
const auto header_fields = [](auto& f, auto& h) {
  f.integer("job_id", h.job_id, 1, kMaxJobId);
  f.integer("uid", h.uid, 0, kMaxUid);
  f.real("timestamp", h.timestamp, 0, kMaxTime);
  progress_fields(f, h);
};

const auto checkpoint_fields = [](auto& f, auto& c) {
  f.integer("step", c.step, 0, kMaxCount);
  f.real("time", c.time, 0, kMaxTime);
  f.boolean("ready_for_requeue", c.ready_for_requeue);
};

// Optional, last: a hint without it (an older agent's, or before the first
// step) is read as "not measured".
const auto restart_field = [](auto& f, auto& h) {
  f.optional_real("restart_seconds", h.restart_seconds, 0, kMaxRestartSeconds, 0.0);
};

HintCheckpoint read_checkpoint(yaml::MapReader& r) { return read_fields<HintCheckpoint>(r, checkpoint_fields); }

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
  FieldReader f(r);
  header_fields(f, h);
  h.limits = r.sub("limits", read_limits);
  h.config = r.sub("config", read_config);
  if (r.has("gpu_type")) h.gpu_type = read_gpu_type(r, "gpu_type");
  if (r.has("perf")) h.perf = r.sub("perf", read_perf);
  if (r.has("grad")) h.grad = r.sub("grad", read_grad);
  h.max_profiled_replicas = static_cast<int>(r.integer("max_profiled_replicas", 0, kMaxReplicas));
  h.profile = r.each("profile", kHintMaxSamples, read_sample);
  h.type_perf = read_type_perf(r, "type_perf", h.gpu_type);
  if (r.has("checkpoint")) h.checkpoint = r.sub("checkpoint", read_checkpoint);
  if (r.has("resize_signal")) h.resize_signal = static_cast<int>(r.integer("resize_signal", 1, kHintMaxSignal));
  restart_field(f, h);
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
  e.field("version", h.version);
  FieldWriter w(e);
  header_fields(w, h);
  e.plain("limits"), emit(e, h.limits);
  e.plain("config"), emit(e, h.config);
  if (!h.gpu_type.empty()) emit_gpu_type(e, "gpu_type", h.gpu_type);
  if (h.perf) e.plain("perf"), emit(e, *h.perf);
  if (h.grad) e.plain("grad"), emit(e, *h.grad);
  e.field("max_profiled_replicas", h.max_profiled_replicas);
  e.plain("profile");
  e.begin_seq();
  for (const ProfileSample& s : h.profile) {
    e.begin_map(true);
    emit_fields(e, s);
    e.end_map();
  }
  e.end_seq();
  emit_type_perf(e, "type_perf", h.type_perf);
  if (h.checkpoint) e.plain("checkpoint"), emit_map(e, *h.checkpoint, checkpoint_fields);
  if (h.resize_signal > 0) e.field("resize_signal", h.resize_signal);
  restart_field(w, h);
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
