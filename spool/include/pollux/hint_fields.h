// YAML emitters and validating readers of the hint's sub-records, shared
// by the hint file and the agent's checkpointed state so that both use the
// same layout and the ranges of doc/hint-format.md.
//
// Readers record the first problem in the MapReader and leave unknown-key
// checking to the caller (MapReader::finish()), so a caller may add fields.
#ifndef POLLUX_HINT_FIELDS_H
#define POLLUX_HINT_FIELDS_H

#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "pollux/hint.h"
#include "pollux/yaml_doc.h"

namespace pollux::hint_fields {

// Ranges of doc/hint-format.md. Integers that Slurm stores in 32 bits stop
// below its NO_VAL markers; counts stop at 2^53 so that they survive a
// round trip through a double.
inline constexpr long long kMaxJobId = 4294967293LL;  // below NO_VAL (0xfffffffe)
inline constexpr long long kMaxUid = 4294967294LL;    // below (uid_t)-1
inline constexpr double kMaxTime = 1e11;              // Unix seconds
inline constexpr long long kMaxRestarts = 65535;      // Slurm's restart_cnt is 16 bits
inline constexpr double kMaxBatch = 1e9;
inline constexpr long long kMaxAtomic = 100000000;
inline constexpr long long kMaxNodes = 65536;
inline constexpr long long kMaxReplicas = 1048576;
inline constexpr long long kMaxAccum = 1000000;
inline constexpr long long kMaxCount = 9007199254740992LL;  // 2^53
inline constexpr double kMaxProgress = 1e15;
inline constexpr double kMaxSeconds = 1e6;  // any fitted or measured time
inline constexpr double kMinSeconds = 1e-9;
inline constexpr double kMaxRestartSeconds = 86400;  // a restart, a checkpoint's save: one day at most

// Field lists. A record's keys, ranges and order are written once, as a
// function template over a field visitor: FieldWriter emits the fields into
// an open map, FieldReader reads and range-checks them (as MapReader's
// integer(), real() and boolean(); ranges are inclusive), so that a file's
// emitter and reader cannot drift apart.

/// Emits each field into an open map.
class FieldWriter {
 public:
  explicit FieldWriter(yaml::Emitter& e) : e_(e) {}
  template <typename Int>
  void integer(std::string_view key, Int v, long long, long long) {
    static_assert(std::is_integral_v<Int>, "an integer field");
    e_.field(key, static_cast<long long>(v));
  }
  void real(std::string_view key, double v, double, double) { e_.field(key, v); }
  /// An optional field is left out while it holds `absent`, so that a
  /// reader older than the field reads what does not need it.
  void optional_real(std::string_view key, double v, double, double, double absent) {
    if (v != absent) e_.field(key, v);
  }
  void boolean(std::string_view key, bool v) { e_.field(key, v); }
  /// Left out while it holds `absent`, as optional_real().
  void optional_boolean(std::string_view key, bool v, bool absent) {
    if (v != absent) e_.field(key, v);
  }

 private:
  yaml::Emitter& e_;
};

/// Reads each field of a map with its range; the first problem is kept
/// in the MapReader (see there).
class FieldReader {
 public:
  explicit FieldReader(yaml::MapReader& r) : r_(r) {}
  template <typename Int>
  void integer(std::string_view key, Int& v, long long lo, long long hi) {
    static_assert(std::is_integral_v<Int>, "an integer field");
    v = static_cast<Int>(r_.integer(key, lo, hi));
  }
  void real(std::string_view key, double& v, double lo, double hi) { v = r_.real(key, lo, hi); }
  /// A missing optional field reads as `absent`.
  void optional_real(std::string_view key, double& v, double lo, double hi, double absent) {
    v = r_.has(key) ? r_.real(key, lo, hi) : absent;
  }
  void boolean(std::string_view key, bool& v) { v = r_.boolean(key); }
  /// A missing optional field reads as `absent`.
  void optional_boolean(std::string_view key, bool& v, bool absent) { v = r_.has(key) ? r_.boolean(key) : absent; }

