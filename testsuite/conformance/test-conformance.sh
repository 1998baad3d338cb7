#!/bin/bash
# conformance (label conformance): Slurm's own regression tests as the
# referee. Two local clusters alike but for SchedulerType, one with
# sched/backfill, one with sched/pollux (and job_submit/pollux), run the
# selection in testsuite/conformance/selection (ATF python tests and expect
# tests of the Slurm source that contrib/setup-build fetched) side by side;
# the test fails when a test passes under sched/backfill but not under
# sched/pollux, twice: such a test is run again under both, and one that
# fails again under sched/backfill, or passes under sched/pollux, is
# reported as flaky, not as a difference. Also checks the documented
# difference: a heterogeneous job is refused under sched/pollux by
# slurmctld itself, with Slurm's message.
source "$POLLUX_SRC/testsuite/slurm/lib.sh"
conformance=$POLLUX_SRC/testsuite/conformance
slurm_src=${POLLUX_SLURM_SRC:-}
[[ -n $slurm_src && -d $slurm_src/testsuite/python/tests && -d $slurm_src/testsuite/expect ]] ||
  skip "no Slurm source with its testsuite/ (configure --with-slurm-source; contrib/setup-build fetches it)"
/usr/bin/python3 -c 'import pytest, pytest_timeout, pexpect' 2>/dev/null ||
  skip "python3 lacks pytest, pytest-timeout or pexpect (Debian packages python3-pytest python3-pytest-timeout python3-pexpect)"
command -v expect >/dev/null || skip "expect not installed (Debian package expect)"

# POLLUX_CONFORMANCE_SELECTION=FILE runs another selection (same format).
mapfile -t selection < <(sed 's/#.*//; s/[[:space:]]*$//; /^$/d' "${POLLUX_CONFORMANCE_SELECTION:-$conformance/selection}")
schedulers=(backfill pollux)
top= suites=()  # (suites: run_both's, below)
stop_all() {
  local rc=$? s
  [[ -n $top ]] || exit "$rc"
  for s in "${suites[@]}"; do pkill -KILL -s "$s" 2>/dev/null || true; done
  for s in "${schedulers[@]}"; do
    [[ -d $top/$s ]] || continue
    if ((rc != 0)) && [[ -f $top/$s/log/slurmctld.log ]]; then
      echo "---- $top/$s/log/slurmctld.log (errors and sched/pollux, last 20) ----"
      grep -E "error:|fatal:|sched/pollux|job_submit/pollux" "$top/$s/log/slurmctld.log" |
        grep -vE "state file|Trying backup" | tail -20 || true
    fi
    "$cluster_tool" --dir "$top/$s" stop || { echo "FAILED: $test_name: the $s cluster could not be stopped" >&2; rc=1; }
  done
  [[ -z $watchdog_pid ]] || kill "$watchdog_pid" 2>/dev/null || true
  if ((rc == 0)) && [[ -z ${POLLUX_TEST_KEEP:-} ]]; then rm -rf "$top"; else echo "(kept $top: logs in */log, the tests' in work-*/)"; fi
  exit "$rc"
}
top=$(mktemp -d /tmp/pollux-conformance-XXXXXX)
trap stop_all EXIT
start_watchdog  # (lib.sh: its two clusters stopped by stop_all before CTest's TIMEOUT)

# The same cluster twice (4 nodes x 4 GPUs, 4 CPUs each), on free ports;
# sched/pollux with its documented defaults.
for s in "${schedulers[@]}"; do
  note "starting the sched/$s cluster in $top/$s"
  "$cluster_tool" --dir "$top/$s" --port auto --scheduler "sched/$s" --plugins "$POLLUX_BUILD/plugin" start
done

# run_both ROUND TESTS...: the tests on both clusters at once; results in
# $top/ROUND.SCHEDULER (test status lines, run-slurm-suite's format).
# Each suite in a session of its own (setsid without a fork: the pid is the
# session's id), which stop_all ends whole when the test stops early (the
# watchdog, a failed check): its tests' `timeout` groups included, which
# would otherwise run on, holding CTest's output.
run_both() {
  local round=$1 s
  shift
  suites=()
  for s in "${schedulers[@]}"; do
    SLURM_CONF=$top/$s/etc/slurm.conf setsid "$conformance/run-slurm-suite" "$slurm_src/testsuite" \
      "$top/work-$s/$round" "$@" > "$top/$round.$s" &
    suites+=($!)
  done
  for s in "${suites[@]}"; do wait "$s" || fail "run-slurm-suite failed (round $round)"; done
  suites=()
}

