#!/bin/bash
# Users are told (issue 13, situations 5 and 10): sbatch prints whether
# job_submit/pollux made the job elastic and, if not, why (Slurm's user
# message from the job_submit plugin); a job without GPUs or a node range
# gets no message. --exclusive and --nodelist jobs are rigid: Slurm runs
# an --exclusive job on a whole node as asked and sched/pollux never
# touches it (no SystemComment, never requeued). An elastic job whose
# smallest size no node could hold (memory, CPUs, features, node count) is
# refused at sbatch as its rigid form is, in Slurm's words, and one its
# partition's limits leave no size waits as its rigid form does (issue 20).
# A job Slurm refuses for its partition gets Slurm's error alone, no
# "elastic job: ..." before it (issue 34).
source "$(dirname "$0")/lib.sh"
start_cluster
message() { sbatch -o /dev/null "$@" 2>&1 >/dev/null | sed -n 's/^sbatch: //p'; }
expect() {  # expect TEXT sbatch-options...
  local want=$1 got
  shift
  got=$(message "$@")
  [[ $got == *"$want"* ]] || fail "sbatch $*: said '$got', expected '$want'"
  note "sbatch $*: $got"
}
job='srun --ntasks=1 sleep 1000'
expect "elastic job: 1-4 nodes x <= 4 GPUs per node, sized by sched/pollux when it starts (held until it gives the job GPUs); resized while it runs only once its program's agent listens for resizes (SystemComment kind=elastic), else left at that size (kind=moldable)" \
  --requeue -N 1-4 --gpus-per-node=4 --wrap "$job"
expect "; --no-kill ignored: requeued when a node fails, to restart from its last checkpoint (from the beginning if its program runs no agent)" \
  --requeue --no-kill -N 1-4 --gpus-per-node=4 --wrap "$job"
expect "rigid job (Slurm sizes it as asked, sched/pollux does not resize it): GPUs requested per job" \
  --requeue -N 1-2 --gpus=4 --wrap "$job"
expect "rigid job" --no-requeue -N 1-2 --gpus-per-node=2 --wrap "$job"
expect "--nodelist fixes its nodes" --requeue -N 1-2 --gpus-per-node=2 -w n1 --wrap "$job"
# An elastic job that can never run is refused at sbatch as its rigid
# form is, in Slurm's words (nodes: 4 CPUs, 1000 MB), not held for ever.
refused_like_rigid() {  # refused_like_rigid WORDS sbatch-options...
  local want=$1 rigid elastic
  shift
  rigid=$(message -N 1 --gpus-per-node=1 "$@" --wrap "$job" || true)
  elastic=$(message --requeue -N 1-4 --gpus-per-node=4 "$@" --wrap "$job" || true)
  [[ $rigid == *"$want"* ]] || fail "the rigid job ($*) was not refused with '$want': $rigid"
  [[ $elastic == *"$want"* && $elastic == *"Batch job submission failed"* && $elastic != *"elastic job:"* ]] ||
    fail "the elastic job ($*) was not refused like its rigid form ('$want'): $elastic"
  note "sbatch --requeue -N 1-4 --gpus-per-node=4 $*: $elastic"
}
# A partition that does not exist: Slurm's refusal, alone (it checks the
# partition before anything else, after job_submit/pollux has spoken).
for opts in "-p nosuchpart --requeue -N 1-4 --gpus-per-node=4" "-p gpu,nosuchpart --requeue -N 1-2 --gpus=4"; do
  said=$(message $opts --wrap "$job" || true)
  [[ $said == "error: invalid partition specified: nosuchpart"$'\n'* && $said == *"Batch job submission failed: Invalid partition name specified" &&
     $said != *"elastic job"* && $said != *"rigid job"* ]] ||
    fail "sbatch $opts: said '$said', expected Slurm's refusal alone"
  note "sbatch $opts: $said"
done
refused_like_rigid "Memory specification can not be satisfied" --mem=2000
refused_like_rigid "CPU count per node can not be satisfied" --cpus-per-task=8
# Features no node has, and more nodes than the partition has: refused by
# slurmctld's own tests at submission (_job_create), for both forms.
refused_like_rigid "Invalid feature specification" --constraint=nosuch
refused_like_rigid "Node count specification invalid" -N 5-8
# A partition's MaxNodes below the job's minimum: Slurm accepts the rigid
# form (EnforcePartLimits=NO, the default; ALL or ANY refuses both forms
# alike at sbatch) and it waits with PartitionNodeLimit; the elastic form
# is accepted too, and held saying the same limit.
scontrol create PartitionName=one Nodes=n[1-4] MaxNodes=1 MaxTime=INFINITE State=UP
rigid=$(sbatch --parsable -p one -N 2 --gpus-per-node=1 -o /dev/null --wrap "$job")
elastic=$(sbatch --parsable -p one --requeue -N 2-4 --gpus-per-node=4 -o /dev/null --wrap "$job")
waits_like_rigid() {
  [[ $(squeue -h -j "$rigid" -o %r) == PartitionNodeLimit &&
     $(squeue -h -j "$elastic" -o %r) == *"no size Slurm allows (PartitionNodeLimit)"* ]]
}
wait_until 30 "rigid job $rigid and elastic job $elastic both waiting for partition one's MaxNodes" waits_like_rigid
note "MaxNodes=1: rigid $rigid: $(squeue -h -j "$rigid" -o %r); elastic $elastic: $(squeue -h -j "$elastic" -o %r)"
expect "elastic job: 1-4 nodes" --requeue -N 1-4 --gpus-per-node=4 --mem=500 --cpus-per-task=2 --wrap "$job"
[[ -z $(message -N 1 --wrap "$job") ]] || fail "a job without GPUs or node range got a message: $(message -N 1 --wrap "$job")"
scancel --user=root
wait_until 30 "the jobs cancelled" bash -c '[[ -z $(squeue -h -t PD,R) ]]'

out=$(sbatch --parsable --requeue --exclusive -N 1-2 --gpus-per-node=1 -o /dev/null --wrap "$job" 2>"$CLUSTER_DIR/excl.err")
grep -q -- "--exclusive" "$CLUSTER_DIR/excl.err" || fail "sbatch --exclusive said: $(cat "$CLUSTER_DIR/excl.err")"
wait_until 30 "exclusive job $out running" bash -c "[[ \$(squeue -h -j $out -o %T) == RUNNING ]]"
rounds() { log_count "sched/pollux: round:"; }
r0=$(rounds)
wait_until 30 "two more rounds" bash -c "(( \$(grep -c 'sched/pollux: round:' $CLUSTER_DIR/log/slurmctld.log) >= $r0 + 2 ))"
[[ -z $(system_comment "$out") && $(restarts "$out") == 0 && $(job_state "$out") == RUNNING ]] ||
  fail "sched/pollux touched the --exclusive job $out: $(job_state "$out"), $(system_comment "$out")"
note "ok"
