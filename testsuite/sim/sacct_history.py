#!/usr/bin/env python3
"""sim.sacct: a site's history read back (pollux-sim --sacct). The data,
testsuite/sim/replay-backfill.sacct, is the accounting (slurmdbd, sacct
--parsable2) of a replay of testsuite/replay/ci-workload.csv on the local
cluster under sched/backfill at time scale 10 (doc/testing.md says how it
was captured). pollux-sim --policy backfill on the same cluster (4 x 2
GPUs, bf_interval 1 s = 10 simulated) reproduces the recorded average JCT
(End - Submit, computed here from the file) within 10%: (a) with the jobs'
application and batch read from their Comment (the application's model),
(b) with the Comment and JobName blanked (every job at its recorded GPUs
and duration). Each job's time limit is its recorded Timelimit.

  sacct_history.py POLLUX_SIM TRACES_ROOT DATA
"""
import datetime
import json
import os
import subprocess
import sys
import tempfile

SCALE = 10


def seconds(text):
    return datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S").timestamp()


def limit_seconds(text):  # [D-]HH:MM:SS or MM:SS
    days, _, hms = text.rpartition("-")
    parts = [int(p) for p in hms.split(":")]
    while len(parts) < 3:
        parts.insert(0, 0)
    return (int(days or 0) * 86400 + parts[0] * 3600 + parts[1] * 60 + parts[2])


def main():
    sim, traces, data = sys.argv[1:4]
    with open(data) as f:
        lines = f.read().splitlines()
    head = lines[0].split("|")
    rows = [dict(zip(head, l.split("|"))) for l in lines[1:] if l]
    jobs = [r for r in rows if "." not in r["JobID"]]
    assert len(jobs) == 12, len(jobs)
    recorded = sum(seconds(r["End"]) - seconds(r["Submit"]) for r in jobs) * SCALE / len(jobs)
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        plain = os.path.join(tmp, "plain.sacct")  # no application named anywhere
        with open(plain, "w") as f:
            f.write(lines[0] + "\n")
            for r in rows:
                f.write("|".join("job" if h == "JobName" else "" if h == "Comment" else r[h] for h in head) + "\n")
        for path, summary in ((data, "12 jobs, 12 on their application's model, 0 at their recorded"),
                              (plain, "12 jobs, 0 on their application's model, 12 at their recorded")):
            out = os.path.join(tmp, "out.json")
            cmd = [sim, "--policy", "backfill", "--traces", traces, "--nodes", "4", "--gpus-per-node", "2",
                   "--interval", "10", "--sacct", path, "--time-scale", str(SCALE), "--json", out]
            r = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
            print(r.stdout, end="")
            assert r.returncode == 0, r.returncode
            assert summary in r.stdout, r.stdout
            w = next(iter(json.load(open(out))["workloads"].values()))
            limits = {j["JobID"]: limit_seconds(j["Timelimit"]) * SCALE for j in jobs}
            assert w["time_limits"] == limits, (w["time_limits"], limits)
            err = w["avg_jct"] / recorded - 1
            print("%s: simulated average JCT %.1f s, recorded %.1f s: %+.1f%%"
                  % (os.path.basename(path), w["avg_jct"], recorded, 100 * err))
            ok = ok and abs(err) <= 0.10
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
