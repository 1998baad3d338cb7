// Reading inputs: CSV tables, workload files, trace files. Every bad input
// is an InputError naming the file and the line.
#include <gtest/gtest.h>

#include "csv_reader.h"
#include "input_error.h"
#include "sim_test_support.h"
#include "workload.h"

namespace pollux::sim {
namespace {

using test::catalog;
using test::error_of;
using test::write_file;

TEST(CsvTable, ReadsRowsWithLineNumbers) {
  const std::string p = write_file("ok.csv", "a,b\n1,2\n\n3.5,x\n");
  const CsvTable t = CsvTable::read(p, {"a", "b"});
  ASSERT_EQ(t.rows().size(), 2u);
  EXPECT_EQ(t.rows()[1].line, 4);
  EXPECT_DOUBLE_EQ(t.number(t.rows()[1], 0), 3.5);
  EXPECT_EQ(t.integer(t.rows()[0], 1), 2);
  EXPECT_EQ(error_of([&] { t.number(t.rows()[1], 1); }), p + ":4: column b: 'x' is not a finite number");
  EXPECT_EQ(error_of([&] { t.integer(t.rows()[1], 0); }), p + ":4: column a: '3.5' is not an integer");
}

TEST(CsvTable, RejectsMissingColumnsAndRaggedRows) {
  const std::string p = write_file("ragged.csv", "a,b\n1,2\n1,2,3\n");
  EXPECT_EQ(error_of([&] { CsvTable::read(p, {"a", "c"}); }), p + ":1: header has no column 'c'");
  EXPECT_EQ(error_of([&] { CsvTable::read(p, {"a"}); }), p + ":3: expected 2 fields, found 3");
  EXPECT_NE(error_of([&] { CsvTable::read(test::scratch_dir() + "/missing.csv", {}); }).find("cannot open"),
            std::string::npos);
  EXPECT_NE(error_of([&] { CsvTable::read(write_file("empty.csv", "\n\n"), {}); }).find("empty file"),
            std::string::npos);
}

TEST(Workload, ReadsTheShippedWorkload) {
  const Workload w = read_workload(test::workloads_dir() + "/workload-1.csv", catalog());
  EXPECT_EQ(w.name, "workload-1");
  ASSERT_EQ(w.jobs.size(), 160u);
  EXPECT_EQ(w.jobs[0].name, "cifar10-0");
  EXPECT_EQ(w.jobs[0].submit_time, 107);
  EXPECT_EQ(w.jobs[0].num_replicas, 6);
  EXPECT_EQ(w.jobs[0].batch_size, 2048);
  EXPECT_EQ(w.jobs[0].line, 2);
}

TEST(Workload, NamesTheBadLine) {
  const std::string head = "name,time,application,num_replicas,batch_size\n";
  const std::string good = "a,0,cifar10,1,128\n";
  struct Case {
    std::string row, message;
  };
  for (const Case& c : std::vector<Case>{
           {"b,10,cifar10,1\n", "expected 5 fields, found 4"},
           {"b,ten,cifar10,1,128\n", "column time: 'ten' is not a finite number"},
           {"b,-1,cifar10,1,128\n", "time must be >= 0"},
           {"b,1,resnet9000,1,128\n", "unknown application 'resnet9000'"},
           {"b,1,cifar10,0,128\n", "num_replicas must be a positive GPU count"},
           {"b,1,cifar10,2.5,128\n", "column num_replicas: '2.5' is not an integer"},
           {"b,1,cifar10,1,0\n", "batch_size must be in [1, 1000000000]"},
           {"b,1,cifar10,1,1000000001\n", "batch_size must be in [1, 1000000000]"},
           {"a,1,cifar10,1,128\n", "job name 'a' appears twice"},
           {",1,cifar10,1,128\n", "empty job name"},
       }) {
    const std::string p = write_file("bad.csv", head + good + c.row);
    const std::string e = error_of([&] { read_workload(p, catalog()); });
    EXPECT_EQ(e.rfind(p + ":3: ", 0), 0u) << e;
    EXPECT_NE(e.find(c.message), std::string::npos) << e;
  }
  EXPECT_NE(error_of([&] { read_workload(write_file("nojobs.csv", head), catalog()); }).find("no jobs"),
            std::string::npos);
}

TEST(Workload, DirectoriesExpandInNaturalOrder) {
  const std::string dir = test::scratch_dir() + "/wl";
  ASSERT_EQ(::system(("mkdir -p " + dir).c_str()), 0);
  for (const char* n : {"w-10.csv", "w-9.csv", "w-1.csv", "notes.txt"}) std::ofstream(dir + "/" + n) << "";
  const std::vector<std::string> p = expand_workload_paths({dir, test::workloads_dir() + "/workload-2.csv"});
  ASSERT_EQ(p.size(), 4u);
  EXPECT_EQ(p[0], dir + "/w-1.csv");
  EXPECT_EQ(p[1], dir + "/w-9.csv");
  EXPECT_EQ(p[2], dir + "/w-10.csv");
  EXPECT_NE(error_of([&] { expand_workload_paths({dir + "/nope.csv"}); }).find("cannot open"), std::string::npos);
}

TEST(AppTrace, BadTraceRowsNameTheLine) {
  const std::string dir = test::scratch_dir() + "/traces";
  ASSERT_EQ(::system(("mkdir -p " + dir + "/toy").c_str()), 0);
  std::ofstream(dir + "/toy/validation-8.csv") << "progress,iteration,metric,grad_sqr,grad_var\n1,1,0,1,1\n";
  std::ofstream(dir + "/toy/placements.csv") << "placement,local_bsz,step_time,sync_time\n1,4,0.5,0.1\n20,4,0.5,0.1\n";
  AppCatalog c(dir);
  EXPECT_NE(error_of([&] { c.load("toy"); }).find("toy/placements.csv:3: placement '20'"), std::string::npos);
  std::ofstream(dir + "/toy/placements.csv") << "placement,local_bsz,step_time,sync_time\n1,4,0.5,0.6\n";
  EXPECT_NE(error_of([&] { c.load("toy"); }).find("placements.csv:2: sync_time must be in [0, step_time)"),
            std::string::npos);
  std::ofstream(dir + "/toy/placements.csv") << "placement,local_bsz,step_time,sync_time\n1,4,0.5,0.1\n";
  std::ofstream(dir + "/toy/validation-8.csv") << "progress,iteration,metric,grad_sqr,grad_var\n2,1,0,1,1\n1,2,0,1,1\n";
  EXPECT_NE(error_of([&] { c.load("toy"); }).find("validation-8.csv:3: progress must be positive and non-decreasing"),
            std::string::npos);
  EXPECT_NE(error_of([&] { c.load("nothing"); }).find("no traces for application 'nothing'"), std::string::npos);
}

TEST(AppTrace, ALocalBatchOutOfRangeNamesTheLine) {
  const std::string dir = test::scratch_dir() + "/traces-range";
  ASSERT_EQ(::system(("mkdir -p " + dir + "/toy").c_str()), 0);
  std::ofstream(dir + "/toy/validation-8.csv") << "progress,iteration,metric,grad_sqr,grad_var\n1,1,0,1,1\n";
  for (const char* bad : {"3251000000", "1048577", "0", "-4"}) {
    std::ofstream(dir + "/toy/placements.csv") << "placement,local_bsz,step_time,sync_time\n1,4,0.5,0.1\n1," << bad
                                               << ",0.5,0.1\n";
    AppCatalog c(dir);
    EXPECT_EQ(error_of([&] { c.load("toy"); }), dir + "/toy/placements.csv:3: local_bsz " + bad +
                                                    " is out of range [1, 1048576]");
  }
  std::ofstream(dir + "/toy/placements.csv") << "placement,local_bsz,step_time,sync_time\n1,1048576,0.5,0.1\n";
  std::ofstream(dir + "/toy/validation-1048576.csv") << "progress,iteration,metric,grad_sqr,grad_var\n1,1,0,1,1\n";
  AppCatalog c(dir);
  EXPECT_EQ(error_of([&] { c.load("toy"); }), "(no error)");
}

}  // namespace
}  // namespace pollux::sim
