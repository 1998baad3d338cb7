#!/bin/bash
# pollux-local-cluster --gpu-types: slurmctld and slurmd accept typed GRES
# (Gres=gpu:TYPE:G, gres.conf Type=TYPE) and node features; a job asking
# for a type (--gpus-per-node=TYPE:G), one asking for a feature
# (--constraint) and an untyped GPU job all run, each on a node that fits,
# and the TaskProlog tells its tasks the node's type and speed. Without
# pollux_gpu_type_speeds (sched/pollux is told no speed), an untyped
# elastic job that started on the a100 is moved onto the h100, 2.5 times
# as fast, once that is free: it explores the type, learns the ratio from
# its fits on both, and stays there (issue 34).
source "$(dirname "$0")/lib.sh"
start_cluster "" --gpus 2 --gpu-types a100:1,h100:1:2.5
mkdir -p "$CLUSTER_DIR/jobs"
scontrol show node n2 | grep >/dev/null "Gres=gpu:h100:2" || fail "n2: $(scontrol show node n2 | grep -E 'Gres|Features')"
scontrol show node n1 | grep >/dev/null "AvailableFeatures=a100" || fail "n1: $(scontrol show node n1 | grep -E 'Gres|Features')"

# Each job prints its node, type and speed as its task sees them.
show='echo "$SLURMD_NODENAME ${POLLUX_GPU_TYPE:-none} ${POLLUX_GPU_SPEED:-none}"'
typed=$(sbatch --parsable -J typed -N 1 --gpus-per-node=h100:1 -o "$CLUSTER_DIR/jobs/typed.out" --wrap "$show")
feature=$(sbatch --parsable -J feature -N 1 -C a100 --gpus-per-node=1 -o "$CLUSTER_DIR/jobs/feature.out" --wrap "$show")
untyped=$(sbatch --parsable -J untyped -N 1 --gpus-per-node=1 -o "$CLUSTER_DIR/jobs/untyped.out" --wrap "$show")
done_all() {
  local j
  for j in "$typed" "$feature" "$untyped"; do [[ $(job_state "$j") == COMPLETED ]] || return 1; done
}
wait_until 60 "jobs $typed, $feature and $untyped completed" done_all
out() { tr -d '\n' < "$CLUSTER_DIR/jobs/$1.out"; }
[[ $(out typed) == "n2 h100 2.5" ]] || fail "the h100 job saw '$(out typed)'"
[[ $(out feature) == "n1 a100 1" ]] || fail "the -C a100 job saw '$(out feature)'"
[[ $(out untyped) =~ ^(n1\ a100\ 1|n2\ h100\ 2\.5)$ ]] || fail "the untyped job saw '$(out untyped)'"

# A type the cluster has not: refused at submission, not left pending.
if sbatch -N 1 --gpus-per-node=v100:1 --wrap true 2>/dev/null; then fail "a v100 job was accepted"; fi

# Exploration: a rigid job holds the h100 until told, so the elastic job
# starts on the a100 and measures its speed there only.
note "no speeds told: exploring"
hold=$CLUSTER_DIR/jobs/hold
h=$(sbatch --parsable -J hold -N 1 --gpus-per-node=h100:2 -o /dev/null --wrap "until [ -e $hold ]; do sleep 0.2; done")
wait_until 30 "job $h (h100:2) running" eval '[[ $(job_state "$h") == RUNNING ]]'
x=$(submit_elastic explore -N 1-2 --gpus-per-node=2)
on_type() { [[ $(granted "$x") == "$1" && $(comment_key "$x" type) == "$2" ]] && runs_as_decided "$x"; }
wait_until 60 "job $x running on the a100 with its hint" on_type n1:2 a100
note "job $x: $(system_comment "$x")"
r0=$(restarts "$x")
touch "$hold"
# Both types still have the seed speed 1: only exploration moves it.
wait_until 60 "job $x moved onto the h100 (no speeds given)" on_type n2:2 h100
# Its hint now carries its fits on both types; the learnt ratio keeps it.
speeds=$CLUSTER_DIR/state/pollux_gpu_type_speeds
learnt() { grep >/dev/null '^pair 0 1 1 ' "$speeds" 2>/dev/null; }
wait_until 30 "the a100/h100 ratio learnt from job $x" learnt
note "job $x: $(system_comment "$x")"
# goodput_by_type=a100:G1,h100:G2, both its own fits: G2 well above G1.
faster_there() {
  local g a h
  g=$(comment_key "$x" goodput_by_type)
  a=${g#a100:} && a=${a%%,*} && h=${g##*,h100:}
  [[ $g == a100:*,h100:* && $a =~ ^[0-9.e+]+$ && $h =~ ^[0-9.e+]+$ ]] && awk -v a="$a" -v h="$h" 'BEGIN { exit !(h > 1.5 * a) }'
}
wait_until 30 "job $x's goodput on the h100 above 1.5 times the a100's" faster_there
[[ $(granted "$x") == n2:2 && $(restarts "$x") == $((r0 + 1)) ]] ||
  fail "job $x: $(granted "$x"), restarts $(restarts "$x") (expected n2:2 after one move from $r0)"
note "ok"
