#!/bin/sh
# A heterogeneous cluster (sim/clusters/t4-v100-a100.csv): the first
# 30 jobs of workload-1 all complete under the type-aware Pollux and under
# today's type-agnostic Pollux, and the type-aware one's average JCT is
# lower; told no speed (the speed column '-', the true speeds the same),
# the type-aware one explores the types and comes within 5% of its average
# JCT when told (issue 34's goal); a bad cluster description is a one-line
# input error (status 2).
#   hetero.sh POLLUX_SIM TRACES_ROOT CLUSTER_CSV
set -eu
sim=$1 traces=$2 cluster=$3 tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
head -n 31 "$traces/workloads/workload-1.csv" >"$tmp/w30.csv"
awk -F, 'BEGIN { OFS = "," } NR > 1 { $3 = "-" } { print }' "$cluster" >"$tmp/untold.csv"
for mode in aware agnostic untold; do
  flag=$([ $mode = agnostic ] && echo --type-agnostic || true)
  c=$([ $mode = untold ] && echo "$tmp/untold.csv" || echo "$cluster")
  "$sim" --policy pollux --traces "$traces" --gpu-types "$c" $flag --json "$tmp/$mode.json" "$tmp/w30.csv"
done
/usr/bin/python3 - "$tmp/aware.json" "$tmp/agnostic.json" "$tmp/untold.json" <<'PY'
import json, sys
aware, agnostic, untold = (json.load(open(p))["workloads"]["w30"] for p in sys.argv[1:4])
for w in (aware, agnostic, untold):
    assert len(w["jcts"]) == 30 and all(v > 0 for v in w["jcts"].values()), w["jcts"]
print("average JCT: type-aware %.1f s (told no speed: %.1f s), type-agnostic %.1f s"
      % (aware["avg_jct"], untold["avg_jct"], agnostic["avg_jct"]))
assert aware["avg_jct"] < agnostic["avg_jct"]
assert untold["avg_jct"] <= 1.05 * aware["avg_jct"], (untold["avg_jct"], aware["avg_jct"])
PY
printf 'type,nodes,speed\nt4,2,0\n' >"$tmp/bad.csv"
set +e
"$sim" --policy pollux --traces "$traces" --gpu-types "$tmp/bad.csv" "$tmp/w30.csv" 2>"$tmp/err"
rc=$?
set -e
cat "$tmp/err"
[ "$rc" -eq 2 ]
grep -q 'bad.csv:2: column speed' "$tmp/err"
