#!/bin/bash
# A hyper-parameter search as elastic jobs (issue 32, doc/hpo.md): the
# driver of pollux.optuna runs a study of 8 trials of the PyTorch example
# (contrib/examples/pytorch/hpo.py: learning rate and weight decay drawn,
# validation accuracy reported per epoch, Optuna's MedianPruner), 3 in
# flight, each an elastic job on a 4-node x 1-GPU cluster. Checks: every
# trial COMPLETE, PRUNED or FAIL in the journal (none RUNNING), at least
# two PRUNED, none FAIL, the best trial's accuracy above 0.8, a survivor
# grown by sched/pollux after a pruned trial's job ended (slurmctld.log);
# and two faults: one trial's job requeued by `scontrol requeue` mid-way
# runs the same trial again (same number, its reported values kept, no new
# trial), and slurmctld restarted mid-study loses nothing.
source "$(dirname "$0")/lib.sh"
py=${POLLUX_PYTHON:-/usr/bin/python3}
py_has "$py" torch || skip "$py has no torch (Debian python3-torch)"
py_has "$py" optuna || skip "$py has no optuna (Debian python3-optuna)"
data=${POLLUX_DIGITS:-/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz}
[[ -r $data ]] || skip "no digits data set at $data (Debian python3-sklearn, or configure --with-digits)"
export PYTHONPATH=$POLLUX_SRC/python POLLUX_AGENT_LIBRARY=$POLLUX_BUILD/agent/.libs/libpollux-agent.so
export POLLUX_PYTHON=$py POLLUX_HPO_PY=$POLLUX_SRC/contrib/examples/pytorch/hpo.py POLLUX_DIGITS=$data OMP_NUM_THREADS=1
t_start=$SECONDS

start_cluster "" --nodes 4 --gpus 1
mkdir -p "$CLUSTER_DIR/jobs" "$CLUSTER_DIR/home"
export HOME=$CLUSTER_DIR/home  # the agent's default checkpoints stay in the cluster (lib.sh)
journal=$CLUSTER_DIR/jobs/digits.journal
drv=
# On failure the driver first (SIGTERM: it cancels its jobs), then lib.sh's cleanup.
stop_driver() {
  [[ -n $drv ]] || return 0
  kill "$drv" 2>/dev/null || true
  wait "$drv" 2>/dev/null || true
  drv=
}
trap 'rc=$?; stop_driver; set +e; (exit $rc); cleanup' EXIT  # (set -e would end the trap at (exit 1))

# Seeded random draws (seed + trial number, in each job): trials 0-2 draw
# learning rates that learn (0.05, 0.16, 0.02), trials 3, 5 and 6 ones
# that hardly move in 5 epochs (0.001, 0.0008, 0.0001), for the median of
# the first to prune. Each trial ~20-30 s: 5 epochs, steps slowed as if a
# GPU computed them (more GPUs, more throughput).
(cd "$CLUSTER_DIR/jobs" && exec "$py" -m pollux.optuna run --study digits --storage "$journal" --trials 8 \
  --in-flight 3 --direction maximize --sampler random:seed=28 --pruner median:n_startup_trials=2 --poll 1 \
  --log-dir "$CLUSTER_DIR/jobs" -- -N 1-4 --gpus-per-node=1 "$POLLUX_SRC/contrib/examples/pytorch/hpo.sbatch" \
  --epochs 5 --step-delay 0.02 --example-delay 0.002) > "$CLUSTER_DIR/jobs/driver.out" 2>&1 &
drv=$!
note "driver started ($drv)"

# The study's trials as the journal has them: NUMBER STATE JOB STEPS VALUES.
trials() {
  "$py" - "$journal" <<'EOF'
import sys, warnings
warnings.simplefilter("ignore")
import optuna, pollux.optuna as hpo
optuna.logging.set_verbosity(optuna.logging.ERROR)
for t in optuna.load_study(study_name="digits", storage=hpo.open_storage(sys.argv[1])).trials:
    v = t.intermediate_values
    print(t.number, t.state.name, t.user_attrs.get("pollux_job", "-"), len(v),
          ",".join(f"{k}:{v[k]:.6f}" for k in sorted(v)) or "-", t.value)
EOF
}
trial_field() { trials 2>/dev/null | awk -v n="$1" -v f="$2" '$1 == n { print $f }'; }

# The fault: a trial's job requeued mid-way: the first trial seen running
# with an epoch reported and epochs left, from one reading of the journal
# (a reading takes seconds on a loaded machine: in a fresh-clone run,
# trial 0, read three times, had finished before its requeue).
t= job0= before=
midway() {
  local line
  line=$(trials 2>/dev/null | awk '$2 == "RUNNING" && $4 >= 1 && $4 <= 4 { print; exit }')
  [[ -n $line ]] || return 1
  read -r t _ job0 _ before _ <<< "$line"
  [[ $(squeue -h -j "$job0" -o %T 2>/dev/null) == RUNNING ]]
}
wait_until 200 "a trial running with an epoch reported and epochs left" midway
scontrol requeue "$job0"
note "trial $t's job $job0 requeued by scontrol, its values were $before"

# slurmctld restarted mid-study (issue 32, item 3): the driver's polls that
# squeue cannot answer change nothing, the jobs and the study go on.
asked() { (($(trials 2>/dev/null | wc -l) >= 5)); }
wait_until 200 "trial 4 asked" asked
cluster restart-ctld
note "slurmctld restarted with $(trials | awk '$2 == "RUNNING"' | wc -l) trials running"

