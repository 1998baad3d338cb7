#!/bin/bash
# A second elastic job makes the first one, which holds every GPU, shrink
# through checkpoint + requeue; both then run exactly at the sizes
# sched/pollux decided; the shrunk job's SystemComment says when it starts
# again (start=) while it is requeued. A rigid job then preempts both:
# squeue --start shows no made-up start for them (issue 20).
source "$(dirname "$0")/lib.sh"
start_cluster
export POLLUX_TEST_PROFILED=16  # both jobs claim to have been profiled at full scale
a=$(submit_elastic a -N 1-4 --gpus-per-node=4)
full() { runs_as_decided "$a" && [[ $(gpus_of "$a") == 16 ]]; }
wait_until 90 "job $a running on all 16 GPUs" full
note "job $a alone: $(granted "$a")"
restarts_before=$(restarts "$a")
b=$(submit_elastic b -N 1-4 --gpus-per-node=4)
note "submitted job $b"
shared() { runs_as_decided "$a" && runs_as_decided "$b" && (($(gpus_of "$a") < 16)); }
wait_until 120 "both jobs running as decided, $a shrunk" shared
note "job $a: $(granted "$a") | $(system_comment "$a")"
note "job $b: $(granted "$b") | $(system_comment "$b")"
(($(restarts "$a") == restarts_before + 1)) || fail "job $a was requeued $(($(restarts "$a") - restarts_before)) times, expected once"
[[ $(comment_key "$a" why) == shrink ]] || fail "job $a's last decision is not 'shrink': $(system_comment "$a")"
(($(log_count "JobId=$a: signal .* why=shrink") == 1)) || fail "no single checkpoint signal logged for job $a"
(($(log_count "JobId=$a: requeue .* why=shrink") == 1)) || fail "no single requeue logged for job $a"
grep -q "checkpoint acknowledged" "$CLUSTER_DIR/jobs/a.out" || fail "job $a never acknowledged the checkpoint"
# The requeue's SystemComment says when the job starts again (start=, as
# squeue --start shows it), not the requeue's parking an hour ahead.
line=$(grep -E "sched/pollux: JobId=$a: requeue .* why=shrink" "$CLUSTER_DIR/log/slurmctld.log" | sed -n 1p)
start=$(grep -o ' start=[^ ]*' <<< "$line" | cut -d= -f2)
[[ -n $start ]] || fail "job $a's SystemComment at its requeue gives no start: $line"
requeued_at=$(date -d "$(sed 's/^\[\([^]]*\)\].*/\1/' <<< "$line")" +%s)
(($(date -d "$start" +%s) >= requeued_at && $(date -d "$start" +%s) <= requeued_at + 10)) ||
  fail "job $a requeued at $(date -d @"$requeued_at" +%FT%T) with start=$start in its SystemComment"
note "job $a requeued at $(date -d @"$requeued_at" +%FT%T): SystemComment start=$start"
(($(gpus_of "$a") + $(gpus_of "$b") <= 16)) || fail "more GPUs granted than the cluster has"

# A rigid job takes every GPU: both elastic jobs are preempted (requeued
# without GPUs, held). squeue --start must not show sched/pollux's parking
# of the requeue (an hour ahead) as their start.
rigid=$(sbatch --parsable -J rigid -N 4 --gpus-per-node=4 -o "$CLUSTER_DIR/jobs/rigid.out" "$here/rigid-job.sh")
preempted() { [[ $(job_state "$rigid") == RUNNING && $(job_state "$a") == PENDING && $(job_state "$b") == PENDING ]]; }
wait_until 120 "rigid job $rigid running, elastic jobs $a and $b preempted" preempted
for j in "$a" "$b"; do
  starts_in() {
    local s
    s=$(squeue --start -h -j "$1" -o %S)
    [[ $s == N/A ]] && { echo unknown; return; }
    echo $(($(date -d "$s" +%s) - $(date +%s)))
  }
  # One squeue read per check: the estimate may turn N/A between two reads.
  settled_start() { local s; s=$(starts_in "$j"); [[ $s == unknown ]] || ((s < 60)); }
  wait_until 5 "job $j's start estimate ($(squeue --start -h -j "$j" -o %S)) not the requeue's parking" settled_start
  note "preempted job $j: squeue --start ${j}: $(squeue --start -h -j "$j" -o '%S %r') | $(system_comment "$j")"
done
scancel "$rigid"
back() { runs_as_decided "$a" && runs_as_decided "$b"; }
wait_until 60 "jobs $a and $b running again once the rigid job ended" back
note "ok"
