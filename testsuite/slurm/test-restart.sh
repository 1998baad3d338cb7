#!/bin/bash
# Restarting slurmctld mid-run loses no job and repeats no decision: jobs
# keep running at their sizes, their state (SystemComment) is intact, and
# the restarted plugin neither signals, requeues nor releases any of them
# when nothing changed. Then once more in the middle of a resize: a job
# signalled to checkpoint (whose checkpoint takes 20 s) is not signalled
# again by the restarted plugin, which requeues it once it acknowledges.
source "$(dirname "$0")/lib.sh"
start_cluster
export POLLUX_TEST_PROFILED=16
slow=--export=ALL,POLLUX_TEST_ACK_DELAY=20
a=$(submit_elastic a -N 1-4 --gpus-per-node=4 "$slow")
b=$(submit_elastic b -N 1-4 --gpus-per-node=4 "$slow")
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

# A third job: a or b must shrink for it, through a 20 s checkpoint.
c=$(submit_elastic c -N 1-4 --gpus-per-node=4)
victim=
checkpointing() {
  local j
  for j in "$a" "$b"; do [[ $(phase "$j") == ckpt ]] && { victim=$j; return 0; }; done
  return 1
}
wait_until 60 "job $a or $b asked to checkpoint for job $c" checkpointing
restarts_v=$(restarts "$victim")
note "job $victim checkpointing: $(system_comment "$victim"); restarting slurmctld"
mark=$(wc -l < "$CLUSTER_DIR/log/slurmctld.log") restarted_at=$(date +%s.%N)
cluster restart-ctld
all_run() { runs_as_decided "$a" && runs_as_decided "$b" && runs_as_decided "$c"; }
wait_until 120 "all three jobs running as decided" all_run
# The restarted plugin's log up to the victim's requeue: the resize it
# found under way (later rounds may decide new resizes, legitimately).
after=$(tail -n +"$mark" "$CLUSTER_DIR/log/slurmctld.log" | sed "/sched\/pollux: JobId=$victim: requeue/q")
grep -qE "sched/pollux: JobId=$victim: requeue" <<< "$after" || fail "job $victim was not requeued after the restart"
if grep -E "sched/pollux: JobId=$victim: signal" <<< "$after"; then
  fail "the restarted plugin signalled job $victim again in the middle of its checkpoint"
fi
acked=$(awk -v t="$restarted_at" '/^checkpoint acknowledged/ && $3 >= t { print $3; exit }' \
          "$CLUSTER_DIR/jobs/$(job_field "$victim" JobName).out")
requeued=$(date -d "$(grep -E "sched/pollux: JobId=$victim: requeue" <<< "$after" | sed 's/^\[\([^]]*\)\].*/\1/')" +%s.%N)
[[ -n $acked ]] && python3 -c "import sys; sys.exit(not $requeued >= $acked)" ||
  fail "job $victim was requeued (at $requeued) before it acknowledged its checkpoint (at ${acked:-never})"
(($(restarts "$victim") > restarts_v)) || fail "job $victim was never restarted"
note "after the resize: $a: $(granted "$a"); $b: $(granted "$b"); $c: $(granted "$c")"
note "ok"