# status_in FILE TEST: the test's status in a results file ("missing" if absent)
status_in() { awk -v t="$2" '$1 == t { print $2; found = 1 } END { if (!found) print "missing" }' "$1"; }

start=$SECONDS
note "round 1: ${#selection[@]} entries of the selection under both schedulers"
run_both 1 "${selection[@]}"
note "round 1 took $((SECONDS - start)) s"
for s in "${schedulers[@]}"; do
  echo "sched/$s: $(awk '{print $2}' "$top/1.$s" | sort | uniq -c | awk '{printf "%s %s, ", $1, $2}' | sed 's/, $//')"
done
[[ -s $top/1.backfill ]] || fail "no test ran under sched/backfill"
(($(grep -c ' pass$' "$top/1.backfill") > 0)) || fail "no test passed under sched/backfill: the suite cannot run here (see $top/work-backfill)"

# Tests that pass under backfill and not under pollux; the reverse is
# printed, and not a failure.
suspects=()
while read -r t b; do
  p=$(status_in "$top/1.pollux" "$t")
  [[ $b == pass && $p != pass ]] && suspects+=("$t")
  [[ $b != pass && $p == pass ]] && echo "note: $t: $b under sched/backfill, pass under sched/pollux"
done < "$top/1.backfill"

differences=()
if ((${#suspects[@]})); then
  note "round 2: ${#suspects[@]} tests passed under sched/backfill but not under sched/pollux; again under both: ${suspects[*]}"
  # A test node id names one test; run again by that id (pytest) or name.
  run_both 2 "${suspects[@]}"
  for t in "${suspects[@]}"; do
    b=$(status_in "$top/2.backfill" "$t") p=$(status_in "$top/2.pollux" "$t")
    if [[ $b != pass ]]; then
      echo "flaky under sched/backfill itself (not compared): $t (round 2: $b under sched/backfill, $p under sched/pollux)"
    elif [[ $p == pass ]]; then
      echo "flaky: $t failed once under sched/pollux and passed when run again"
    else
      differences+=("$t")
    fi
  done
fi

# The documented difference (README, sched_pollux(5)): slurmctld refuses
# heterogeneous jobs unless SchedulerType is sched/backfill, before any
# job_submit plugin sees them; sbatch says so.
het() { SLURM_CONF=$top/$1/etc/slurm.conf sbatch --parsable -o /dev/null -n1 --wrap true : -n1 2>&1; }
out=$(het backfill) || fail "a heterogeneous job was refused under sched/backfill: $out"
out=$(het pollux) && fail "a heterogeneous job was accepted under sched/pollux (job $out): update the README and sched_pollux(5)"
grep -q "Requested operation not supported on this system" <<< "$out" ||
  fail "sbatch's refusal of a heterogeneous job under sched/pollux changed: $out"
note "heterogeneous job: accepted under sched/backfill, refused under sched/pollux ($out)"

note "took $((SECONDS - start)) s"
if ((${#differences[@]})); then
  echo "==== passed under sched/backfill, failed under sched/pollux (twice) ===="
  for t in "${differences[@]}"; do
    echo "  $t: round 1 $(status_in "$top/1.pollux" "$t"), round 2 $(status_in "$top/2.pollux" "$t") under sched/pollux"
    case $t in
      atf:*) log=$top/work-pollux/2/atf.log ;;
      expect:*) log=$top/work-pollux/2/expect/${t#expect:}.log ;;
    esac
    echo "    ---- its log under sched/pollux (last 25 lines of $log) ----"
    tail -25 "$log" | sed 's/^/    /'
    echo "    (under sched/backfill: ${log/work-pollux/work-backfill})"
  done
  fail "${#differences[@]} of Slurm's tests pass under sched/backfill but not under sched/pollux"
fi
echo "PASSED: $test_name: every test of the selection that passes under sched/backfill passes under sched/pollux"
