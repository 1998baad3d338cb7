#!/bin/bash
# Slurm's backfill keeps priority order among rigid jobs while elastic jobs
# run (issue 13, situation 6): with an elastic job holding GPUs (its EndTime
# the realistic one sched/pollux gives, not a year ahead) and the
# highest-priority rigid job waiting for the whole cluster, a lower-priority
# rigid job that fits in the free GPUs now but would run past the high
# one's planned start does not start before it; one short enough to end
# before then is backfilled into the gap.
source "$(dirname "$0")/lib.sh"
start_cluster
epoch() { date -d "$1" +%s 2>/dev/null || echo 0; }
running() { [[ $(squeue -h -j "$1" -o %T) == RUNNING ]]; }
rigid() { sbatch --parsable -o /dev/null "$@" "$here/rigid-job.sh"; }
# A rigid job on one GPU of n1 for 4 minutes: the whole-cluster job below
# cannot start before it ends, so sched/pollux keeps no GPUs for it.
small=$(rigid -J small -N 1 -w n1 --gpus-per-node=1 --time=4)
wait_until 30 "rigid job $small running" running "$small"
export POLLUX_TEST_PROFILED=16
a=$(submit_elastic a -N 1-2 --gpus-per-node=4)  # at most 8 GPUs: 7 stay free
full() { runs_as_decided "$a" && (($(gpus_of "$a") == 8)); }
wait_until 90 "elastic job $a on 2x4 GPUs" full
note "elastic job $a: $(granted "$a")"

# Priority (FIFO under priority/basic): high, then long, then short.
high=$(rigid -J high -N 4 --gpus-per-node=4 --time=10)
long=$(rigid -J long -N 1 --gpus-per-node=2 --time=10)   # fits now, but would delay high
short=$(rigid -J short -N 1 --gpus-per-node=2 --time=1)  # ends before high can start
wait_until 45 "the short rigid job $short backfilled" running "$short"
note "high $high: $(squeue -h -j "$high" -o '%T %r') StartTime=$(job_field "$high" StartTime); long $long: $(squeue -h -j "$long" -o '%T %r'); short $short: RUNNING"
# (scontrol shows EndTime=Unknown for an elastic job without a time limit:
# the realistic end sched/pollux gives it shows in the high job's planned
# start, at the small job's end rather than a year ahead.)
planned() { local s; s=$(epoch "$(job_field "$high" StartTime)"); ((s > 0 && s <= $(date +%s) + 5 * 60)); }
wait_until 30 "backfill planning rigid job $high within minutes" planned
for i in 1 2 3 4 5 6; do  # several backfill cycles (bf_interval=1) and sched/pollux rounds
  running "$long" && fail "rigid job $long (priority below $high, 10 min) started before $high, delaying it (planned $(job_field "$high" StartTime))"
  running "$high" && break
  sleep 1
done
[[ $(job_state "$a") == RUNNING ]] || fail "elastic job $a: $(job_state "$a")"
note "ok"
