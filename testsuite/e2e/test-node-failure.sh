#!/bin/bash
# A node fails under a running elastic training job: its slurmd and every
# process on it are killed (SIGKILL, as a power loss). slurmctld marks the
# node DOWN after SlurmdTimeout and requeues the job, sched/pollux places it
# on the node left, and the job resumes from its last periodic checkpoint:
# only the steps after that checkpoint are taken again, and it finishes
# with a correct model.
source "$(dirname "$0")/lib.sh"
start_cluster "" --nodes 2 --gpus 2 --slurmd-timeout 10
a=$(submit_digits a -N 1-2 --gpus-per-node=2 -- --epochs 60 --seed 3 --checkpoint-every 20)
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
requeued() { (($(restarts "$a") > restarts_before)); }
wait_until 120 "job $a requeued after $victim failed" requeued
note "requeued: $(job_state "$a") | $(scontrol show node "$victim" | grep -o 'State=[^ ]*')"
[[ $(scontrol show node "$victim") =~ State=DOWN ]] || fail "node $victim is not DOWN"
moved() { runs_as_decided "$a" && [[ $(granted "$a") != *"$victim"* ]]; }
wait_until 120 "job $a running again without $victim" moved
note "resumed: $(granted "$a") | $(system_comment "$a")"
wait_until 400 "job $a finished" ended "$a"
finished "$a" || fail "job $a ended $(job_state "$a")"
check_training a --min-acc 0.9
(($(summary_key failures) >= 1)) || fail "the log shows no run ended by the failure: $summary"
note "ok"
