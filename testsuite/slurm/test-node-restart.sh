#!/bin/bash
# The local cluster's node faults are real: kill-node kills a node's slurmd
# and every process of its jobs (batch script, srun, tasks), as a power
# loss, so slurmctld marks the node DOWN and requeues the job; restart-node
# brings the node back into service, and on a live node kills its slurmd
# alone (a crash of the daemon), whose jobs' processes run on. (kill-node
# used to find the jobs' processes by the cluster's marker in their
# environment, which slurmstepd does not pass on: they lived on, and a
# "failed" node kept training.)
# An elastic job checkpointing to grow when its node goes DOWN (Slurm
# requeues it before its checkpoint times out): sched/pollux's log names
# the node the job ran on, which its SystemComment kept (from=), not the
# grow's nodes (issue 34).
source "$(dirname "$0")/lib.sh"
# SlurmdTimeout 15: at 5 a loaded machine's slurmd (a fresh-clone run at
# a load average of 26) missed slurmctld's pings long enough that n1 went
# DOWN and the job was requeued before the test's first fault.
start_cluster "" --nodes 2 --gpus 1 --slurmd-timeout 15
mkdir -p "$CLUSTER_DIR/jobs"
# The processes of job $1 on node $2 of this cluster (slurmstepd names the
# three in their environment: other tests' clusters have a job 1 on an n1
# too); with a third argument only those slurmstepd started (the
# batch script, the tasks), which live as long as the job: the job's
# `sleep 1` come and go.
procs_on() {
  local p ppid
  for p in /proc/[0-9]*; do
    grep -qzx "SLURM_CONF=$SLURM_CONF" "$p/environ" 2>/dev/null && grep -qzx "SLURM_JOB_ID=$1" "$p/environ" 2>/dev/null &&
      grep -qzx "SLURMD_NODENAME=$2" "$p/environ" 2>/dev/null || continue
    if (($# > 2)); then
      ppid=$(sed 's/.*) [A-Za-z] \([0-9]*\).*/\1/' "$p/stat" 2>/dev/null)
      [[ $(cat "/proc/$ppid/comm" 2>/dev/null) == slurmstepd ]] || continue
    fi
    echo "${p#/proc/}"
  done
  return 0
}
job=$(sbatch --parsable --requeue -J r -N 2 -o "$CLUSTER_DIR/jobs/r.out" "$here/rigid-job.sh")
on_both() { [[ $(job_state "$job") == RUNNING && -n $(procs_on "$job" n1 top) && -n $(procs_on "$job" n2 top) ]]; }
wait_until 60 "job $job running on n1 and n2" on_both
note "job $job: started by slurmstepd on n1: $(procs_on "$job" n1 top | wc -l) process(es), on n2: $(procs_on "$job" n2 top | wc -l)"

# A crash of n2's slurmd alone: the job's processes there live on.
before=$(procs_on "$job" n2 top | sort | tr '\n' ' ')
cluster restart-node n2
[[ $(procs_on "$job" n2 top | sort | tr '\n' ' ') == "$before" ]] || fail "restart-node n2 changed the job's processes on n2"
[[ $(job_state "$job") == RUNNING ]] || fail "job $job is $(job_state "$job") after n2's slurmd restarted"

# A power loss of n1: nothing of the job survives there; the node goes
# DOWN, the job is requeued, and once n1 is back the job runs again.
cluster kill-node n1
gone() { [[ -z $(procs_on "$job" n1) ]]; }
if ! gone; then
  sleep 2  # a process that was being reaped
  left=$(procs_on "$job" n1)
  [[ -z $left ]] || fail "kill-node n1 left processes of job $job running: $(ps -o pid=,ppid=,stat=,args= -p "${left//$'\n'/,}")"
fi
down() { [[ $(scontrol show node n1) =~ State=DOWN ]]; }
wait_until 60 "n1 marked DOWN" down
requeued() { (($(restarts "$job") >= 1)); }
wait_until 60 "job $job requeued" requeued
cluster restart-node n1
[[ ! $(scontrol show node n1) =~ State=DOWN ]] || fail "n1 is still DOWN after restart-node"
wait_until 90 "job $job running again on n1 and n2" on_both
note "job $job running again (restarts $(restarts "$job"))"
scancel "$job"

export POLLUX_TEST_PROFILED=16
blocker=$(sbatch --parsable -J blocker -N 1 -w n2 --gpus-per-node=1 -o /dev/null --wrap 'sleep 600')
wait_until 60 "rigid job $blocker running on n2" eval '[[ $(job_state "$blocker") == RUNNING ]]'
a=$(submit_elastic a -N 1-2 --gpus-per-node=1 --export=ALL,POLLUX_TEST_ACK_DELAY=1000)
wait_until 60 "job $a running as decided on n1" eval 'runs_as_decided "$a" && [[ $(granted "$a") == n1:1 ]]'
scancel "$blocker"
checkpointing() { [[ $(phase "$a") == ckpt ]]; }
wait_until 60 "job $a asked to checkpoint to grow onto n2" checkpointing
note "job $a: $(system_comment "$a")"
[[ $(comment_key "$a" alloc) == 2x1@n1,n2 && $(comment_key "$a" from) == 1x1@n1 ]] ||
  fail "job $a's SystemComment does not say where it runs while it checkpoints to grow: $(system_comment "$a")"
# n1 is set DOWN under it: Slurm kills and requeues the job as it does
# once a failed node's SlurmdTimeout passes (kill-node, above, would add
# that wait and Slurm's retries of the dead node's RPCs: 25 s). Its live
# slurmd brings n1 back into service within a second, so whether the
# round saw n1 DOWN (the note's "n1 failed") is left open.
scontrol update nodename=n1 state=down reason=failed
said() { grep -q "sched/pollux: JobId=$a: its run on " "$CLUSTER_DIR/log/slurmctld.log"; }
wait_until 30 "sched/pollux logging Slurm's requeue of job $a" said
line=$(grep "sched/pollux: JobId=$a: its run on " "$CLUSTER_DIR/log/slurmctld.log")
note "${line#*sched/pollux: }"
[[ $line == *"its run on n1 was ended by Slurm's requeue ("*"); it restarts from its last checkpoint, "* ]] ||
  fail "Slurm's requeue of job $a, which ran on n1, was logged as: ${line#*sched/pollux: }"
note "ok"
