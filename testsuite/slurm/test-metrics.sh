#!/bin/bash
# Round statistics and metrics (issue 21), on one cluster run with two
# elastic jobs, on two GPU types (a100 and h100 nodes, so that the per-type
# series and the dashboard's panels by GPU type are there): pollux-status prints the rounds and both jobs, its --json
# is the status file and --reset starts the since-reset counters afresh;
# the Prometheus file (pollux_metrics_file) passes `promtool check
# metrics`; a real node_exporter (textfile collector) and a real Prometheus
# on loopback ports scrape it and answer for cluster goodput and round
# time, and every query of contrib/grafana/pollux-dashboard.json returns
# series. POLLUX_TEST_METRICS_PLOT=FILE.png also plots the scraped series
# (contrib/grafana/plot-metrics; the picture in doc/plugin.md) after two
# minutes more with a rigid job and a third elastic job.
# What operators see (issue 34): a full spool (a 1 MiB tmpfs over it,
# filled) is said once in slurmctld.log, in pollux-status and the metrics,
# and by the jobs left without a hint (cap=spool-full), and said again when
# it has room; a suspended elastic job has its own state (SystemComment
# state=suspended), row and GPU count in pollux-status and the metrics.
source "$(dirname "$0")/lib.sh"
for c in prometheus prometheus-node-exporter promtool; do
  command -v "$c" >/dev/null || skip "$c not installed (Debian packages prometheus prometheus-node-exporter)"
done
status_cmd=$POLLUX_SRC/plugin/sched_pollux/pollux-status
dashboard=$POLLUX_SRC/contrib/grafana/pollux-dashboard.json
metrics_dir=$(mktemp -d /tmp/pollux-metrics-XXXXXX)
mkdir "$metrics_dir/textfile"
prom_file=$metrics_dir/textfile/pollux.prom
start_cluster "pollux_metrics_file=$prom_file" --gpu-types a100:2,h100:2
pids=()
spool_mounted=
stop_exporters() {
  local p
  [[ -z $spool_mounted ]] || umount -l "$POLLUX_TEST_SPOOL" || true
  for p in "${pids[@]}"; do { kill "$p" && wait "$p"; } 2>/dev/null || true; done
  rm -rf "$metrics_dir"
}
trap 'rc=$?; set +e; stop_exporters; (exit $rc); cleanup' EXIT
state_dir=$CLUSTER_DIR/state

