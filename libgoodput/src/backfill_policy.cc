// Slurm's sched/backfill: what a Slurm site runs today, the baseline that
// sched/pollux replaces. Mimicked at the level that decides job completion
// times, from Slurm 22.05's src/plugins/sched/backfill/backfill.c
// (_attempt_backfill, _add_reservation) and select/cons_tres' will-run test
// (src/plugins/select/cons_common/job_test.c, _will_run_test):
//
// - Priority: submit order (submit time, then id). That is priority/basic,
//   Slurm's default PriorityType, which the project's local cluster keeps
//   (its slurm.conf sets none).
// - Rigid jobs: a job runs at exactly requested_gpus, placed as the other
//   baselines are (place_most_free: the nodes with the most free GPUs first,
//   so the fewest nodes), and keeps its GPUs until it ends: nothing is
//   moved, resized or preempted. (A current placement that is not exactly
//   requested_gpus, or no longer fits its nodes - uniformly, with
//   uniform_gpus_per_node - is given up: the job waits again, as a
//   requeued job would. Under this policy alone neither happens.)
// - Each round is one pass of Slurm's main scheduler and backfill cycle at
//   once: the pending jobs in priority order (the first bf_max_job_test,
//   500) each start now if they fit now on nodes that no higher-priority
//   job has reserved during [now, now + their time limit). Otherwise a job
//   gets a reservation at its earliest start: the first time, as running
//   jobs end at their start + time limit (a job past its limit: one second
//   from now, cons_tres' guess), at which it fits on nodes not reserved
//   during [that time, that time + its limit). So a later job is started
//   ahead of an earlier one only where, by the time limits, it delays none.
// - Reservations are Slurm's: every tested job that cannot start gets one
//   (bf_job_part_count_reserve = 0, the default; EASY backfilling would
//   reserve for the first only); it holds its nodes whole (the backfill
//   map is a node bitmap) from its start to its end, both rounded down to
//   bf_resolution (60 s) and at least that long; none begins more than
//   bf_window (one day) ahead, and a job that cannot start within it gets
//   none.
// - A time limit of 0 is Slurm's INFINITE: a year.
//
// Not modelled: Slurm's multifactor priority, QOS and association limits,
// advance reservations, partitions (one partition of every node), the
// 30-second grouping of end times in cons_tres' will-run test, bf_continue
// and bf_max_time (a cycle always finishes), and the main scheduler's
// immediate starts between backfill cycles (here every start waits for the
// next round: the caller's interval).
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "policy_common.h"

namespace pollux::detail {
namespace {

// Slurm 22.05's defaults (backfill.c: BACKFILL_RESOLUTION, BACKFILL_WINDOW,
// DEF_BF_MAX_JOB_TEST; YEAR_SECONDS for an INFINITE limit).
constexpr double kResolution = 60;
constexpr double kWindow = 24 * 3600;
constexpr int kMaxJobTest = 500;
constexpr double kYear = 365 * 24 * 3600.0;

struct Running {  // a job holding GPUs until `end`
  double end;
  Placement where;
};

struct Reservation {  // whole nodes held for a pending job during [begin, end)
  double begin;
  double end;
  std::vector<int> nodes;
};

double limit_of(const JobInfo& j) { return j.time_limit > 0 ? j.time_limit : kYear; }

class BackfillPolicy final : public Policy {
 public:
  explicit BackfillPolicy(const PolicyOptions& options) : Policy(options) {}
  std::string_view name() const noexcept override { return "backfill"; }

  std::vector<Placement> optimize(const std::vector<JobInfo>& jobs, const std::vector<NodeInfo>& nodes,
                                  const std::vector<Placement>& current_in, double now) override {
    const Stopwatch clock;
    validate_round(name(), jobs, nodes, current_in);
    for (const JobInfo& j : jobs)
      if (j.requested_gpus < 1)
        throw std::invalid_argument("backfill: job " + std::to_string(j.id) + " requests fewer than 1 GPU");
    const std::vector<Placement> current = normalized(current_in);
    const std::vector<int> order = fifo_order(jobs);
    long total = 0;
    std::vector<int> capacity(nodes.size());
    for (std::size_t n = 0; n < nodes.size(); ++n) total += capacity[n] = nodes[n].gpus;

    std::vector<Placement> out(jobs.size());
    std::vector<int> free = capacity;
    std::vector<Running> running;
    for (int i : order) {
      if (placement_gpus(current[i]) != jobs[i].requested_gpus || !fits(current[i], free)) continue;
      out[i] = current[i];
      for (const NodeShare& s : out[i]) free[s.node] -= s.gpus;
      const double end = now - jobs[i].run_time + limit_of(jobs[i]);
      running.push_back({end > now ? end : now + 1, out[i]});
    }

    std::vector<Reservation> reserved;
    int tested = 0;
    for (int i : order) {
      if (!out[i].empty() || tested >= kMaxJobTest) continue;
      ++tested;
      const JobInfo& j = jobs[i];
      if (j.requested_gpus > total) continue;  // can never run
      const double limit = limit_of(j);
      // When something ends, in order: now, then each running job's and
      // each reservation's end.
      std::vector<double> times{now};
      for (const Running& r : running) times.push_back(r.end);
      for (const Reservation& r : reserved) times.push_back(r.end);
      std::sort(times.begin(), times.end());
      times.erase(std::unique(times.begin(), times.end()), times.end());
      for (double t : times) {
        if (t < now) continue;
        if (t > now + kWindow) break;  // no reservation that far ahead
        std::vector<int> avail = capacity;
        for (const Running& r : running)
          if (r.end > t)
            for (const NodeShare& s : r.where) avail[s.node] -= s.gpus;
        for (const Reservation& r : reserved)
          if (r.end > t && r.begin <= t + limit)  // Slurm's overlap test of its map's records
            for (int n : r.nodes) avail[n] = 0;
        Placement p = place_most_free(avail, j.requested_gpus, options_.uniform_gpus_per_node);
        if (p.empty()) continue;
        if (t == now) {
          running.push_back({now + limit, p});
          out[i] = std::move(p);
        } else {
          Reservation r;
          r.begin = floor_to_resolution(t);
          r.end = std::max(floor_to_resolution(t + limit), r.begin + kResolution);
          for (const NodeShare& s : p) r.nodes.push_back(s.node);
          reserved.push_back(std::move(r));
        }
        break;
      }
    }
    report_ = PolicyReport{0.0, 0, clock.seconds()};
    return out;
  }

 private:
  bool fits(const Placement& p, const std::vector<int>& free) const {
    for (const NodeShare& s : p)
      if (s.gpus > free[s.node] || (options_.uniform_gpus_per_node && s.gpus != p.front().gpus)) return false;
    return true;
  }
  static double floor_to_resolution(double t) { return std::floor(t / kResolution) * kResolution; }
};

}  // namespace

std::unique_ptr<Policy> make_backfill_policy(const PolicyOptions& options) {
  return std::make_unique<BackfillPolicy>(options);
}

}  // namespace pollux::detail
