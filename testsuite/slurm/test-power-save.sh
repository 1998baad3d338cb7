#!/bin/bash
# Slurm's power saving as a cloud has it (pollux-local-cluster --power-save:
# every node State=CLOUD, a ResumeProgram that starts the node's slurmd
# after a boot delay, a SuspendProgram that stops it). Powered-down nodes
# are capacity to sched/pollux as they are to Slurm (issue 31): on a
# cluster at rest an elastic job starts (Slurm resumes the node sched/pollux
# placed it on); it grows onto a node that boots and acknowledges the
# checkpoint signal there (the tasks under a slurmd started by slurmctld's
# ResumeProgram get SIGUSR1); sched/pollux learns the boots' time and keeps
# it in StateSaveLocation; pollux-status says the idle GPUs are powered
# down. A node whose resume fails (its slurmd never starts: ResumeTimeout)
# costs the job a re-plan: it runs again on the nodes that are up, from its
# checkpoint, never lost. slurmctld restarted while a node boots loses
# neither the boot nor the job's growth onto it. Goodput auto-scaling
# (pollux_autoscale=goodput, turned on by scontrol reconfigure): once the
# job ends, sched/pollux powers its idle nodes down (POWER_DOWN_ASAP) within
# seconds, long before SuspendTime (60 s), and says why (the log,
# pollux-status); a node within the target still powered down is resumed
# ahead of need.
source "$(dirname "$0")/lib.sh"
status_cmd=$POLLUX_SRC/plugin/sched_pollux/pollux-status
start_cluster "" --nodes 3 --gpus 1 --power-save 2 --suspend-time 60 --resume-timeout 10
[[ $(sinfo -h -N -o '%t' | sort -u) == 'idle~' ]] || fail "the cluster is not at rest: $(sinfo -h -N -o '%N %t' | tr '\n' ' ')"
state_dir=$CLUSTER_DIR/state
# (pollux-status's output read whole, then matched: under pipefail, a grep
# -q or -m that stops reading fails its writer, and the pipeline with it.)
said_powered() { [[ $("$status_cmd" --dir "$state_dir" 2>/dev/null) == *"GPUs: 3 total"*" 3 idle (3 on nodes powered down)"* ]]; }
wait_until 30 "pollux-status saying the 3 idle GPUs are powered down" said_powered

job=$(submit_elastic ps -N 1-3 --gpus-per-node=1)
note "submitted elastic job $job on a cluster at rest"
out=$CLUSTER_DIR/jobs/ps.out
# The job's runs, from its output ("start TIME restart=N nodes=LIST
# gpus=G" each): a run may last a second before the next resize's signal,
# too short for a poll of Slurm's state to see.
run_line() { grep -E "^start [0-9.]+ restart=$1 " "$out" 2>/dev/null | tail -1; }
run_nodes() { scontrol show hostnames "$(sed 's/.* nodes=\([^ ]*\).*/\1/' <<< "$1")" | tr '\n' ' '; }
started() { [[ -n $(run_line 0) ]]; }
wait_until 90 "job $job started, on a node Slurm resumed for it" started
first=$(run_nodes "$(run_line 0)")
note "started on $first"
[[ $(run_line 0) == *" gpus=1" ]] || fail "job $job's first run: $(run_line 0)"
grep -q "resume ${first% }: slurmd pid" "$CLUSTER_DIR/log/power.log" ||
  fail "job $job runs on $first, which no ResumeProgram booted: $(cat "$CLUSTER_DIR/log/power.log")"

# Growing to 2 nodes: the node left powered down is the one whose resume
# will fail (set now: the job grows further only once it runs on 2, after
# the boot and Slurm's launch).
two=
moving() { two=$(comment_key "$job" alloc) && [[ $two == 2x1@* ]]; }
wait_until 60 "job $job placed on a second node" moving
third=$(printf '%s\n' n1 n2 n3 | grep -vxF -f <(tr ',' '\n' <<< "${two#*@}"))
note "placed at $two; $third's resume will fail"
cluster fail-resume "$third"
# slurmctld restarted while the second node boots (its 2 s boot mostly
# ends while slurmctld is down): the boot and the promise survive it
# (sched/pollux keeps the boot under way in pollux_boot_times: Slurm clears
# the node's resume time when it registers, which may come before the
# restarted slurmctld's first round), the job grows there and the boot is
# still learnt.
second=$(tr ',' '\n' <<< "${two#*@}" | grep -vxF "${first% }")
booting() { [[ $(sinfo -h -n "$second" -o %t) == *'#' ]]; }  # sinfo's "#": powering up
wait_until 60 "$second booting for job $job" booting
# Once sched/pollux has seen the boot (and kept it under way in its file):
# a boot begun and ended between two of its rounds, the last before the
# stop and the first after, is seen by none and not learnt (3 of 33 runs
# here restarted so, before this wait).
kept_booting() { grep -q "^booting $second " "$state_dir/pollux_boot_times" 2>/dev/null; }
wait_until 10 "sched/pollux keeping $second's boot under way in pollux_boot_times" kept_booting
cluster restart-ctld
note "slurmctld restarted while $second boots ($(sinfo -h -n "$second" -o %t))"
grown() { [[ $(run_line 1) == *" gpus=2" ]]; }
wait_until 90 "job $job grown onto a second node, which boots" grown
note "grown: $(run_line 1)"
grep -q "checkpoint acknowledged" "$out" ||
  fail "job $job did not acknowledge the checkpoint signal on $first (its tasks' signal mask?)"
