// SPDX-License-Identifier: GPL-2.0-or-later
// Which jobs are elastic, and the sizes an elastic job may be given.
//
// An elastic job is a requeueable batch job (--requeue, or JobRequeue=1 in
// slurm.conf and no --no-requeue) submitted with a node range (-N MIN-MAX,
// MIN < MAX) and an untyped GPU count per node (--gpus-per-node=G or
// --gres=gpu:G), and nothing else that fixes its shape. sched/pollux may run it on any n nodes, MIN <= n <= MAX, with the
// same g GPUs on each, 1 <= g <= G. Every other job is rigid, among them
// jobs with --nodelist (the user chose the nodes: sched/pollux chooses them
// for an elastic job; --exclude and partitions are kept) and --exclusive
// (Slurm grants whole nodes, while sched/pollux shares nodes by the GPU). The same
// rules classify a job at submission (job_submit/pollux, from the request)
// and in the scheduler (sched/pollux, from the job record).
#ifndef POLLUX_SCHED_ELASTIC_H
#define POLLUX_SCHED_ELASTIC_H

#include <optional>
#include <string>
#include <string_view>

namespace pollux::sched {

struct ElasticRange {
  int min_nodes = 1;
  int max_nodes = 1;
  int gpus_per_node = 1;  ///< the most GPUs per node the job takes

  int min_gpus() const noexcept { return min_nodes; }
  int max_gpus() const noexcept { return max_nodes * gpus_per_node; }
  /// True when (nodes, gpus on each) is a size the job may be given.
  bool allows(int nodes, int gpus_per_node_used) const noexcept;
  bool operator==(const ElasticRange& o) const noexcept {
    return min_nodes == o.min_nodes && max_nodes == o.max_nodes && gpus_per_node == o.gpus_per_node;
  }
};

/// A job size: nodes, and GPUs on each (job_size_fields.h: as Slurm's job
/// fields).
struct Size {
  int nodes = 0;
  int gpus_per_node = 0;
  bool operator==(const Size& o) const noexcept { return nodes == o.nodes && gpus_per_node == o.gpus_per_node; }
};

/// "MIN-MAXxG", e.g. "1-4x4".
std::string format_range(const ElasticRange& range);
std::optional<ElasticRange> parse_range(std::string_view text);

/// The parts of a job (request or record) that decide whether it is elastic.
/// Node counts of 0 or above kMaxNodes mean "not given".
struct JobShape {
  bool batch = false;          ///< has a batch script (sbatch)
  bool requeue = false;        ///< requeueable (--requeue or the JobRequeue default)
  bool array = false;          ///< a job array or one of its tasks
  bool heterogeneous = false;  ///< a het job component
  unsigned min_nodes = 0;
  unsigned max_nodes = 0;
  std::string tres_per_node;   ///< e.g. "gres:gpu:4"
  std::string tres_per_job;    ///< --gpus
  std::string tres_per_socket;
  std::string tres_per_task;
  bool node_list = false;      ///< --nodelist: the user chose the nodes
  bool exclusive = false;      ///< --exclusive: whole nodes
};

inline constexpr unsigned kMaxNodes = 100000;

/// The range when the job is elastic; otherwise nullopt and `why_rigid`
/// (when given) says which rule it misses.
std::optional<ElasticRange> classify(const JobShape& shape, std::string* why_rigid = nullptr);

/// The range an administrator's size update gives an elastic job
/// (scontrol update NumNodes=MIN[-MAX], TresPerNode=gres:gpu:G): the given
/// parts replace those of `now` (a MIN alone above the old MAX raises MAX to
/// it). Node counts of 0 or above kMaxNodes and an empty `tres_per_node`
/// mean "not given". nullopt, with `why`, for an update that is no range
/// sched/pollux can keep (typed or non-GPU TRES, a reversed range).
std::optional<ElasticRange> updated_range(const ElasticRange& now, unsigned min_nodes, unsigned max_nodes,
                                          std::string_view tres_per_node, std::string* why = nullptr);

/// GPUs per node in a tres_per_node string when it asks for untyped GPUs
/// and nothing else ("gres:gpu:4", "gres/gpu:4", "gpu:4"); nullopt otherwise.
std::optional<int> untyped_gpus_per_node(std::string_view tres_per_node);

/// A GPU count in a TRES string that asks for GPUs and nothing else, typed
/// or not ("gres/gpu:h100:2", "gres:gpu:2", "gpu:a100:1"): its GRES type
/// ("" untyped) and count; nullopt otherwise.
struct GpuCount {
  std::string type;
  int gpus = 0;
};
std::optional<GpuCount> gpus_in_tres(std::string_view tres);

/// Whether a per-job, per-socket or per-task TRES string asks for more than
/// CPUs: from Slurm 24.11 sbatch writes --cpus-per-task into tres_per_task
/// ("cpu=2"), which sizes nothing sched/pollux decides.
bool asks_beyond_cpus(std::string_view tres);

}  // namespace pollux::sched

#endif  // POLLUX_SCHED_ELASTIC_H
