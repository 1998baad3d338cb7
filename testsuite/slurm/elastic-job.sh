#!/bin/bash
# The integration tests' elastic job: stands in for a training job and its
# agent. It runs one step (srun) that publishes a hint every second and, on
# SIGUSR1 (sched/pollux's checkpoint request), acknowledges it in the hint
# (checkpoint.ready_for_requeue) and waits to be requeued.
# Environment (from the test): POLLUX_TEST_HINT (the pollux-test-hint
# program), POLLUX_TEST_SPOOL, POLLUX_TEST_SCALING (good, poor or none),
# POLLUX_TEST_PROFILED (replicas to claim as profiled; default: this run's),
# POLLUX_TEST_ACK_DELAY (seconds a checkpoint takes before it is
# acknowledged; default 0). On a typed cluster (POLLUX_GPU_TYPE, from
# pollux-local-cluster's TaskProlog) it keeps the types it ran on beside
# the spool (ran-on.JOBID) and reports its fit on each, as the agent does.
gpus=${SLURM_NTASKS:-1}
echo "start $(date +%s.%N) restart=${SLURM_RESTART_COUNT:-0} nodes=$SLURM_JOB_NODELIST gpus=$gpus"
export POLLUX_TEST_GPUS=$gpus
exec srun --ntasks=1 --nodes=1 --overlap bash -c '
  ran=${POLLUX_TEST_SPOOL%/*}/ran-on.$SLURM_JOB_ID
  [[ -z ${POLLUX_GPU_TYPE:-} ]] || echo "$POLLUX_GPU_TYPE:${POLLUX_GPU_SPEED:-1}" >> "$ran"
  hint() { "$POLLUX_TEST_HINT" --spool "$POLLUX_TEST_SPOOL" --scaling "${POLLUX_TEST_SCALING:-good}" \
             --profiled "${POLLUX_TEST_PROFILED:-$POLLUX_TEST_GPUS}" \
             $([[ ! -s $ran ]] || sort -u "$ran" | sed "s/^/--ran-on /") "$@"; }
  asked=0
  trap "asked=1" USR1
  while :; do
    if ((asked == 1)); then
      sleep "${POLLUX_TEST_ACK_DELAY:-0}"
      hint --ack && echo "checkpoint acknowledged $(date +%s.%N)"
      asked=2
    elif ((asked == 0)); then
      hint
    fi
    sleep 1 & wait $!
  done'
