#!/bin/bash
# slurmctld loads sched/pollux and job_submit/pollux, the plugin logs its
# parameters, and an invalid one is logged clearly with the default kept.
source "$(dirname "$0")/lib.sh"
start_cluster "pollux_fairness=-2,pollux_max_nodes=0,pollux_bogus=1"
wait_until 20 "the first round" grep -q "sched/pollux: round:" "$CLUSTER_DIR/log/slurmctld.log"
log=$(ctld_log)
grep -q "sched: sched/pollux: plugin loaded" <<< "$log" || fail "no 'plugin loaded' line"
grep -q "Slurm's backfill scheduler runs for rigid jobs" <<< "$log" || fail "backfill not reported"
line=$(grep "sched/pollux: parameters:" <<< "$log" | tail -n 1)
note "$line"
for kv in pollux_interval=3 pollux_fairness=-2 pollux_restart_penalty=5 pollux_interference_avoidance=yes \
          pollux_max_nodes=16 "pollux_spool_dir=$CLUSTER_DIR/spool/pollux" pollux_checkpoint_timeout=60 \
          pollux_search_budget=0 pollux_backfill=yes; do
  grep -q -- " $kv\( \|$\)" <<< "$line" || fail "parameters line lacks $kv"
done
grep -q "error: sched/pollux: SchedulerParameters: pollux_max_nodes=0 must be an integer in \[1, 100000\]: default kept" <<< "$log" ||
  fail "the invalid pollux_max_nodes is not logged"
grep -q "error: sched/pollux: SchedulerParameters: unknown option pollux_bogus=1 ignored" <<< "$log" ||
  fail "the unknown option is not logged"
# The plugin made the spool (the cluster tool does not): world-writable, sticky.
[[ $(stat -c %a "$CLUSTER_DIR/spool/pollux" 2>/dev/null) == 1777 ]] || fail "no spool directory of mode 1777"
grep -q "sched/pollux: created the spool $CLUSTER_DIR/spool/pollux (mode 1777)" <<< "$log" || fail "the spool's creation is not logged"
scontrol show config | grep >/dev/null "SchedulerType *= sched/pollux" || fail "SchedulerType is not sched/pollux"
note "ok"
