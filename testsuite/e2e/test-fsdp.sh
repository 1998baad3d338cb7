#!/bin/bash
# The sharded PyTorch example (contrib/examples/pytorch/train_fsdp.py: a
# small GPT-like transformer, FSDP with one unit per block, under
# pollux.torch.ElasticFSDP; gloo, srun tasks through train.sbatch) resized
# 2 -> 3 -> 1 ranks on a 3-node x 1-GPU cluster. sched/pollux decides the
# sizes; the test steers it as an administrator does (`scontrol update
# NumNodes=`, test-operator.sh: the elastic job's range, which sched/pollux
# honours through checkpoint + requeue). Its log must show every run resuming at
# exactly the checkpointed step with its sample count (check-training-log:
# no step or sample lost or repeated), from the sharded checkpoint (DCP
# files of every rank), the loss going on from where it stopped.
#
# Needs torch >= 2.2 (FSDP with torch.distributed.checkpoint): the 24.11
# matrix's Debian 13 (2.6, slurm-24.11.torch). On an older torch
# (Debian 12's 1.13) it checks instead, in seconds and without a cluster,
# that ElasticFSDP refuses it with an error naming the torch needed: what a
# user of that torch gets (and no skip, so CI's POLLUX_TESTS_NO_SKIP=1 run
# on the host passes without a cluster).
source "$(dirname "$0")/lib.sh"
py=${POLLUX_PYTHON:-/usr/bin/python3}
py_has "$py" torch || skip "$py has no torch (Debian python3-torch)"
export PYTHONPATH=$POLLUX_SRC/python POLLUX_AGENT_LIBRARY=$POLLUX_BUILD/agent/.libs/libpollux-agent.so
# One interpreter start (importing torch takes seconds): "new" on torch >=
# 2.2; on an older one, ElasticFSDP's error asserted (no process group, no
# cluster needed) and "old".
said=$("$py" - <<'EOF' 2>&1
import torch
v = torch.__version__.split("+")[0].split(".")
if (int(v[0]), int(v[1])) >= (2, 2):
    print("new")
    raise SystemExit(0)
import pollux.torch as pollux
from pollux._capi import PolluxError
try:
    pollux.ElasticFSDP(torch.nn.Linear(2, 2), None)
except PolluxError as e:
    msg = str(e)
    assert "needs torch >= 2.2" in msg and torch.__version__ in msg, msg
    print("ElasticFSDP on torch " + torch.__version__ + ": " + msg)
    print("old")
else:
    raise SystemExit("ElasticFSDP accepted torch " + torch.__version__)
EOF
) || { echo "$said"; fail "ElasticFSDP on this torch did not refuse it clearly"; }
if [[ $said == *old ]]; then
  echo "$said"
  echo "torch < 2.2: the FSDP job cannot run here; checked its clear error instead (the job runs on the 24.11 matrix's torch 2.6)"
  exit 0
fi
[[ $said == new ]] || { echo "$said"; fail "could not read $py's torch version"; }
export POLLUX_PYTHON=$py POLLUX_TRAIN_PY=$POLLUX_SRC/contrib/examples/pytorch/train_fsdp.py OMP_NUM_THREADS=1
# Enough training that the job still runs after two resizes on a loaded
# 2-core machine (each run waits for the one before to take its steps),
# little enough that the 1-rank run ends it in seconds.
# (At most 64 a step, so the gain, and with it the progress a step makes,
# stays at most 2: 96 steps or more in all, 20 or so before the last run.)
OPTS=(--epochs 6 --train-sequences 1024 --val-sequences 256 --seed 5 --log-every 1 --eval-every 10
      --max-batch-size 64 --atomic 8 32)
MIN_ACC=0.6

start_cluster "" --nodes 3 --gpus 1
mkdir -p "$CLUSTER_DIR/jobs" "$CLUSTER_DIR/home"  # HOME: the default checkpoints stay in the cluster (lib.sh)
out=$CLUSTER_DIR/jobs/a.out
# Submitted elastic (-N 1-3: a fixed size is not sched/pollux's to
# change) and held until its range is 2-2, so that it starts at 2 ranks.
a=$(cd "$CLUSTER_DIR/jobs" && HOME="$CLUSTER_DIR/home" sbatch --parsable --requeue --open-mode=append -J a -o "$out" \
  -N 1-3 --gpus-per-node=1 --begin=now+600 "$POLLUX_SRC/contrib/examples/pytorch/train.sbatch" "${OPTS[@]}")
