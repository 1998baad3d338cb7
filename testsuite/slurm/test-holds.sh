#!/bin/bash
# Holds: a user can neither release sched/pollux's hold on their elastic job
# nor change its size, and is told why (issue 34: Slurm 22.05 passes the
# plugin no message for the user, so the release is refused with Slurm's
# "Job is in held state, pending scheduler release", not "Access/permission
# denied"; 23.02+ shows the plugin's own words before it); an
# administrator's hold is respected over rounds, and releasing it hands the
# job back to sched/pollux, which starts it at the size it decides.
source "$(dirname "$0")/lib.sh"
start_cluster "pollux_interval=6"
chmod 755 "$CLUSTER_DIR" "$CLUSTER_DIR/etc"  # the user's commands read slurm.conf
as_user() { su nobody -s /bin/bash -c "cd /tmp && SLURM_CONF=$SLURM_CONF $*"; }
reason() { squeue -h -j "$1" -o %r; }
# Every GPU busy while the user tries, so that their job is still held by
# sched/pollux then (with a free GPU the arrivals round released it within
# a second, before the user's release: a race the test lost at times).
full=$(sbatch --parsable -N 4 --gpus-per-node=4 -o /dev/null --wrap 'sleep 1000')
wait_until 30 "rigid job $full running on every GPU" eval '[[ $(job_state "$full") == RUNNING ]]'
held=$(as_user sbatch --parsable --requeue -N 1-4 --gpus-per-node=4 -o /dev/null --wrap "'srun --ntasks=1 sleep 1000'")
note "user job $held: $(reason "$held")"
user_msg=true  # job_modify()'s err_msg reaches the user from 23.02 on
[[ $(scontrol --version) == *" 22.05."* ]] && user_msg=false  # "slurm-wlm 22.05.8" (Debian)
said=$(as_user scontrol release "$held" 2>&1) && fail "the user released sched/pollux's hold"
note "scontrol release $held (user): $said"
[[ $said == *"Job is in held state, pending scheduler release for job $held"* ]] ||
  fail "the user's refused release said: $said"
[[ $user_msg == false || $said == *"held by sched/pollux until a round gives it GPUs: release refused"* ]] ||
  fail "the user's refused release did not say why: $said"
said=$(as_user scontrol update jobid="$held" NumNodes=4-4 2>&1) && fail "the user changed the job's size"
note "scontrol update jobid=$held NumNodes=4-4 (user): $said"
[[ $said == *"Access/permission denied for job $held"* ]] || fail "the user's refused size update said: $said"
[[ $user_msg == false || $said == *"may not change the size of an elastic job: sched/pollux sizes it within its range (1-4 nodes x <= 4 GPUs per node), which only an operator may change"* ]] ||
  fail "the user's refused size update did not say why: $said"
as_user scontrol update jobid="$held" TimeLimit=100 || fail "the user could not change the time limit"
(($(log_count "job_submit/pollux: JobId=$held: held by sched/pollux until a round gives it GPUs: release refused") == 1)) ||
  fail "the refused release is not logged"
scancel "$full"
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
# Handed back: held by sched/pollux again, or already released by one of its
# rounds (phase start: Slurm has not started it yet, reason None, the state
# CI's 24.11 run once read here) or running. A release by Slurm itself
# would leave the phase held with no sched/pollux reason.
handed_back() {
  local r p
  r=$(reason "$admin") p=$(phase "$admin")
  note "job $admin after the release: reason $r, phase $p"
  [[ $r == "pollux: waiting for GPUs" || $p == start || $p == run ]]
}
handed_back || fail "the release did not hand job $admin back to sched/pollux: $(reason "$admin") ($(system_comment "$admin"))"
wait_until 30 "job $admin running as decided" runs_as_decided "$admin"
note "job $admin: $(granted "$admin") | $(system_comment "$admin")"
note "ok"
