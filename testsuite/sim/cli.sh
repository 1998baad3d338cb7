#!/bin/sh
# Bad input to pollux-sim: exit status 2 and one line on stderr that says
# what is wrong and where (file and line).
#   cli.sh POLLUX_SIM TRACES_ROOT
set -u
sim=$1
traces=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# expect STATUS TEXT COMMAND...: COMMAND exits STATUS and its one stderr line contains TEXT.
expect() {
  want=$1 text=$2
  shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  if [ "$rc" -ne "$want" ] || ! grep -qF -- "$text" "$tmp/err" || [ "$(wc -l <"$tmp/err")" -ne 1 ]; then
    echo "FAIL: $* -> exit $rc (want $want, stderr containing '$text'):"
    cat "$tmp/err"
    fail=1
  else
    echo "ok: exit $rc: $(cat "$tmp/err")"
  fi
}

head='name,time,application,num_replicas,batch_size'
printf '%s\na,0,cifar10,1,128\nb,5,cifar10,1,128\nc,9,cifar10,1\n' "$head" >"$tmp/short-row.csv"
printf '%s\na,0,cifar10,1,128\nb,soon,cifar10,1,128\n' "$head" >"$tmp/not-a-number.csv"
printf '%s\na,0,cifar10,1,128\nb,5,resnet9000,1,128\n' "$head" >"$tmp/unknown-app.csv"
printf 'name,time,app\na,0,cifar10\n' >"$tmp/bad-header.csv"
printf '%s\na,0,cifar10,1,128\n' "$head" >"$tmp/good.csv"

expect 2 "short-row.csv:4: expected 5 fields, found 4" "$sim" --policy tiresias --traces "$traces" "$tmp/short-row.csv"
expect 2 "not-a-number.csv:3: column time: 'soon' is not a finite number" \
  "$sim" --policy pollux --traces "$traces" "$tmp/not-a-number.csv"
expect 2 "unknown-app.csv:3: unknown application 'resnet9000'" \
  "$sim" --policy optimus --traces "$traces" "$tmp/unknown-app.csv"
expect 2 "bad-header.csv:1: header has no column 'application'" \
  "$sim" --policy pollux --traces "$traces" "$tmp/bad-header.csv"
expect 2 "$tmp/missing.csv: cannot open" "$sim" --policy pollux --traces "$traces" "$tmp/missing.csv"
expect 2 "--frobnicate" "$sim" --policy pollux --frobnicate "$tmp/good.csv"
expect 2 "--policy: fifo not in" "$sim" --policy fifo "$tmp/good.csv"
expect 2 "--policy is required" "$sim" "$tmp/good.csv"
expect 2 "--interference" "$sim" --policy pollux --interference 1.5 "$tmp/good.csv"
expect 2 "--nodes" "$sim" --policy pollux --nodes 0 "$tmp/good.csv"
# --fairness-p takes exactly libgoodput's range, [-50, 50].
expect 2 "--fairness-p: value -60 not in [-50, 50]" "$sim" --policy pollux --fairness-p -60 "$tmp/good.csv"
expect 2 "--fairness-p: value 50.5 not in [-50, 50]" "$sim" --policy pollux --fairness-p 50.5 "$tmp/good.csv"
expect 2 "--fairness-p: value nan not in [-50, 50]" "$sim" --policy pollux --fairness-p nan "$tmp/good.csv"
for p in -50 50; do
  if ! "$sim" --policy pollux --traces "$traces" --fairness-p $p "$tmp/good.csv" >"$tmp/out" 2>"$tmp/err"; then
    echo "FAIL: --fairness-p $p (in range) was refused:"
    cat "$tmp/err"
    fail=1
  else
    echo "ok: --fairness-p $p accepted"
  fi
done
# A seed is a non-negative integer (it used to wrap -3 to 2^64 - 3).
expect 2 "--seed: value -3 is not an integer in [0, 18446744073709551615]" \
  "$sim" --policy pollux --seed -3 "$tmp/good.csv"
expect 2 "--seed: value 18446744073709551616 is not an integer" \
  "$sim" --policy pollux --seed 18446744073709551616 "$tmp/good.csv"