booted() { (($(log_count "sched/pollux: node n[0-9] booted in [0-9.]+ s") >= 2)); }
wait_until 10 "sched/pollux measuring two boots" booted
grep -E "^node n[0-9] [0-9.e+]+ [0-9]+$" "$state_dir/pollux_boot_times" > /dev/null ||
  fail "no boot times kept in $state_dir/pollux_boot_times: $(cat "$state_dir/pollux_boot_times" 2>&1)"
note "boots: $(grep -oE "node n[0-9] booted in [0-9.]+ s" "$CLUSTER_DIR/log/slurmctld.log" | tr '\n' ';')"

# The third node's resume fails: the job, placed there as it grows to 3,
# is requeued by Slurm when the node is marked DOWN, and runs on again
# where it can, from its checkpoint.
failed() { [[ $(scontrol show node "$third") =~ State=DOWN ]]; }
wait_until 120 "$third marked DOWN after its failed resume" failed
note "$third: $(scontrol show node "$third" | grep -o 'Reason=[^[]*')"
logged() { grep -q "sched/pollux: node $third did not register after its resume" "$CLUSTER_DIR/log/slurmctld.log"; }
wait_until 15 "sched/pollux logging $third's failed resume" logged
# sched/pollux's own count since the restart above: the move toward
# $third was requeued on the job's acknowledgement, not at the time-out.
# (The job's "checkpoint acknowledged" line says that it acknowledged, not
# that the requeue waited for it. CI's run of 489a642 failed on that line
# about 60 s late, the time-out's length; not reproduced in 33 runs here.)
status=$("$status_cmd" --dir "$state_dir" 2>&1) || fail "pollux-status failed: $status"
counts=$'Checkpoint acks: *([0-9]+)\n[[:space:]]*Checkpoint time-outs: *([0-9]+)'  # the first: since the restart
[[ $status =~ $counts ]] || fail "pollux-status gave no checkpoint counts: $status"
((BASH_REMATCH[1] >= 1 && BASH_REMATCH[2] == 0)) ||
  fail "job $job was moved toward $third without its checkpoint (pollux-status: ${BASH_REMATCH[0]//[$'\n\t']/ })"
again() {
  local line
  line=$(grep -E "^start " "$out" | tail -1)
  [[ $line != "$(run_line 1)" && $line == *" gpus=2" && " $(run_nodes "$line")" != *" $third "* ]] &&
    [[ $(job_state "$job") == RUNNING ]]
}
wait_until 90 "job $job running again without $third" again
note "running again: $(grep -E "^start " "$out" | tail -1) | $(system_comment "$job")"

# Goodput auto-scaling: the job's end leaves no node worth running.
prom_file=$CLUSTER_DIR/pollux.prom
sed -i "s|pollux_interval=3,|pollux_interval=3,pollux_autoscale=goodput,pollux_metrics_file=$prom_file,|" "$SLURM_CONF"
# SuspendExcStates (Slurm 23.02 on): a node in a reservation (RESERVED)
# is one Slurm's power saving keeps on, and so does sched/pollux.
exc_states=true
[[ $(scontrol --version) == *" 22.05."* ]] && exc_states=false  # no such setting
! $exc_states || echo "SuspendExcStates=RESERVED" >> "$SLURM_CONF"
scontrol reconfigure
wait_until 20 "pollux_autoscale=goodput taken" bash -c \
  "grep 'sched/pollux: parameters:' '$CLUSTER_DIR/log/slurmctld.log' | tail -n 1 | grep -q 'pollux_autoscale=goodput'"
