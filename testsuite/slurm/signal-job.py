#!/usr/bin/python3
"""An integration test's elastic job with a SIGUSR1 handler of its own, as
PyTorch Lightning's auto-requeue installs: one process, the real agent
(pollux over ctypes, buffer mode), a few steps a second. The handler,
installed after `import pollux`, prints every delivery it gets ("warning");
once the file POLLUX_TEST_REQUEUE_FLAG exists it also requeues the job
itself, as Lightning does on Slurm's --signal warning."""
import array
import os
import signal
import subprocess
import sys
import time

import pollux

run = int(os.environ.get("SLURM_RESTART_COUNT", "0"))


def warned(signum, frame):
    print(f"warning {signum} in the program's handler, run {run}, {time.time():.3f}", flush=True)
    if os.path.exists(os.environ.get("POLLUX_TEST_REQUEUE_FLAG", "/nonexistent")):
        subprocess.run(["scontrol", "requeue", os.environ["SLURM_JOB_ID"]], check=False)


signal.signal(signal.SIGUSR1, warned)
agent = pollux.Agent(pollux.AgentOptions(init_batch=8, max_batch=64, max_atomic=64, checkpoint_interval=0,
                                         spool_dir=os.environ["POLLUX_TEST_SPOOL"], verbose=1), external=False)


def save(d, rank, replicas, step):
    with open(os.path.join(d, "model"), "w") as f:
        f.write(str(step))


agent.on_checkpoint(save)
agent.on_restore(lambda d, rank, replicas, step: None)
resumed = agent.restore()
print(f"start run {run} resumed={resumed} step={agent.step}", flush=True)
grad = array.array("f", [0.1] * 16)
while True:
    for _ in range(agent.accum_steps + 1):
        agent.micro_step_begin()
        time.sleep(0.05)
        agent.micro_step_end(grad)
    agent.synchronize(grad)
    if agent.step_end():
        sys.exit(agent.requeue_exit_code)
