#!/bin/bash
# A resize across GPU types (issue 19): on a cluster of an a100 node and an
# h100 node three times as fast (pollux_gpu_type_speeds=h100=3), a real
# elastic training job starts on the a100 while a rigid typed job holds the
# h100. Once that job ends, the faster type attracts the training job:
# sched/pollux moves it (checkpoint, requeue) onto the h100, its
# SystemComment then names h100 and its goodput on both types, and it
# finishes with a correct model, its log showing that the run on the h100
# resumed at exactly the checkpointed step.
source "$(dirname "$0")/lib.sh"
start_cluster "pollux_gpu_type_speeds=h100=3" --nodes 2 --gpus 2 --gpu-types a100:1,h100:1:3
mkdir -p "$CLUSTER_DIR/jobs"
r=$(sbatch --parsable -J rigid -N 1 --gpus-per-node=h100:2 -o "$CLUSTER_DIR/jobs/rigid.out" \
      "$POLLUX_SRC/testsuite/slurm/rigid-job.sh")
wait_until 30 "rigid job $r running on the h100" eval '[[ $(job_state "$r") == RUNNING && $(granted "$r") == n2:2 ]]'
a=$(submit_digits a -N 1-2 --gpus-per-node=2 -- --epochs 100 --seed 3)
on_a100() { runs_as_decided "$a" && [[ $(comment_key "$a" type) == a100 && $(comment_key "$a" model) != none ]]; }
wait_until 120 "job $a running on the a100 with a model" on_a100
note "a on the a100: $(granted "$a") | $(system_comment "$a")"
scancel "$r"
on_h100() {
  local g d
  g=$(granted "$a")
  d=$(decided "$a")
  [[ ! ($g == *n1:* && $g == *n2:*) && ! ($d == *n1:* && $d == *n2:*) ]] || fail "job $a across types: granted $g, decided $d"
  runs_as_decided "$a" && [[ $g == n2:* && $(comment_key "$a" type) == h100 &&
                            $(comment_key "$a" goodput_by_type) == a100:*,h100:* ]]
}
wait_until 120 "job $a moved onto the h100" on_h100
note "a on the h100: $(granted "$a") | $(system_comment "$a")"
wait_until 400 "job $a finished" ended "$a"
finished "$a" || fail "job $a ended $(job_state "$a")"
check_training a --min-acc 0.9
(($(summary_key failures) == 0)) || fail "job a's runs ended other than by a resize: $summary"
# The move is a requeue whose restart sched/pollux placed on n2: decided
# so at the requeue, or, when the requeue was decided for another size on
# the a100 before the h100 was free, by the round that released the job.
(($(log_count "JobId=$a: (requeue|release) [0-9x]* GPUs on n2 ") >= 1)) ||
  fail "slurmctld logged no requeue or release of job $a onto n2"
note "ok"
