#!/bin/bash
# Rigid jobs are never touched: a running rigid job keeps its nodes and
# GPUs, is never signalled, requeued or commented on while elastic jobs are
# resized around it; and a rigid GPU job waiting at the head of the queue
# gets the GPUs it needs (elastic jobs make room) and starts at its own size.
source "$(dirname "$0")/lib.sh"
start_cluster
mkdir -p "$CLUSTER_DIR/jobs"
rigid=$(sbatch --parsable -J rigid -N 1 --gpus-per-node=2 -o "$CLUSTER_DIR/jobs/rigid.out" "$here/rigid-job.sh")
wait_until 30 "rigid job $rigid running" bash -c "[[ \$(scontrol show job $rigid | grep -o 'JobState=[A-Z]*') == JobState=RUNNING ]]"
rigid_alloc=$(granted "$rigid")
note "rigid job $rigid: $rigid_alloc"
export POLLUX_TEST_PROFILED=16
a=$(submit_elastic a -N 1-4 --gpus-per-node=4)
grown() { runs_as_decided "$a" && (($(gpus_of "$a") >= 8)); }
wait_until 90 "elastic job $a grown around the rigid job" grown
note "elastic job $a: $(granted "$a")"
b=$(submit_elastic b -N 1-4 --gpus-per-node=4)
both() { runs_as_decided "$a" && runs_as_decided "$b" && (($(restarts "$a") >= 2)); }
wait_until 120 "elastic jobs $a and $b resized and running" both
note "elastic job $a: $(granted "$a"); elastic job $b: $(granted "$b")"

# A rigid job needing two whole nodes: the elastic jobs make room for it.
big=$(sbatch --parsable -J big -N 2 --gpus-per-node=4 -o "$CLUSTER_DIR/jobs/big.out" "$here/rigid-job.sh")
note "rigid job $big waits for 2 whole nodes"
big_runs() { [[ $(job_state "$big") == RUNNING && $(gpus_of "$big") == 8 ]]; }
wait_until 120 "rigid job $big running on 2 nodes x 4 GPUs" big_runs
note "rigid job $big: $(granted "$big"); elastic: $(granted "$a") / $(granted "$b")"
settled() { runs_as_decided "$a" || [[ $(phase "$a") == held ]]; }
wait_until 60 "elastic job $a settled" settled

for r in "$rigid" "$big"; do
  [[ $(job_state "$r") == RUNNING ]] || fail "rigid job $r is $(job_state "$r")"
  [[ $(restarts "$r") == 0 ]] || fail "rigid job $r was requeued"
  [[ -z $(system_comment "$r") ]] || fail "rigid job $r got a SystemComment: $(system_comment "$r")"
  (($(log_count "sched/pollux: JobId=$r:") == 0)) || fail "sched/pollux acted on rigid job $r"
done
[[ $(granted "$rigid") == "$rigid_alloc" ]] || fail "rigid job $rigid moved: $rigid_alloc -> $(granted "$rigid")"
if grep -q "got USR1" "$CLUSTER_DIR/jobs/rigid.out" "$CLUSTER_DIR/jobs/big.out"; then fail "a rigid job was signalled"; fi
# Nothing is over-allocated.
total=0
for j in "$rigid" "$big" "$a" "$b"; do [[ $(job_state "$j") == RUNNING ]] && total=$((total + $(gpus_of "$j"))); done
((total <= 16)) || fail "$total GPUs granted on a 16-GPU cluster"
note "ok"
