#!/bin/bash
# A second elastic job makes the first one, which holds every GPU, shrink
# through checkpoint + requeue; both then run exactly at the sizes
# sched/pollux decided.
source "$(dirname "$0")/lib.sh"
start_cluster
export POLLUX_TEST_PROFILED=16  # both jobs claim to have been profiled at full scale
a=$(submit_elastic a -N 1-4 --gpus-per-node=4)
full() { runs_as_decided "$a" && [[ $(gpus_of "$a") == 16 ]]; }
wait_until 90 "job $a running on all 16 GPUs" full
note "job $a alone: $(granted "$a")"
restarts_before=$(restarts "$a")
b=$(submit_elastic b -N 1-4 --gpus-per-node=4)
note "submitted job $b"
shared() { runs_as_decided "$a" && runs_as_decided "$b" && (($(gpus_of "$a") < 16)); }
wait_until 120 "both jobs running as decided, $a shrunk" shared
note "job $a: $(granted "$a") | $(system_comment "$a")"
note "job $b: $(granted "$b") | $(system_comment "$b")"
(($(restarts "$a") == restarts_before + 1)) || fail "job $a was requeued $(($(restarts "$a") - restarts_before)) times, expected once"
[[ $(comment_key "$a" why) == shrink ]] || fail "job $a's last decision is not 'shrink': $(system_comment "$a")"
(($(log_count "JobId=$a: signal .* why=shrink") == 1)) || fail "no single checkpoint signal logged for job $a"
(($(log_count "JobId=$a: requeue .* why=shrink") == 1)) || fail "no single requeue logged for job $a"
grep -q "checkpoint acknowledged" "$CLUSTER_DIR/jobs/a.out" || fail "job $a never acknowledged the checkpoint"
(($(gpus_of "$a") + $(gpus_of "$b") <= 16)) || fail "more GPUs granted than the cluster has"
note "ok"
