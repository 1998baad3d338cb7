#!/bin/bash
# Restarting slurmctld mid-run loses no job and repeats no decision: jobs
# keep running at their sizes, their state (SystemComment) is intact, and
# the restarted plugin neither signals, requeues nor releases any of them
# when nothing changed. Then once more in the middle of a resize: a job
# signalled to checkpoint (whose checkpoint takes 20 s) is not signalled
# again by the restarted plugin, which requeues it once it acknowledges,
# and the shrink is not reversed. The rounds' memory (pollux_rounds) is
# restored at each restart: the first periodic round comes when it was due
# (at once after a crash that kept slurmctld down longer than an interval)
# with the policy's search state of before.
source "$(dirname "$0")/lib.sh"
start_cluster
export POLLUX_TEST_PROFILED=16
slow=--export=ALL,POLLUX_TEST_ACK_DELAY=20
a=$(submit_elastic a -N 1-4 --gpus-per-node=4 "$slow")
b=$(submit_elastic b -N 1-4 --gpus-per-node=4 "$slow")
# Steady means sized on the jobs' hints: until the policy has read each
# job's (kind=elastic, a model), a quiet round is only a round without
# news, and the hint may arrive across the restart (the CI's run of d3ddabf).
sized_on_hint() { [[ $(comment_key "$1" kind) == elastic && $(comment_key "$1" model) != none ]] && runs_as_decided "$1"; }
steady() { sized_on_hint "$a" && sized_on_hint "$b"; }
wait_until 120 "both jobs running as decided on their hints" steady
# Steady: no action for 4 rounds.
quiet_rounds() {
  local n
  n=$(tail -n 400 "$CLUSTER_DIR/log/slurmctld.log" | grep -E "sched/pollux: (JobId=[0-9]+: (signal|requeue|release|hold)|round:)" |
      tail -n 4 | grep -c "round:" || true)
  ((n == 4)) && steady
}
wait_until 120 "4 rounds without a decision" quiet_rounds
before_a=$(granted "$a") before_b=$(granted "$b")
restarts_a=$(restarts "$a") restarts_b=$(restarts "$b")
state_a=$(system_comment "$a" | sed 's/.* | //') state_b=$(system_comment "$b" | sed 's/.* | //')
note "before: $a: $before_a ($state_a); $b: $before_b ($state_b)"
mark=$(($(wc -l < "$CLUSTER_DIR/log/slurmctld.log") + 1))
cluster restart-ctld
after_rounds() { (($(tail -n +"$mark" "$CLUSTER_DIR/log/slurmctld.log" | grep -c "sched/pollux: round:") >= 4)); }
wait_until 60 "4 rounds after the restart" after_rounds
after=$(tail -n +"$mark" "$CLUSTER_DIR/log/slurmctld.log")
grep -q "sched: sched/pollux: plugin loaded" <<< "$after" || fail "the plugin did not load again"
if grep -E "sched/pollux: JobId=($a|$b): (signal|requeue|release|hold)" <<< "$after"; then
  fail "the restarted plugin repeated a decision"
fi
for j in "$a" "$b"; do [[ $(job_state "$j") == RUNNING ]] || fail "job $j is $(job_state "$j") after the restart"; done
[[ $(granted "$a") == "$before_a" && $(granted "$b") == "$before_b" ]] || fail "allocations changed across the restart"
[[ $(restarts "$a") == "$restarts_a" && $(restarts "$b") == "$restarts_b" ]] || fail "a job was requeued across the restart"
[[ $(system_comment "$a" | sed 's/.* | //') == "$state_a" ]] || fail "job $a's state changed: $(system_comment "$a")"
[[ $(system_comment "$b" | sed 's/.* | //') == "$state_b" ]] || fail "job $b's state changed: $(system_comment "$b")"
note "after: $a: $(granted "$a"); $b: $(granted "$b")"

