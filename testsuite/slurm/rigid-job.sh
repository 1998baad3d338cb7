#!/bin/bash
# The integration tests' rigid job: runs until cancelled and records every
# SIGUSR1 it or its step receives (sched/pollux must never send one).
echo "start $(date +%s) restart=${SLURM_RESTART_COUNT:-0} nodes=$SLURM_JOB_NODELIST"
trap 'echo "batch got USR1"' USR1
srun bash -c 'trap "echo step got USR1" USR1; while :; do sleep 1 & wait $!; done' &
wait $!
