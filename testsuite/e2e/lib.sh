# Sourced by the end-to-end tests (label e2e): real elastic training jobs
# (contrib/demo/digits-job running pollux-digits: MPI ranks launched by
# srun, the agent, real data) on a local Slurm cluster with sched/pollux.
# Builds on the integration tests' helpers (testsuite/slurm/lib.sh: the
# cluster, skips, waits, the job's fields and SystemComment).
source "$POLLUX_SRC/testsuite/slurm/lib.sh"

digits=$POLLUX_BUILD/contrib/examples/pollux-digits
digits_job=$POLLUX_SRC/contrib/demo/digits-job
check_log=$POLLUX_SRC/testsuite/e2e/check-training-log
[[ -x $digits ]] || skip "pollux-digits not built (needs MPI: Debian libopenmpi-dev)"
command -v python3 >/dev/null || skip "python3 not installed (Debian package python3)"

# py_has PYTHON MODULE: the interpreter has the module, looked for, not
# imported (importing torch costs 2-3 s of CPU; the jobs import it anyway).
py_has() { "$1" -c "import importlib.util, sys; sys.exit(importlib.util.find_spec(sys.argv[1]) is None)" "$2" 2>/dev/null; }

# Training options every e2e job uses: a progress line per step (the log
# checks follow every step), steps slowed to tens of milliseconds as if a
# GPU computed them (a fixed part and a part per example: more GPUs give
# more throughput), so that a job lives through several scheduling rounds.
DIGITS_OPTS=(--log-every 1 --step-delay 0.005 --example-delay 0.0005)

# submit_digits NAME SBATCH_OPTION... -- TRAINER_OPTION...
# Output in jobs/NAME.out. HOME is the cluster's home/, so that the
# agent's default checkpoints (~/.cache/pollux/checkpoints/pollux-KEY/ID) go
# with the cluster: job ids start again at 1 in every test's cluster.
submit_digits() {
  local name=$1 sb=()
  shift
  while (($#)) && [[ $1 != -- ]]; do sb+=("$1"); shift; done
  (($#)) && shift
  mkdir -p "$CLUSTER_DIR/jobs" "$CLUSTER_DIR/home"
  (cd "$CLUSTER_DIR/jobs" && HOME="$CLUSTER_DIR/home" sbatch --parsable --requeue --open-mode=append -J "$name" \
    -o "$CLUSTER_DIR/jobs/$name.out" "${sb[@]}" "$digits_job" "$digits" "${DIGITS_OPTS[@]}" "$@")
}

finished() { [[ $(job_state "$1") == COMPLETED ]]; }
ended() { [[ $(job_state "$1") =~ ^(COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY)$ ]]; }

# check_training NAME [check-training-log options]: the job's log passes the
# checks; its summary line is left in $summary.
check_training() {
  local name=$1 out
  shift
  out=$(python3 "$check_log" "$@" "$CLUSTER_DIR/jobs/$name.out") || { echo "$out"; fail "job $name's log fails the checks"; }
  echo "$out" | sed "s/^/  $name: /"
  summary=$(grep '^summary ' <<< "$out")
}
summary_key() { tr ' ' '\n' <<< "$summary" | sed -n "s/^$1=//p"; }
