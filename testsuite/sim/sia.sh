#!/bin/sh
# The Sia-like policy on a heterogeneous cluster without Sia's artifact
# (sim/clusters/t4-v100-a100.csv, datasheet speeds): the first 30
# jobs of workload-1 all complete (every round's allocation passes
# pollux-sim's constraint check: one type per job, capacities). Skipped
# (77) when pollux-sim was built without GLPK, a failure then under
# POLLUX_TESTS_NO_SKIP=1.
#   sia.sh POLLUX_SIM TRACES_ROOT CLUSTER_CSV
set -eu
sim=$1 traces=$2 cluster=$3 tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
head -n 31 "$traces/workloads/workload-1.csv" >"$tmp/w30.csv"
set +e
"$sim" --policy sia --traces "$traces" --gpu-types "$cluster" --json "$tmp/sia.json" "$tmp/w30.csv" 2>"$tmp/err"
rc=$?
set -e
if [ "$rc" -eq 2 ] && grep -q 'without GLPK' "$tmp/err"; then
  cat "$tmp/err"
  # CI installs libglpk-dev (contrib/install-deps): there the skip is a failure.
  [ "${POLLUX_TESTS_NO_SKIP:-0}" = 1 ] && exit 1
  exit 77
fi
[ "$rc" -eq 0 ] || { cat "$tmp/err"; exit 1; }
/usr/bin/python3 - "$tmp/sia.json" <<'PY'
import json, sys
w = json.load(open(sys.argv[1]))["workloads"]["w30"]
assert len(w["jcts"]) == 30 and all(v > 0 for v in w["jcts"].values()), w["jcts"]
print("sia: average JCT %.1f s" % w["avg_jct"])
PY
