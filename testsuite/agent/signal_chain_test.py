#!/usr/bin/env python3
"""The resize signal beside a Python program's own handler (doc/agent.md,
"Signals that are not resize requests"), through the pollux package:
a handler installed with signal.signal() after the agent exists, as PyTorch
Lightning's SLURMEnvironment does, gets every delivery that is not
sched/pollux's request (Slurm's --signal warning), at once and without a
step in between; the request reaches the agent alone.

    signal_chain_test.py LIBPOLLUX_AGENT PYTHON_PACKAGE_DIR
"""
import array
import os
import signal
import sys
import tempfile
import time

os.environ["POLLUX_AGENT_LIBRARY"] = sys.argv[1]
sys.path.insert(0, sys.argv[2])
import pollux  # noqa: E402

failures = []


def check(ok, what):
    print(("ok: " if ok else "FAILED: ") + what)
    if not ok:
        failures.append(what)


got = []


def programs_handler(signum, frame):
    got.append(signum)


def deliver():
    os.kill(os.getpid(), signal.SIGUSR1)
    time.sleep(0.05)  # Python runs its handler between bytecodes


def step(agent, grad):
    agent.micro_step_begin()
    agent.micro_step_end(grad)
    agent.synchronize(grad)
    return agent.step_end()


with tempfile.TemporaryDirectory() as spool:
    os.environ.update(SLURM_JOB_ID="4242", SLURM_RESTART_COUNT="0")
    agent = pollux.Agent(pollux.AgentOptions(init_batch=8, max_batch=8, max_atomic=8, spool_dir=spool,
                                             checkpoint_dir=os.path.join(spool, "ckpt"), requeue_exit=True,
                                             checkpoint_interval=0, verbose=0), external=False)
    grad = array.array("f", [0.5] * 8)
    step(agent, grad)
    signal.signal(signal.SIGUSR1, programs_handler)
    check(signal.getsignal(signal.SIGUSR1) is programs_handler, "signal.getsignal() names the program's handler")
    deliver()  # Slurm's warning: no decision in the spool
    check(got == [signal.SIGUSR1], "Slurm's warning reached the program's handler")
    check(not step(agent, grad), "the agent did not take the warning for a resize")
    # sched/pollux's request: its decision, then the signal; no step in between.
    with open(os.path.join(spool, "4242.resize.tmp"), "w") as f:
        f.write("resize 0 %d\n" % int(time.time() * 1000))
    os.rename(os.path.join(spool, "4242.resize.tmp"), os.path.join(spool, "4242.resize"))
    deliver()
    check(got == [signal.SIGUSR1], "the resize request did not reach the program's handler")
    check(step(agent, grad), "the agent checkpointed for the resize (exit mode: the loop is told to exit)")
    agent.close()

sys.exit(1 if failures else 0)
