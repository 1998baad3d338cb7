// Round statistics: counters since the start and since a reset, phase
// durations, decisions by kind and reason, checkpoint acknowledgements and
// time-outs, GPUs by kind and the per-job rows; and what they are written
// as: the status JSON, the Prometheus text, the reset request.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>

#include "io/round_stats.h"
#include "io/status_file.h"
#include "spool/spool_test_util.h"

namespace pollux::sched {
namespace {

// Two GPU nodes of 4; job 1 runs on 2 GPUs of n0, job 2 pending; a rigid
// job holds 1 GPU of n1.
Snapshot two_jobs(double now) {
  Snapshot s;
  s.now = now;
  s.nodes = {{"n0", 4, 0, true}, {"n1", 4, 1, true}};
  ElasticJobSnapshot a;
  a.job_id = 1;
  a.uid = ::getuid();
  a.partition = "gpu";
  a.running = true;
  a.restarts = 2;
  a.current = {{0, 2}};
  ElasticJobSnapshot b;
  b.job_id = 2;
  b.uid = 4000000;  // no such user: the number
  b.partition = "gpu";
  s.jobs = {a, b};
  return s;
}

JobDecision decision(std::size_t job, Action action, Phase phase, const std::string& why, int gpus) {
  JobDecision d;
  d.job = job;
  d.action = action;
  d.state.phase = phase;
  d.state.why = why;
  d.view.gpus = gpus;
  d.view.nodes = gpus > 0 ? 1 : 0;
  d.view.goodput = 100.0 * gpus;
  d.view.efficiency = 0.5;
  d.view.speedup = gpus;
  d.view.batch = 64;
  return d;
}

RoundRecord record(RoundKind kind, double snapshot_ms, double plan_ms) {
  RoundRecord r;
  r.kind = kind;
  r.snapshot_ms = snapshot_ms;
  r.plan_ms = plan_ms;
  r.total_ms = snapshot_ms + plan_ms;
  return r;
}

TEST(RoundStats, CountsRoundsPhasesAndDecisionsSinceTheStartAndTheReset) {
  RoundStats stats(1000);
  const Snapshot snap = two_jobs(1010);
  const std::vector<JobInput> inputs(2);
  RoundResult result;
  result.decisions = {decision(0, Action::kSignal, Phase::kCheckpointing, "grow", 4),
                      decision(1, Action::kRelease, Phase::kStarting, "start", 2)};
  RoundRecord r = record(RoundKind::kPeriodic, 2, 30);
  r.enacted = true;
  r.enact_ms = 4;
  r.enact_errors = 1;
  r.refused_sizes = 1;
  r.hints_rejected = {{"invalid", 2}};
  stats.add(snap, inputs, result, r);
  result.decisions = {decision(0, Action::kNone, Phase::kCheckpointing, "grow", 4),
                      decision(1, Action::kNone, Phase::kStarting, "start", 2)};
  stats.add(snap, inputs, result, record(RoundKind::kTransition, 4, 10));

  const RoundTotals& t = stats.since_start();
  EXPECT_EQ(t.since, 1000);
  EXPECT_EQ(t.rounds.at("periodic"), 1);
  EXPECT_EQ(t.rounds.at("transition"), 1);
  EXPECT_EQ(t.rounds.count("arrivals"), 0u);
  EXPECT_EQ(t.phases.at("snapshot").count, 2);
  EXPECT_DOUBLE_EQ(t.phases.at("snapshot").last_ms, 4);
  EXPECT_DOUBLE_EQ(t.phases.at("snapshot").mean_ms(), 3);
  EXPECT_DOUBLE_EQ(t.phases.at("plan").max_ms, 30);
  EXPECT_EQ(t.phases.at("enact").count, 1);  // only the round that took the write locks
  EXPECT_EQ(t.jobs_considered, 4);
  EXPECT_EQ(t.decisions, (std::map<std::string, long long>{{"grow", 1}, {"start", 1}}));
  EXPECT_EQ(t.reasons, (std::map<std::string, long long>{{"grow", 1}, {"start", 1}}));
  EXPECT_EQ(t.enact_errors, 1);
  EXPECT_EQ(t.refused_sizes, 1);
  EXPECT_EQ(t.hints_rejected.at("invalid"), 2);

  stats.reset(1020);
  EXPECT_EQ(stats.since_reset().since, 1020);
  EXPECT_TRUE(stats.since_reset().rounds.empty());
  stats.add(snap, inputs, result, record(RoundKind::kArrivals, 1, 1));
  EXPECT_EQ(stats.since_reset().rounds.at("arrivals"), 1);
  EXPECT_EQ(stats.since_reset().phases.at("snapshot").count, 1);
  EXPECT_EQ(stats.since_start().phases.at("snapshot").count, 3);  // the reset leaves these
  EXPECT_EQ(stats.since_start().decisions.at("grow"), 1);
}

TEST(RoundStats, ARequeueCountsAnAcknowledgementOrATimeOut) {
  RoundStats stats(0);
  Snapshot snap = two_jobs(2000);
  JobState ckpt;
  ckpt.phase = Phase::kCheckpointing;
  ckpt.since = 1900;
  snap.jobs[0].state = ckpt;
  snap.jobs[1].running = true;
  snap.jobs[1].state = ckpt;
  std::vector<JobInput> inputs(2);
  inputs[0].checkpoint_ack = 1950;  // after the signal: acknowledged
  inputs[1].checkpoint_ack = 1800;  // an older checkpoint: the time-out requeued it
  RoundResult result;
  result.decisions = {decision(0, Action::kRequeue, Phase::kStarting, "grow", 4),
                      decision(1, Action::kRequeue, Phase::kHeld, "preempt", 0)};
  result.decisions[1].checkpoint_timed_out = true;  // plan_round's judgement (sched-test)
  stats.add(snap, inputs, result, record(RoundKind::kTransition, 1, 1));
  EXPECT_EQ(stats.since_start().checkpoint_acks, 1);
  EXPECT_EQ(stats.since_start().checkpoint_timeouts, 1);
  EXPECT_EQ(stats.since_start().decisions.at("requeue"), 2);
  EXPECT_EQ(stats.since_start().reasons.at("preempt"), 1);
}

// One periodic round of two_jobs: job 2 held, job 1 running on 2 GPUs,
// of the kind the round gave it when one is named.
RoundStats one_round(const std::string& kind = "") {
  RoundStats stats(0);
  RoundResult result;
  result.decisions = {decision(1, Action::kHold, Phase::kHeld, "wait", 0),
                      decision(0, Action::kNone, Phase::kRunning, "start", 2)};
  if (!kind.empty()) result.decisions[1].view.kind = kind;
  stats.add(two_jobs(10), std::vector<JobInput>(2), result, record(RoundKind::kPeriodic, 1, 1));
  return stats;
}

TEST(RoundStats, AMoldableJobsGpusAreCountedApart) {
  const RoundStats stats = one_round("moldable");  // its agent announced no resize signal
  EXPECT_EQ(stats.gpus().moldable, 2);
  EXPECT_EQ(stats.gpus().elastic, 0);
  EXPECT_EQ(stats.gpus().idle, 5);
}

TEST(RoundStats, GpusByKindAndOneRowPerJob) {
  const RoundStats stats = one_round();
  const GpuUse& g = stats.gpus();
  EXPECT_EQ(g.total, 8);
  EXPECT_EQ(g.elastic, 2);
  EXPECT_EQ(g.rigid, 1);
  EXPECT_EQ(g.moldable, 0);
  EXPECT_EQ(g.idle, 5);
  ASSERT_EQ(stats.jobs().size(), 2u);
  const JobRow& a = stats.jobs()[0];  // sorted by job id
  EXPECT_EQ(a.job_id, 1u);
  EXPECT_EQ(a.user, user_name(::getuid()));
  EXPECT_EQ(a.partition, "gpu");
  EXPECT_EQ(a.phase, "run");
  EXPECT_EQ(a.restarts, 2);
  EXPECT_TRUE(a.running);
  EXPECT_EQ(stats.jobs()[1].user, "4000000");
  EXPECT_EQ(stats.jobs()[1].action, "hold");
  EXPECT_DOUBLE_EQ(stats.cluster_goodput(), 200);  // the running job's only
  EXPECT_EQ(stats.since_start().decisions.at("hold"), 1);
}

RoundStats sample_stats() {
  RoundStats stats(1000);
  Snapshot snap = two_jobs(1010);
  snap.jobs[0].partition = "gpu \"a\\b\"\n";  // quoted in both formats
  RoundResult result;
  result.decisions = {decision(0, Action::kSignal, Phase::kCheckpointing, "shrink", 1),
                      decision(1, Action::kHold, Phase::kHeld, "wait", 0)};
  result.decisions[0].view.goodput = std::nan("");  // written as 0
  RoundRecord r = record(RoundKind::kPeriodic, 2.5, 40);
  r.hints_rejected = {{"owner", 1}};
  std::vector<JobInput> inputs(2);
  inputs[1].restart_seconds = 12.5;  // its agent's measure
  stats.add(snap, inputs, result, r);
  return stats;
}

TEST(StatusFile, TheMetricsAreInPrometheusTextFormat) {
  const std::string m = metrics_text(sample_stats());
  EXPECT_NE(m.find("# TYPE pollux_rounds_total counter\npollux_rounds_total{kind=\"periodic\"} 1\n"), std::string::npos);
  EXPECT_NE(m.find("pollux_round_phase_seconds_sum{phase=\"snapshot\"} 0.0025\n"), std::string::npos);
  EXPECT_NE(m.find("pollux_round_phase_seconds_count{phase=\"plan\"} 1\n"), std::string::npos);
  EXPECT_NE(m.find("pollux_decisions_total{kind=\"shrink\"} 1\n"), std::string::npos);
  EXPECT_NE(m.find("pollux_hints_rejected_total{reason=\"owner\"} 1\n"), std::string::npos);
  EXPECT_NE(m.find("pollux_gpus{kind=\"idle\"} 5\n"), std::string::npos);
  EXPECT_NE(m.find("pollux_job_goodput{job_id=\"1\",user=\"" + user_name(::getuid()) +
                   "\",partition=\"gpu \\\"a\\\\b\\\"\\n\"} 0\n"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("pollux_job_restart_seconds{job_id=\"2\",user=\"4000000\",partition=\"gpu\"} 12.5\n"),
            std::string::npos);
  EXPECT_NE(m.find("pollux_job_info{job_id=\"2\",user=\"4000000\",partition=\"gpu\",phase=\"held\",why=\"wait\",cap=\"\"} 1\n"),
            std::string::npos);
  EXPECT_EQ(m.find("nan"), std::string::npos);
  EXPECT_EQ(m.back(), '\n');
}

TEST(StatusFile, TheStatusIsJsonWithBothSpansAndTheJobs) {
  const std::string j = status_json(sample_stats(), 1011);
  EXPECT_EQ(j.rfind("{\"version\": 1, \"written\": 1011, \"last_round\": 1010,", 0), 0u) << j;
  EXPECT_NE(j.find("\"since_start\": {\"since\": 1000, \"rounds\": {\"periodic\": 1}"), std::string::npos) << j;
  EXPECT_NE(j.find("\"since_reset\": {\"since\": 1000,"), std::string::npos);
  EXPECT_NE(j.find("\"snapshot\": {\"count\": 1, \"last_ms\": 2.5, \"mean_ms\": 2.5, \"max_ms\": 2.5}"),
            std::string::npos);
  EXPECT_NE(j.find("\"gpus\": {\"total\": 8, \"elastic\": 2, \"moldable\": 0, \"rigid\": 1, \"suspended\": 0, \"idle\": 5, "
                   "\"powered_down\": 0, \"booting\": 0}"),
            std::string::npos);
  EXPECT_NE(j.find("\"partition\": \"gpu \\\"a\\\\b\\\"\\u000a\""), std::string::npos) << j;
  EXPECT_NE(j.find("\"goodput\": 0,"), std::string::npos);
}

// A suspended elastic job (scontrol suspend) has its row (state
// suspended) and its GPUs counted apart, not as a rigid job's.
TEST(RoundStats, ASuspendedJobHasItsRowAndItsGpusCountedApart) {
  RoundStats stats(0);
  Snapshot snap = two_jobs(10);
  snap.jobs[0].running = false;
  snap.jobs[0].suspended = true;
  RoundResult result;
  result.decisions = {decision(0, Action::kNone, Phase::kSuspended, "grow", 2),
                      decision(1, Action::kHold, Phase::kHeld, "wait", 0)};
  stats.add(snap, std::vector<JobInput>(2), result, record(RoundKind::kPeriodic, 1, 1));
  const GpuUse& g = stats.gpus();
  EXPECT_EQ(g.suspended, 2);
  EXPECT_EQ(g.elastic, 0);
  EXPECT_EQ(g.rigid, 1);
  EXPECT_EQ(g.idle, 5);
  ASSERT_EQ(stats.jobs().size(), 2u);
  EXPECT_EQ(stats.jobs()[0].phase, "suspended");
  EXPECT_FALSE(stats.jobs()[0].running);
  EXPECT_DOUBLE_EQ(stats.cluster_goodput(), 0);
  const std::string m = metrics_text(stats);
  EXPECT_NE(m.find("pollux_gpus{kind=\"suspended\"} 2\n"), std::string::npos) << m;
  EXPECT_NE(m.find("phase=\"suspended\",why=\"grow\",cap=\"\"} 1\n"), std::string::npos) << m;
  EXPECT_NE(status_json(stats, 11).find("\"suspended\": 2, \"idle\": 5, \"powered_down\": 0"), std::string::npos);
}

// Slurm's power saving: GPUs of nodes powered down or booting are said
// apart (a part of the counts by holder: idle GPUs there are not idle
// like the others), in the status file and the metrics.
TEST(RoundStats, GpusOfPoweredDownAndBootingNodesAreSaid) {
  RoundStats stats(0);
  Snapshot snap = two_jobs(10);
  snap.nodes[1].power = Power::kOff;
  snap.nodes[0].power = Power::kBooting;
  RoundResult result;
  result.decisions = {decision(0, Action::kNone, Phase::kRunning, "start", 2),
                      decision(1, Action::kHold, Phase::kHeld, "wait", 0)};
  stats.add(snap, std::vector<JobInput>(2), result, record(RoundKind::kPeriodic, 1, 1));
  const GpuUse& g = stats.gpus();
  EXPECT_EQ(g.powered_down, 4);
  EXPECT_EQ(g.booting, 4);
  EXPECT_EQ(g.total, 8);
  const std::string m = metrics_text(stats);
  EXPECT_NE(m.find("pollux_gpus_power{state=\"powered_down\"} 4\npollux_gpus_power{state=\"booting\"} 4\n"),
            std::string::npos) << m;
  EXPECT_NE(status_json(stats, 11).find("\"powered_down\": 4, \"booting\": 4}"), std::string::npos);
}

// Goodput auto-scaling as the last periodic round decided: in the status
// file and the metrics only while it is on; nodes powered down counted.
TEST(RoundStats, GoodputAutoscalingIsSaidWhileItIsOn) {
  RoundStats stats(0);
  Snapshot snap = two_jobs(10);
  RoundResult result;
  stats.add(snap, std::vector<JobInput>(2), result, record(RoundKind::kPeriodic, 1, 1));
  EXPECT_EQ(status_json(stats, 11).find("\"autoscale\""), std::string::npos);
  EXPECT_EQ(metrics_text(stats).find("pollux_autoscale_utility"), std::string::npos);
  result.autoscale.active = true;
  result.autoscale.target = 1;
  result.autoscale.paid = 2;
  result.autoscale.utility = 0.25;
  result.autoscale.why = "utility 0.25 below 0.35: 1 node worth running of 2 on";
  RoundRecord r = record(RoundKind::kPeriodic, 1, 1);
  r.nodes_powered_down = 1;
  r.nodes_powered_up = 2;
  stats.add(snap, std::vector<JobInput>(2), result, r);
  EXPECT_EQ(stats.since_start().nodes_powered_down, 1);
  EXPECT_EQ(stats.since_start().nodes_powered_up, 2);
  const std::string j = status_json(stats, 12);
  EXPECT_NE(j.find("\"autoscale\": {\"target\": 1, \"on\": 2, \"utility\": 0.25, \"why\": \"utility 0.25 below 0.35: 1 node "
                   "worth running of 2 on\"}"),
            std::string::npos) << j;
  EXPECT_NE(j.find("\"nodes_powered_down\": 1, \"nodes_powered_up\": 2}"), std::string::npos) << j;
  const std::string m = metrics_text(stats);
  EXPECT_NE(m.find("pollux_nodes_powered_down_total 1\n"), std::string::npos) << m;
  EXPECT_NE(m.find("pollux_nodes_powered_up_total 2\n"), std::string::npos) << m;
  EXPECT_NE(m.find("pollux_autoscale_nodes{state=\"target\"} 1\npollux_autoscale_nodes{state=\"on\"} 2\n"),
            std::string::npos) << m;
  EXPECT_NE(m.find("pollux_autoscale_utility 0.25\n"), std::string::npos) << m;
  // An arrivals round's plan (where new jobs may go) is not the periodic one's: kept as it was.
  RoundResult arrivals = result;
  arrivals.autoscale.places_only = true;
  arrivals.autoscale.target = 3;
  stats.add(snap, std::vector<JobInput>(2), arrivals, record(RoundKind::kArrivals, 1, 1));
  EXPECT_EQ(stats.autoscale().target, 1);
  // Turned off: no longer said.
  stats.add(snap, std::vector<JobInput>(2), RoundResult{}, record(RoundKind::kPeriodic, 1, 1));
  EXPECT_EQ(status_json(stats, 13).find("\"autoscale\""), std::string::npos);
}

// The spool's space as the last round saw it: in the status file and the
// metrics, full or not.
TEST(StatusFile, TheSpoolsSpaceIsWrittenAndAFullSpoolSaysSo) {
  for (bool full : {false, true}) {
    RoundStats stats(0);
    RoundRecord r = record(RoundKind::kPeriodic, 1, 1);
    r.spool_dir = "/var/spool/pollux";
    r.spool.known = true;
    r.spool.full = full;
    r.spool.free_bytes = full ? 4096 : 1 << 30;
    r.spool.inodes_counted = true;
    r.spool.free_inodes = full ? 1 : 1000;
    stats.add(two_jobs(10), std::vector<JobInput>(2), RoundResult{}, r);
    const std::string j = status_json(stats, 11);
    EXPECT_NE(j.find("\"spool\": {\"dir\": \"/var/spool/pollux\", \"known\": true, \"full\": " +
                     std::string(full ? "true" : "false") + ", \"free_bytes\": " +
                     std::to_string(r.spool.free_bytes) + ", \"free_inodes\": " + std::to_string(r.spool.free_inodes)),
              std::string::npos)
        << j;
    const std::string m = metrics_text(stats);
    EXPECT_NE(m.find("\npollux_spool_full " + std::string(full ? "1" : "0") + "\n"), std::string::npos) << m;
    EXPECT_NE(m.find("\npollux_spool_free_bytes " + std::to_string(r.spool.free_bytes) + "\n"), std::string::npos);
    EXPECT_NE(m.find("\npollux_spool_free_inodes " + std::to_string(r.spool.free_inodes) + "\n"), std::string::npos);
  }
  RoundStats stats(0);  // a spool that cannot be examined is as good as full for the agents
  RoundRecord r = record(RoundKind::kPeriodic, 1, 1);
  r.spool.error = "No such file or directory";
  stats.add(two_jobs(10), std::vector<JobInput>(2), RoundResult{}, r);
  EXPECT_NE(metrics_text(stats).find("\npollux_spool_full 1\n"), std::string::npos);
  EXPECT_EQ(metrics_text(stats).find("pollux_spool_free_inodes"), std::string::npos);
  EXPECT_NE(status_json(stats, 11).find("\"free_inodes\": null, \"error\": \"No such file or directory\""),
            std::string::npos);
}

// sample_stats() on a cluster of two GPU types: n0 a100, n1 h100 (its
// rigid GPU); job 1 on n0's GPUs.
RoundStats typed_stats(std::vector<std::string> types = {"a100", "h100"}) {
  RoundStats stats(1000);
  Snapshot snap = two_jobs(1010);
  snap.gpu_types = std::move(types);
  snap.nodes[1].type = std::max(0, static_cast<int>(snap.gpu_types.size()) - 1);
  RoundResult result;
  result.decisions = {decision(0, Action::kNone, Phase::kRunning, "start", 2),
                      decision(1, Action::kHold, Phase::kHeld, "wait", 0)};
  if (!snap.gpu_types.empty()) result.decisions[0].view.gpu_type = snap.gpu_types[0];
  stats.add(snap, std::vector<JobInput>(2), result, record(RoundKind::kPeriodic, 1, 1));
  return stats;
}

TEST(RoundStats, GpusByTypeAndEachJobsTypeOnlyWithTwoTypesOrMore) {
  const RoundStats stats = typed_stats();
  ASSERT_EQ(stats.gpus_by_type().size(), 2u);
  const TypeGpuUse& a = stats.gpus_by_type()[0];
  const TypeGpuUse& h = stats.gpus_by_type()[1];
  EXPECT_EQ(a.type, "a100");
  EXPECT_EQ(a.use.total, 4);
  EXPECT_EQ(a.use.elastic, 2);
  EXPECT_EQ(a.use.idle, 2);
  EXPECT_EQ(h.type, "h100");
  EXPECT_EQ(h.use.rigid, 1);
  EXPECT_EQ(h.use.elastic, 0);
  EXPECT_EQ(h.use.idle, 3);
  EXPECT_EQ(stats.gpus().idle, 5);  // the whole cluster's as before
  EXPECT_EQ(stats.jobs()[0].gpu_type, "a100");
  EXPECT_EQ(stats.jobs()[1].gpu_type, "");  // no GPUs
  EXPECT_EQ(typed_stats({"", "h100"}).gpus_by_type()[0].type, "untyped");
  const RoundStats one = typed_stats({"a100"});  // one type: as an untyped cluster
  EXPECT_TRUE(one.gpus_by_type().empty());
  EXPECT_EQ(one.jobs()[0].gpu_type, "");
}

TEST(StatusFile, TypesAreWrittenOnlyOnAClusterOfTwoOrMore) {
  const std::string m = metrics_text(typed_stats());
  EXPECT_NE(m.find("pollux_gpus_by_type{gpu_type=\"a100\",kind=\"elastic\"} 2\n"), std::string::npos) << m;
  EXPECT_NE(m.find("pollux_gpus_by_type{gpu_type=\"h100\",kind=\"rigid\"} 1\n"), std::string::npos);
  EXPECT_NE(m.find("pollux_cluster_gpus_by_type{gpu_type=\"h100\"} 4\n"), std::string::npos);
  EXPECT_NE(m.find("pollux_job_gpus{job_id=\"1\",user=\"" + user_name(::getuid()) +
                   "\",partition=\"gpu\",gpu_type=\"a100\"} 2\n"),
            std::string::npos);
  EXPECT_NE(m.find("pollux_job_info{job_id=\"2\",user=\"4000000\",partition=\"gpu\",gpu_type=\"\",phase=\"held\""),
            std::string::npos);
  const std::string j = status_json(typed_stats(), 1011);
  EXPECT_NE(j.find(", \"gpus_by_type\": {\"a100\": {\"total\": 4, \"elastic\": 2, \"moldable\": 0, \"rigid\": 0, "
                   "\"suspended\": 0, \"idle\": 2, \"powered_down\": 0, \"booting\": 0}, \"h100\": {"),
            std::string::npos)
      << j;
  EXPECT_NE(j.find("\"restarts\": 2, \"gpu_type\": \"a100\"}"), std::string::npos);
  // One type: byte for byte what an untyped cluster writes.
  EXPECT_EQ(metrics_text(typed_stats({"a100"})), metrics_text(typed_stats({})));
  EXPECT_EQ(status_json(typed_stats({"a100"}), 1), status_json(typed_stats({}), 1));
}

TEST(StatusFile, TheTypedMetricsPassPromtoolsChecks) {
  if (std::system("command -v promtool >/dev/null 2>&1") != 0) GTEST_SKIP() << "no promtool";
  test::TempDir dir;
  const std::string path = dir / "metrics.prom";
  std::ofstream(path) << metrics_text(typed_stats());
  EXPECT_EQ(std::system(("promtool check metrics < " + path).c_str()), 0);
}

TEST(StatusFile, AResetRequestIsHonouredOnceAndOnlyFromRootOrSlurmUser) {
  test::TempDir dir;
  const std::string path = dir / std::string(kResetRequestName);
  std::string refused;
  EXPECT_FALSE(take_reset_request(path, ::getuid(), &refused));  // none
  std::ofstream(path) << "";
  EXPECT_TRUE(take_reset_request(path, ::getuid(), &refused));
  EXPECT_EQ(refused, "");
  EXPECT_NE(::access(path.c_str(), F_OK), 0);  // removed: honoured once
  EXPECT_FALSE(take_reset_request(path, ::getuid(), &refused));
  std::ofstream(path) << "";
  const uid_t someone_else = ::getuid() + 1;
  EXPECT_EQ(take_reset_request(path, someone_else, &refused), ::getuid() == 0);  // root's is honoured
  EXPECT_EQ(refused.empty(), ::getuid() == 0);
  EXPECT_NE(::access(path.c_str(), F_OK), 0);
  ASSERT_EQ(::symlink("/etc/passwd", path.c_str()), 0);  // a link is not a request
  EXPECT_FALSE(take_reset_request(path, ::getuid(), &refused));
}

}  // namespace
}  // namespace pollux::sched
