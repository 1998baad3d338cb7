#!/usr/bin/env python3
"""pollux-emulate without Slurm: one or two ranks under mpirun, the real agent.

  (a) the noise scale in the agent's hint file equals the application's
      curve (a fixed batch within one epoch: the curve holds still, so the
      agent's average is exact up to float rounding; NOISE_TOLERANCE)
  (b) the agent's fitted throughput model predicts the emulated step time
      within 10% at the profiled configuration
  (c) an adaptive run stopped at a resize checkpoint (SIGUSR1, requeue by exit) and
      restarted resumes at exactly the checkpointed step and progress, and
      ends at the application's progress target
  and bad input (unknown application, bad time scale, missing traces)
  exits 2 with one line naming it.

Usage: emulate_test.py EMULATE HINT_TOOL MPIRUN TRACES
Exit codes: 0 pass, 1 fail, 77 skipped (pollux-emulate not built).
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

NOISE_TOLERANCE = 1e-6   # relative: the reported norms are exact expectations
MODEL_TOLERANCE = 0.10   # relative: fitted model vs emulated step time
WORK = []                # directories to remove at exit


def check(cond, what):
    if not cond:
        print("FAIL:", what, flush=True)
        sys.exit(1)
    print("ok:", what, flush=True)


def env_for(work, job, restart=0, **extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "POLLUX_"))}
    env.update({"SLURM_JOB_ID": str(job), "SLURM_RESTART_COUNT": str(restart),
                "POLLUX_SPOOL_DIR": os.path.join(work, "spool"),
                "POLLUX_CHECKPOINT_DIR": os.path.join(work, "ckpt-%d" % job)})
    env.update({k: str(v) for k, v in extra.items()})
    return env


def main():
    emulate, hint_tool, mpirun, traces = sys.argv[1:5]
    if not os.access(emulate, os.X_OK):
        print("pollux-emulate not built (no MPI)")
        return 77
    mpi = [mpirun, "--allow-run-as-root", "--oversubscribe", "-np", "1", emulate, "--traces", traces]
    work = tempfile.mkdtemp(prefix="pollux-emulate-")
    WORK.append(work)
    os.makedirs(os.path.join(work, "spool"))

    # Bad input: exit 2, one line naming what and where.
    for args, what in ((["--app", "nosuch", "--traces", traces], "no application 'nosuch'"),
                       (["--app", "cifar10", "--traces", traces, "--time-scale", "0"], "--time-scale"),
                       (["--app", "cifar10", "--traces", os.path.join(work, "none")], os.path.join(work, "none"))):
        r = subprocess.run([emulate] + args,  # a singleton MPI process: mpirun adds lines of its own env=env_for(work, 1), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
        check(r.returncode == 2 and what in r.stderr and len(r.stderr.strip().splitlines()) == 1,
              "%s: exit 2 naming %s (%r)" % (" ".join(args), what, r.stderr.strip()))

    # (a), (b): a first epoch at a fixed batch: cifar10 at 256 on one rank
    # (the agent pairs steps), bert at 96 on three (it compares the ranks'
    # gradients, each accumulated over 3 micro-steps of 11). M0: the
    # application's smallest validated batch.
    for np, job, app, batch, scale, m0 in ((1, 7001, "cifar10", 256, 200, 128), (3, 7003, "bert", 96, 4000, 12)):
        t0 = time.time()
        cmd = mpi[:4] + [str(np)] + mpi[5:] + ["--app", app, "--epochs", "1", "--batch", str(batch),
                                               "--time-scale", str(scale)]
        r = subprocess.run(cmd, env=env_for(work, job), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, timeout=300)
        sys.stdout.write(r.stdout)
        print("run took %.1f s" % (time.time() - t0))
        check(r.returncode == 0, "a one-epoch run on %d rank(s) exits 0" % np)
        m = re.search(r"done: steps (\d+) progress ([\d.]+)/([\d.]+)", r.stdout)
        check(m is not None and float(m.group(2)) >= float(m.group(3)), "it ends at the progress target")
        last = re.search(r"last step nodes (\d+) replicas (\d+) atomic (\d+) accum (\d+) noise_scale (\S+) "
                         r"iter_time (\S+)", r.stdout)
        check(last is not None and int(last.group(2)) == np, "it prints its last step, on %d replica(s)" % np)
        hint = subprocess.run([hint_tool, os.path.join(work, "spool", "%d.hint.yaml" % job), "--job-id", str(job)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        check(hint.returncode == 0, "the hint file is valid: " + hint.stderr.strip())
        f = dict(l.split(" ", 1) for l in hint.stdout.splitlines())
        agent_noise = m0 * float(f["grad.var"]) / float(f["grad.sqr"])
        curve = float(last.group(5))
        check(abs(agent_noise / curve - 1) <= NOISE_TOLERANCE,
              "(a) the hint's noise scale %.9g equals the curve's %.9g" % (agent_noise, curve))
        # The final hint's fit (the agent refits and writes it as it closes).
        pred = subprocess.run([hint_tool, os.path.join(work, "spool", "%d.hint.yaml" % job), "--job-id", str(job),
                               "--predict", ",".join(last.group(1, 2, 3, 4))],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        check(pred.returncode == 0, "the hint has a fitted model: " + pred.stderr.strip())
        iter_time, model = float(last.group(6)), float(pred.stdout)
        check(model > 0 and abs(model / iter_time - 1) <= MODEL_TOLERANCE,
              "(b) the fitted model's step time %.6g s within 10%% of the emulated %.6g s" % (model, iter_time))

    # (c): an adaptive 2-rank run of bert's first epoch (the agent doubles
    # its batch at step 19 or so: a fractional progress) stopped by a resize
    # at its first progress line (step 200: more than 3 s of sleeps are
    # left, so the signal always comes first), restarted.
    job = 7002
    cmd = mpi[:4] + ["2"] + mpi[5:] + ["--app", "bert", "--epochs", "1", "--time-scale", "1000", "--log-every", "200"]
    p = subprocess.Popen(cmd, env=env_for(work, job, POLLUX_REQUEUE_MODE="exit"), stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, start_new_session=True)
    out = []
    for line in p.stdout:
        out.append(line)
        sys.stdout.write("  | " + line)
        if line.startswith("step "):
            # sched/pollux's decision, then its signal (as agent/digits_test.py's request_resize)
            path = os.path.join(work, "spool", "%d.resize" % job)
            with open(path + ".tmp", "w") as fh:
                fh.write("resize 0 %d\n" % int(time.time() * 1000))
            os.rename(path + ".tmp", path)
            p.send_signal(signal.SIGUSR1)  # mpirun forwards it, as srun does
            break
    for line in p.stdout:
        out.append(line)
        sys.stdout.write("  | " + line)
    rc = p.wait(timeout=120)
    check(rc == 75, "the resized run exits 75 for its requeue (got %d)" % rc)
    ck = re.search(r"^checkpoint step (\d+) progress (\S+)$", "".join(out), re.M)
    check(ck is not None, "it checkpointed")
    r = subprocess.run(cmd, env=env_for(work, job, restart=1), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, timeout=300)
    sys.stdout.write(r.stdout)
    res = re.search(r"^resumed step (\d+) progress (\S+)$", r.stdout, re.M)
    check(res is not None and res.groups() == ck.groups(),
          "(c) the restart resumes at the checkpointed step %s, progress %s" % ck.groups())
    m = re.search(r"done: steps (\d+) progress ([\d.]+)/([\d.]+) .* restarts (\d+)", r.stdout)
    check(r.returncode == 0 and m is not None and float(m.group(2)) >= float(m.group(3)) and m.group(4) == "1",
          "(c) the restarted run ends at the progress target, one restart counted")
    hint = subprocess.run([hint_tool, os.path.join(work, "spool", "%d.hint.yaml" % job), "--job-id", str(job),
                           "--get", "restart_seconds"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    check(hint.returncode == 0 and float(hint.stdout) > 0,
          "(c) the agent measured the restart (restart_seconds %s)" % hint.stdout.strip())
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    finally:
        for d in WORK:
            shutil.rmtree(d, ignore_errors=True)
