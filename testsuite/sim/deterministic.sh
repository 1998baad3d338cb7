#!/bin/sh
# Same seed and inputs, same results: two Pollux runs of two short
# workloads, one on one thread and one on two, write identical JSON.
#   deterministic.sh POLLUX_SIM TRACES_ROOT
set -eu
sim=$1
traces=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
head -n 41 "$traces/workloads/workload-2.csv" >"$tmp/w2.csv"
head -n 41 "$traces/workloads/workload-5.csv" >"$tmp/w5.csv"
"$sim" --policy pollux --seed 7 --jobs 1 --json "$tmp/a.json" "$tmp/w2.csv" "$tmp/w5.csv" >/dev/null
"$sim" --policy pollux --seed 7 --jobs 2 --json "$tmp/b.json" "$tmp/w2.csv" "$tmp/w5.csv" >/dev/null
cmp "$tmp/a.json" "$tmp/b.json"
grep -q '"jcts": {"cifar10-0": ' "$tmp/a.json"
echo "identical results for seed 7 on 1 and 2 threads"
