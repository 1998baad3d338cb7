// CheckpointStore: commit protocol, pointer, clean-up, and kill -9 at
// random moments of a checkpoint: the latest checkpoint is always complete.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <thread>

#include "spool_test_util.h"
#include "pollux/checkpoint_store.h"

namespace pollux {
namespace {

using test::slurp;
using test::TempDir;
using test::write_text;

// Commits a checkpoint of `step` holding the file x with `text`.
std::string commit_x(CheckpointStore& store, long long step, const std::string& text) {
  const std::string t = store.begin(step);
  write_text(t + "/x", text);
  return store.commit(t);
}

TEST(CheckpointStore, NoCheckpointYet) {
  TempDir dir;
  CheckpointStore store(dir / "ckpt");
  EXPECT_EQ(store.latest(), std::nullopt);
}

TEST(CheckpointStore, CommitMakesTheCheckpointLatestAndDropsTheOldOne) {
  TempDir dir;
  CheckpointStore store(dir / "a/b/ckpt");  // parents are created
  const std::string t1 = store.begin(10);
  write_text(t1 + "/model", "ten");
  EXPECT_EQ(store.latest(), std::nullopt);  // not committed yet
  const std::string c1 = store.commit(t1);
  ASSERT_EQ(store.latest(), c1);
  EXPECT_EQ(slurp(c1 + "/model"), "ten");

  const std::string t2 = store.begin(20);
  write_text(t2 + "/model", "twenty");
  EXPECT_EQ(store.latest(), c1);  // the writer has not committed
  const std::string c2 = store.commit(t2);
  ASSERT_EQ(store.latest(), c2);
  EXPECT_EQ(slurp(c2 + "/model"), "twenty");
  EXPECT_NE(::access(c1.c_str(), F_OK), 0) << "the previous checkpoint should be gone";
  EXPECT_NE(c2.find("ckpt-000000000020-"), std::string::npos) << c2;
}

TEST(CheckpointStore, ALaterGenerationFencesAnEarlierOne) {
  TempDir dir;
  CheckpointStore old_run(dir / "ckpt", 0), new_run(dir / "ckpt", 1);
  const std::string c0 = old_run.commit([&] {
    const std::string t = old_run.begin(5);
    write_text(t + "/model", "five");
    return t;
  }());
  const std::string pending = old_run.begin(6);  // under way when the job is requeued
  write_text(pending + "/model", "six");
  new_run.claim();
  EXPECT_EQ(slurp(dir / "ckpt/owner"), "1\n");
  EXPECT_THROW(old_run.commit(pending), SupersededError);
  EXPECT_NE(::access(pending.c_str(), F_OK), 0) << "the refused checkpoint should be removed";
  EXPECT_EQ(new_run.latest(), c0);
  EXPECT_THROW(old_run.begin(7), SupersededError);
  EXPECT_THROW(old_run.claim(), SupersededError);
  const std::string t1 = new_run.begin(6);
  write_text(t1 + "/model", "six");
  const std::string c1 = new_run.commit(t1);  // before latest(): argument order is unspecified
  EXPECT_EQ(new_run.latest(), c1);
  // The same generation again (a process of the same run) is no conflict.
  CheckpointStore same(dir / "ckpt", 1);
  EXPECT_NO_THROW(same.claim());
}

TEST(CheckpointStore, AnUnreadableOwnerIsAnError) {
  TempDir dir;
  CheckpointStore store(dir.path(), 0);
  write_text(dir / "owner", "three\n");
  try {
    store.claim();
    ADD_FAILURE() << "claimed a store with a corrupt owner";
  } catch (const SupersededError&) {
    ADD_FAILURE() << "a corrupt owner is not a later run";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("not a restart count"), std::string::npos) << e.what();
  }
  // Corrupted while a checkpoint is written: the commit says it did not happen.
  write_text(dir / "owner", "0\n");
  const std::string t = store.begin(1);
  write_text(dir / "owner", "three\n");
  try {
    store.commit(t);
    ADD_FAILURE() << "committed with a corrupt owner";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("not a restart count"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("not committed"), std::string::npos) << e.what();
  }
  EXPECT_EQ(store.latest(), std::nullopt);
}

// A commit that fails before the pointer switched says that nothing was
// committed, and the previous checkpoint stays the latest.
TEST(CheckpointStore, AFailedCommitSaysThePreviousCheckpointStays) {
  TempDir dir;
  CheckpointStore store(dir.path());
  const std::string c1 = commit_x(store, 1, "1");
  const std::string t2 = store.begin(2);
  write_text(t2 + "/x", "2");
  // The pointer cannot be replaced: a non-empty directory holds its name.
  ASSERT_EQ(::rename((dir / "latest").c_str(), (dir / "pointer").c_str()), 0);
  ASSERT_EQ(::mkdir((dir / "latest").c_str(), 0755), 0);
  write_text(dir / "latest/x", "in the way");
  try {
    store.commit(t2);
    ADD_FAILURE() << "committed without switching the pointer";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("not committed: the previous checkpoint stays the latest"), std::string::npos)
        << e.what();
  }
  ASSERT_EQ(::rename((dir / "latest/x").c_str(), (dir / "y").c_str()), 0);
  ASSERT_EQ(::rmdir((dir / "latest").c_str()), 0);
  ASSERT_EQ(::rename((dir / "pointer").c_str(), (dir / "latest").c_str()), 0);
  EXPECT_EQ(store.latest(), c1);
  EXPECT_EQ(slurp(c1 + "/x"), "1");
}

