#!/bin/bash
# Administrators stay in charge (issue 13, situation 7): `scontrol update
# NumNodes=` on an elastic job succeeds and becomes the job's range, shown
# in its SystemComment; a running job is then resized within it through a
# checkpoint (Slurm does not shrink it under its ranks, and no checkpoint
# timeout is waited out); a pending job starts within it.
# Each says why it does not grow (issue 34): the first at its range's
# largest size (cap=at-max), the second, profiled on 4 GPUs, at twice that
# beside a free node (cap=profiled).
source "$(dirname "$0")/lib.sh"
start_cluster
nodes_of() { granted "$1" | wc -w; }
export POLLUX_TEST_PROFILED=16
a=$(submit_elastic a -N 1-4 --gpus-per-node=4)
grown() { runs_as_decided "$a" && (($(nodes_of "$a") >= 2)); }
wait_until 90 "job $a grown to 2 nodes or more" grown
note "job $a: $(granted "$a")"

r0=$(restarts "$a")
t0=$SECONDS
scontrol update jobid="$a" NumNodes=1-1 || fail "the administrator's NumNodes update was refused"
[[ $(comment_key "$a" range) == 1-1x4 ]] || fail "job $a's range is not the administrator's: $(system_comment "$a")"
# Slurm itself must not shrink the running job (its ranks would lose their
# nodes): only sched/pollux's checkpoint and requeue may, which restarts it.
# (sched/pollux may already have requeued it: its round can follow the
# update within a second. The restart count is read last.)
st=$(job_state "$a")
n=$(nodes_of "$a")
(($(restarts "$a") > r0)) || [[ $st != RUNNING ]] || ((n >= 2)) || fail "Slurm shrank job $a under its ranks: $(granted "$a")"
one_node() { runs_as_decided "$a" && (($(nodes_of "$a") == 1)); }
wait_until 50 "job $a resized to 1 node" one_node
(($(restarts "$a") > r0)) || fail "job $a was not restarted at its new size"
grep -q "checkpoint acknowledged" "$CLUSTER_DIR/jobs/a.out" || fail "job $a was requeued without its checkpoint"
note "job $a: $(granted "$a") after $((SECONDS - t0)) s | $(system_comment "$a")"
cap_is() { [[ $(comment_key "$1" cap) == "$2" ]]; }
wait_until 30 "job $a saying why it does not grow: cap=at-max" cap_is "$a" at-max

b=$(POLLUX_TEST_PROFILED=4 submit_elastic b -N 1-4 --gpus-per-node=4 --begin=now+600)
wait_until 30 "job $b adopted" bash -c "[[ -n \$(scontrol show job $b | sed -n 's/^ *SystemComment=pollux//p') ]]"
scontrol update jobid="$b" NumNodes=2-3 || fail "the NumNodes update of pending job $b was refused"
[[ $(comment_key "$b" range) == 2-3x4 ]] || fail "job $b's range: $(system_comment "$b")"
scontrol update jobid="$b" StartTime=now
within() { runs_as_decided "$b" && (($(nodes_of "$b") >= 2 && $(nodes_of "$b") <= 3)); }
wait_until 90 "job $b running on 2-3 nodes" within
[[ $(comment_key "$b" range) == 2-3x4 ]] || fail "job $b's range was undone: $(system_comment "$b")"
# Its 8 GPUs are twice what its hint says it profiled, and a node is free:
# it stays at them, saying so, round after round.
held_at_profile() {
  runs_as_decided "$b" && [[ $(gpus_of "$b") == 8 ]] && cap_is "$b" profiled &&
    grep -q '^max_profiled_replicas: 4$' "$POLLUX_TEST_SPOOL/$b.hint.yaml"
}
wait_until 30 "job $b at 8 GPUs, saying why it does not grow: cap=profiled" held_at_profile
rounds() { log_count "sched/pollux: round:"; }
r0=$(rounds)
two_rounds() { (($(rounds) >= r0 + 2)); }
wait_until 30 "two more rounds" two_rounds
held_at_profile || fail "job $b did not stay at twice its profile: $(granted "$b") | $(system_comment "$b")"
note "job $b: $(granted "$b") | $(system_comment "$b")"
note "ok"
