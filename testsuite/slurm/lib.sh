# Sourced by the integration tests (label slurm). Each test brings up its
# own local cluster (contrib/local-cluster) in a fresh directory on free
# ports, and stops it on exit, failure included, so no daemon outlives it.
# Exits 77 (CTest: skipped) with a reason when the machine cannot run it,
# or fails instead when POLLUX_TESTS_NO_SKIP=1 (contrib/run-tests as root:
# everything was installed and built, so a skip would hide a broken setup).
set -euo pipefail

: "${POLLUX_BUILD:?set POLLUX_BUILD to the build directory (CTest does)}"
: "${POLLUX_SRC:?set POLLUX_SRC to the source directory (CTest does)}"
here=$POLLUX_SRC/testsuite/slurm
cluster_tool=$POLLUX_SRC/contrib/local-cluster/pollux-local-cluster
export POLLUX_TEST_HINT=$POLLUX_BUILD/testsuite/slurm/pollux-test-hint
test_name=${0##*/}

skip() {
  [[ ${POLLUX_TESTS_NO_SKIP:-0} == 1 ]] && { echo "FAILED: $test_name: cannot run (POLLUX_TESTS_NO_SKIP=1): $*" >&2; exit 1; }
  echo "SKIPPED: $test_name: $*"; exit 77
}
fail() { echo "FAILED: $test_name: $*" >&2; exit 1; }
note() { echo "[$(date +%T)] $*"; }

((EUID == 0)) || skip "needs root (the local cluster makes fake GPU devices and runs slurmd as root)"
for c in slurmctld slurmd munged sbatch scontrol; do
  PATH=$PATH:/usr/sbin command -v "$c" >/dev/null || skip "$c not installed (Debian packages slurmctld slurmd slurm-client munge)"
done
for so in sched_pollux job_submit_pollux; do
  [[ -f $POLLUX_BUILD/plugin/$so/.libs/$so.so ]] || skip "$so.so not built (configure --with-slurm-source)"
done
[[ -x $POLLUX_TEST_HINT ]] || skip "$POLLUX_TEST_HINT not built (make check builds it)"

CLUSTER_DIR=
cluster() { "$cluster_tool" --dir "$CLUSTER_DIR" "$@"; }

# start_cluster [pollux_* parameters, comma-separated] [extra tool options]
start_cluster() {
  local params=${1:-}
  shift || true
  CLUSTER_DIR=$(mktemp -d /tmp/pollux-test-XXXXXX)
  trap cleanup EXIT
  export SLURM_CONF=$CLUSTER_DIR/etc/slurm.conf
  export POLLUX_TEST_SPOOL=$CLUSTER_DIR/spool/pollux
  note "starting a cluster in $CLUSTER_DIR"
  cluster --port auto --plugins "$POLLUX_BUILD/plugin" \
    --sched-params "pollux_interval=3,pollux_restart_penalty=5,pollux_checkpoint_timeout=60${params:+,$params}" "$@" start
}

cleanup() {
  local rc=$?
  [[ -n $CLUSTER_DIR ]] || return
  if ((rc != 0)); then
    echo "---- $CLUSTER_DIR/log/slurmctld.log (sched/pollux, last 60 lines) ----"
    grep -E "pollux|error" "$CLUSTER_DIR/log/slurmctld.log" | tail -60 || true
    echo "---- squeue ----"
    squeue 2>/dev/null || true
    for f in "$CLUSTER_DIR"/jobs/*.out; do [[ -f $f ]] && { echo "---- $f ----"; tail -20 "$f"; }; done
  fi
  if ! cluster stop; then
    echo "FAILED: $test_name: the cluster's processes could not all be stopped" >&2
    rc=1
  fi
  if ((rc == 0)) && [[ -z ${POLLUX_TEST_KEEP:-} ]]; then rm -rf "$CLUSTER_DIR"; else echo "(kept $CLUSTER_DIR for inspection)"; fi
  exit "$rc"
}

# wait_until SECONDS WHAT COMMAND...: polls COMMAND every half second.
wait_until() {
  local limit=$1 what=$2 end
  shift 2
  end=$((SECONDS + limit))
  until "$@"; do
    ((SECONDS < end)) || fail "timed out after ${limit}s waiting for: $what"
    sleep 0.5
  done
}

# submit_elastic NAME [sbatch options...]: the test job, output in jobs/NAME.out
submit_elastic() {
  local name=$1
  shift
  mkdir -p "$CLUSTER_DIR/jobs"
  sbatch --parsable --requeue --open-mode=append -J "$name" -o "$CLUSTER_DIR/jobs/$name.out" \
    "$@" "$here/elastic-job.sh"
}

job_field() { scontrol show job "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | sed -n 1p; }
job_state() { job_field "$1" JobState; }
restarts() { job_field "$1" Restarts; }
system_comment() { scontrol show job "$1" | sed -n 's/^ *SystemComment=//p' | sed 's/ *$//'; }
comment_key() { system_comment "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | sed -n 1p; }
phase() { comment_key "$1" state; }

# What Slurm granted: "node:gpus" per node, sorted (scontrol show job -d;
# typed GPUs too).
granted() {
  local line nodes gpus n
  scontrol show job -d "$1" | grep -E '^ +Nodes=.* GRES=' | while read -r line; do
    nodes=$(sed 's/.*Nodes=\([^ ]*\).*/\1/' <<< "$line")
    gpus=$(sed -n 's/.*GRES=gpu:\([^:(]*:\)\{0,1\}\([0-9][0-9]*\).*/\2/p' <<< "$line")  # gpu:G or gpu:TYPE:G
    for n in $(scontrol show hostnames "$nodes"); do echo "$n:${gpus:-0}"; done
  done | sort | tr '\n' ' ' | sed 's/ $//'
}

# What sched/pollux decided (SystemComment alloc=NxG@a,b), same format.
decided() {
  local alloc g n
  alloc=$(comment_key "$1" alloc)
  [[ $alloc == 0 || -z $alloc ]] && return
  g=${alloc%%@*}
  g=${g#*x}
  for n in ${alloc#*@}; do :; done
  tr ',' '\n' <<< "${alloc#*@}" | sed "s/\$/:$g/" | sort | tr '\n' ' ' | sed 's/ $//'
}

gpus_of() { local g=0 x; for x in $(granted "$1"); do g=$((g + ${x#*:})); done; echo "$g"; }

# The job runs exactly at the size sched/pollux decided.
runs_as_decided() {
  [[ $(job_state "$1") == RUNNING && $(phase "$1") == run && -n $(granted "$1") &&
     $(granted "$1") == "$(decided "$1")" ]]
}

ctld_log() { cat "$CLUSTER_DIR/log/slurmctld.log"; }
log_count() { grep -c -E "$1" "$CLUSTER_DIR/log/slurmctld.log" || true; }
