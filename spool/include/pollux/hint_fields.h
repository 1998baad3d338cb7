// YAML emitters and validating readers of the hint's sub-records, shared
// by the hint file and the agent's checkpointed state so that both use the
// same layout and the ranges of doc/hint-format.md.
//
// Readers record the first problem in the MapReader and leave unknown-key
// checking to the caller (MapReader::finish()), so a caller may add fields.
#ifndef POLLUX_HINT_FIELDS_H
#define POLLUX_HINT_FIELDS_H

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

void emit(yaml::Emitter& e, const BatchLimits& limits);
void emit(yaml::Emitter& e, const PerfParams& perf);
void emit(yaml::Emitter& e, const GradStats& grad);
void emit(yaml::Emitter& e, const HintConfig& config);
/// Writes the sample's fields into an open (flow) map.
void emit_fields(yaml::Emitter& e, const ProfileSample& sample);

BatchLimits read_limits(yaml::MapReader& r);
PerfParams read_perf(yaml::MapReader& r);
GradStats read_grad(yaml::MapReader& r);
HintConfig read_config(yaml::MapReader& r);
ProfileSample read_sample(yaml::MapReader& r);

}  // namespace pollux::hint_fields

#endif  // POLLUX_HINT_FIELDS_H
