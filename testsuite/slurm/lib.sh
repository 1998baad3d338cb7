# Sourced by the integration tests (label slurm). Each test brings up its
# own local cluster (contrib/local-cluster) in a fresh directory on free
# ports, and stops it on exit, failure included, so no daemon outlives it.
# Exits 77 (CTest: skipped) with a reason when the machine cannot run it,
# or fails instead when POLLUX_TESTS_NO_SKIP=1 (contrib/run-tests as root:
# everything was installed and built, so a skip would hide a broken setup).
set -eEuo pipefail
# A command that ends the test through set -e rather than a check's fail()
# (a failed pipeline, a daemon tool's error): where and which, for the
# report (CI's run of f0088ab lost a test so, with nothing said). -E: also
# inside functions. The first is kept: under set -e it ended the test, and
# the EXIT traps' own `(exit $rc)` come after it.
stopped_at= failed_check=false
trap 'stopped_rc=$?; [[ -n $stopped_at ]] || stopped_at="${BASH_SOURCE[0]##*/}:$LINENO: $BASH_COMMAND (exit $stopped_rc)"' ERR

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
fail() { failed_check=true; echo "FAILED: $test_name: $*" >&2; exit 1; }
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
  start_watchdog
  note "starting a cluster in $CLUSTER_DIR"
  cluster --port auto --plugins "$POLLUX_BUILD/plugin" \
    --sched-params "pollux_interval=3,pollux_restart_penalty=5,pollux_checkpoint_timeout=60${params:+,$params}" "$@" start
}

# CTest kills a test past its TIMEOUT outright: no EXIT trap ran, the
# cluster's daemons and jobs ran on and took CPU from the tests after it
# (CI's two timed-out e2e.pytorch, 2026-11-30), and the report said
# nothing of where it waited. With POLLUX_TEST_TIMEOUT (the CTest files
# give the test's TIMEOUT) the test fails 20 s before that instead, through
# fail(): the report and the cluster's stop below run.
watchdog_pid=
start_watchdog() {
  [[ -n ${POLLUX_TEST_TIMEOUT:-} && -z $watchdog_pid ]] || return 0
  trap 'fail "still running $((SECONDS))s after it started, near CTest'"'"'s TIMEOUT of ${POLLUX_TEST_TIMEOUT}s: stopped"' TERM
  # (Its output not CTest's pipe, which CTest reads until every holder ends.)
  (sleep "$((POLLUX_TEST_TIMEOUT - 20 - SECONDS))" && kill -TERM "$$") >/dev/null 2>&1 &
  watchdog_pid=$!
}

