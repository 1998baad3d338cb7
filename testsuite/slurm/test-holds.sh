#!/bin/bash
# Holds: a user can neither release sched/pollux's hold on their elastic job
# nor change its size; an administrator's hold is respected over rounds,
# and releasing it hands the job back to sched/pollux, which starts it at
# the size it decides.
source "$(dirname "$0")/lib.sh"
start_cluster "pollux_interval=6"
chmod 755 "$CLUSTER_DIR" "$CLUSTER_DIR/etc"  # the user's commands read slurm.conf
as_user() { su nobody -s /bin/bash -c "cd /tmp && SLURM_CONF=$SLURM_CONF $*"; }
reason() { squeue -h -j "$1" -o %r; }
held=$(as_user sbatch --parsable --requeue -N 1-4 --gpus-per-node=4 -o /dev/null --wrap "'srun --ntasks=1 sleep 1000'")
note "user job $held: $(reason "$held")"
if as_user scontrol release "$held" 2>/dev/null; then fail "the user released sched/pollux's hold"; fi
if as_user scontrol update jobid="$held" NumNodes=4-4 2>/dev/null; then fail "the user changed the job's size"; fi
as_user scontrol update jobid="$held" TimeLimit=100 || fail "the user could not change the time limit"
(($(log_count "job_submit/pollux: JobId=$held: held by sched/pollux until a round gives it GPUs: release refused") == 1)) ||
  fail "the refused release is not logged"
admin=$(sbatch --parsable --requeue -N 1-4 --gpus-per-node=4 -o /dev/null --wrap 'srun --ntasks=1 sleep 1000')
scontrol hold "$admin"
wait_until 30 "user job $held running as decided" runs_as_decided "$held"
# log_count, not grep -c: no periodic round may have run yet (the first one
# comes one interval after slurmctld starts), and grep -c then fails.
rounds() { log_count "sched/pollux: round:"; }
r0=$(rounds)
more_rounds() { (($(rounds) >= r0 + 2)); }
wait_until 30 "two more rounds" more_rounds
[[ $(job_state "$admin") == PENDING && $(reason "$admin") == JobHeldAdmin ]] ||
  fail "job $admin is $(job_state "$admin") ($(reason "$admin")), expected held by the administrator"
[[ $(phase "$admin") == held ]] || fail "job $admin: $(system_comment "$admin")"
scontrol release "$admin"
[[ $(reason "$admin") == "pollux: waiting for GPUs" || $(job_state "$admin") == RUNNING ]] ||
  fail "the release did not hand job $admin back to sched/pollux: $(reason "$admin")"
wait_until 30 "job $admin running as decided" runs_as_decided "$admin"
note "job $admin: $(granted "$admin") | $(system_comment "$admin")"
note "ok"