note "submitted FSDP job a ($a)"
wait_until 30 "job $a adopted" bash -c "[[ -n \$(scontrol show job $a | sed -n 's/^ *SystemComment=pollux//p') ]]"
scontrol update jobid="$a" NumNodes=2-2 || fail "NumNodes=2-2 refused"
scontrol update jobid="$a" StartTime=now
nodes_of() { granted "$1" | wc -w; }
# The last progress line's step of the current run (after its start line).
run_steps() { awk '/^start restart=/ {n = 0} /^step [0-9]+ / {n++} END {print n + 0}' "$out"; }
at_size() { runs_as_decided "$a" && (($(nodes_of "$a") == $1)) && (($(run_steps) >= $2)); }
wait_until 90 "job $a running on 2 ranks, 8 steps taken" at_size 2 8
note "a: $(granted "$a") | $(system_comment "$a")"
scontrol update jobid="$a" NumNodes=3-3 || fail "NumNodes=3-3 refused"
wait_until 90 "job $a grown to 3 ranks, 8 steps taken" at_size 3 8
note "a: $(granted "$a") | $(system_comment "$a")"
scontrol update jobid="$a" NumNodes=1-1 || fail "NumNodes=1-1 refused"
wait_until 90 "job $a shrunk to 1 rank" at_size 1 1
note "a: $(granted "$a") | $(system_comment "$a")"
wait_until 120 "job $a finished" ended "$a"
finished "$a" || fail "job $a ended $(job_state "$a")"
check_training a --min-acc "$MIN_ACC"
[[ $(summary_key runs) == 3 && $(summary_key grows) == 1 && $(summary_key shrinks) == 1 ]] ||
  fail "job a was not resized 2 -> 3 -> 1 once each: $summary"
(($(summary_key failures) == 0 && $(summary_key lost_steps) == 0)) || fail "job a's runs ended other than by a resize: $summary"
ranks=$(sed -n 's/^start restart=[0-9]* nodes=[0-9]* ranks=\([0-9]*\).*/\1/p' "$out" | tr '\n' ' ')
[[ $ranks == "2 3 1 " ]] || fail "job a's runs had $ranks ranks, not 2 3 1"
# Every run after the first restored the sharded checkpoint: FSDP's, from
# torch.distributed.checkpoint's files (one per rank that saved it).
(($(grep -c '^resumed step' "$out") == 2)) || fail "job a's runs did not both resume"
ckpt=$(find "$CLUSTER_DIR/home" -type d -name pytorch-fsdp -print -quit)
[[ -n $ckpt ]] || fail "no sharded checkpoint (pytorch-fsdp/) under $CLUSTER_DIR/home"
note "sharded checkpoint: $ckpt: $(ls "$ckpt" | tr '\n' ' ')"
[[ -f $ckpt/.metadata ]] || fail "$ckpt has no DCP .metadata"
# The loss goes on where it stopped: the first steps after each resume are
# close to the last ones before it, and well under the untrained loss.
python3 - "$out" <<'EOF' || fail "job a's loss did not continue across a resize"
import math, re, sys
runs = []
for line in open(sys.argv[1], errors="replace"):
    if line.startswith("start restart="):
        runs.append([])
    elif m := re.match(r"step \d+ .* loss (\S+) val_acc", line):
        runs[-1].append(float(m.group(1)))
untrained = math.log(16)
first = sum(runs[0][:3]) / 3
for k in (1, 2):
    before, after = sum(runs[k - 1][-5:]) / 5, sum(runs[k][:5]) / 5
    print(f"  resize {k}: loss {before:.3f} (last 5 steps before) -> {after:.3f} (first 5 after); "
          f"run 0 began at {first:.3f}, untrained ln(16) = {untrained:.3f}")
    # from scratch it would start again near ln(16)
    assert after < before + 0.25 * (first - before) + 0.1, (k, before, after)
    assert after < 0.8 * untrained, (k, after)
last = runs[-1][-5:]
assert sum(last) / 5 < 0.6 * first, ("the loss did not fall", first, last)
EOF
note "ok"
