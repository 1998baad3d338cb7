#!/bin/bash
# A node fails under a running elastic training job: its slurmd and every
# process on it are killed (SIGKILL, as a power loss). slurmctld marks the
# node DOWN after SlurmdTimeout and requeues the job, sched/pollux places it
# on the node left, and the job resumes from its last periodic checkpoint:
# only the steps after that checkpoint are taken again, and it finishes
# with a correct model.
source "$(dirname "$0")/lib.sh"
start_cluster "" --nodes 2 --gpus 2 --slurmd-timeout 10
# Its agent does not listen for resizes (POLLUX_RESIZE_SIGNAL=0: a moldable
# job, kept at its size while it runs), so that no resize sched/pollux
# decides races the failure: in two fresh-clone runs a grow's checkpoint
# and requeue came within the second the node was killed, and the run
# ended by the resize, not by the failure this test is about.
a=$(POLLUX_RESIZE_SIGNAL=0 submit_digits a -N 1-2 --gpus-per-node=2 -- --epochs 60 --seed 3 --checkpoint-every 20)
note "submitted job a ($a)"
wait_until 60 "job $a running" runs_as_decided "$a"
out=$CLUSTER_DIR/jobs/a.out
checkpointed() { runs_as_decided "$a" && grep -q "^checkpoint step [0-9]* " "$out" &&
                 (($(grep -c "^step " "$out") > 40)); }
wait_until 240 "job $a running with a periodic checkpoint and 40 steps" checkpointed
restarts_before=$(restarts "$a")
victim=$(job_field "$a" BatchHost)
note "job $a: $(granted "$a"), batch host $victim, $(grep -c "^step " "$out") progress lines; killing $victim"
cluster kill-node "$victim"
# Slurm marks the node DOWN (SlurmdTimeout) and requeues the job.
down() { [[ $(scontrol show node "$victim") =~ State=DOWN ]]; }
wait_until 120 "node $victim marked DOWN" down
requeued() { (($(restarts "$a") > restarts_before)); }
wait_until 120 "job $a requeued after $victim failed" requeued
note "requeued: $(job_state "$a") | $(scontrol show node "$victim" | grep -o 'State=[^ ]*')"
moved() { runs_as_decided "$a" && [[ $(granted "$a") != *"$victim"* ]]; }
wait_until 120 "job $a running again without $victim" moved
note "resumed: $(granted "$a") | $(system_comment "$a")"
wait_until 400 "job $a finished" ended "$a"
finished "$a" || fail "job $a ended $(job_state "$a")"
check_training a --min-acc 0.9
(($(summary_key failures) >= 1)) || fail "the log shows no run ended by the failure: $summary"
note "ok"