# Loopback ports below the ephemeral range that nothing listens on.
free_port() {
  local p low=32768
  read -r low _ < /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || true
  while :; do
    p=$((10000 + RANDOM % (low - 10000)))
    (: < "/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
  done
}
exporter_port=$(free_port)
prometheus-node-exporter --web.listen-address="127.0.0.1:$exporter_port" --collector.disable-defaults \
  --collector.textfile --collector.textfile.directory="$metrics_dir/textfile" > "$metrics_dir/exporter.log" 2>&1 &
pids+=($!)
prom_port=$(free_port)
cat > "$metrics_dir/prometheus.yml" <<CONF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: node
    static_configs:
      - targets: ['127.0.0.1:$exporter_port']
CONF
prometheus --config.file="$metrics_dir/prometheus.yml" --storage.tsdb.path="$metrics_dir/data" \
  --web.listen-address="127.0.0.1:$prom_port" > "$metrics_dir/prometheus.log" 2>&1 &
pids+=($!)
api=http://127.0.0.1:$prom_port/api/v1

export POLLUX_TEST_PROFILED=16
a=$(submit_elastic a -N 1-2 --gpus-per-node=2)
b=$(submit_elastic b -N 1-2 --gpus-per-node=2)
wait_until 30 "job $a running as decided" runs_as_decided "$a"
wait_until 30 "job $b running as decided" runs_as_decided "$b"
# Their hints give models, so goodput, after a periodic round (pollux_interval=3).
has_goodput() { [[ -f $prom_file ]] && grep -q '^pollux_cluster_goodput [1-9]' "$prom_file"; }
wait_until 30 "a cluster goodput in $prom_file" has_goodput

# The status, in sdiag's manner, and as JSON.
out=$("$status_cmd" --dir "$state_dir")
echo "$out"
grep -Eq '^	Rounds: +[1-9]' <<< "$out" || fail "pollux-status shows no rounds"
grep -Eq '^	  periodic: +[1-9]' <<< "$out" || fail "pollux-status shows no periodic rounds"
grep -Eq "^ +$a +[^ ]+ +[^ ]+ +(run|ckpt|start) " <<< "$out" || fail "pollux-status has no line for job $a"
grep -Eq "^ +$b +[^ ]+ +[^ ]+ +(run|ckpt|start) " <<< "$out" || fail "pollux-status has no line for job $b"
grep -Eq '^GPUs: [0-9]+ total, [1-9][0-9]* elastic' <<< "$out" || fail "pollux-status shows no elastic GPUs"
json() { "$status_cmd" --dir "$state_dir" --json | python3 -c "import json, sys; s = json.load(sys.stdin); print($1)"; }
[[ $(json "sorted(j['job_id'] for j in s['jobs'])") == "[$a, $b]" ]] || fail "--json: jobs $(json "s['jobs']")"
(($(json "s['since_start']['decisions'].get('start', 0)") >= 2)) || fail "--json: fewer than 2 starts counted"
# A reset (as sdiag -r): the since-reset counters start afresh, the since-start ones stay.
before=$(json "s['since_start']['rounds']['periodic']")
"$status_cmd" --dir "$state_dir" --reset
reset_honoured() { [[ ! -e $state_dir/pollux_status.reset && $(json "int(s['since_reset']['since'] > s['since_start']['since'])") == 1 ]]; }
wait_until 10 "the reset honoured" reset_honoured
(($(json "sum(s['since_reset']['rounds'].values())") < $(json "sum(s['since_start']['rounds'].values())"))) ||
  fail "the reset left the since-reset rounds at the since-start count"
(($(json "s['since_start']['rounds']['periodic']") >= before)) || fail "the reset cleared the since-start counters"
grep -q "round statistics reset" "$CLUSTER_DIR/log/slurmctld.log" || fail "the reset was not logged"

# The metrics file passes promtool's checks (format and naming lint).
promtool check metrics < "$prom_file" || fail "promtool check metrics rejects $prom_file"
note "promtool check metrics: ok ($(grep -vc '^#' "$prom_file") samples)"

# Prometheus scrapes it through node_exporter and answers queries.
query() { curl -sf --get "$api/query" --data-urlencode "query=$1"; }
series() { query "$1" | python3 -c "import json, sys; print(len(json.load(sys.stdin)['data']['result']))"; }
value() { query "$1" | python3 -c "import json, sys; r = json.load(sys.stdin)['data']['result']; print(r[0]['value'][1] if r else '')"; }
scraped() { [[ -n $(value pollux_cluster_goodput 2>/dev/null) ]] && [[ $(value pollux_cluster_goodput) != 0 ]]; }
wait_until 30 "Prometheus's answer for pollux_cluster_goodput" scraped
note "Prometheus: cluster goodput $(value pollux_cluster_goodput)/s, last round $(value 'pollux_round_phase_last_seconds{phase="total"}') s"
[[ -n $(value 'pollux_round_phase_last_seconds{phase="total"}') ]] || fail "Prometheus has no round time"
# Rates need two scrapes a minute apart at most: wait for a second round's worth.
sleep 3
# (pollux_autoscale_* exist only with goodput auto-scaling on: slurm.power-save
# checks the dashboard's queries of them.)
while read -r expr; do
  [[ $expr != *pollux_autoscale_* ]] || continue
  n=$(series "$expr")
  ((n > 0)) || fail "the dashboard's query '$expr' returns no series"
  note "dashboard query: $expr -> $n series"
done < <(python3 -c "import json, sys
for p in json.load(open(sys.argv[1]))['panels']:
    for t in p['targets']: print(t['expr'])" "$dashboard")
n=$(series 'count by (gpu_type) (pollux_cluster_gpus_by_type)')
((n == 2)) || fail "Prometheus has the GPUs of $n GPU types, not 2 (a100, h100)"

# A full spool: the agents' hints cannot be written (the tmpfs hides the
# ones written before), so the jobs run as moldable ones, and say why (a
# job caught checkpointing for a resize cannot acknowledge it: it restarts
# at pollux_checkpoint_timeout, 60 s, then says why too).
t0=$SECONDS
spool=$POLLUX_TEST_SPOOL
mount -t tmpfs -o size=1m,mode=1777 pollux-test-spool "$spool" || fail "cannot mount a tmpfs on $spool"
spool_mounted=1
dd if=/dev/zero of="$spool/filler" bs=64k 2>/dev/null || true  # until no space is left
full_shown() {
  (($(log_count "sched/pollux: the spool $spool is full \(0 bytes") == 1)) &&
    [[ $(json "s['spool']['full']") == True ]] && grep -q '^pollux_spool_full 1$' "$prom_file" &&
    { says_spool_full "$a" || says_spool_full "$b"; }
}
says_spool_full() { [[ $(comment_key "$1" cap) == spool-full && $(comment_key "$1" kind) == moldable ]]; }
wait_until 90 "the full spool in slurmctld.log, pollux-status, the metrics and a job's cap=" full_shown
out=$("$status_cmd" --dir "$state_dir")
grep -E "^Spool: " <<< "$out"
grep -q "^Spool: $spool: FULL" <<< "$out" || fail "pollux-status does not say the spool is full"
# The round may see the spool full before a job next writes its hint (on
# a loaded machine it did): wait for a job to meet it.
agent_met_it() { grep -q "No space left on device" "$CLUSTER_DIR"/jobs/[ab].out 2>/dev/null; }
wait_until 30 "an agent meeting the full spool (No space left on device)" agent_met_it
umount "$spool" && spool_mounted=
room_shown() {
  (($(log_count "sched/pollux: the spool $spool has room again") == 1)) && grep -q '^pollux_spool_full 0$' "$prom_file" &&
    ! says_spool_full "$a" && ! says_spool_full "$b" && [[ $(comment_key "$a" kind) == elastic ]]
}
wait_until 30 "the spool's room again in slurmctld.log, the metrics and the jobs' SystemComments" room_shown
(($(log_count "sched/pollux: the spool .* is full") == 1)) || fail "the full spool was logged more than once"
note "full spool shown and cleared in $((SECONDS - t0)) s: $(system_comment "$a")"

# A suspended elastic job: Slurm keeps its GPUs (only its cores are
# freed); sched/pollux leaves them alone and says so.
# (Retried: a job requeued for a resize meanwhile cannot be suspended.)
t0=$SECONDS
suspend_it() { runs_as_decided "$a" && scontrol suspend "$a"; }
wait_until 30 "job $a suspended" suspend_it
suspended_shown() {
  [[ $(phase "$a") == suspended ]] &&
    [[ $(json "[(j['phase'], j['has_model']) for j in s['jobs'] if j['job_id'] == $a] == [('suspended', True)] and \
               s['gpus']['suspended'] == sum(j['gpus'] for j in s['jobs'] if j['job_id'] == $a) > 0") == True ]] &&
    grep -q '^pollux_gpus{kind="suspended"} [1-9]' "$prom_file"
}
wait_until 30 "job $a suspended in its SystemComment, pollux-status --json and the metrics" suspended_shown
out=$("$status_cmd" --dir "$state_dir")
grep -E "^GPUs: |^ +$a " <<< "$out"
grep -Eq "^ +$a +[^ ]+ +[^ ]+ +suspended " <<< "$out" || fail "pollux-status has no suspended row for job $a"
grep -Eq '^GPUs: .*, [1-9][0-9]* suspended, ' <<< "$out" || fail "pollux-status counts no suspended GPUs"
scontrol resume "$a"
wait_until 30 "job $a running again after its resume" runs_as_decided "$a"
note "suspended and resumed in $((SECONDS - t0)) s: $(system_comment "$a")"
if [[ -n ${POLLUX_TEST_METRICS_PLOT:-} ]]; then
  # Something to see: a rigid job takes 8 GPUs for a while, a third elastic job arrives.
  sleep 20
  rigid=$(sbatch --parsable -N 2 --gpus-per-node=4 -o /dev/null "$here/rigid-job.sh")
  sleep 20
  submit_elastic c -N 1-4 --gpus-per-node=4 >/dev/null
  sleep 30
  scancel "$rigid"
  sleep 30
  "$POLLUX_SRC/contrib/grafana/plot-metrics" --prometheus "http://127.0.0.1:$prom_port" --out "$POLLUX_TEST_METRICS_PLOT" --minutes 3
  "$status_cmd" --dir "$state_dir"
fi
note "ok"