up=$(sinfo -h -N -t idle,mixed,allocated -o '%N %t' | awk '$2 !~ /[~#%!]/ {print $1}' | sort -u | tr '\n' ' ')
[[ -n $up ]] || fail "no node on before the job ends: $(sinfo -h -N -o '%N %t' | tr '\n' ' ')"
kept=
if $exc_states; then
  kept=${up%% *} up=${up#* }
  [[ -n $up ]] || fail "one node on before the job ends: none left to power down beside the reserved one"
  scontrol create reservation ReservationName=keep Nodes="$kept" StartTime=now Duration=30 Users=root \
    Flags=IGNORE_JOBS > /dev/null
  wait_until 20 "$kept reserved" eval '[[ $(scontrol show node "$kept") == *State=*RESERVED* ]]'
fi
scancel "$job"
cancelled=$SECONDS
powered_down() {
  local n
  for n in $up; do
    grep -q "sched/pollux: power down $n (" "$CLUSTER_DIR/log/slurmctld.log" &&
      [[ $(sinfo -h -n "$n" -o %t) == *[~%] ]] || return 1
  done
  # (a node may go first while the job runs, if the job is worth less than its 2 nodes)
  grep -q "sched/pollux: power down n[0-9] (no elastic job to size: 0 nodes worth running" "$CLUSTER_DIR/log/slurmctld.log"
}
wait_until 20 "sched/pollux powering down $up(SuspendTime is 60 s)" powered_down
if [[ -n $kept ]]; then
  ! grep -q "sched/pollux: power down $kept (" "$CLUSTER_DIR/log/slurmctld.log" &&
    [[ $(sinfo -h -n "$kept" -o %t) != *[~%] ]] ||
    fail "$kept, reserved (SuspendExcStates=RESERVED), was powered down: $(sinfo -h -n "$kept" -o %t)"
  note "$kept, reserved, kept on: $(sinfo -h -n "$kept" -o %T)"
fi
note "powered down by sched/pollux $((SECONDS - cancelled)) s after the job's end: $(sinfo -h -N -o '%N %t' | tr '\n' ' ')"
note "$(grep -m1 -o "sched/pollux: power down .*" "$CLUSTER_DIR/log/slurmctld.log")"
said_scaled() {
  "$status_cmd" --dir "$state_dir" 2>/dev/null |
    grep -qE "Auto-scaling \(goodput\): no elastic job to size: 0 nodes worth running .*; [12] node\(s\) powered down and [0-9]+ powered up ahead of need since"
}
wait_until 10 "pollux-status saying the nodes powered down by auto-scaling" said_scaled
# The Grafana dashboard's auto-scaling queries name metrics the plugin
# writes (slurm.metrics runs every other query through Prometheus, on a
# cluster without auto-scaling).
dashboard_families() {
  python3 -c "import json, re, sys
for p in json.load(open(sys.argv[1]))['panels']:
    for t in p['targets']:
        if 'pollux_autoscale_' in t['expr']: print(*sorted(set(re.findall(r'pollux_[a-z_]+', t['expr']))))" \
    "$POLLUX_SRC/contrib/grafana/pollux-dashboard.json" | tr ' ' '\n' | sort -u
}
families=$(dashboard_families)
[[ -n $families ]] || fail "the dashboard has no auto-scaling panel"
for f in $families; do
  grep -q "^$f[{ ]" "$prom_file" || fail "the dashboard queries $f, which $prom_file lacks: $(grep -v '^#' "$prom_file" | cut -d' ' -f1 | tr '\n' ' ')"
done
note "dashboard's auto-scaling metrics written: $(grep -E "^pollux_autoscale_" "$prom_file" | tr '\n' ';')"

# Resumed ahead of need: on the cluster at rest again, a job that may
# run on one node of the two left (the third is down). The band (AdaptDL's,
# utility 0.5 at its middle) is worth 2 nodes: the job's, which Slurm
# resumes for it, and the other, which sched/pollux resumes before
# anything is placed there.
if [[ -n $kept ]]; then
  scontrol delete reservation keep
  wait_until 20 "$kept powered down once no longer reserved" eval '[[ $(sinfo -h -n "$kept" -o %t) == *[~%] ]]'
fi
read -r -a left <<< "$(sinfo -h -N -o '%N %t' | awk '$2 !~ /down/ {print $1}' | sort -u | tr '\n' ' ')"
((${#left[@]} == 2)) || fail "not 2 nodes left: $(sinfo -h -N -o '%N %t' | tr '\n' ' ')"
one=$(submit_elastic one -N 1-2 --gpus-per-node=1 --exclude="${left[1]}")
ahead() { grep -q "sched/pollux: power up ${left[1]} ahead of need (" "$CLUSTER_DIR/log/slurmctld.log"; }
wait_until 30 "sched/pollux resuming ${left[1]} ahead of need (job $one may run on ${left[0]} only)" ahead
wait_until 30 "${left[1]} booting or up" eval '[[ $(sinfo -h -n "${left[1]}" -o %t) != *"~" ]]'
note "$(grep -m1 -o "sched/pollux: power up .*" "$CLUSTER_DIR/log/slurmctld.log"); job $one: $(comment_key "$one" alloc); ${left[1]}: $(sinfo -h -n "${left[1]}" -o %T)"
wait_until 10 "the metrics counting the node powered up" grep -q "^pollux_nodes_powered_up_total [1-9]" "$prom_file"
scancel "$one"
note "ok"
