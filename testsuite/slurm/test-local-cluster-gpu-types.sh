#!/bin/bash
# pollux-local-cluster --gpu-types: slurmctld and slurmd accept typed GRES
# (Gres=gpu:TYPE:G, gres.conf Type=TYPE) and node features; a job asking
# for a type (--gpus-per-node=TYPE:G), one asking for a feature
# (--constraint) and an untyped GPU job all run, each on a node that fits,
# and the TaskProlog tells its tasks the node's type and speed.
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
note "ok"
