#!/bin/bash
# Every size sched/pollux decides is one Slurm can carry out (issue 13,
# situations 1 and 2): a partition's MaxNodes bounds an elastic job, also
# one already running when the limit is lowered (it is resized within the
# limit, not left pending with PartitionNodeLimit); a job in a partition of
# some nodes runs only there, and so does one that excludes a node; and a
# size Slurm refuses for a limit the policy is not told (here the
# partition's MaxTime) is detected at once, logged once with the job and
# Slurm's reason, and the job is held without GPUs instead of waiting.
source "$(dirname "$0")/lib.sh"
start_cluster
nodes_of() { granted "$1" | wc -w; }
on_only() {  # on_only JOB NODE...: every node it was granted or decided is one of NODE...
  local n allowed=" ${*:2} "
  for n in $(granted "$1") $(decided "$1"); do [[ $allowed == *" ${n%%:*} "* ]] || return 1; done
}
rounds() { log_count "sched/pollux: round:"; }
wait_rounds() { local r0; r0=$(rounds); wait_until 60 "$1 more rounds" bash -c "(( \$(grep -c 'sched/pollux: round:' $CLUSTER_DIR/log/slurmctld.log) >= $r0 + $1 ))"; }

scontrol update PartitionName=gpu MaxNodes=2
export POLLUX_TEST_PROFILED=16  # each job would take every GPU it may
a=$(submit_elastic a -N 1-4 --gpus-per-node=4)
within_limit() {
  (($(nodes_of "$a") <= 2)) || fail "job $a on $(granted "$a") despite MaxNodes=2: $(system_comment "$a")"
  runs_as_decided "$a" && [[ $(comment_key "$a" why) == grow ]]
}
wait_until 90 "job $a grown within MaxNodes=2" within_limit
wait_rounds 2
within_limit || fail "job $a: $(job_state "$a") on $(granted "$a"): $(system_comment "$a")"
note "job $a under MaxNodes=2: $(granted "$a")"

# A second partition of two nodes; jobs in it run only there.
scontrol create PartitionName=half Nodes=n[3-4] MaxTime=INFINITE State=UP
b=$(submit_elastic b -p half -N 1-4 --gpus-per-node=4)
c=$(submit_elastic c -p half -N 1-2 --gpus-per-node=4 --exclude=n4)
watch_placement() {
  on_only "$b" n3 n4 || fail "job $b (partition half) placed outside it: granted $(granted "$b"), decided $(decided "$b")"
  on_only "$c" n3 || fail "job $c (half, --exclude=n4) placed outside n3: granted $(granted "$c"), decided $(decided "$c")"
  runs_as_decided "$b" && runs_as_decided "$c"
}
wait_until 120 "jobs $b and $c running as decided in partition half" watch_placement
note "job $b: $(granted "$b"); job $c: $(granted "$c"); job $a: $(granted "$a")"
for j in "$b" "$c"; do
  (($(log_count "JobId=$j: release") <= 3)) || fail "job $j was released $(log_count "JobId=$j: release") times"
done

# The limit lowered under a running job: it is resized within it.
scontrol update PartitionName=gpu MaxNodes=1
one_node() { runs_as_decided "$a" && (($(nodes_of "$a") == 1)); }
wait_until 120 "job $a resized to 1 node" one_node
note "job $a under MaxNodes=1: $(granted "$a")"

# A limit the policy is not told: the partition's MaxTime below the job's
# time limit. Slurm's own test refuses the size sched/pollux sets.
scontrol update PartitionName=half MaxTime=1
d=$(submit_elastic d -p half -N 1-2 --gpus-per-node=4 --time=10)
refused() { [[ $(comment_key "$d" why) == refused && $(job_state "$d") == PENDING ]]; }
scancel "$c"
wait_until 60 "job $d's size refused by Slurm" refused
wait_rounds 3
(($(log_count "JobId=$d: Slurm refuses .*PartitionTimeLimit") == 1)) ||
  fail "the refusal of job $d was logged $(log_count "JobId=$d: Slurm refuses") times, not once"
[[ $(job_state "$d") == PENDING ]] || fail "job $d: $(job_state "$d")"
note "job $d: $(squeue -h -j "$d" -o %r) | $(system_comment "$d")"
note "ok"