cleanup() {
  local rc=$?
  [[ -z $watchdog_pid ]] || kill "$watchdog_pid" 2>/dev/null || true
  [[ -n $CLUSTER_DIR ]] || return
  if ((rc != 0)); then
    [[ -z $stopped_at ]] || $failed_check || echo "FAILED: $test_name: a command failed outside the checks, at $stopped_at" >&2
    # (Without the rounds' timing lines, one every few seconds: they
    # filled the 60 lines and hid the decisions in CI's report.)
    echo "---- $CLUSTER_DIR/log/slurmctld.log (sched/pollux but the rounds' timings, last 60 lines) ----"
    grep -E "sched/pollux|job_submit/pollux|error" "$CLUSTER_DIR/log/slurmctld.log" | grep -vE "sched/pollux: (arrivals |transition )?round: " | tail -60 || true
    [[ ! -s $CLUSTER_DIR/log/power.log ]] || { echo "---- $CLUSTER_DIR/log/power.log ----"; tail -20 "$CLUSTER_DIR/log/power.log"; }
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

# wait_until SECONDS WHAT COMMAND...: polls COMMAND every second. Within
# one check, each job is read from slurmctld once (show_job): a check such
# as runs_as_decided compares one state of the job, not five, and polling
# costs a fifth of the CPU it did (scontrol is ~20 ms of CPU a call, and
# several clusters share CI's two cores).
POLL_SNAPSHOT=
wait_until() {
  local limit=$1 what=$2 end
  shift 2
  end=$((SECONDS + limit))
  POLL_SNAPSHOT=${CLUSTER_DIR:-/tmp}/poll-snapshot.$$
  mkdir -p "$POLL_SNAPSHOT"
  until "$@"; do
    rm -f "$POLL_SNAPSHOT"/*
    if ((SECONDS >= end)); then
      # The check once more, traced: which of its tests failed, on what values.
      echo "---- the last check, traced ----"
      { (set -x; "$@") 2>&1 | tail -40; } || true
      POLL_SNAPSHOT=
      fail "timed out after ${limit}s waiting for: $what"
    fi
    sleep 1
  done
  rm -rf "$POLL_SNAPSHOT"
  POLL_SNAPSHOT=
}

# show_job ID: `scontrol show job -d ID`; inside a wait_until check, read
# once per check and job (POLL_SNAPSHOT), elsewhere afresh each call.
show_job() {
  [[ -n $POLL_SNAPSHOT ]] || { scontrol show job -d "$1"; return; }
  # (The temporary name is made here: a redirection of an external
  # command is expanded in the forked child, whose BASHPID differs.)
  local f=$POLL_SNAPSHOT/$1 tmp=$POLL_SNAPSHOT/$1.$BASHPID
  [[ -f $f ]] || { scontrol show job -d "$1" > "$tmp" && mv "$tmp" "$f"; } || { rm -f "$tmp"; return 1; }
  printf '%s\n' "$(< "$f")"
}

# submit_elastic NAME [sbatch options...]: the test job, output in jobs/NAME.out
submit_elastic() {
  local name=$1
  shift
  mkdir -p "$CLUSTER_DIR/jobs"
  sbatch --parsable --requeue --open-mode=append -J "$name" -o "$CLUSTER_DIR/jobs/$name.out" \
    "$@" "$here/elastic-job.sh"
}

# The readers below match with bash itself, not tr/sed pipelines: polls
# call them several times a second per cluster, and every process started
# costs CI's two cores (26303 sed runs in one whole run: doc/testing.md).
# word_value KEY TEXT: VALUE of TEXT's first blank-separated word KEY=VALUE.
word_value() {
  local re="(^|[[:space:]])$1=([^[:space:]]*)"
  [[ $2 =~ $re ]] && printf '%s\n' "${BASH_REMATCH[2]}"
  return 0
}
job_field() { word_value "$2" "$(show_job "$1")"; }
job_state() { job_field "$1" JobState; }
restarts() { job_field "$1" Restarts; }
system_comment() {
  local text nl=$'\n' re v
  text=$(show_job "$1") || return 0
  re="(^|$nl) *SystemComment=([^$nl]*)"
  [[ $text =~ $re ]] || return 0
  v=${BASH_REMATCH[2]}
  printf '%s\n' "${v%"${v##*[! ]}"}"  # without trailing blanks
}
comment_key() { word_value "$2" "$(system_comment "$1")"; }
phase() { comment_key "$1" state; }

# What Slurm granted: "node:gpus" per node, sorted (scontrol show job -d;
# typed GPUs too).
granted() {
  local line nodes gpus n out=()
  local re_line='^ +Nodes=([^ ]*) .*GRES=' re_gpus='GRES=gpu:([^:(]*:)?([0-9]+)'  # gpu:G or gpu:TYPE:G
  while IFS= read -r line; do
    [[ $line =~ $re_line ]] || continue
    nodes=${BASH_REMATCH[1]} gpus=0
    [[ $line =~ $re_gpus ]] && gpus=${BASH_REMATCH[2]}
    [[ $nodes == *[[]* ]] && nodes=$(scontrol show hostnames "$nodes")  # a range: n[1-3]
    for n in ${nodes//,/ }; do out+=("$n:$gpus"); done
  done <<< "$(show_job "$1")"
  sorted_words "${out[@]}"
}

# sorted_words WORD...: the words sorted, on one line, blank-separated.
sorted_words() {
  (($# > 0)) || return 0
  local sorted
  sorted=$(printf '%s\n' "$@" | sort)
  printf '%s\n' "${sorted//$'\n'/ }"
}

# What sched/pollux decided (SystemComment alloc=NxG@a,b), same format.
decided() {
  local alloc g n out=()
  alloc=$(comment_key "$1" alloc)
  [[ $alloc == 0 || -z $alloc ]] && return
  g=${alloc%%@*}
  g=${g#*x}
  n=${alloc#*@}
  for n in ${n//,/ }; do out+=("$n:$g"); done
  sorted_words "${out[@]}"
}

gpus_of() { local g=0 x; for x in $(granted "$1"); do g=$((g + ${x#*:})); done; echo "$g"; }

# The job runs exactly at the size sched/pollux decided.
runs_as_decided() {
  [[ $(job_state "$1") == RUNNING && $(phase "$1") == run && -n $(granted "$1") &&
     $(granted "$1") == "$(decided "$1")" ]]
}

ctld_log() { cat "$CLUSTER_DIR/log/slurmctld.log"; }
log_count() { grep -c -E "$1" "$CLUSTER_DIR/log/slurmctld.log" || true; }
