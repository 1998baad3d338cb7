#!/bin/bash
# Every size sched/pollux decides is one Slurm can carry out (issue 13,
# situations 1 and 2): a partition's MaxNodes bounds an elastic job, also
# one already running when the limit is lowered (it is resized within the
# limit, not left pending with PartitionNodeLimit); a job in a partition of
# some nodes runs only there, and so does one that excludes a node; Slurm's
# own limits test bounds the sizes before the policy chooses (MinNodes,
# MaxCPUsPerNode), so Slurm never refuses one; a job that limits leave no
# size (MaxTime) gets no GPUs and says why, logged once; and reservations
# restrict placement (issue 13); a job naming several partitions is sized
# and placed in one that allows it, never across two (issue 20).
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

# Limits that leave the job no size at all: the partition's MaxTime below
# its time limit. Slurm's own test, asked before the policy runs, finds no
# size: the job gets no GPUs, says why, and is logged once; no size is
# ever proposed (nothing is refused after the fact).
scontrol update PartitionName=half MaxTime=1
d=$(submit_elastic d -p half -N 1-2 --gpus-per-node=4 --time=10)
scancel "$c"
no_size() { [[ $(comment_key "$d" why) == limits && $(job_state "$d") == PENDING ]]; }
wait_until 60 "job $d without GPUs: no size Slurm allows" no_size
wait_rounds 2
no_size || fail "job $d: $(job_state "$d"): $(system_comment "$d")"
[[ $(squeue -h -j "$d" -o %r) == *"no size Slurm allows (PartitionTimeLimit)"* ]] ||
  fail "job $d's reason: $(squeue -h -j "$d" -o %r)"
(($(log_count "JobId=$d: Slurm allows it no size .*PartitionTimeLimit") == 1)) ||
  fail "job $d's lack of a size was logged $(log_count "JobId=$d: Slurm allows it no size") times, not once"
note "job $d: $(squeue -h -j "$d" -o %r) | $(system_comment "$d")"

# Size bounds from Slurm's own tests: the partition's MinNodes and
# MaxCPUsPerNode (one CPU per GPU: at most 2 GPUs per node). The job is
# sized within them at once, and Slurm never refuses a size. (Job $b, left
# no size by MaxTime, kept running at its size meanwhile; it goes, as two
# distributed jobs may not share the partition's two nodes.)
scancel "$b"
scontrol update PartitionName=half MaxTime=INFINITE MinNodes=2 MaxCPUsPerNode=2
bounded() {  # bounded JOB: runs as decided on 2 nodes, at most 2 GPUs each
  local x
  runs_as_decided "$1" && (($(nodes_of "$1") == 2)) || return 1
  for x in $(granted "$1"); do ((${x#*:} <= 2)) || fail "job $1 got ${x#*:} GPUs on ${x%%:*} despite MaxCPUsPerNode=2"; done
}
wait_until 90 "job $d on 2 nodes of partition half, <= 2 GPUs each" bounded "$d"
note "MinNodes=2 MaxCPUsPerNode=2: job $d: $(granted "$d")"
(($(log_count "Slurm refuses|BadConstraints") == 0)) || fail "Slurm refused a size: $(grep -E 'Slurm refuses|BadConstraints' "$CLUSTER_DIR/log/slurmctld.log" | head -3)"
scancel "$d"

# Reservations: a job with --reservation runs only on its nodes, and a job
# without one is moved off nodes reserved for others.
scontrol update PartitionName=gpu MaxNodes=UNLIMITED
scontrol create reservation ReservationName=r1 Nodes=n1,n2 Users=root StartTime=now Duration=60 Flags=IGNORE_JOBS
e=$(submit_elastic e --reservation=r1 -N 1-4 --gpus-per-node=4)
placed() {
  on_only "$e" n1 n2 || fail "job $e (reservation r1) placed outside it: granted $(granted "$e"), decided $(decided "$e")"
  runs_as_decided "$e" && runs_as_decided "$a" && on_only "$a" n3 n4
}
wait_until 120 "job $e in reservation r1, job $a outside it" placed
wait_rounds 2
# Still so (a resize within those nodes may be under way: waited for).
wait_until 60 "job $e in reservation r1, job $a outside it, two rounds later" placed
note "reservation r1 (n1,n2): job $e: $(granted "$e"); job $a: $(granted "$a")"

# Several partitions (-p sub,gpu): a size passes when one of them passes it,
# as Slurm has it; sub allows 1 node, gpu 3: the job runs on 2 or 3 nodes,
# in gpu, and no size is refused.
scancel "$a" "$e"
scontrol delete ReservationName=r1
scontrol create PartitionName=sub Nodes=n[1-4] MaxNodes=1 MaxTime=INFINITE State=UP
scontrol update PartitionName=gpu MaxNodes=3
f=$(submit_elastic f -p sub,gpu -N 2-4 --gpus-per-node=4)
in_gpu() { runs_as_decided "$f" && (($(nodes_of "$f") >= 2 && $(nodes_of "$f") <= 3)) && [[ $(job_field "$f" Partition) == gpu ]]; }
wait_until 90 "job $f (-p sub,gpu -N 2-4) running on 2-3 nodes in partition gpu" in_gpu
note "job $f (-p sub,gpu): $(granted "$f") in $(job_field "$f" Partition) | $(system_comment "$f")"
(($(log_count "Slurm refuses|BadConstraints") == 0)) || fail "Slurm refused a size: $(grep -E 'Slurm refuses|BadConstraints' "$CLUSTER_DIR/log/slurmctld.log" | head -3)"

# Several partitions of different nodes (-p lo,hi: n1-n2 and n3-n4): the
# job is placed in one of them, never across (neither could start it on
# nodes of both), though it would take all 16 GPUs.
scancel "$f"
scontrol create PartitionName=lo Nodes=n[1-2] MaxTime=INFINITE State=UP
scontrol create PartitionName=hi Nodes=n[3-4] MaxTime=INFINITE State=UP
g=$(submit_elastic g -p lo,hi -N 1-4 --gpus-per-node=4)
in_one() {
  on_only "$g" n1 n2 || on_only "$g" n3 n4 ||
    fail "job $g (-p lo,hi) placed across two partitions: granted $(granted "$g"), decided $(decided "$g")"
  runs_as_decided "$g" && (($(nodes_of "$g") == 2))
}
wait_until 90 "job $g (-p lo,hi -N 1-4) running on the two nodes of one partition" in_one
wait_rounds 2
wait_until 60 "job $g in one partition, two rounds later" in_one
note "job $g (-p lo,hi): $(granted "$g") in $(job_field "$g" Partition) | $(system_comment "$g")"
(($(log_count "Slurm refuses|BadConstraints") == 0)) || fail "Slurm refused a size: $(grep -E 'Slurm refuses|BadConstraints' "$CLUSTER_DIR/log/slurmctld.log" | head -3)"
note "ok"
