#!/bin/bash
# Signals that coexist with the job's own (issue 20, item 2): an elastic
# job with --signal=USR1@60 whose program has its own SIGUSR1 handler
# (installed after `import pollux`, as Lightning's auto-requeue does) gets
# Slurm's warning in that handler, and is still resized by sched/pollux
# (preempted for a rigid job and restarted from its checkpoint), the
# resize request reaching the agent alone. In the restarted run the
# handler requeues the job itself on the next delivery (Slurm's warning,
# or the test's scancel --signal=USR1): counted as such (why=requeued),
# not as a failed resize. Slurm sends the warning from a 30-second check,
# so the program ignores USR1 until its handler is installed, as a job
# must (the test never depends on when that check falls).
source "$(dirname "$0")/lib.sh"
start_cluster
mkdir -p "$CLUSTER_DIR/jobs"
export POLLUX_CHECKPOINT_DIR=$CLUSTER_DIR/ckpt POLLUX_TEST_SELF_REQUEUE=1
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
warned() { grep -q "warning 10 in the program's handler, run 0" "$out"; }
wait_until 70 "Slurm's --signal warning in the program's own handler" warned
note "job $a warned: $(system_comment "$a")"
sleep 2
grep -q "resize requested" "$out" && fail "the agent took Slurm's warning for a resize"
# A rigid job that needs every GPU: sched/pollux preempts job $a for it.
r=$(sbatch --parsable -J rigid -o "$CLUSTER_DIR/jobs/rigid.out" -N 4 --gpus-per-node=4 --wrap 'sleep 2')
restarted() { (($(restarts "$a") >= 1)) && grep -q "start run 1 resumed=True" "$out"; }
wait_until 90 "job $a preempted through its checkpoint and restarted" restarted
note "job $a: $(system_comment "$a")"
(($(log_count "JobId=$a: signal .* why=preempt") == 1)) || fail "no single resize signal logged for job $a"
(($(log_count "JobId=$a: requeue .* why=preempt") == 1)) || fail "no single requeue logged for job $a"
grep -q "checkpoint acknowledged in the hint" "$out" || fail "job $a's agent never acknowledged its checkpoint"
(($(grep -c "in the program's handler, run 0" "$out") == 1)) ||
  fail "the program's handler got $(grep -c "in the program's handler, run 0" "$out") deliveries in run 0, expected Slurm's warning alone"
# Run 1: the next delivery makes the program requeue itself.
wait_until 30 "job $a running again" bash -c "[[ \$(scontrol show job $a | grep -o 'JobState=[A-Z]*') == JobState=RUNNING ]]"
scancel --signal=USR1 "$a" 2>/dev/null || true
self_requeued() { (($(restarts "$a") >= 2)) && [[ $(comment_key "$a" why) == requeued ]]; }
wait_until 60 "job $a requeued by its own handler, shown as why=requeued" self_requeued
note "job $a: $(system_comment "$a")"
(($(log_count "JobId=$a: requeue ") == 1)) || fail "sched/pollux requeued job $a again"
(($(log_count "JobId=$a: its run on .* ended by Slurm's requeue \(by an operator, or the job itself\)") >= 1)) ||
  fail "job $a's own requeue was not counted as such"
scancel "$a"
note "ok"
