#!/bin/bash
# The README's elastic example, a program without the agent (`srun sleep`),
# is moldable: sched/pollux sizes it when it starts and then leaves it
# alone. A rigid job that needs its GPUs waits for it, as Slurm's rules
# say (no signal, no requeue), and its SystemComment says kind=moldable;
# a job whose agent announced its signal in the hint says kind=elastic.
# Requeued by someone else, the moldable job is not said to restart from a
# checkpoint (it has none: its script starts over; issue 34).
# (Before: preempted with SIGUSR1, whose default action killed `sleep`:
# FAILED, exit 138.)
source "$(dirname "$0")/lib.sh"
start_cluster
mkdir -p "$CLUSTER_DIR/jobs"
a=$(sbatch --parsable -J readme -o "$CLUSTER_DIR/jobs/readme.out" -N 1-4 --gpus-per-node=4 --requeue \
  --wrap 'srun sleep 600')
wait_until 60 "job $a running as decided" runs_as_decided "$a"
note "job $a: $(granted "$a") | $(system_comment "$a")"
[[ $(comment_key "$a" kind) == moldable ]] || fail "job $a is not shown as moldable: $(system_comment "$a")"
# An elastic job whose agent listens, then a rigid job at the head of the
# queue that needs every GPU (sched/pollux frees them by preempting elastic
# jobs, which job $a is not).
b=$(submit_elastic b -N 1-2 --gpus-per-node=4)
elastic() { [[ $(job_state "$b") == RUNNING && $(comment_key "$b" kind) == elastic ]]; }
wait_until 60 "job $b running, shown as elastic once its hint announces its signal" elastic
r=$(sbatch --parsable -J rigid -o "$CLUSTER_DIR/jobs/rigid.out" -N 4 --gpus-per-node=4 --wrap 'sleep 1')
sleep 12  # four rounds
note "job $a: $(job_state "$a") restarts=$(restarts "$a") | $(system_comment "$a")"
note "rigid job $r: $(job_state "$r")"
[[ $(job_state "$a") == RUNNING ]] || fail "job $a is $(job_state "$a"), not RUNNING"
(($(restarts "$a") == 0)) || fail "job $a was requeued"
(($(log_count "JobId=$a: (signal|requeue) ") == 0)) || fail "sched/pollux signalled or requeued the moldable job $a"
! grep -q "User defined signal" "$CLUSTER_DIR/jobs/readme.out" || fail "job $a's step got the resize signal"
[[ $(comment_key "$a" kind) == moldable ]] || fail "job $a is not shown as moldable: $(system_comment "$a")"
[[ $(job_state "$r") == PENDING ]] || fail "rigid job $r is $(job_state "$r"): it cannot have its GPUs"
scontrol requeue "$a"
said() { grep -q "sched/pollux: JobId=$a: its run on " "$CLUSTER_DIR/log/slurmctld.log"; }
wait_until 30 "sched/pollux logging the requeue of job $a" said
line=$(grep "sched/pollux: JobId=$a: its run on " "$CLUSTER_DIR/log/slurmctld.log")
note "${line#*sched/pollux: }"
[[ $line == *"(by an operator, or the job itself); it has no agent (no hint): its batch script runs again from the beginning"* &&
   $line != *checkpoint* ]] || fail "the requeue of job $a (no agent) was logged as: ${line#*sched/pollux: }"
scancel "$a"
wait_until 60 "rigid job $r started once job $a ended" bash -c "[[ \$(scontrol show job $r | grep -o 'JobState=[A-Z]*') != JobState=PENDING ]]"
note "ok"
