#!/bin/bash
# A time limit counts an elastic job's whole run across requeues (issue 13,
# situation 8): a --time=1 job that sched/pollux resizes (requeues), and
# an operator requeues once more (Slurm's own requeue, as after a node
# failure), runs for one minute in all, not one minute per run; its SystemComment keeps
# the limit and the time used, and says why it ended (why=timeout).
source "$(dirname "$0")/lib.sh"
start_cluster
export POLLUX_TEST_PROFILED=16
a=$(submit_elastic a -N 1-4 --gpus-per-node=4 --time=1)
wait_until 60 "job $a started" bash -c "[[ -s $CLUSTER_DIR/jobs/a.out ]]"
first=$(awk 'NR == 1 { print $2 }' "$CLUSTER_DIR/jobs/a.out")
# Once resized, the run's end is what is left of the minute, not a new one.
resized() { (($(restarts "$a") >= 1)) && runs_as_decided "$a"; }
wait_until 60 "job $a resized" resized
run_secs=$(( $(date -d "$(job_field "$a" EndTime)" +%s) - $(date -d "$(job_field "$a" StartTime)" +%s) ))
used=$(comment_key "$a" used)
note "run $(restarts "$a"): $run_secs s to its end, $used s used before"
((used > 0 && run_secs <= 60 - used + 1)) || fail "job $a's run may last $run_secs s after $used s used, of 60"
# Slurm's own requeue (an operator's here; a node failure's is the same to
# sched/pollux) ends a run that counts too: the next run gets what is left.
r1=$(restarts "$a")
run_start=$(date -d "$(job_field "$a" StartTime)" +%s)
scontrol requeue "$a"
requeued_at=$(date +%s)
again() { (($(restarts "$a") > r1)) && runs_as_decided "$a"; }
wait_until 40 "job $a running again after scontrol requeue" again
used2=$(comment_key "$a" used)
run_secs=$(( $(date -d "$(job_field "$a" EndTime)" +%s) - $(date -d "$(job_field "$a" StartTime)" +%s) ))
note "after scontrol requeue: run $(restarts "$a"): $run_secs s to its end, $used2 s used before"
((used2 >= used + requeued_at - run_start - 1)) || fail "job $a's run ended by Slurm's requeue was not counted: $used2 s used, was $used, ran $((requeued_at - run_start)) s"
((run_secs <= 60 - used2 + 1)) || fail "job $a's run may last $run_secs s after $used2 s used, of 60"
# Ended: a final state, not COMPLETING (a fresh-clone run read COMPLETING:
# under load the steps of a job at its limit take a while to end).
over() {
  case $(job_state "$a") in
    RUNNING | PENDING | COMPLETING | CONFIGURING | REQUEUE* | RESIZING | SUSPENDED | STAGE_OUT) return 1 ;;
  esac
}
wait_until 150 "job $a ended" over
end=$(date -d "$(job_field "$a" EndTime)" +%s)
wall=$(awk -v a="$first" -v b="$end" 'BEGIN { printf "%d", b - a }')
note "job $a: $(job_state "$a") after $wall s from its first start, $(restarts "$a") restarts | $(system_comment "$a")"
[[ $(job_state "$a") == TIMEOUT ]] || fail "job $a ended $(job_state "$a")"
(($(restarts "$a") >= 1)) || fail "job $a was never resized: nothing tested"
# One minute of running, plus the few seconds each requeue keeps it pending
# (Slurm's own 11 s after scontrol requeue), plus up to 30 s: slurmctld
# enforces time limits every 30 s.
((wall >= 55 && wall <= 90 + 11 + 6 * $(restarts "$a"))) || fail "job $a ran ${wall} s in all with --time=1"
said() { [[ $(phase "$a") == end && $(comment_key "$a" why) == timeout ]]; }
wait_until 15 "job $a's SystemComment saying it timed out" said
[[ $(comment_key "$a" limit) == 1 && $(comment_key "$a" used) -gt 0 ]] || fail "job $a: $(system_comment "$a")"
note "ok"
