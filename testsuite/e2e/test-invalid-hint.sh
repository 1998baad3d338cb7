#!/bin/bash
# Invalid hint files do not disturb the other jobs. Beside a real elastic
# training job a, an elastic job "bad" (whose script only sleeps) has its
# hint replaced by one broken file after another: bytes that are not YAML,
# a valid-looking hint whose values are out of range, a hint for another
# job id, a file over the size limit; junk files for jobs that do not exist
# lie in the spool too. sched/pollux rejects each of bad's files with a
# logged reason and schedules bad as a job without a model, while a is
# modelled from its own hints, grows past one GPU and finishes with a
# correct model, without a lost or repeated step.
source "$(dirname "$0")/lib.sh"
start_cluster "" --nodes 2 --gpus 2
spool=$CLUSTER_DIR/spool/pollux
scratch=$CLUSTER_DIR/scratch
mkdir -p "$CLUSTER_DIR/jobs" "$scratch"
bad=$(sbatch --parsable --requeue -J bad -N 1-2 --gpus-per-node=2 -o "$CLUSTER_DIR/jobs/bad.out" \
        --wrap 'srun --ntasks=1 sleep 100000')
a=$(submit_digits a -N 1-2 --gpus-per-node=2 -- --epochs 40 --seed 4)
note "submitted job bad ($bad) and job a ($a)"
wait_until 60 "both jobs running" eval 'runs_as_decided "$bad" && runs_as_decided "$a"'
# plant FILE: moves FILE into the spool as bad's hint in one rename.
plant() { mv -f "$1" "$spool/$bad.hint.yaml"; }
rejections() { log_count "JobId=$bad: hint rejected"; }
expect_rejection() {
  local before=$1 what=$2
  wait_until 20 "bad's $what rejected" eval '(($(rejections) > before))'
  note "rejected ($what): $(grep "JobId=$bad: hint rejected" "$CLUSTER_DIR/log/slurmctld.log" | tail -n 1 | sed 's/.*rejected, no model used: //')"
}
printf 'junk\x00\x01{' > "$spool/999999.hint.yaml"
echo "not a hint" > "$spool/notes.txt"
n=$(rejections)
printf '%s\n' '{{{ this: is [not yaml' > "$scratch/h" && plant "$scratch/h"
expect_rejection "$n" "non-YAML file"
n=$(rejections)
"$POLLUX_TEST_HINT" --spool "$scratch" --job "$bad" --profiled 4 --scaling good
sed -i 's/^\( *replicas:\).*/\1 -7/' "$scratch/$bad.hint.yaml"
plant "$scratch/$bad.hint.yaml"
expect_rejection "$n" "out-of-range replicas"
n=$(rejections)
"$POLLUX_TEST_HINT" --spool "$scratch" --job "$a" --profiled 4 --scaling good
plant "$scratch/$a.hint.yaml"
expect_rejection "$n" "hint of another job"
n=$(rejections)
{ "$POLLUX_TEST_HINT" --spool "$scratch" --job "$bad" --profiled 4 --scaling good
  cat "$scratch/$bad.hint.yaml"; head -c 300000 /dev/zero | tr '\0' '#'; } > "$scratch/big"
plant "$scratch/big"
expect_rejection "$n" "file over the size limit"
scontrol ping | grep >/dev/null UP || fail "slurmctld does not answer"
[[ $(comment_key "$bad" model) == none ]] || fail "job $bad has a model from a rejected hint: $(system_comment "$bad")"
(($(restarts "$bad") == 0)) || fail "job $bad was resized on a rejected hint"
grew() { runs_as_decided "$a" && (($(gpus_of "$a") >= 2)) && [[ $(comment_key "$a" model) != none ]]; }
wait_until 240 "job $a modelled from its own hints and grown past one GPU" grew
note "a: $(granted "$a") | $(system_comment "$a")"
wait_until 400 "job $a finished" ended "$a"
finished "$a" || fail "job $a ended $(job_state "$a")"
check_training a --min-acc 0.9
(($(summary_key failures) == 0)) || fail "job a's runs ended other than by a resize: $summary"
(($(log_count "JobId=$a: hint rejected") == 0)) || fail "job $a's own hints were rejected"
scancel "$bad"
note "ok"
