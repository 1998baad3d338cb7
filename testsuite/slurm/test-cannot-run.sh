#!/bin/bash
# Elastic jobs that Slurm cannot start get no GPUs, and say why (issue 13,
# situations 3 and 4): an unsatisfied dependency, one that can never be
# satisfied, a begin time in the future and a partition that is down each
# hold the job with that reason (squeue) and why= in its SystemComment,
# alloc=0, round after round, while another elastic job has the GPUs; a
# begin time that passes lets the job start. A user's hold on a running
# elastic job keeps it where it runs: sched/pollux never requeues it
# (which would leave it held, its GPUs idle) until the user releases it.
source "$(dirname "$0")/lib.sh"
start_cluster
chmod 755 "$CLUSTER_DIR" "$CLUSTER_DIR/etc"  # the user's commands read slurm.conf
as_user() { su nobody -s /bin/bash -c "cd /tmp && SLURM_CONF=$SLURM_CONF $*"; }
reason() { squeue -h -j "$1" -o %r; }
alloc_of() { comment_key "$1" alloc; }
held_for() {  # held_for JOB WHY: pending, held with WHY's reason, no GPUs decided
  [[ $(job_state "$1") == PENDING && $(comment_key "$1" why) == "$2" && $(alloc_of "$1") == 0 && $(phase "$1") == held ]]
}
rounds() { log_count "sched/pollux: round:"; }
wait_rounds() { local r0; r0=$(rounds); wait_until 60 "$1 more rounds" bash -c "(( \$(grep -c 'sched/pollux: round:' $CLUSTER_DIR/log/slurmctld.log) >= $r0 + $1 ))"; }

# A user's elastic job, held by its user while it runs.
user_job=$(as_user sbatch --parsable --requeue -N 1-4 --gpus-per-node=4 -o /dev/null --wrap "'srun --ntasks=1 sleep 1000'")
wait_until 60 "user job $user_job running as decided" runs_as_decided "$user_job"
user_alloc=$(granted "$user_job")
as_user scontrol hold "$user_job" || fail "the user could not hold their running job"
note "user job $user_job held while running: $(reason "$user_job"), $user_alloc"

# An elastic job that wants every GPU.
export POLLUX_TEST_PROFILED=16
a=$(submit_elastic a -N 1-4 --gpus-per-node=4)
wait_until 90 "elastic job $a running as decided" runs_as_decided "$a"

dep=$(submit_elastic dep -N 1-4 --gpus-per-node=4 --dependency=afterok:"$a")
failed=$(sbatch --parsable -o /dev/null --wrap false)
never=$(submit_elastic never -N 1-4 --gpus-per-node=4 --dependency=afterok:"$failed")
begin=$(submit_elastic begin -N 1-4 --gpus-per-node=4 --begin=now+40)
begin_at=$((SECONDS + 40))
wait_until 30 "job $dep held for its dependency" held_for "$dep" dependency
wait_until 60 "job $never held for a dependency never satisfied" held_for "$never" dependency-never
wait_until 30 "job $begin held for its begin time" held_for "$begin" begin
[[ $(reason "$dep") == "pollux: waiting for its dependency" ]] || fail "job $dep: reason $(reason "$dep")"
[[ $(reason "$never") == "pollux: dependency never satisfied" ]] || fail "job $never: reason $(reason "$never")"
[[ $(reason "$begin") == "pollux: waiting for its begin time" ]] || fail "job $begin: reason $(reason "$begin")"
wait_rounds 3
for j in "$dep" "$never"; do
  held_for "$j" "$(comment_key "$j" why)" || fail "job $j: $(job_state "$j"): $(system_comment "$j")"
done
((SECONDS < begin_at)) && { held_for "$begin" begin || fail "job $begin started before its begin time: $(system_comment "$begin")"; }

# The user's job was never requeued nor moved while held.
[[ $(job_state "$user_job") == RUNNING && $(restarts "$user_job") == 0 && $(granted "$user_job") == "$user_alloc" ]] ||
  fail "user job $user_job: $(job_state "$user_job"), restarts $(restarts "$user_job"), $(granted "$user_job") (was $user_alloc)"
(($(log_count "JobId=$user_job: (signal|requeue)") == 0)) || fail "sched/pollux resized the held job $user_job"

# The begin time passes: the job starts.
wait_until 150 "job $begin running as decided after its begin time" runs_as_decided "$begin"
((SECONDS >= begin_at - 1)) || fail "job $begin started before its begin time"
note "job $begin: $(granted "$begin"); job $a: $(granted "$a")"

# A partition that is down holds new jobs; once up, they get GPUs.
scontrol update PartitionName=gpu State=DOWN
down=$(submit_elastic down -N 1-4 --gpus-per-node=4)
wait_until 30 "job $down held while its partition is down" held_for "$down" partition
[[ $(reason "$down") == "pollux: partition down or inactive" ]] || fail "job $down: reason $(reason "$down")"
scontrol update PartitionName=gpu State=UP
not_blocked() { [[ $(comment_key "$down" why) != partition ]]; }
wait_until 30 "job $down considered again once the partition is up" not_blocked

# The user releases their hold: the job is sched/pollux's again.
as_user scontrol release "$user_job" || fail "the user could not release their hold"
[[ $(job_state "$user_job") == RUNNING ]] || fail "user job $user_job: $(job_state "$user_job")"
note "ok"