wait_until 400 "the driver's end" eval '! kill -0 "$drv" 2>/dev/null'
wait "$drv" || fail "the driver exited $?: $(tail -5 "$CLUSTER_DIR/jobs/driver.out")"
drv=
sed 's/^/  driver: /' "$CLUSTER_DIR/jobs/driver.out" | grep -v "^  driver: .*\[I 20" || true
table=$(trials)
echo "$table" | sed 's/^/  trial /'
(($(wc -l <<< "$table") == 8)) || fail "the study holds $(wc -l <<< "$table") trials, not 8"
grep -vqE '^[0-9]+ (COMPLETE|PRUNED|FAIL) ' <<< "$table" && fail "a trial is left unfinished"
awk '$2 == "FAIL"' <<< "$table" | grep . && fail "a trial failed: $(grep -h "FAIL" "$CLUSTER_DIR/jobs/driver.out")"
# A trial's value is its final accuracy: the last epoch's, give or take
# an epoch (a run requeued after its last step has no epoch left to train;
# the example returned 0.0 there before).
awk '$2 == "COMPLETE" { n = split($5, v, /[:,]/); d = $6 - v[n]; if (d < -0.1 || d > 0.1) exit 1 }' <<< "$table" ||
  fail "a COMPLETE trial's value is not its last reported accuracy"
pruned=$(awk '$2 == "PRUNED"' <<< "$table" | wc -l)
((pruned >= 2)) || fail "$pruned trials pruned, not 2 or more"
best=$(awk '$2 == "COMPLETE" { print $6 }' <<< "$table" | sort -g | tail -1)
note "best trial's validation accuracy: $best ($pruned trials pruned)"
awk -v b="$best" 'BEGIN { exit !(b > 0.8) }' || fail "the best trial's accuracy is $best"

# The requeued trial: run again as itself (its log says so), the values it
# had reported before kept as they were, no trial asked in its place.
grep -q "start trial=$t restart=1" "$CLUSTER_DIR/jobs/digits.trial-$t.out" || fail "trial $t's job did not run again"
grep -q "trial $t resumed (restart 1)" "$CLUSTER_DIR/jobs/digits.trial-$t.out" || fail "trial $t was not resumed"
after=$(trial_field "$t" 5)
[[ $after == "$before"* ]] || fail "trial $t's values changed across the requeue: $before, then $after"
[[ $(trial_field "$t" 3) == "$job0" ]] || fail "trial $t has another job after the requeue"
note "ok: trial $t requeued, resumed as trial $t: $(trial_field "$t" 2), values $after"

# A survivor grown after a pruned trial's job ended: sched/pollux's grow
# decision, logged after that end, for a job submitted before it (not the
# trial the driver submitted in the pruned one's place).
log=$CLUSTER_DIR/log/slurmctld.log
stamp() { sed 's/^\[\([^]]*\)\].*/\1/'; }
grown=
for job in $(awk '$2 == "PRUNED" { print $3 }' <<< "$table"); do
  end=$(grep "_job_complete: JobId=$job done" "$log" | tail -1 | stamp)
  [[ -n $end ]] || continue
  while read -r g; do
    m=$(sed 's/.*sched\/pollux: JobId=\([0-9]*\):.*/\1/' <<< "$g")
    [[ $m != "$job" && $(grep -m1 -E "JobId=$m([^0-9]|$)" "$log" | stamp) < "$end" ]] &&
      { grown="pruned trial's job $job ended $end; $(awk -v a="$(date -d "$end" +%s.%N)" \
          -v b="$(date -d "$(stamp <<< "$g")" +%s.%N)" 'BEGIN { printf "%.2f", b - a }') s later ${g#*sched/pollux: }"
        break 2; }
  done < <(grep -E "sched/pollux: JobId=[0-9]+: [a-z]+ .* why=grow" "$log" | awk -v e="$end" 'substr($1, 2, length($1) - 2) > e')
done
# Or, when the driver's next trials came first (an arrivals round sizes
# a waiting job before a periodic round grows a running one: a fresh-clone
# run had every freed GPU taken so), the freed GPUs went to those trials'
# jobs: released within seconds of the end, none left idle.
if [[ -z $grown ]]; then
  for job in $(awk '$2 == "PRUNED" { print $3 }' <<< "$table"); do
    end=$(grep "_job_complete: JobId=$job done" "$log" | tail -1 | stamp)
    [[ -n $end ]] || continue
    taken=$(grep -E "sched/pollux: JobId=[0-9]+: release .* why=start" "$log" |
              awk -v e="$end" 'substr($1, 2, length($1) - 2) > e' | sed -n 1p)
    [[ -n $taken ]] || continue
    gap=$(awk -v a="$(date -d "$end" +%s.%N)" -v b="$(date -d "$(stamp <<< "$taken")" +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
    awk -v g="$gap" 'BEGIN { exit !(g <= 10) }' &&
      { grown="pruned trial's job $job ended $end; its GPUs went to a new trial $gap s later: ${taken#*sched/pollux: }"; break; }
  done
fi
[[ -n $grown ]] || fail "no job grown, nor a new trial started, after a pruned trial's job ended: $(grep -E 'why=(grow|start)' "$log" | tail -3)"
note "ok: ${grown:0:200}"
note "test time: $((SECONDS - t_start)) s"
