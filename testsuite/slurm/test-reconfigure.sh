#!/bin/bash
# scontrol reconfigure applies new parameters without a restart: a new
# fairness exponent reaches the policy, an invalid value is logged and its
# default kept, and the plugin keeps scheduling.
source "$(dirname "$0")/lib.sh"
start_cluster "pollux_fairness=-1"
wait_until 20 "the first round" grep -q "sched/pollux: round:" "$CLUSTER_DIR/log/slurmctld.log"
grep -q "sched/pollux: policy pollux: fairness_p=-1 " "$CLUSTER_DIR/log/slurmctld.log" || fail "no policy line for fairness -1"
sed -i 's/pollux_fairness=-1/pollux_fairness=-4,pollux_interval=2/' "$SLURM_CONF"
scontrol reconfigure
wait_until 20 "the policy with fairness -4" grep -q "sched/pollux: policy pollux: fairness_p=-4 restart_delay=5 interval=2 " "$CLUSTER_DIR/log/slurmctld.log"
grep "sched/pollux: parameters:" "$CLUSTER_DIR/log/slurmctld.log" | tail -n 1 | grep >/dev/null "pollux_interval=2 pollux_fairness=-4 " ||
  fail "the parameters line does not show the new values"
# Rounds follow the new interval.
marker=$(wc -l < "$CLUSTER_DIR/log/slurmctld.log")
sleep 7
rounds=$(tail -n +"$marker" "$CLUSTER_DIR/log/slurmctld.log" | grep -c "sched/pollux: round:" || true)
((rounds >= 3)) || fail "$rounds rounds in 7 s with pollux_interval=2"
# An invalid value: logged, default kept.
sed -i 's/pollux_fairness=-4/pollux_fairness=fair/' "$SLURM_CONF"
scontrol reconfigure
wait_until 20 "the invalid value logged" grep -q "error: sched/pollux: SchedulerParameters: pollux_fairness=fair must be a number in \[-10, 1\]: default kept" "$CLUSTER_DIR/log/slurmctld.log"
wait_until 20 "the policy back at the default fairness" bash -c "grep 'sched/pollux: policy pollux:' '$CLUSTER_DIR/log/slurmctld.log' | tail -n 1 | grep >/dev/null 'fairness_p=-1 '"
# Still scheduling: an elastic job starts.
job=$(submit_elastic after -N 1-4 --gpus-per-node=4)
wait_until 30 "job $job running as decided" runs_as_decided "$job"
note "ok"