expect 2 "--seed: value 0x10 is not an integer" "$sim" --policy pollux --seed 0x10 "$tmp/good.csv"
expect 2 "traces directory not found" "$sim" --policy pollux --traces "$tmp/nowhere" "$tmp/good.csv"
# A trace number out of range is an input error naming the file and line
# (3251000000 used to overflow an int: undefined behaviour, then a year of
# simulated time and exit 1).
mkdir -p "$tmp/traces/toy"
printf 'progress,iteration,metric,grad_sqr,grad_var\n1,1,0,1,1\n' >"$tmp/traces/toy/validation-8.csv"
printf 'placement,local_bsz,step_time,sync_time\n1,4,0.5,0.1\n1,3251000000,0.5,0.1\n' >"$tmp/traces/toy/placements.csv"
printf '%s\na,0,toy,1,8\n' "$head" >"$tmp/toy.csv"
expect 2 "$tmp/traces/toy/placements.csv:3: local_bsz 3251000000 is out of range [1, 1048576]" \
  "$sim" --policy pollux --traces "$tmp/traces" "$tmp/toy.csv"

# Unwritable --json and --plot destinations are refused before the run
# (they used to fail with exit 1 after the whole simulation).
mkdir "$tmp/a-dir"
expect 2 "--json $tmp/no-dir/r.json: directory $tmp/no-dir does not exist" \
  "$sim" --policy pollux --traces "$traces" --json "$tmp/no-dir/r.json" "$tmp/good.csv"
expect 2 "--json $tmp/good.csv/r.json: $tmp/good.csv is not a directory" \
  "$sim" --policy pollux --traces "$traces" --json "$tmp/good.csv/r.json" "$tmp/good.csv"
expect 2 "--json $tmp/a-dir: $tmp/a-dir is a directory" \
  "$sim" --policy pollux --traces "$traces" --json "$tmp/a-dir" "$tmp/good.csv"
expect 2 "--plot $tmp/good.csv: not a directory" \
  "$sim" --policy pollux --traces "$traces" --plot "$tmp/good.csv" "$tmp/good.csv"
expect 2 "--plot $tmp/no-dir/plots: cannot create it: directory $tmp/no-dir does not exist" \
  "$sim" --policy pollux --traces "$traces" --plot "$tmp/no-dir/plots" "$tmp/good.csv"
if [ "$(id -u)" -ne 0 ]; then  # root may write anywhere
  mkdir "$tmp/read-only"
  chmod 555 "$tmp/read-only"
  expect 2 "--json $tmp/read-only/r.json: cannot write in directory $tmp/read-only: Permission denied" \
    "$sim" --policy pollux --traces "$traces" --json "$tmp/read-only/r.json" "$tmp/good.csv"
  expect 2 "--plot $tmp/read-only: cannot write in directory $tmp/read-only: Permission denied" \
    "$sim" --policy pollux --traces "$traces" --plot "$tmp/read-only" "$tmp/good.csv"
  expect 2 "--plot $tmp/read-only/plots: cannot create it: cannot write in directory $tmp/read-only" \
    "$sim" --policy pollux --traces "$traces" --plot "$tmp/read-only/plots" "$tmp/good.csv"
  chmod 755 "$tmp/read-only"
fi
# Nothing was left behind by the checks.
if [ -n "$(ls -A "$tmp/a-dir")" ]; then
  echo "FAIL: a probe file was left in $tmp/a-dir"
  fail=1
fi
# A writable destination still works, and the check leaves no probe file.
if ! "$sim" --policy tiresias --traces "$traces" --json "$tmp/a-dir/r.json" "$tmp/good.csv" >/dev/null 2>"$tmp/err" ||
  [ "$(ls -A "$tmp/a-dir")" != r.json ]; then
  echo "FAIL: --json into a writable directory:"
  cat "$tmp/err"
  ls -A "$tmp/a-dir"
  fail=1
else
  echo "ok: --json into a writable directory"
fi

# A corrupted trace file names its line.
mkdir -p "$tmp/traces"
cp -r "$traces/traces/cifar10" "$tmp/traces/"
sed -i '5s/.*/2,64,fast,0.01/' "$tmp/traces/cifar10/placements.csv"
expect 2 "cifar10/placements.csv:5: column step_time: 'fast' is not a finite number" \
  "$sim" --policy pollux --traces "$tmp/traces" "$tmp/good.csv"

# A Tiresias or backfill job larger than the cluster can never run.
printf '%s\na,0,cifar10,8,1024\n' "$head" >"$tmp/too-big.csv"
for p in tiresias backfill; do
  expect 2 "too-big.csv:2: job a asks for 8 GPUs; the cluster has 4" \
    "$sim" --policy $p --traces "$traces" --nodes 1 "$tmp/too-big.csv"
done
# Backfill's time limits are at least the runtime alone.
expect 2 "--time-limit-factor: value 0.5 not in [1, 1000]" \
  "$sim" --policy backfill --time-limit-factor 0.5 "$tmp/good.csv"