# A third job: a or b must shrink for it, through a 20 s checkpoint.
c=$(submit_elastic c -N 1-4 --gpus-per-node=4)
victim=
checkpointing() {
  local j
  for j in "$a" "$b"; do [[ $(phase "$j") == ckpt ]] && { victim=$j; return 0; }; done
  return 1
}
wait_until 60 "job $a or $b asked to checkpoint for job $c" checkpointing
restarts_v=$(restarts "$victim")
note "job $victim checkpointing: $(system_comment "$victim"); restarting slurmctld"
mark=$(($(wc -l < "$CLUSTER_DIR/log/slurmctld.log") + 1)) restarted_at=$(date +%s.%N)
cluster restart-ctld
# The first periodic round comes when it was due (the last one before the
# restart plus the interval, 3 s), with the search state restored.
# round_times MARK: "LOADED LAST_BEFORE FIRST_AFTER" (seconds of the day):
# the plugin's load after line MARK, the last periodic round before that
# load (the stopping slurmctld's included) and the first after it.
round_times() {
  awk -v m="$1" '
    function t(s) { gsub(/[][]/, "", s); split(s, a, "T"); split(a[2], h, ":"); return h[1] * 3600 + h[2] * 60 + h[3] }
    /sched\/pollux: round:/ && !l { last = t($1) }
    NR >= m && /sched\/pollux: plugin loaded/ { l = t($1) }
    NR >= m && /sched\/pollux: round:/ && l { print l, last, t($1); exit }' "$CLUSTER_DIR/log/slurmctld.log"
}
# Never before it was due; after it, within 10 s (a busy machine delays a
# round by its locks, so a tighter bound would be a bound on the load).
# What tells the rounds' memory from the code before it, which came one
# interval after the load, is the plugin's own line below (it states when
# the next round is due from the remembered one), not a stopwatch.
due_round() {  # due_round MARK: the first periodic round after the restart came when it was due
  local loaded last first
  read -r loaded last first <<< "$(round_times "$1")"
  note "restart: last periodic round at $last, plugin loaded at $loaded, first periodic round at $first"
  awk -v l="$loaded" -v p="$last" -v f="$first" 'BEGIN { due = p + 3 > l ? p + 3 : l; exit !(f <= due + 10 && f >= p + 2.8) }' ||
    fail "the first periodic round after the restart came at $first, not when it was due (last round $last + 3 s, or at once after the load at $loaded)"
  local line
  line=$(tail -n +"$1" "$CLUSTER_DIR/log/slurmctld.log" | grep "sched/pollux: rounds remembered from .*search state restored" | sed -n 1p) ||
    fail "the restarted plugin did not restore the rounds' memory: $(tail -n +"$1" "$CLUSTER_DIR/log/slurmctld.log" | grep -E 'memory|remembered' | head -2)"
  # The next round it plans: the remembered one's time + the interval (3 s), or at once when that has passed.
  sed -E 's/.*the last periodic round ([0-9.]+) s ago, the next in ([0-9.]+) s.*/\1 \2/' <<< "$line" |
    awk '{ want = 3 - $1; if (want < 0) want = 0; d = $2 - want; exit !(d < 0.15 && d > -0.15) }' ||
    fail "the restarted plugin planned its next round off the remembered one's time + 3 s: $line"
}
wait_until 30 "a periodic round after the restart" eval '[[ -n $(round_times "$mark") ]]'
due_round "$mark"
# Acknowledged while slurmctld is down: it is frozen, the job acknowledges
# its checkpoint, slurmctld crashes (SIGKILL) and starts again; the first
# (light) round takes the acknowledgement at once and requeues the job.
ctld=$(cat "$CLUSTER_DIR/run/slurmctld.started") victim_out=$CLUSTER_DIR/jobs/$(job_field "$victim" JobName).out
kill -STOP "$ctld"
wait_until 40 "job $victim's acknowledgement, slurmctld frozen" \
  awk -v t="$restarted_at" '/^checkpoint acknowledged/ && $3 >= t { f = 1 } END { exit !f }' "$victim_out"
