#!/bin/bash
# Prompt starts (issue 13, situation 9): with pollux_interval=60, an
# elastic job submitted to an idle cluster runs within 5 s of sbatch, and
# GPUs a job's end frees go to a waiting elastic job within 5 s (and the
# ended job's SystemComment says state=end why=cancelled): a
# submission, a release or an end brings an arrivals round, which sizes only
# jobs without GPUs. A job's end that frees GPUs brings the periodic round
# forward: a running job held back by a rigid job grows within 5 s of that
# job's end (issue 32). Prints the latencies (doc/benchmarks.md).
source "$(dirname "$0")/lib.sh"
start_cluster "pollux_interval=60"
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
below() { awk -v x="$1" -v y="$2" 'BEGIN { exit !(x < y) }'; }
running() { [[ $(job_state "$1") == RUNNING ]]; }
# Let the first periodic round pass, so that no periodic round is near.
sleep 3
export POLLUX_TEST_PROFILED=16
t0=$(now)
a=$(submit_elastic a -N 1-4 --gpus-per-node=4)
wait_until 30 "job $a running" running "$a"
start_a=$(elapsed "$t0")
note "sbatch -> running on an idle cluster: ${start_a} s (pollux_interval=60)"
below "$start_a" 5 || fail "job $a took ${start_a} s to start"
wait_until 30 "job $a running as decided" runs_as_decided "$a"

# A second arrival starts in the GPUs left free; the running job is not resized.
t0=$(now)
b=$(submit_elastic b -N 1-4 --gpus-per-node=4)
wait_until 30 "job $b running" running "$b"
start_b=$(elapsed "$t0")
note "sbatch -> running beside a running job: ${start_b} s"
below "$start_b" 5 || fail "job $b took ${start_b} s to start"
[[ $(job_state "$a") == RUNNING && $(restarts "$a") == 0 ]] ||
  fail "an arrivals round resized job $a: $(job_state "$a"), restarts $(restarts "$a")"
scancel "$a" "$b"
# The ended jobs' SystemComment says so.
ended() { [[ $(phase "$a") == end && $(comment_key "$a" why) == cancelled && $(comment_key "$a" alloc) == 0 ]]; }
wait_until 15 "job $a's SystemComment brought up to date" ended
note "job $a: $(system_comment "$a")"

# GPUs a job's end frees go to a waiting elastic job at once.
rigid=$(sbatch --parsable -N 4 --gpus-per-node=4 -o /dev/null "$here/rigid-job.sh")
wait_until 30 "rigid job $rigid running on every GPU" running "$rigid"
c=$(submit_elastic c -N 1-4 --gpus-per-node=4)
sleep 3
[[ $(job_state "$c") == PENDING ]] || fail "job $c: $(job_state "$c") while every GPU is taken"
t1=$(now)
scancel "$rigid"
wait_until 30 "job $c running after job $rigid ended" running "$c"
start_c=$(elapsed "$t1")
note "job end -> waiting elastic job running: ${start_c} s"
below "$start_c" 5 || fail "job $c took ${start_c} s to start after job $rigid ended"

# GPUs a job's end frees go to running jobs at once (issue 32): the
# periodic round is brought forward, not awaited (pollux_interval=60).
# Job c runs beside a rigid job holding three nodes, which keeps it from
# growing; once the rigid job ends, c grows within seconds.
scancel "$c"
wait_until 30 "job $c ended" eval '[[ -z $(squeue -h -j "$c" -o %i 2>/dev/null) ]]'
rigid=$(sbatch --parsable -N 3 --gpus-per-node=4 -o /dev/null "$here/rigid-job.sh")
wait_until 30 "rigid job $rigid running" running "$rigid"
d=$(submit_elastic d -N 1-4 --gpus-per-node=4)
# (Its hint is read by the round the end brings: no round reads it before.)
with_hint() { runs_as_decided "$d" && [[ -s $POLLUX_TEST_SPOOL/$d.hint.yaml ]]; }
wait_until 30 "job $d running beside job $rigid, its hint written" with_hint
before=$(gpus_of "$d")
t2=$(now)
scancel "$rigid"
grown() { (($(log_count "JobId=$d: signal .* why=grow") >= 1)); }
wait_until 30 "job $d growing after job $rigid ended" grown
grow_d=$(elapsed "$t2")
note "job end -> running job's growth decided: ${grow_d} s ($before GPUs before; $(grep "JobId=$d: signal .* why=grow" "$CLUSTER_DIR/log/slurmctld.log" | sed -n '1s/.*signal \([^ ]*\) GPUs.*/\1/p') decided)"
below "$grow_d" 5 || fail "job $d's growth came ${grow_d} s after job $rigid ended"
(($(log_count "round \(brought forward: a job's end freed GPUs\)") >= 1)) || fail "no round brought forward was logged"
note "ok"
