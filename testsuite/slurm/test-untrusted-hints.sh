#!/bin/bash
# The spool is untrusted: a hint file owned by another user than the job's,
# or reached through a symlink, is ignored: logged once with the job id and
# the reason, and the job is scheduled as if it had no hint (no model, one
# GPU), however well the file claims the job scales. The other user's file
# is removed, so that the job's own agent can write its hint.
source "$(dirname "$0")/lib.sh"
start_cluster
spool=$CLUSTER_DIR/spool/pollux
mkdir -p "$CLUSTER_DIR/jobs"
# Jobs that publish nothing themselves (their scripts only sleep).
quiet() { sbatch --parsable --requeue -J "$1" -N 1-4 --gpus-per-node=4 -o "$CLUSTER_DIR/jobs/$1.out" \
            --wrap 'srun --ntasks=1 sleep 100000'; }
other=$(quiet other-uid)
link=$(quiet symlink)
wait_until 30 "both jobs running" bash -c "squeue -h -t R -o %i | grep -c . | grep >/dev/null -x 2"
# Valid hints claiming excellent scaling at full size, but one belongs to
# another user, and the other is a symlink to a file for another job id.
# (Each is made aside and moved in whole: no round may see a valid file.)
scratch=$CLUSTER_DIR/scratch
mkdir -p "$scratch"
"$POLLUX_TEST_HINT" --spool "$scratch" --job "$other" --profiled 16 --scaling good
chown 65534:65534 "$scratch/$other.hint.yaml"
mv "$scratch/$other.hint.yaml" "$spool/$other.hint.yaml"
"$POLLUX_TEST_HINT" --spool "$spool" --job 999999 --profiled 16 --scaling good
ln -s "$spool/999999.hint.yaml" "$scratch/$link.hint.yaml"
mv "$scratch/$link.hint.yaml" "$spool/$link.hint.yaml"
rejected() { (($(log_count "JobId=$1: hint rejected") >= 1)); }
wait_until 20 "job $other's hint rejected" rejected "$other"
wait_until 20 "job $link's hint rejected" rejected "$link"
sleep 10  # several more rounds
for j in "$other" "$link"; do
  (($(log_count "JobId=$j: hint rejected") == 1)) || fail "job $j's rejection logged $(log_count "JobId=$j: hint rejected") times, expected once"
  [[ $(comment_key "$j" model) == none ]] || fail "job $j has a model: $(system_comment "$j")"
  [[ $(gpus_of "$j") == 1 ]] || fail "job $j got $(gpus_of "$j") GPUs from a rejected hint"
  [[ $(restarts "$j") == 0 ]] || fail "job $j was resized on a rejected hint"
done
grep "JobId=$other: hint rejected" "$CLUSTER_DIR/log/slurmctld.log" | grep >/dev/null "owned by\|owner\|uid" ||
  fail "the reason for job $other does not name the owner: $(grep "JobId=$other: hint rejected" "$CLUSTER_DIR/log/slurmctld.log")"
[[ ! -e $spool/$other.hint.yaml ]] || fail "the hint planted by another user under job $other's name was not removed"
grep "JobId=$link: hint rejected" "$CLUSTER_DIR/log/slurmctld.log" | grep >/dev/null -i "symlink\|symbolic\|ELOOP\|links" ||
  fail "the reason for job $link does not name the symlink: $(grep "JobId=$link: hint rejected" "$CLUSTER_DIR/log/slurmctld.log")"
# A valid hint in place of the bad one is taken up: the job grows.
rm -f "$spool/$link.hint.yaml"
"$POLLUX_TEST_HINT" --spool "$spool" --job "$link" --profiled 16 --scaling good
# (Read in the log: the job, a sleep, dies of the resize signal it gets,
# and its SystemComment says so a moment later.)
grows() { [[ -n $(grep "JobId=$link: signal [0-9x]* GPUs on .* why=grow " "$CLUSTER_DIR/log/slurmctld.log" | grep -v "model=none") ]]; }
wait_until 30 "job $link taking up its valid hint" grows
note "ok"
