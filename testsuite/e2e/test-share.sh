#!/bin/bash
# Two real elastic training jobs share a 2-node x 2-GPU cluster. Job a
# starts alone on one GPU and grows through checkpoint + requeue as its
# agent's hints show that it scales; job b arrives, and a shrinks to make
# room. Both finish with a correct model (validation accuracy >= 0.9), and
# a's log shows that every run resumed at exactly the checkpointed step:
# no step lost or repeated across the grow and the shrink.
source "$(dirname "$0")/lib.sh"
start_cluster "" --nodes 2 --gpus 2
a=$(submit_digits a -N 1-2 --gpus-per-node=2 -- --epochs 150 --seed 1)
note "submitted job a ($a)"
wait_until 60 "job $a running" runs_as_decided "$a"
grown() { runs_as_decided "$a" && (($(gpus_of "$a") == 4)); }
wait_until 240 "job $a grown to all 4 GPUs" grown
note "a grown: $(granted "$a") | $(system_comment "$a")"
b=$(submit_digits b -N 1-2 --gpus-per-node=2 -- --epochs 80 --seed 2)
note "submitted job b ($b)"
shrunk() { runs_as_decided "$b" && runs_as_decided "$a" && (($(gpus_of "$a") < 4)); }
wait_until 120 "job $a shrunk for job $b" shrunk
note "a: $(granted "$a") | $(system_comment "$a")"
note "b: $(granted "$b") | $(system_comment "$b")"
[[ $(comment_key "$a" why) == shrink ]] || fail "job $a's last decision is not 'shrink': $(system_comment "$a")"
wait_until 400 "both jobs finished" eval 'ended "$a" && ended "$b"'
finished "$a" || fail "job $a ended $(job_state "$a")"
finished "$b" || fail "job $b ended $(job_state "$b")"
check_training a --min-acc 0.9
(($(summary_key grows) >= 1)) || fail "job a's log shows no grow: $summary"
(($(summary_key shrinks) >= 1)) || fail "job a's log shows no shrink: $summary"
(($(summary_key failures) == 0)) || fail "job a's runs ended other than by a resize: $summary"
check_training b --min-acc 0.9
(($(log_count "JobId=$a: requeue .* why=grow") >= 1)) || fail "slurmctld logged no grow requeue of job $a"
(($(log_count "JobId=$a: requeue .* why=shrink") >= 1)) || fail "slurmctld logged no shrink requeue of job $a"
note "ok"
