#!/bin/bash
# sched/pollux on typed GRES (issue 19): on a cluster of two GPU types
# (n1-n2 a100, n3-n4 h100, three times as fast), (a) an untyped elastic job
# is placed on nodes of one type only, and its SystemComment names that
# type and its goodput on each; (b) a job asking for a set of types with
# --constraint is never given another; (c) a rigid typed job beside elastic
# ones runs where Slurm puts it, never touched, and no node is
# over-allocated; the elastic jobs stay on one type each throughout;
# (d) what the plugin learnt of the types' speeds is kept in
# StateSaveLocation and restored by a restarted slurmctld. The speeds
# reach sched/pollux through pollux-local-cluster --tell-speeds.
source "$(dirname "$0")/lib.sh"
start_cluster "" --gpu-types a100:2,h100:2:3 --tell-speeds
grep >/dev/null '^SchedulerParameters=.*,pollux_gpu_type_speeds=a100=1:h100=3' "$CLUSTER_DIR/etc/slurm.conf" ||
  fail "--tell-speeds: $(grep SchedulerParameters "$CLUSTER_DIR/etc/slurm.conf")"
mkdir -p "$CLUSTER_DIR/jobs"
declare -A type_of=([n1]=a100 [n2]=a100 [n3]=h100 [n4]=h100)
types_of() {  # types_of JOB [granted|decided]: the GPU types of its nodes, sorted, distinct
  local x
  for x in $("${2:-granted}" "$1"); do echo "${type_of[${x%%:*}]}"; done | sort -u | tr '\n' ' ' | sed 's/ $//'
}
# one_type JOB [TYPE]: fails when what the job was granted, or what it was
# decided (a resize under way may move it to the other type), spans types,
# or is on another type than TYPE.
one_type() {
  local t w
  for w in granted decided; do
    t=$(types_of "$1" "$w")
    [[ $t != *" "* ]] || fail "job $1 spans GPU types: granted $(granted "$1"), decided $(decided "$1")"
    [[ -z ${2:-} || -z $t || $t == "$2" ]] || fail "job $1 (-C $2) got $t GPUs: granted $(granted "$1"), decided $(decided "$1")"
  done
}

# (a) An untyped elastic job: one type, named in its SystemComment with its
# goodput on each type (once its hint, measured on its type, arrived).
export POLLUX_TEST_PROFILED=16
a=$(submit_elastic a -N 1-4 --gpus-per-node=4)
typed_comment() {
  one_type "$a"
  runs_as_decided "$a" || return 1
  local t g
  t=$(comment_key "$a" type)
  g=$(comment_key "$a" goodput_by_type)
  [[ -n $t && $t == "$(types_of "$a")" && $g == a100:*,h100:* ]]
}
wait_until 90 "job $a running on one type, its SystemComment naming it and its goodput on each" typed_comment
note "job $a: $(granted "$a") | $(system_comment "$a")"

# (b) -C a100: only the a100 nodes, whatever the policy would prefer.
b=$(submit_elastic b -C a100 -N 1-2 --gpus-per-node=4)
on_a100() { one_type "$b" a100; one_type "$a"; runs_as_decided "$b"; }
wait_until 90 "job $b (-C a100) running" on_a100

# (c) A rigid typed job: Slurm places it on an h100 node; the elastic jobs
# make room and keep to one type each.
r=$(sbatch --parsable -J rigid -N 1 --gpus-per-node=h100:2 -o "$CLUSTER_DIR/jobs/rigid.out" "$here/rigid-job.sh")
rigid_runs() { one_type "$a"; one_type "$b" a100; [[ $(job_state "$r") == RUNNING ]]; }
wait_until 90 "rigid job $r (--gpus-per-node=h100:2) running" rigid_runs
[[ $(types_of "$r") == h100 ]] || fail "rigid job $r (h100:2) on $(granted "$r")"
settled() { one_type "$a"; one_type "$b" a100; runs_as_decided "$a" && runs_as_decided "$b"; }
wait_until 120 "elastic jobs $a and $b running as decided beside rigid job $r" settled
note "job $a: $(granted "$a"); job $b: $(granted "$b"); rigid job $r: $(granted "$r")"
declare -A used=()
for j in "$a" "$b" "$r"; do
  for x in $(granted "$j"); do used[${x%%:*}]=$((${used[${x%%:*}]:-0} + ${x#*:})); done
done
for n in "${!used[@]}"; do ((used[$n] <= 4)) || fail "$n: ${used[$n]} GPUs granted of 4"; done
[[ -z $(system_comment "$r") ]] || fail "rigid job $r got a SystemComment: $(system_comment "$r")"
[[ $(restarts "$r") == 0 ]] || fail "rigid job $r was requeued"
(($(log_count "sched/pollux: JobId=$r:") == 0)) || fail "sched/pollux acted on rigid job $r"
(($(log_count "spans GPU types") == 0)) || fail "the policy proposed a job across types: $(grep 'spans GPU types' "$CLUSTER_DIR/log/slurmctld.log" | head -2)"

# (d) The learnt speeds, with their seed, kept across a restart.
speeds=$CLUSTER_DIR/state/pollux_gpu_type_speeds
[[ -f $speeds && $(head -n 3 "$speeds") == $'pollux_gpu_type_speeds 1\ntype 1 a100\ntype 3 h100' ]] ||
  fail "$speeds: $(head -n 3 "$speeds" 2>&1)"
mark=$(($(wc -l < "$CLUSTER_DIR/log/slurmctld.log") + 1))
cluster restart-ctld
restored() { tail -n +"$mark" "$CLUSTER_DIR/log/slurmctld.log" | grep >/dev/null "pollux_gpu_type_speeds: learnt GPU type speeds restored"; }
wait_until 60 "the learnt GPU type speeds restored after a restart of slurmctld" restored
note "ok"
