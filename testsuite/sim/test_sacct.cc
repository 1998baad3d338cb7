// A site's history from sacct (pollux-sim --sacct): what a row becomes,
// what is skipped and counted, every bad row an InputError naming the file
// and line; jobs of no known application run their recorded time.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <tuple>

#include "cluster_sim.h"
#include "input_error.h"
#include "sacct.h"
#include "sim_test_support.h"

namespace pollux::sim {
namespace {

using test::error_of;
using test::write_file;

const std::string kHeader = "JobID|JobName|Comment|Submit|Start|End|State|Timelimit|NNodes|ReqTRES|AllocTRES\n";

// A row of job ID `id` (GPUs in AllocTRES) with the other fields as given.
std::string row(const std::string& id, const std::string& name, const std::string& comment, const std::string& submit,
                const std::string& start, const std::string& end, const std::string& state = "COMPLETED",
                const std::string& limit = "00:10:00", const std::string& nodes = "1",
                const std::string& gpus = "gres/gpu=2") {
  return id + "|" + name + "|" + comment + "|2026-11-29T" + submit + "|" +
         (start == "Unknown" ? start : "2026-11-29T" + start) + "|" + (end == "Unknown" ? end : "2026-11-29T" + end) +
         "|" + state + "|" + limit + "|" + nodes + "|billing=2," + gpus + "|cpu=2," + gpus + ",node=" + nodes + "\n";
}

TEST(Sacct, RowsBecomeJobsAndTheRestIsCounted) {
  AppCatalog catalog(test::traces_dir());
  const std::string p = write_file(
      "history.sacct",
      kHeader + row("101", "c0", "pollux-app=cifar10 pollux-batch=512 pollux-epochs=4", "18:00:00", "18:00:01", "18:01:05",
                    "COMPLETED", "05:00", "2", "gres/gpu=4") +
          "101.batch|batch||2026-11-29T18:00:01|2026-11-29T18:00:01|2026-11-29T18:01:05|COMPLETED||1||cpu=2\n" +
          row("102", "train", "nightly", "18:00:05", "18:01:05", "19:01:05", "TIMEOUT", "01:00:00") +
          row("103", "bert", "", "18:00:06", "18:02:00", "18:03:00", "CANCELLED by 0", "1-00:00:00", "4",
              "gres/gpu=8") +
          row("104", "prep", "", "18:00:07", "18:00:07", "18:00:09", "COMPLETED", "UNLIMITED", "1", "gres/gpu=0") +
          row("105", "wait", "", "18:00:08", "Unknown", "Unknown", "PENDING", "Partition_Limit") +
          row("106", "run", "", "18:00:09", "18:00:09", "Unknown", "RUNNING") +
          row("107", "long", "", "18:00:10", "18:00:10", "18:00:40", "FAILED", "UNLIMITED"));
  SacctSummary sum;
  const Workload w = read_sacct(p, catalog, 1.0, &sum);
  EXPECT_EQ(w.name, "history");
  ASSERT_EQ(w.jobs.size(), 4u);
  EXPECT_EQ(sum.modelled, 2);
  EXPECT_EQ(sum.recorded, 2);
  EXPECT_EQ(sum.steps, 1);
  EXPECT_EQ(sum.no_gpus, 1);
  EXPECT_EQ(sum.not_started, 1);
  EXPECT_EQ(sum.not_ended, 1);
  const WorkloadJob& c = w.jobs[0];  // the comment names the application and batch
  EXPECT_EQ(c.name, "101");
  EXPECT_EQ(c.line, 2);
  EXPECT_EQ(c.application, "cifar10");
  EXPECT_FALSE(c.recorded);
  EXPECT_EQ(c.num_replicas, 4);
  EXPECT_EQ(c.batch_size, 512);
  EXPECT_EQ(c.last_epoch, 4);
  EXPECT_EQ(c.time_limit, 300);
  EXPECT_EQ(c.submit_time, 0);
  const WorkloadJob& r = w.jobs[1];  // unknown: its recorded GPUs and duration
  EXPECT_TRUE(r.recorded);
  EXPECT_EQ(r.application, "");
  EXPECT_EQ(r.num_replicas, 2);
  EXPECT_EQ(r.duration, 3600);
  EXPECT_EQ(r.time_limit, 3600);
  EXPECT_EQ(r.submit_time, 5);
  const WorkloadJob& b = w.jobs[2];  // the job name names the application; its initial batch
  EXPECT_EQ(b.application, "bert");
  EXPECT_EQ(b.batch_size, std::llround(catalog.get("bert").init_batch()));
  EXPECT_EQ(b.time_limit, 86400);
  EXPECT_EQ(b.last_epoch, 0);  // the whole training
  EXPECT_EQ(b.num_replicas, 8);
  EXPECT_EQ(w.jobs[3].time_limit, 0);  // UNLIMITED: none
  EXPECT_EQ(w.jobs[3].duration, 30);

  const Workload scaled = read_sacct(p, catalog, 10.0, nullptr);  // a replay's time scale
  EXPECT_EQ(scaled.jobs[1].submit_time, 50);
  EXPECT_EQ(scaled.jobs[1].duration, 36000);
  EXPECT_EQ(scaled.jobs[0].time_limit, 3000);
}

TEST(Sacct, TimeFormats) {
  EXPECT_EQ(parse_slurm_duration("05:00"), 300);
  EXPECT_EQ(parse_slurm_duration("02:03:04"), 7384);
  EXPECT_EQ(parse_slurm_duration("1-02:03:04"), 93784);
  EXPECT_EQ(parse_slurm_duration("UNLIMITED"), 0);
  EXPECT_EQ(parse_slurm_duration("Partition_Limit"), 0);
  for (const char* bad : {"", "5", "5:00", "00:60", "1-25:00:00", "x-01:00:00", "01:00:00:00", "-01:00:00"})
    EXPECT_EQ(parse_slurm_duration(bad), -1) << bad;
  EXPECT_EQ(parse_slurm_time("2026-11-29T18:00:10") - parse_slurm_time("2026-11-29T18:00:00"), 10);
  for (const char* bad : {"", "Unknown", "2026-11-29 18:00:00", "2026-11-29T18:00:00Z", "2026-11-29T18:00"})
    EXPECT_TRUE(std::isnan(parse_slurm_time(bad))) << bad;
}

TEST(Sacct, EachBadRowNamesTheFileAndLine) {
  AppCatalog catalog(test::traces_dir());
  const std::string good = row("1", "a", "", "18:00:00", "18:00:00", "18:00:10");
  const struct {
    std::string text;
    std::string error;
  } cases[] = {
      {"name,time,application,num_replicas,batch_size\nj,0,cifar10,1,128\n",
       ":1: header has no field 'JobID' (not sacct --parsable2 --allocations --format=...: doc/simulator.md)"},
      {kHeader + good + "2|b||2026-11-29T18:00:00\n", ":3: expected 11 '|'-separated fields, found 4"},
      {kHeader + good + row("2", "b", "a|b", "18:00:00", "18:00:00", "18:00:10"),
       ":3: expected 11 '|'-separated fields, found 12"},
      {kHeader + row("2", "b", "", "18:00:00", "18:00:00", "18:00:10", "COMPLETED", "10:00", "0"),
       ":2: impossible size: NNodes '0'"},
      {kHeader + row("2", "b", "", "18:00:00", "18:00:00", "18:00:10", "COMPLETED", "10:00", "1", "gres/gpu=2x"),
       ":2: impossible size: gres/gpu in 'cpu=2,gres/gpu=2x,node=1' / 'billing=2,gres/gpu=2x'"},
      {kHeader + row("2", "b", "", "18:00:00", "18:00:00", "18:00:10", "COMPLETED", "10:00", "1",
                     "gres/gpu=99999999"),
       ":2: impossible size: gres/gpu in 'cpu=2,gres/gpu=99999999,node=1' / 'billing=2,gres/gpu=99999999'"},
      {kHeader + row("2", "b", "", "18:00:00", "18:00:00", "18:0:10"),
       ":2: End '2026-11-29T18:0:10' is not a time (YYYY-MM-DDTHH:MM:SS)"},
      {kHeader + row("2", "b", "", "18:00:00", "18:00:20", "18:00:10"),
       ":2: impossible times: Submit <= Start <= End does not hold"},
      {kHeader + row("2", "b", "", "18:00:00", "18:00:00", "18:00:10", "COMPLETED", "10 min"),
       ":2: Timelimit '10 min' is not [D-]HH:MM:SS, MM:SS, UNLIMITED or Partition_Limit"},
      {kHeader + row("2", "b", "", "18:00:00", "18:00:00", "18:00:10", "done"), ":2: State 'done' is not a job state"},
      {kHeader + good + row("3", "b", "pollux-app=resnet", "18:00:00", "18:00:00", "18:00:10"),
       ":3: unknown application 'resnet' in the Comment (no resnet/placements.csv under " + test::traces_dir() + ")"},
      {kHeader + row("2", "b", "pollux-app=cifar10 pollux-batch=0", "18:00:00", "18:00:00", "18:00:10"),
       ":2: pollux-batch '0' is not in [1, 1000000000]"},
      {kHeader + row("2", "b", "pollux-app=cifar10,pollux-epochs=0", "18:00:00", "18:00:00", "18:00:10"),
       ":2: pollux-epochs '0' is not in [1, " + std::to_string(catalog.load("cifar10").max_epochs()) +
           "] (cifar10's training)"},
      {kHeader + good + good, ":3: JobID 1 appears twice (give sacct --allocations, not --duplicates)"},
      {kHeader + row("2", "b", "", "18:00:00", "Unknown", "Unknown", "PENDING"),
       ": no job that used GPUs, started and ended"},
      {"", ": empty file (no header line)"},
  };
  int n = 0;
  for (const auto& c : cases) {
    const std::string p = write_file("bad-" + std::to_string(n++) + ".sacct", c.text);
    EXPECT_EQ(error_of([&] { read_sacct(p, catalog, 1.0, nullptr); }), p + c.error);
  }
}

// Jobs of no known application hold their recorded GPUs for their recorded
// time (no start stall but a node's boot), in backfill's order; the policies
// that size jobs themselves refuse them.
TEST(Sacct, RecordedJobsRunTheirTime) {
  Workload w;
  w.path = "h.sacct";
  w.name = "h";
  for (const auto& [name, submit, gpus, duration] :
       {std::tuple{"a", 0.0, 2, 100.0}, std::tuple{"b", 10.0, 2, 50.0}, std::tuple{"c", 20.0, 1, 0.0}}) {
    WorkloadJob j;
    j.name = name;
    j.submit_time = submit;
    j.num_replicas = gpus;
    j.recorded = true;
    j.duration = duration;
    j.line = static_cast<int>(w.jobs.size()) + 2;
    w.jobs.push_back(j);
  }
  w.jobs[0].time_limit = 200;
  WorkloadJob d;  // on its application's model, with its own limit
  d.name = "d";
  d.submit_time = 200;
  d.application = "cifar10";
  d.batch_size = 128;
  d.last_epoch = 1;
  d.time_limit = 1234;
  d.line = 5;
  w.jobs.push_back(d);
  WorkloadJob e = d;  // UNLIMITED: no limit, not a derived one
  e.name = "e";
  e.submit_time = 100000;
  e.time_limit = 0;
  e.line = 6;
  w.jobs.push_back(e);
  SimOptions o;
  o.policy = "backfill";
  o.nodes = 1;
  o.gpus_per_node = 2;
  o.interval = 1;
  const RunResult r = simulate(w, test::catalog(), o);
  // a starts in the first round (t=1), b when a ends, c (1 GPU) when b ends: b's reservation ends a's limit later.
  EXPECT_EQ(r.jobs[0].completion_time, 101);
  EXPECT_EQ(r.jobs[1].completion_time, 151);
  EXPECT_EQ(r.jobs[2].completion_time, 151);
  EXPECT_EQ(r.jobs[0].gpu_seconds, 200);
  EXPECT_EQ(r.jobs[0].time_limit, 200);
  EXPECT_EQ(r.jobs[1].time_limit, 0);
  EXPECT_EQ(r.jobs[3].time_limit, 1234);  // not derived (time_limit.h)
  EXPECT_EQ(r.jobs[4].time_limit, 0);
  EXPECT_GT(r.jobs[3].jct, 0);
  SimOptions booting = o;  // Slurm's power saving: a's node boots first, and that delays it
  booting.autoscale.mode = ScaleMode::kQueue;
  booting.autoscale.boot_delay = 50;
  EXPECT_EQ(simulate(w, test::catalog(), booting).jobs[0].completion_time, 151);
  o.policy = "tiresias";
  EXPECT_EQ(simulate(w, test::catalog(), o).jobs[0].completion_time, 101);
  o.policy = "pollux";
  EXPECT_EQ(error_of([&] { simulate(w, test::catalog(), o); }).rfind("h.sacct:2: job a has no known application", 0),
            0u);
}

}  // namespace
}  // namespace pollux::sim
