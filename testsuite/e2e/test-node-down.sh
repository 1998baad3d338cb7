#!/bin/bash
# A node of a running elastic training job fails and the administrator
# sets it DOWN (issue 13: Slurm takes a running job's node away). Slurm
# kills the job and requeues it; sched/pollux treats that as a resize from
# the job's last checkpoint: the next (arrivals) round places it afresh on
# nodes that work, without waiting for a checkpoint that cannot come
# (pollux_checkpoint_timeout=60) or for the next periodic round
# (pollux_interval=30), logs it once, and the job resumes exactly at its
# last committed checkpoint, on nodes without the failed one. Its time
# limit counts the run Slurm ended (used=).
source "$(dirname "$0")/lib.sh"
start_cluster "pollux_interval=30" --nodes 3 --gpus 1
a=$(submit_digits a -N 2-3 --gpus-per-node=1 --time=30 -- --epochs 500 --seed 3 --checkpoint-every 10)
out=$CLUSTER_DIR/jobs/a.out
last_commit() { sed -n 's/^pollux-agent\[0\]: checkpoint of step \([0-9]*\) committed.*/\1/p' "$out" | tail -n 1; }
last_step() { sed -n 's/^step \([0-9]*\) .*/\1/p' "$out" | tail -n 1; }
# A committed checkpoint and a few steps after it, which the failure loses.
# (On 2 or 3 nodes: the first periodic round, at about 30 s, may grow the
# job to 3, and a loaded machine then takes its requeue, restart and 13
# steps more: 60 s ran out so in a fresh-clone run at a load average of 26.)
ready() { runs_as_decided "$a" && [[ -n $(last_commit) ]] && (($(last_step) >= $(last_commit) + 3)); }
wait_until 180 "job $a training past a checkpoint" ready
victim=$(scontrol show hostnames "$(job_field "$a" NodeList)" | grep -vx "$(job_field "$a" BatchHost)" | sed -n 1p)
r0=$(restarts "$a")
note "job $a: $(granted "$a"), step $(last_step), last checkpoint $(last_commit); $victim fails and is set DOWN"
cluster kill-node "$victim"
scontrol update nodename="$victim" state=down reason=failed
t0=$(date +%s)
again() { runs_as_decided "$a" && (($(restarts "$a") > r0)) && [[ $(granted "$a") != *"$victim"* ]]; }
wait_until 60 "job $a running again without $victim" again
took=$(($(date +%s) - t0))
note "job $a running again after ${took}s: $(granted "$a") | $(system_comment "$a")"
# Slurm's own waits: its requeue may first wait for a signal RPC to the
# dead node to fail (Slurm 24.11 retries the refused connection for
# MessageTimeout, 10 s: seen in the 24.11 matrix, the job released by
# sched/pollux the same second), then cred_expire + 1 = 11 s; and a few
# one-second rounds; not the checkpoint timeout, not pollux_interval.
((took <= 10 + 11 + 8)) || fail "job $a took ${took}s to run again after $victim went DOWN"
# The job's output from its first run after r0 on (`after`), or before it
# (`before`). Not "run r0 + 1": a requeue sched/pollux had just decided (a
# grow, signalled as the victim was picked) may count a run that the
# failure kept from ever starting (CI of 9c58a44: restart=1 never started,
# the next run was restart=2).
runs_after_r0() { awk -v r0="$r0" -v want="$1" '!f && /^start restart=/ { split($2, kv, "="); if (kv[2] + 0 > r0) f = 1 } (f && want == "after") || (!f && want == "before")' "$out"; }
resumed() { grep -q "^resumed step" <(runs_after_r0 after); }
wait_until 60 "job $a resumed" resumed
run=$(runs_after_r0 after)
# The last checkpoint committed before the failure (before the new run).
ckpt=$(runs_after_r0 before | sed -n 's/^pollux-agent\[0\]: checkpoint of step \([0-9]*\) committed.*/\1/p' | tail -n 1)
step=$(sed -n 's/^resumed step \([0-9]*\) .*/\1/p' <<< "$run" | sed -n 1p)
((step == ckpt)) || fail "job $a resumed at step $step, not at its last checkpoint $ckpt"
wait_until 30 "job $a's first step after the failure" eval '[[ -n $(runs_after_r0 after | grep "^step ") ]]'
first=$(runs_after_r0 after | sed -n 's/^step \([0-9]*\) .*/\1/p' | sed -n 1p)
((first == ckpt + 1)) || fail "job $a's first step after resuming at $ckpt was $first"
said=$(log_count "sched/pollux: JobId=$a: its run on .* was ended by Slurm's requeue \\($victim failed")
((said == 1)) || fail "the requeue of job $a was logged $said times, not once"
(($(comment_key "$a" used) > 0)) || fail "job $a's time used does not count the run Slurm ended: $(system_comment "$a")"
note "job $a resumed at step $step, its last checkpoint, and went on at step $first"
scancel "$a"
note "ok"