kill -KILL "$ctld"
crash_mark=$(($(wc -l < "$CLUSTER_DIR/log/slurmctld.log") + 1))
cluster restart-ctld
loaded_at=$(date +%s)
requeued_now() { tail -n +"$mark" "$CLUSTER_DIR/log/slurmctld.log" | grep >/dev/null -E "sched/pollux: JobId=$victim: requeue"; }
wait_until 10 "job $victim requeued after the crash (its acknowledgement was written)" requeued_now
note "job $victim requeued $(($(date +%s) - loaded_at)) s after slurmctld came back"
# Down longer than an interval: the periodic round was overdue, and comes at once.
wait_until 10 "a periodic round after the crash" eval '[[ -n $(round_times "$crash_mark") ]]'
due_round "$crash_mark"
# slurmctld restarted once more, once the requeued job runs again: the
# three jobs run as decided after it. A job Slurm starts while slurmctld
# stops may lose its srun ("Unable to confirm allocation", as any job
# would, under sched/backfill too), so the restart comes once job $victim
# (requeued with its promise, which Slurm starts within seconds) and job
# $c (given GPUs by the round that requeued job $victim) each run their
# step, or wait held without GPUs. (CI saw a restart meet job $victim's
# start: its srun failed and the job ended. A promise standing across a
# restart is Round.APromiseMadeBeforeARestartStandsUntilSlurmStartsTheJob's.)
settled() {
  case $(phase "$1") in
    held) return 0 ;;
    run | ckpt) squeue -h -s -j "$1" -o %i | grep >/dev/null -x "$1\.0" ;;
    *) return 1 ;;
  esac
}
wait_until 60 "jobs $victim and $c running their steps, or held" eval 'settled "$victim" && settled "$c"'
cluster restart-ctld
all_run() { runs_as_decided "$a" && runs_as_decided "$b" && runs_as_decided "$c"; }
wait_until 120 "all three jobs running as decided" all_run
# The restarted plugin's log up to the victim's requeue: the resize it
# found under way (later rounds may decide new resizes, legitimately).
# (One sed, no pipe: under pipefail a reader that quits early would fail
# the writer with SIGPIPE once the log outgrows the pipe.)
after=$(sed -n "$mark,\$ { p; /sched\/pollux: JobId=$victim: requeue/q; }" "$CLUSTER_DIR/log/slurmctld.log")
grep -qE "sched/pollux: JobId=$victim: requeue" <<< "$after" || fail "job $victim was not requeued after the restart"
if grep -E "sched/pollux: JobId=$victim: signal" <<< "$after"; then
  fail "the restarted plugin signalled job $victim again in the middle of its checkpoint"
fi
# Nor reversed the shrink: no cancel, and no other job signalled instead.
if grep -E "sched/pollux: JobId=$victim: .*why=cancel|sched/pollux: JobId=($a|$b): signal" <<< "$after"; then
  fail "the restarted plugin reversed job $victim's shrink"
fi
acked=$(awk -v t="$restarted_at" '/^checkpoint acknowledged/ && $3 >= t { print $3; exit }' \
          "$CLUSTER_DIR/jobs/$(job_field "$victim" JobName).out")
requeued=$(date -d "$(grep -E "sched/pollux: JobId=$victim: requeue" <<< "$after" | sed 's/^\[\([^]]*\)\].*/\1/')" +%s.%N)
[[ -n $acked ]] && python3 -c "import sys; sys.exit(not $requeued >= $acked)" ||
  fail "job $victim was requeued (at $requeued) before it acknowledged its checkpoint (at ${acked:-never})"
(($(restarts "$victim") > restarts_v)) || fail "job $victim was never restarted"
# Its next run is where the requeue put it, though slurmctld restarted
# while it waited (every node UNKNOWN until it registers): the promise was
# neither withdrawn (hold) nor moved (release), issue 34.
promise=$(grep -E "sched/pollux: JobId=$victim: requeue" <<< "$after" | sed -n 's/.* requeue \([0-9]*\)x\([0-9]*\) GPUs on \([^ ]*\) .*/\1 \2 \3/p')
read -r p_nodes p_gpn p_list <<< "$promise"
run=$(grep -E "^start .* restart=$((restarts_v + 1)) " "$victim_out" | sed -n 1p)
[[ -n $run ]] || fail "job $victim's run after its requeue is not in its output"
ran_on=$(scontrol show hostnames "$(sed 's/.* nodes=\([^ ]*\).*/\1/' <<< "$run")" | paste -sd,)
ran_gpus=$(sed 's/.* gpus=\([0-9]*\).*/\1/' <<< "$run")
[[ $ran_on == "$p_list" && $ran_gpus == $((p_nodes * p_gpn)) ]] ||
  fail "job $victim was requeued towards ${p_nodes}x$p_gpn GPUs on $p_list but ran next on $ran_on ($ran_gpus GPUs)"
# (Up to its next resize, which may legitimately come later.)
if awk -v m="$mark" -v j="JobId=$victim:" 'NR >= m && index($0, "sched/pollux: " j " requeue") { q++; next }
      q == 1 && index($0, "sched/pollux: " j " signal") { exit }
      q == 1 && (index($0, "sched/pollux: " j " hold") || index($0, "sched/pollux: " j " release")) { print; f = 1 }
      END { exit !f }' "$CLUSTER_DIR/log/slurmctld.log"; then
  fail "the restarted plugin withdrew or moved job $victim's promise"
fi
note "job $victim ran next where its requeue put it: $ran_on ($ran_gpus GPUs)"
note "after the resize: $a: $(granted "$a"); $b: $(granted "$b"); $c: $(granted "$c")"
note "ok"