# Auto-scaling's options (--autoscale): a mode of the list, ranges, a band,
# and goodput only under a policy told the jobs' speedups.
expect 2 "--autoscale: elastic not in" "$sim" --policy pollux --autoscale elastic "$tmp/good.csv"
expect 2 "--boot-delay: value -5 not in [0, 86400]" "$sim" --policy pollux --autoscale queue --boot-delay -5 "$tmp/good.csv"
expect 2 "--min-utility must be below --max-utility" \
  "$sim" --policy pollux --autoscale goodput --min-utility 0.7 --max-utility 0.6 "$tmp/good.csv"
expect 2 "--autoscale goodput is sched/pollux's: only with --policy pollux" \
  "$sim" --policy tiresias --autoscale goodput "$tmp/good.csv"
# A search (--study APP:N[:K]): the application, N and K named when wrong.
expect 2 "--study resnet9000:8: unknown application 'resnet9000'" \
  "$sim" --policy pollux --traces "$traces" --study resnet9000:8
expect 2 "--study cifar10:0: N (trials) '0' is not an integer in [1, 999999]" \
  "$sim" --policy pollux --traces "$traces" --study cifar10:0
expect 2 "--study cifar10:-3: N (trials) '-3' is not an integer" \
  "$sim" --policy pollux --traces "$traces" --study cifar10:-3
expect 2 "--study cifar10: expected APP:N[:K]" "$sim" --policy pollux --traces "$traces" --study cifar10
expect 2 "--study :8: no application before ':'" "$sim" --policy pollux --traces "$traces" --study :8
expect 2 "--study cifar10:8:9: K (trials in flight) 9 is more than N (trials) 8" \
  "$sim" --policy pollux --traces "$traces" --study cifar10:8:9
expect 2 "--study cifar10:8:x: K (trials in flight) 'x' is not an integer" \
  "$sim" --policy pollux --traces "$traces" --study cifar10:8:x
expect 2 "--study runs a search instead of workloads" \
  "$sim" --policy pollux --traces "$traces" --study cifar10:8 "$tmp/good.csv"
expect 2 "--reduction-factor: Value 1 not in range 2 to 100" \
  "$sim" --policy pollux --traces "$traces" --study cifar10:8 --reduction-factor 1
expect 2 "--study-gpus is an option of --study" "$sim" --policy backfill --study-gpus 2 "$tmp/good.csv"
expect 2 "no workload given" "$sim" --policy pollux --traces "$traces"
# A site's history (--sacct): a bad row names the file and line; a job of no
# known application only under the fixed-size policies; --time-scale only with it.
sh='JobID|JobName|Comment|Submit|Start|End|State|Timelimit|NNodes|ReqTRES|AllocTRES'
t='2026-11-29T18:00:00'
printf '%s\n1|a||%s|%s|%s|COMPLETED|10:00|1|gres/gpu=2|gres/gpu=2\n2|b||%s|%s|%s|COMPLETED|10:00|0|gres/gpu=2|gres/gpu=2\n' \
  "$sh" $t $t $t $t $t $t >"$tmp/zero-nodes.sacct"
expect 2 "zero-nodes.sacct:3: impossible size: NNodes '0'" "$sim" --policy backfill --sacct "$tmp/zero-nodes.sacct"
head -n 2 "$tmp/zero-nodes.sacct" >"$tmp/recorded.sacct"
expect 2 "recorded.sacct:2: job 1 has no known application" "$sim" --policy pollux --sacct "$tmp/recorded.sacct"
expect 2 "--time-scale is an option of --sacct" "$sim" --policy backfill --time-scale 10 "$tmp/good.csv"
# --epochs beyond an application's training: the job's line; not with --study.
expect 2 "good.csv:2: job a: --epochs 101: cifar10 trains 100 epochs" \
  "$sim" --policy pollux --traces "$traces" --epochs 101 "$tmp/good.csv"
expect 2 "--epochs is for workload files" "$sim" --policy pollux --traces "$traces" --epochs 2 --study cifar10:4
# The policy list is libgoodput's table: --list-policies has one line for
# each --policy choice --help shows, with its five fields (the last, what
# the policy does, not empty).
"$sim" --list-policies >"$tmp/list" && "$sim" --help >"$tmp/help"
choices=$(sed -n 's/.*--policy TEXT:{\([^}]*\)}.*/\1/p' "$tmp/help")
if [ -z "$choices" ] || [ "$(cut -f1 "$tmp/list" | paste -sd, -)" != "$choices" ] ||
  awk -F '\t' 'NF != 5 || $5 == "" { bad = 1 } END { exit !bad }' "$tmp/list"; then
  echo "FAIL: --list-policies does not list --policy's choices {$choices}, 5 fields each:"
  cat "$tmp/list"
  fail=1
else
  echo "ok: --list-policies: $choices, 5 fields each"
fi
exit $fail
