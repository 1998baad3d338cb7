#!/bin/bash
# A lone elastic job starts on one GPU (no model yet: Pollux lets a job at
# most double the scale it has been profiled at), then grows through
# checkpoint + requeue as its hints show that it scales; Slurm grants
# exactly what sched/pollux decides each time.
source "$(dirname "$0")/lib.sh"
start_cluster
job=$(submit_elastic grow -N 1-4 --gpus-per-node=4)
note "submitted elastic job $job"
wait_until 30 "job $job running as decided" runs_as_decided "$job"
[[ $(gpus_of "$job") == 1 ]] || fail "job $job started on $(gpus_of "$job") GPUs, expected 1 (no hint yet)"
note "started: $(granted "$job") | $(system_comment "$job")"
grown() { runs_as_decided "$job" && (($(gpus_of "$job") >= 4)); }
wait_until 150 "job $job grown to 4 GPUs or more" grown
note "grown: $(granted "$job") | $(system_comment "$job")"
(($(restarts "$job") >= 2)) || fail "job $job grew without two requeues (Restarts=$(restarts "$job"))"
[[ $(comment_key "$job" why) == grow ]] || fail "last decision is not 'grow': $(system_comment "$job")"
grep -q "checkpoint acknowledged" "$CLUSTER_DIR/jobs/grow.out" || fail "the job never acknowledged a checkpoint"
(($(log_count "JobId=$job: signal .* why=grow") >= 2)) || fail "no checkpoint signals logged for job $job"
(($(log_count "JobId=$job: requeue .* why=grow") >= 2)) || fail "no requeues logged for job $job"
grep -q "goodput=" <<< "$(system_comment "$job")" || fail "the comment shows no goodput: $(system_comment "$job")"
note "ok"
