// Slurm's sched/backfill as a policy: priority (submit) order, rigid jobs,
// a reservation for every job that cannot start, later jobs started only
// where, by the time limits, they delay none of them.
#include <gtest/gtest.h>

#include <stdexcept>

#include "pollux/policy.h"

namespace pollux {
namespace {

// A job of `gpus` GPUs submitted at `submit` with a time limit of `limit`
// seconds; `ran` seconds since it started (when it holds GPUs).
JobInfo bjob(std::uint64_t id, double submit, int gpus, double limit, double ran = 0) {
  JobInfo j;
  j.id = id;
  j.submit_time = submit;
  j.requested_gpus = gpus;
  j.min_replicas = gpus;
  j.max_replicas = gpus;
  j.time_limit = limit;
  j.run_time = ran;
  return j;
}

std::vector<Placement> run(const std::vector<JobInfo>& jobs, const std::vector<NodeInfo>& nodes,
                           const std::vector<Placement>& current, double now = 0) {
  PolicyOptions o;
  auto policy = make_policy("backfill", o);
  EXPECT_NE(policy, nullptr);
  if (policy == nullptr) return std::vector<Placement>(jobs.size());
  const auto alloc = policy->optimize(jobs, nodes, current, now);
  o.interference_avoidance = false;  // not a constraint of the baselines
  o.max_nodes_per_job = 1 << 20;
  const auto err = check_allocation(jobs, nodes, alloc, o);
  EXPECT_FALSE(err) << *err;
  return alloc;
}

TEST(Backfill, StartsJobsInSubmitOrderAtTheirRequestedSize) {
  const std::vector<NodeInfo> nodes{{4}, {4}};
  // Ids against submit order: the submit time decides (priority/basic).
  const std::vector<JobInfo> jobs{bjob(1, 30, 4, 3600), bjob(2, 10, 6, 3600), bjob(3, 20, 2, 3600)};
  const auto alloc = run(jobs, nodes, {{}, {}, {}});
  EXPECT_EQ(placement_gpus(alloc[1]), 6);  // first submitted
  EXPECT_EQ(alloc[1].size(), 2u);          // 4 + 2: the fewest nodes
  EXPECT_EQ(placement_gpus(alloc[2]), 2);  // second
  EXPECT_TRUE(alloc[0].empty());           // last: no room left
}

TEST(Backfill, ShortJobBackfilledLongOneNotAndRunningJobsKeepTheirGpus) {
  const std::vector<NodeInfo> nodes{{4}, {4}};
  // Job 1 holds 6 GPUs until t = 1000 (its limit); job 2 needs all 8, so it
  // is reserved at 1000. Jobs 3 and 4 fit in the 2 free GPUs now: job 3
  // would still hold them at 1000 (limit 2000) and is held back; job 4
  // (limit 900) is done by then and starts.
  const std::vector<JobInfo> jobs{bjob(1, 0, 6, 1000), bjob(2, 1, 8, 1000), bjob(3, 2, 2, 2000),
                                  bjob(4, 3, 2, 900)};
  const std::vector<Placement> current{{{0, 4}, {1, 2}}, {}, {}, {}};
  const auto alloc = run(jobs, nodes, current);
  EXPECT_EQ(alloc[0], current[0]);
  EXPECT_TRUE(alloc[1].empty());
  EXPECT_TRUE(alloc[2].empty());
  EXPECT_EQ(alloc[3], (Placement{{1, 2}}));
  // At t = 500, job 1 started 500 s ago: it still ends at 1000, and a
  // 600-second job would overrun the reservation.
  const std::vector<JobInfo> later{bjob(1, 0, 6, 1000, 500), bjob(2, 1, 8, 1000), bjob(5, 5, 2, 600)};
  EXPECT_TRUE(run(later, nodes, {current[0], {}, {}}, 500)[2].empty());
  // Once job 1 is gone, job 2 starts on everything.
  EXPECT_EQ(placement_gpus(run({jobs[1], jobs[2]}, nodes, {{}, {}}, 1000)[0]), 8);
}

TEST(Backfill, EveryBlockedJobHoldsAReservation) {
  // Slurm's default (bf_job_part_count_reserve=0): not only the first
  // blocked job is protected. One node of 4: job 1 (2 GPUs) ends at 1000,
  // job 2 (1 GPU) at 3000. Job 3 needs 4: reserved at 3000. Job 4 needs 3:
  // reserved at 1000 until 2000. Job 5 (1 GPU, limit 1500) would end
  // before job 3's start - EASY would run it - but takes a GPU job 4 needs
  // at 1000: it waits. Job 6 (1 GPU, limit 900) ends before both: it runs.
  const std::vector<NodeInfo> nodes{{4}};
  const std::vector<JobInfo> jobs{bjob(1, 0, 2, 1000), bjob(2, 1, 1, 3000), bjob(3, 2, 4, 1000),
                                  bjob(4, 3, 3, 1000), bjob(5, 4, 1, 1500), bjob(6, 5, 1, 900)};
  const std::vector<Placement> current{{{0, 2}}, {{0, 1}}, {}, {}, {}, {}};
  const auto alloc = run(jobs, nodes, current);
  EXPECT_TRUE(alloc[2].empty());
  EXPECT_TRUE(alloc[3].empty());
  EXPECT_TRUE(alloc[4].empty());
  EXPECT_EQ(alloc[5], (Placement{{0, 1}}));
}

TEST(Backfill, ReservationsHoldWholeNodes) {
  // As Slurm's backfill map (a node bitmap): job 2 (4 GPUs) cannot start
  // now (3 GPUs free) and is reserved on node 0 (5 GPUs) from t = 1000.
  // Node 0's other GPU is not lent meanwhile: of two long 1-GPU jobs, the
  // first runs on node 1, the second waits, although on node 0 it would
  // leave job 2 its 4 GPUs.
  const std::vector<NodeInfo> nodes{{5}, {4}};
  const std::vector<JobInfo> jobs{bjob(1, 0, 3, 1000), bjob(2, 1, 4, 1000), bjob(3, 2, 3, 5000),
                                  bjob(4, 3, 1, 1e5), bjob(5, 4, 1, 1e5)};
  const std::vector<Placement> current{{{0, 3}}, {}, {{1, 3}}, {}, {}};
  const auto alloc = run(jobs, nodes, current);
  EXPECT_EQ(alloc[0], current[0]);
  EXPECT_TRUE(alloc[1].empty());
  EXPECT_EQ(alloc[2], current[2]);
  EXPECT_EQ(alloc[3], (Placement{{1, 1}}));
  EXPECT_TRUE(alloc[4].empty());
}

TEST(Backfill, NoReservationBeyondTheWindowAndNoLimitIsAYear) {
  // Job 2 cannot start before job 1 ends in two days: beyond bf_window
  // (one day), so no reservation, and job 3 runs on node 1 for three days.
  const std::vector<NodeInfo> nodes{{4}, {4}};
  const double day = 86400;
  std::vector<JobInfo> jobs{bjob(1, 0, 4, 2 * day), bjob(2, 1, 8, day), bjob(3, 2, 4, 3 * day)};
  const std::vector<Placement> current{{{0, 4}}, {}, {}};
  auto alloc = run(jobs, nodes, current);
  EXPECT_TRUE(alloc[1].empty());
  EXPECT_EQ(alloc[2], (Placement{{1, 4}}));
  // Within the window (job 1 ends in half a day) job 2 is reserved from
  // then: job 3 waits, but a 10-minute job 3 runs.
  jobs[0].time_limit = day / 2;
  EXPECT_TRUE(run(jobs, nodes, current)[2].empty());
  jobs[2].time_limit = 600;
  EXPECT_EQ(run(jobs, nodes, current)[2], (Placement{{1, 4}}));
  // No limit (0, Slurm's INFINITE) is a year.
  jobs[2].time_limit = 0;
  EXPECT_TRUE(run(jobs, nodes, current)[2].empty());
  // A running job past its limit is expected to end in a second: job 2 is
  // reserved from now, and the 10-minute job 3 waits.
  jobs[0].run_time = day;
  jobs[2].time_limit = 600;
  EXPECT_TRUE(run(jobs, nodes, current)[2].empty());
}

TEST(Backfill, RejectsBadInput) {
  auto policy = make_policy("backfill", PolicyOptions{});
  ASSERT_NE(policy, nullptr);
  const std::vector<NodeInfo> nodes{{4}};
  EXPECT_THROW(policy->optimize({bjob(1, 0, 0, 60)}, nodes, {{}}, 0), std::invalid_argument);
  EXPECT_THROW(policy->optimize({bjob(1, 0, 1, -60)}, nodes, {{}}, 0), std::invalid_argument);
  EXPECT_THROW(policy->optimize({bjob(1, 0, 1, 60, -1)}, nodes, {{}}, 0), std::invalid_argument);
  // A job larger than the cluster never runs and blocks no one.
  const auto alloc = policy->optimize({bjob(1, 0, 8, 60), bjob(2, 1, 4, 60)}, nodes, {{}, {}}, 0);
  EXPECT_TRUE(alloc[0].empty());
  EXPECT_EQ(alloc[1], (Placement{{0, 4}}));
}

}  // namespace
}  // namespace pollux
