#!/bin/bash
# Restarting slurmctld mid-run loses no job and repeats no decision: jobs
# keep running at their sizes, their state (SystemComment) is intact, and
# the restarted plugin neither signals, requeues nor releases any of them
# when nothing changed.
source "$(dirname "$0")/lib.sh"
start_cluster
export POLLUX_TEST_PROFILED=16
a=$(submit_elastic a -N 1-4 --gpus-per-node=4)
b=$(submit_elastic b -N 1-4 --gpus-per-node=4)
steady() { runs_as_decided "$a" && runs_as_decided "$b"; }
wait_until 120 "both jobs running as decided" steady
# Steady: no action for 4 rounds.
quiet_rounds() {
  local n
  n=$(tail -n 400 "$CLUSTER_DIR/log/slurmctld.log" | grep -E "sched/pollux: (JobId=[0-9]+: (signal|requeue|release|hold)|round:)" |
      tail -n 4 | grep -c "round:" || true)
  ((n == 4)) && steady
}
wait_until 120 "4 rounds without a decision" quiet_rounds
before_a=$(granted "$a") before_b=$(granted "$b")
restarts_a=$(restarts "$a") restarts_b=$(restarts "$b")
state_a=$(system_comment "$a" | sed 's/.* | //') state_b=$(system_comment "$b" | sed 's/.* | //')
note "before: $a: $before_a ($state_a); $b: $before_b ($state_b)"
mark=$(wc -l < "$CLUSTER_DIR/log/slurmctld.log")
cluster restart-ctld
after_rounds() { (($(tail -n +"$mark" "$CLUSTER_DIR/log/slurmctld.log" | grep -c "sched/pollux: round:") >= 4)); }
wait_until 60 "4 rounds after the restart" after_rounds
after=$(tail -n +"$mark" "$CLUSTER_DIR/log/slurmctld.log")
grep -q "sched: sched/pollux: plugin loaded" <<< "$after" || fail "the plugin did not load again"
if grep -E "sched/pollux: JobId=($a|$b): (signal|requeue|release|hold)" <<< "$after"; then
  fail "the restarted plugin repeated a decision"
fi
for j in "$a" "$b"; do [[ $(job_state "$j") == RUNNING ]] || fail "job $j is $(job_state "$j") after the restart"; done
[[ $(granted "$a") == "$before_a" && $(granted "$b") == "$before_b" ]] || fail "allocations changed across the restart"
[[ $(restarts "$a") == "$restarts_a" && $(restarts "$b") == "$restarts_b" ]] || fail "a job was requeued across the restart"
[[ $(system_comment "$a" | sed 's/.* | //') == "$state_a" ]] || fail "job $a's state changed: $(system_comment "$a")"
[[ $(system_comment "$b" | sed 's/.* | //') == "$state_b" ]] || fail "job $b's state changed: $(system_comment "$b")"
note "after: $a: $(granted "$a"); $b: $(granted "$b")"
note "ok"
