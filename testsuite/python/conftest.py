"""Shared by the pollux.torch tests: run worker.py as N local ranks."""
import json
import os
import socket
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "POLLUX_"))}
    env["POLLUX_AGENT_LIBRARY"] = os.environ.get("POLLUX_AGENT_LIBRARY", "")
    env["POLLUX_DIGITS"] = os.environ.get("POLLUX_DIGITS", "")  # configure's data file (worker.py)
    env["POLLUX_VERBOSE"] = "0"
    env["OMP_NUM_THREADS"] = "1"
    env.update(extra)
    return env


@pytest.fixture
def run_ranks(tmp_path):
    """run_ranks(n, scenario, *args, env=...) -> list of each rank's JSON."""
    counter = [0]

    def run(n, scenario, *args, env=None, timeout=240):
        counter[0] += 1
        out = str(tmp_path / f"out{counter[0]}")
        port = str(free_port())
        base = clean_env(**{"POLLUX_CHECKPOINT_DIR": str(tmp_path / "ckpt"), "MASTER_ADDR": "127.0.0.1",
                            "MASTER_PORT": port, "WORLD_SIZE": str(n), **(env or {})})
        procs = []
        for r in range(n):
            e = dict(base, RANK=str(r), LOCAL_RANK=str(r))
            procs.append(subprocess.Popen([sys.executable, os.path.join(HERE, "worker.py"), scenario, out,
                                           *map(str, args)], env=e, stdout=subprocess.PIPE,
                                          stderr=subprocess.STDOUT, text=True))
        logs = []
        for p in procs:
            try:
                logs.append(p.communicate(timeout=timeout)[0])
            except subprocess.TimeoutExpired:
                for q in procs:
                    q.kill()
                raise
        for r, (p, log) in enumerate(zip(procs, logs)):
            assert p.returncode == 0, f"rank {r} of {scenario} exited {p.returncode}:\n{log}"
        return [json.load(open(f"{out}.{r}")) for r in range(n) if os.path.exists(f"{out}.{r}")]

    return run
