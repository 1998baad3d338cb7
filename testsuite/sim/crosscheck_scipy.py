#!/usr/bin/python3
"""Cross-checks pollux-sim's application model against an independent
implementation with NumPy and SciPy (the tools the Pollux artifact's
simulator used): step/sync times of exact placements (scipy interp1d) and of
placements that need the scattered-data interpolation (scipy
LinearNDInterpolator, i.e. a Qhull Delaunay triangulation), and the
gradient statistics (numpy interp).

usage: crosscheck_scipy.py SIM_PROBE TRACES_DIR
Exit 0 when every answer agrees to 1e-9 relative, 1 otherwise, 77 (skip)
when NumPy or SciPy is missing.
"""
import csv
import glob
import os
import random
import subprocess
import sys

try:
    import numpy as np
    from scipy.interpolate import LinearNDInterpolator, interp1d
except ImportError:
    print("SKIP: numpy/scipy not installed (python3-scipy)")
    sys.exit(77)

APPS = ["bert", "cifar10", "deepspeech2", "imagenet", "ncf", "yolov3"]
MAX_LOCAL = {"yolov3": 8}


def load(traces, app):
    d = os.path.join(traces, app)
    rows = list(csv.DictReader(open(os.path.join(d, "placements.csv"))))
    placements = {}
    for r in rows:
        placements.setdefault(r["placement"], []).append(
            (int(r["local_bsz"]), float(r["step_time"]), float(r["sync_time"])))
    groups = {}
    for r in rows:
        p = r["placement"]
        key = (len(p), sum(map(int, p)), int(r["local_bsz"]))
        groups.setdefault(key, []).append((float(r["step_time"]), float(r["sync_time"])))
    pts, vals = [], []
    for key in sorted(groups):
        g = groups[key]
        pts.append(key)
        vals.append((sum(s for s, _ in g) / len(g), sum(y for _, y in g) / len(g)))
    scal = os.path.join(d, "scalability.csv")
    for r in csv.DictReader(open(scal)):
        pts.append((int(r["num_nodes"]), int(r["num_replicas"]), int(r["local_bsz"])))
        vals.append((float(r["step_time"]), float(r["sync_time"])))
    nd = LinearNDInterpolator(np.array(pts, dtype=float), np.array(vals))
    validation = {}
    for f in glob.glob(os.path.join(d, "validation-*.csv")):
        b = int(f.rsplit("-", 1)[1].split(".")[0])
        validation[b] = list(csv.DictReader(open(f)))
    return placements, nd, dict(sorted(validation.items()))


def canonical(counts):
    p = tuple(c for c in counts if c)
    return min(p[i:] + p[:i] for i in range(len(p)))


def expected_step(placements, nd, counts, bsz):
    p = canonical(counts)
    pid = "".join(map(str, p))
    if pid in placements:
        rows = sorted(placements[pid])
        xs = [r[0] for r in rows]
        if xs[0] <= bsz <= xs[-1]:
            f = interp1d(xs, [[r[1], r[2]] for r in rows], axis=0)
            return tuple(f(bsz)), 0
    v = nd([min(len(p), 16), sum(p), bsz])[0]
    return (v[0], v[1]), 1


def main():
    probe, traces = sys.argv[1], sys.argv[2]
    rng = random.Random(7)
    queries, expected = [], []
    for app in APPS:
        placements, nd, validation = load(traces, app)
        lo = min(b for rows in placements.values() for b, _, _ in rows)
        hi = MAX_LOCAL.get(app, max(b for rows in placements.values() for b, _, _ in rows))
        for _ in range(150):
            nodes = rng.choice([1, 2, 3, 4, 5, 6, 8, 10, 12, 16])
            counts = [rng.randint(1, 4) for _ in range(nodes)]
            if nodes >= 5 and rng.random() < 0.5:
                counts = [4] * nodes
            bsz = rng.randint(lo, hi)
            (step, sync), src = expected_step(placements, nd, counts, bsz)
            if not np.isfinite(step):
                continue  # outside the measured hull: pollux-sim extrapolates, SciPy has no value
            queries.append("step %s %d %s" % (app, bsz, " ".join(map(str, counts))))
            expected.append((step, sync, src))
        batches = list(validation)
        for _ in range(40):
            epoch = rng.randrange(len(next(iter(validation.values()))))
            batch = rng.uniform(batches[0], batches[-1])
            sqr = np.interp(batch, batches, [float(validation[b][epoch]["grad_sqr"]) for b in batches])
            var = np.interp(batch, batches, [float(validation[b][epoch]["grad_var"]) for b in batches])
            queries.append("grad %s %.17g %d" % (app, batch, epoch))
            expected.append((sqr, var, None))
    out = subprocess.run([probe, traces], input="\n".join(queries) + "\n", capture_output=True,
                         text=True, check=True).stdout.split("\n")
    bad = 0
    counts = {0: 0, 1: 0}
    for q, e, line in zip(queries, expected, out):
        got = [float(x) for x in line.split()[:2]]
        if e[2] is not None:
            counts[e[2]] += 1
            if int(line.split()[2]) != e[2]:
                print("source differs:", q, "->", line, "expected", e[2])
                bad += 1
        for g, x in zip(got, e[:2]):
            if abs(g - x) > 1e-9 * max(1.0, abs(x)):
                print("MISMATCH:", q, "->", got, "expected", e[:2])
                bad += 1
                break
    print("%d queries (%d exact placements, %d scattered), %d mismatches"
          % (len(queries), counts[0], counts[1], bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
