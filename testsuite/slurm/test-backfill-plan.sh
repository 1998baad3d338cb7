#!/bin/bash
# Backfill plans around elastic jobs as sched/pollux will treat them (issue
# 13, situation 6): a running elastic job without a time limit gets an
# end within the next round plus a checkpoint (not a year ahead, Slurm's
# for a job without a limit), so Slurm's backfill expects a waiting rigid
# job that needs the elastic job's GPUs within minutes (its StartTime),
# and so does not let lower-priority jobs that would delay it go first.
source "$(dirname "$0")/lib.sh"
start_cluster
epoch() { date -d "$1" +%s 2>/dev/null || echo 0; }
mkdir -p "$CLUSTER_DIR/jobs"
# A rigid job on one GPU of n1 for 5 minutes: the whole-cluster job below
# cannot start before it ends, so sched/pollux keeps no GPUs for it.
small=$(sbatch --parsable -N 1 -w n1 --gpus-per-node=1 --time=5 -o /dev/null "$here/rigid-job.sh")
wait_until 30 "rigid job $small running" bash -c "[[ \$(squeue -h -j $small -o %T) == RUNNING ]]"
export POLLUX_TEST_PROFILED=16
a=$(submit_elastic a -N 1-4 --gpus-per-node=4)
grown() { runs_as_decided "$a" && (($(gpus_of "$a") >= 8)); }
wait_until 90 "elastic job $a grown around the rigid job" grown
note "elastic job $a: $(granted "$a")"
# (scontrol shows EndTime=Unknown for a job without a time limit: what
# backfill plans with shows in the rigid job's expected start.)
big=$(sbatch --parsable -N 4 --gpus-per-node=4 --time=10 -o /dev/null "$here/rigid-job.sh")
planned() { local s; s=$(epoch "$(job_field "$big" StartTime)"); ((s > 0 && s <= $(date +%s) + 6 * 60)); }
wait_until 30 "backfill planning rigid job $big within minutes" planned
note "rigid job $big planned at $(job_field "$big" StartTime) (now $(date +%FT%T))"
[[ $(job_state "$a") == RUNNING && $(gpus_of "$a") -ge 8 ]] ||
  fail "elastic job $a: $(job_state "$a") on $(granted "$a"): it should have kept its GPUs (the rigid job cannot start yet)"
note "ok"
