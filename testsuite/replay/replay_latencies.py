#!/usr/bin/env python3
"""replay_latencies.py: what a replay's real time adds to each job, read from
its own logs, in simulated seconds (real x the replay's time scale): the
inputs pollux-sim takes to predict the replay (doc/simulator.md, "pollux-sim
configured as a replay").

  replay_latencies.py DIR [DIR...]     (a pollux-replay --dir, after the run)

Per job, from DIR/log/slurmctld.log (millisecond stamps) and each job's
output in DIR/jobs (the batch script's `start ... time=` line, pollux-emulate's
`run R first step at T` and `run R last step at T` lines):

  start    the round that gave the job its GPUs (sched/pollux's `release`;
           sched/backfill: Slurm's `Started`/`Allocate`) to its first step
  restart  sched/pollux's `signal` of a resize (the round that decided it)
           to the first step of the next run
  end      the job's last step to its end in Slurm (`_job_complete`): it
           counts in the JCT, and its GPUs are free only then

and the means over the jobs of all DIRs (the figures pollux-sim's
--start-delay, --restart-delay and --end-delay take). Exit 1 when a DIR has
no such lines (a replay from before pollux-emulate printed them).
"""
import datetime
import glob
import json
import os
import re
import sys

CTLD = re.compile(r"^\[(\S+)\] (.*)$")
START = re.compile(r"^start restart=(\d+) .* time=(\S+)")
FIRST = re.compile(r"^pollux-emulate: run (\d+) first step at (\S+)")
LAST = re.compile(r"^pollux-emulate: run (\d+) last step at (\S+)")
AGENT = re.compile(r"^pollux-agent\[0\]: job (\d+) \(restart")


def ctld_events(path):
    """JobId -> list of (kind, unix time)."""
    ev = {}
    with open(path, errors="replace") as f:
        for line in f:
            m = CTLD.match(line)
            if not m:
                continue
            t = datetime.datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S.%f").timestamp()  # local time, as logged
            text = m.group(2)
            j = re.search(r"JobId=(\d+)", text)
            if not j:
                continue
            jid = int(j.group(1))
            for kind, rx in (("submit", r"_slurm_rpc_submit_batch_job"), ("release", r"sched/pollux: JobId=\d+: release"),
                             ("signal", r"sched/pollux: JobId=\d+: signal"),
                             ("requeue", r"sched/pollux: JobId=\d+: requeue"),
                             ("started", r"(Started|sched: Allocate) JobId="), ("end", r"_job_complete: JobId=\d+ done")):
                if re.search(rx, text):
                    ev.setdefault(jid, []).append((kind, t))
    return ev


def job_runs(path):
    """(job id, {restart: first step}, {restart: last step})."""
    jid, first, last = None, {}, {}
    with open(path, errors="replace") as f:
        for line in f:
            m = AGENT.match(line)
            if m:
                jid = int(m.group(1))
            m = FIRST.match(line)
            if m:
                first[int(m.group(1))] = float(m.group(2))
            m = LAST.match(line)
            if m:
                last[int(m.group(1))] = float(m.group(2))
    return jid, first, last


def analyse(d):
    with open(os.path.join(d, "results", "replay.json")) as f:
        rep = json.load(f)
    scale = rep["config"]["time_scale"]
    ev = ctld_events(os.path.join(d, "log", "slurmctld.log"))
    rows = []
    for out in sorted(glob.glob(os.path.join(d, "jobs", "*.out"))):
        name = os.path.splitext(os.path.basename(out))[0]
        jid, first, last = job_runs(out)
        if jid is None or not first or not last:
            continue
        e = ev.get(jid, [])
        times = lambda kind: [t for k, t in e if k == kind]
        gives = times("release") or times("started")
        row = {"job": name, "id": jid}
        if gives and 0 in first:
            row["start"] = (first[0] - gives[0]) * scale
        restarts = []
        for k, sig in enumerate(times("signal")):
            if k + 1 in first:
                restarts.append((first[k + 1] - sig) * scale)
        row["restarts"] = restarts
        ends = times("end")
        if ends:
            row["end"] = (ends[-1] - last[max(last)]) * scale
        rows.append(row)
    return scale, rows


def mean(v):
    return sum(v) / len(v) if v else float("nan")


def main():
    if len(sys.argv) < 2:
        print("usage: replay_latencies.py DIR [DIR...] (pollux-replay --dir, after the run)", file=sys.stderr)
        return 2
    allr = []
    for d in sys.argv[1:]:
        scale, rows = analyse(d)
        if not rows:
            print("%s: no job printed its first and last steps (pollux-emulate from before they were printed?)" % d)
            return 1
        print("%s (time scale %g; simulated seconds)" % (d, scale))
        print("  %-12s %7s %18s %7s" % ("job", "start", "restart(s)", "end"))
        for r in rows:
            print("  %-12s %7s %18s %7s" % (r["job"], "%.1f" % r["start"] if "start" in r else "-",
                                            " ".join("%.1f" % x for x in r["restarts"]) or "-",
                                            "%.1f" % r["end"] if "end" in r else "-"))
        allr += rows
    starts = [r["start"] for r in allr if "start" in r]
    restarts = [x for r in allr for x in r["restarts"]]
    ends = [r["end"] for r in allr if "end" in r]
    print("mean over %d jobs: start %.1f s (%d), restart %.1f s (%d), end %.1f s (%d)" % (
        len(allr), mean(starts), len(starts), mean(restarts), len(restarts), mean(ends), len(ends)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