 private:
  yaml::MapReader& r_;
};

/// Emits `record` as a map of the fields that `list(FieldWriter&, const
/// Record&)` names.
template <typename Record, typename List>
void emit_map(yaml::Emitter& e, const Record& record, List list) {
  e.begin_map();
  FieldWriter w(e);
  list(w, record);
  e.end_map();
}

/// Reads the fields that `list(FieldReader&, Record&)` names into a new
/// Record; the caller checks consistency and unknown keys.
template <typename Record, typename List>
Record read_fields(yaml::MapReader& r, List list) {
  Record record;
  FieldReader f(r);
  list(f, record);
  return record;
}

/// A configuration's size (HintConfig, ProfileSample, the agent's profile
/// entries): nodes, replicas, per-replica batch (an integer, or a real
/// where the record keeps a mean).
template <typename Fields, typename Record>
void shape_fields(Fields& f, Record& s) {
  f.integer("nodes", s.nodes, 1, kMaxNodes);
  f.integer("replicas", s.replicas, 1, kMaxReplicas);
  if constexpr (std::is_floating_point_v<decltype(s.atomic_batch)>)
    f.real("atomic_batch", s.atomic_batch, 1, static_cast<double>(kMaxAtomic));
  else
    f.integer("atomic_batch", s.atomic_batch, 1, kMaxAtomic);
}

/// Records a problem if a shape read by shape_fields() has fewer replicas
/// than nodes.
template <typename Record>
void check_shape(yaml::MapReader& r, const Record& s) {
  if (r.ok() && s.replicas < s.nodes) r.fail("replicas", "fewer than nodes " + std::to_string(s.nodes));
}

/// Where training stands (the hint's and the agent state's): restarts,
/// optimizer steps, progress.
template <typename Fields, typename Record>
void progress_fields(Fields& f, Record& s) {
  f.integer("restart_count", s.restart_count, 0, kMaxRestarts);
  f.integer("step", s.step, 0, kMaxCount);
  f.real("progress", s.progress, 0, kMaxProgress);
}

void emit(yaml::Emitter& e, const BatchLimits& limits);
void emit(yaml::Emitter& e, const PerfParams& perf);
void emit(yaml::Emitter& e, const GradStats& grad);
void emit(yaml::Emitter& e, const HintConfig& config);
/// Writes the sample's fields into an open (flow) map.
void emit_fields(yaml::Emitter& e, const ProfileSample& sample);

/// A GPU type name as the value of `key` in an open map: plain where
/// YAML would read it as a string, else quoted ('1080', 'true').
void emit_gpu_type(yaml::Emitter& e, std::string_view key, const std::string& name);
/// The fits on other GPU types under `key` in an open map, as a sequence
/// of block maps {gpu_type, perf}; nothing when there are none.
void emit_type_perf(yaml::Emitter& e, std::string_view key, const std::vector<HintTypePerf>& fits);

BatchLimits read_limits(yaml::MapReader& r);
PerfParams read_perf(yaml::MapReader& r);
GradStats read_grad(yaml::MapReader& r);
HintConfig read_config(yaml::MapReader& r);
ProfileSample read_sample(yaml::MapReader& r);
/// The required GPU type name under `key`: refused unless valid_gpu_type().
std::string read_gpu_type(yaml::MapReader& r, std::string_view key);
/// The optional fits on other GPU types under `key` (none when absent):
/// at most kHintMaxTypes, valid names, distinct, none equal to `current`
/// (the record's own gpu_type).
std::vector<HintTypePerf> read_type_perf(yaml::MapReader& r, std::string_view key, const std::string& current);

/// Refuses in `r` the first item of `items` (read under `key`; each has a
/// gpu_type) that names `current`, the record's own type, or repeats an
/// earlier item's: "<key>[i].gpu_type: ...". The rule of every list of
/// what a job has on its *other* types.
template <typename Item>
void check_other_types(yaml::MapReader& r, std::string_view key, const std::vector<Item>& items,
                       const std::string& current) {
  for (std::size_t i = 0; i < items.size() && r.ok(); ++i) {
    const std::string name = std::string(key) + "[" + std::to_string(i) + "].gpu_type";
    if (items[i].gpu_type == current) r.fail(name, "'" + current + "' is the current gpu_type");
    for (std::size_t j = 0; j < i && r.ok(); ++j)
      if (items[j].gpu_type == items[i].gpu_type) r.fail(name, "'" + items[i].gpu_type + "' repeats an earlier item");
  }
}

}  // namespace pollux::hint_fields

#endif  // POLLUX_HINT_FIELDS_H
