#!/bin/sh
# The first 30 jobs of workload-1 run to completion under POLICY (backfill:
# none restarted, each with a time limit), on the default traces (the
# source tree's copy when run from the build tree).
#   short_workload.sh POLLUX_SIM TRACES_ROOT POLICY
set -eu
sim=$1
traces=$2
policy=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
head -n 31 "$traces/workloads/workload-1.csv" >"$tmp/workload-1-30.csv"
"$sim" --policy "$policy" --json "$tmp/out.json" "$tmp/workload-1-30.csv" | tee "$tmp/table"
grep -q '^workload-1-30 *30 ' "$tmp/table"
grep -q '^mean of average JCTs: ' "$tmp/table"
/usr/bin/python3 - "$tmp/out.json" "$policy" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
w = r["workloads"]["workload-1-30"]
jcts = w["jcts"]
assert r["policy"] == sys.argv[2], r["policy"]
assert len(jcts) == 30, len(jcts)
assert all(v > 0 for v in jcts.values()), jcts
assert abs(w["avg_jct"] - sum(jcts.values()) / 30) < 1e-6 * w["avg_jct"]
assert abs(r["mean_avg_jct"] - w["avg_jct"]) < 1e-9 * w["avg_jct"]
assert w["p99_jct"] <= max(jcts.values()) and w["makespan"] > 0
assert set(w["restarts"]) == set(jcts) and set(w["applications"]) == set(jcts)
assert abs(w["restarts_per_job"] - sum(w["restarts"].values()) / 30) < 1e-9 + 1e-9 * w["restarts_per_job"]
assert all(a == n.rsplit("-", 1)[0] for n, a in w["applications"].items()), w["applications"]
if sys.argv[2] == "backfill":  # rigid: never restarted; Slurm-like limits in whole minutes
    assert not any(w["restarts"].values()), w["restarts"]
    limits = w["time_limits"]
    assert set(limits) == set(jcts) and all(v >= 900 and v % 60 == 0 for v in limits.values()), limits
print("all 30 jobs completed under", sys.argv[2], "- average JCT", round(w["avg_jct"], 1), "s")
PY