TEST(CheckpointStore, AbortKeepsThePreviousCheckpoint) {
  TempDir dir;
  CheckpointStore store(dir.path());
  const std::string c1 = commit_x(store, 1, "1");
  const std::string t2 = store.begin(2);
  write_text(t2 + "/x", "2");
  store.abort(t2);
  EXPECT_NE(::access(t2.c_str(), F_OK), 0);
  EXPECT_EQ(store.latest(), c1);
}

TEST(CheckpointStore, BeginRemovesStaleTemporaries) {
  TempDir dir;
  CheckpointStore store(dir.path());
  const std::string stale = store.begin(5);
  write_text(stale + "/half", "written by a process that died");
  const std::string fresh = store.begin(6);
  EXPECT_NE(::access(stale.c_str(), F_OK), 0);
  EXPECT_EQ(::access(fresh.c_str(), F_OK), 0);
}

TEST(CheckpointStore, RefusesToCommitSomethingElse) {
  TempDir dir;
  CheckpointStore store(dir / "ckpt");
  EXPECT_THROW(store.commit(dir.path()), std::runtime_error);
}

TEST(CheckpointStore, CorruptPointerIsAnErrorNotASilentRestart) {
  TempDir dir;
  CheckpointStore store(dir.path());
  write_text(dir / "latest", "../../etc\n");
  EXPECT_THROW(store.latest(), std::runtime_error);
  write_text(dir / "latest", "ckpt-000000000001-abcdef\n");  // names a missing directory
  try {
    store.latest();
    FAIL() << "accepted a pointer to a missing checkpoint";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("which is missing"), std::string::npos) << e.what();
  }
}

// Checkpoint k holds files whose content all say k. A child commits
// checkpoints in a loop; the parent kills it (SIGKILL) at random moments.
// After every kill the latest checkpoint must be complete and consistent.
TEST(CheckpointStore, KillNineAtAnyMomentLeavesACompleteLatestCheckpoint) {
  TempDir dir;
  const std::string root = dir / "ckpt";
  constexpr int kFiles = 4;
  const std::string payload(256 * 1024, 'p');
  std::mt19937 rng(11);
  long long seen_max = 0;
  for (int round = 0; round < 15; ++round) {
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      CheckpointStore store(root);
      for (long long k = 1000LL * round + 1;; ++k) {
        const std::string t = store.begin(k);
        for (int f = 0; f < kFiles; ++f) write_text(t + "/part" + std::to_string(f), std::to_string(k) + "\n" + payload);
        store.commit(t);
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20 + rng() % 150));
    ::kill(child, SIGKILL);
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status)) << "the writer stopped on its own: status " << status;

    CheckpointStore store(root);
    const std::optional<std::string> latest = store.latest();
    if (!latest) continue;  // killed before the first commit of all
    const std::string name = latest->substr(latest->find_last_of('/') + 1);
    const long long k = std::stoll(name.substr(5, 12));
    for (int f = 0; f < kFiles; ++f)
      ASSERT_EQ(slurp(*latest + "/part" + std::to_string(f)), std::to_string(k) + "\n" + payload)
          << "round " << round << ": part " << f << " of " << *latest;
    seen_max = std::max(seen_max, k);
  }
  EXPECT_GT(seen_max, 0) << "no checkpoint was ever committed";
}

}  // namespace
}  // namespace pollux
