"""Shared by the pollux.torch tests: run worker.py as N local ranks."""
import json
import os
import socket
import shutil
import tempfile

import pytest

from forkserver import ForkServer

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


# The processes the tests start, forked from one that imported torch
# (forkserver.py), or optuna for pollux.optuna's driver and trial scripts.
_forks = ForkServer(clean_env())
_optuna_forks = ForkServer(clean_env(), preload="optuna")


@pytest.fixture(scope="session", autouse=True)
def _fork_server():
    yield
    _forks.close()
    _optuna_forks.close()


def run_python(argv, env, cwd=HERE, timeout=120, preload="torch", stderr_apart=True):
    """As subprocess.run([python, *argv], env=env, cwd=cwd, capture_output=True,
    text=True, timeout=timeout) (stderr in stdout unless stderr_apart), the
    process forked (forkserver.py) from one that imported `preload`."""
    tmp = tempfile.mkdtemp(prefix="pollux-py-")
    try:
        server = _forks if preload == "torch" else _optuna_forks
        return server.run_many([(argv, env, cwd)], tmp, timeout, stderr_apart)[0]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def ranks_runner(tmp_path, worker, every_rank=False, **fixed_env):
    """run(n, scenario, *args, env=..., timeout=240) -> each rank's JSON:
    `worker` (a script here: SCENARIO OUT_JSON ARGS...) on n ranks, as
    torchrun starts them (RANK, WORLD_SIZE, MASTER_ADDR/PORT), each forked
    from a process that imported torch; `fixed_env` under the call's env.
    Every rank must exit 0; with every_rank each must also have written its
    JSON (else: the JSON of those that did)."""
    counter = [0]

    def run(n, scenario, *args, env=None, timeout=240):
        counter[0] += 1
        out = str(tmp_path / f"out{counter[0]}")
        base = clean_env(**{"POLLUX_CHECKPOINT_DIR": str(tmp_path / "ckpt"), "MASTER_ADDR": "127.0.0.1",
                            "MASTER_PORT": str(free_port()), "WORLD_SIZE": str(n), **fixed_env, **(env or {})})
        argv = [os.path.join(HERE, worker), scenario, out, *map(str, args)]
        ranks = _forks.run_many([(argv, dict(base, RANK=str(r), LOCAL_RANK=str(r)), os.getcwd()) for r in range(n)],
                                str(tmp_path / f"logs{counter[0]}"), timeout, stderr_apart=False)
        for r, p in enumerate(ranks):
            assert p.returncode == 0, f"rank {r} of {scenario} exited {p.returncode}:\n{p.stdout}"
        return [json.load(open(f"{out}.{r}")) for r in range(n) if every_rank or os.path.exists(f"{out}.{r}")]

    return run


@pytest.fixture
def run_ranks(tmp_path):
    """run_ranks(n, scenario, *args, env=...) -> list of each rank's JSON (worker.py)."""
    return ranks_runner(tmp_path, "worker.py")
