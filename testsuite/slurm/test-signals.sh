#!/bin/bash
# Signals that coexist with the job's own (issue 20, item 2): an elastic
# job with --signal=USR1@60 whose program has its own SIGUSR1 handler
# (installed after `import pollux`, as Lightning's auto-requeue does) is
# resized by sched/pollux (it grows: decision file, signal, checkpoint,
# acknowledgement, requeue) and gets Slurm's warning in that handler, not
# in the agent. Then the handler requeues the job itself on a delivery (the
# test's scancel --signal=USR1, as Lightning does on the warning): counted
# as such (why=requeued), not as a failed resize.
# Slurm sends the warning from a 30-second check, from 30 s before it is
# due: with --time=2 between 30 and 60 s after the start, when the grow
# (about 20 s in) is long done. The program ignores USR1 until its handler
# is installed, as such a job must.
source "$(dirname "$0")/lib.sh"
start_cluster
mkdir -p "$CLUSTER_DIR/jobs"
export POLLUX_CHECKPOINT_DIR=$CLUSTER_DIR/ckpt POLLUX_TEST_REQUEUE_FLAG=$CLUSTER_DIR/jobs/requeue-yourself
export PYTHONPATH=$POLLUX_SRC/python${PYTHONPATH:+:$PYTHONPATH}
export POLLUX_AGENT_LIBRARY=$POLLUX_BUILD/agent/.libs/libpollux-agent.so
[[ -f $POLLUX_AGENT_LIBRARY ]] || skip "$POLLUX_AGENT_LIBRARY not built"
out=$CLUSTER_DIR/jobs/a.out
cat > "$CLUSTER_DIR/jobs/a.sh" <<EOS
#!/bin/sh
exec srun --ntasks=1 --nodes=1 --overlap /bin/sh -c "trap '' USR1; exec /usr/bin/python3 $here/signal-job.py"
EOS
a=$(sbatch --parsable --requeue --open-mode=append -J a -o "$out" -N 1-2 --gpus-per-node=4 --time=2 \
  --signal=USR1@60 "$CLUSTER_DIR/jobs/a.sh")
elastic() { [[ $(job_state "$a") == RUNNING && $(comment_key "$a" kind) == elastic ]]; }
wait_until 60 "job $a running, its agent listening (kind=elastic)" elastic
note "job $a: $(system_comment "$a")"
restarted() { (($(restarts "$a") >= 1)) && grep -q "start run 1 resumed=True" "$out"; }
wait_until 60 "job $a resized by sched/pollux through its checkpoint" restarted
note "job $a: $(system_comment "$a")"
(($(log_count "JobId=$a: signal ") == 1)) || fail "no single resize signal logged for job $a"
(($(log_count "JobId=$a: requeue ") == 1)) || fail "no single requeue logged for job $a"
grep -q "checkpoint acknowledged in the hint" "$out" || fail "job $a's agent never acknowledged its checkpoint"
warned() { grep -q "warning 10 in the program's handler" "$out"; }
wait_until 70 "Slurm's --signal warning in the program's own handler" warned
sleep 2
grep "in the program's handler" "$out"
(($(grep -c "resize requested by the scheduler" "$out") == 1)) || fail "the agent took Slurm's warning for a resize"
[[ $(job_state "$a") == RUNNING ]] && (($(restarts "$a") == 1)) || fail "job $a did not run on after the warning"
# The program requeues itself on the next delivery.
touch "$POLLUX_TEST_REQUEUE_FLAG"
scancel --signal=USR1 "$a"
self_requeued() { (($(restarts "$a") >= 2)) && [[ $(comment_key "$a" why) == requeued ]]; }
wait_until 30 "job $a requeued by its own handler, shown as why=requeued" self_requeued
note "job $a: $(system_comment "$a")"
(($(log_count "JobId=$a: requeue ") == 1)) || fail "sched/pollux requeued job $a again"
(($(log_count "JobId=$a: its run on .* ended by Slurm's requeue \(by an operator, or the job itself\)") >= 1)) ||
  fail "job $a's own requeue was not counted as such"
(($(grep -c "resize requested by the scheduler" "$out") == 1)) || fail "a delivery of the program's was taken for a resize"
scancel "$a"
note "ok"
