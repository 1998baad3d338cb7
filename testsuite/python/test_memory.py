"""The micro-batch memory limit (label python; doc/pytorch.md, "Memory"):
a real out-of-memory error (torch's CPU allocator under an address space
limit, memory_worker.py) at micro-batch 64 after steps at 4 lowers the
job's largest micro-batch to 4; the hint publishes it, the checkpoint
directory keeps it, and the job's next run never configures above it. At
the job's smallest micro-batch the error says there is nothing smaller.
The rule and whose limit it is, on the agent alone."""
import json
import os

import pytest

from conftest import HERE, clean_env, run_python


def run(tmp_path, scenario, job="4242", restart="0", ckpt="ckpt"):
    out = str(tmp_path / f"{scenario}-{restart}")
    (tmp_path / "spool").mkdir(exist_ok=True)
    e = clean_env(POLLUX_CHECKPOINT_DIR=str(tmp_path / ckpt), POLLUX_SPOOL_DIR=str(tmp_path / "spool"),
                  SLURM_JOB_ID=job, SLURM_RESTART_COUNT=restart, POLLUX_ADAPT="0", POLLUX_VERBOSE="1")
    p = run_python([os.path.join(HERE, "memory_worker.py"), scenario, out], e, os.getcwd(), 120)
    result = json.load(open(f"{out}.0")) if os.path.exists(f"{out}.0") else None
    return p, result


def run_ranks(tmp_path, n, scenario, *args, job, restart="0", timeout=150):
    """memory_worker.py SCENARIO on n ranks (gloo, as torchrun starts them), one spool and checkpoint."""
    from conftest import _forks, free_port
    (tmp_path / "spool").mkdir(exist_ok=True)
    base = clean_env(POLLUX_CHECKPOINT_DIR=str(tmp_path / "ckpt"), POLLUX_SPOOL_DIR=str(tmp_path / "spool"),
                     SLURM_JOB_ID=job, SLURM_RESTART_COUNT=restart, POLLUX_ADAPT="0", POLLUX_VERBOSE="1",
                     MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()), WORLD_SIZE=str(n))
    argv = [os.path.join(HERE, "memory_worker.py"), scenario, str(tmp_path / f"{scenario}-{restart}"), *args]
    return _forks.run_many([(argv, dict(base, RANK=str(r), LOCAL_RANK=str(r)), os.getcwd()) for r in range(n)],
                           str(tmp_path / f"logs-{scenario}-{restart}"), timeout, stderr_apart=False)


def hint_limits(tmp_path, job="4242"):
    text = open(tmp_path / "spool" / f"{job}.hint.yaml").read()
    limits = text.split("limits:\n", 1)[1].split("\nconfig:", 1)[0]
    config = text.split("config:\n", 1)[1]
    value = lambda block, key: int(block.split(f"  {key}: ", 1)[1].split("\n", 1)[0])  # noqa: E731
    return value(limits, "max_atomic"), value(config, "atomic_batch")


def test_recorded_published_and_honoured_after_restore(tmp_path):
    p, before = run(tmp_path, "oom")
    # The program's own error, as Python prints it, then the limit.
    assert p.returncode == 1, p.stdout + p.stderr
    assert "DefaultCPUAllocator: can't allocate memory" in p.stderr, p.stderr
    assert "micro-batch 64 ran out of memory; this job's micro-batches are at most 4" in p.stderr, p.stderr
    assert before == {"max_atomic": 64, "steps": 3}, p.stderr  # micro-batch 4 ran under the address space limit
    kept = (tmp_path / "ckpt" / "memory-limit").read_text()
    assert "max_atomic: 4\n" in kept and "out_of_memory_at: 64\n" in kept and "job_id: 4242\n" in kept, kept
    assert hint_limits(tmp_path)[0] == 4  # the plugin's choice sees it

    # The next run of the job: the checkpoint of step 2 under the limit.
    p, after = run(tmp_path, "resume", restart="1")
    assert p.returncode == 0, p.stdout + p.stderr
    first = after["first"]
    assert first["resumed"] and first["step"] == 2
    assert first["max_atomic"] == 4
    # M0 = 16 re-split under the limit: 4 examples x 4 micro-steps (16 x 1 without it).
    assert (first["atomic_batch"], first["accum_steps"], first["batch"]) == (4, 3, 4), after
    assert "atomic batch 64 outside the job's limits [1, 4]" in after["refused"], after
    assert all(atomic <= 4 for _, atomic, _ in after["seen"]), after
    assert hint_limits(tmp_path) == (4, 4)


def test_ranks_one_runs_out_and_none_waits(tmp_path):
    """Rank 1 of 2 runs out of memory (gloo): it records the limit and exits
    without waiting for rank 0, which its closed connections fail, blocked
    as it is in the step's all-reduce: both end with status 1, neither hangs."""
    ranks = run_ranks(tmp_path, 2, "oom", "1", job="4244")
    assert [p.returncode for p in ranks] == [1, 1], "\n".join(p.stdout for p in ranks)
    assert "rank 1: micro-batch 64 ran out of memory; this job's micro-batches are at most 4" in ranks[1].stdout
    assert "Connection closed by peer" in ranks[0].stdout, ranks[0].stdout
    assert "max_atomic: 4\n" in (tmp_path / "ckpt" / "memory-limit").read_text()


def test_fsdp_one_rank_runs_out_and_the_next_run_honours_it(tmp_path):
    """The same under FSDP (ElasticFSDP, torch >= 2.2; on an older torch
    test_fsdp.py checks ElasticFSDP's error): rank 1 of 2 runs out of memory
    at micro-batch 64, the limit is kept, and the job's next run, on one
    rank from the sharded checkpoint, never configures above it."""
    import torch
    from pollux.torch import fsdp
    if fsdp._torch_version() < fsdp.MIN_TORCH:
        pytest.skip(f"FSDP needs torch >= 2.2, this is {torch.__version__}")
    out = run_ranks(tmp_path, 2, "oom", "1", "fsdp", job="4245")
    assert [p.returncode for p in out] == [1, 1], "\n".join(p.stdout for p in out)
    assert "rank 1: micro-batch 64 ran out of memory; this job's micro-batches are at most 4" in out[1].stdout, \
        out[1].stdout
    assert "max_atomic: 4\n" in (tmp_path / "ckpt" / "memory-limit").read_text()

    (p,) = run_ranks(tmp_path, 1, "resume", "fsdp", job="4245", restart="1")
    assert p.returncode == 0, p.stdout
    after = json.load(open(tmp_path / "resume-1.0"))
    first = after["first"]
    assert first["resumed"] and first["step"] == 2 and first["max_atomic"] == 4, after
    assert "atomic batch 64 outside the job's limits [1, 4]" in after["refused"], after
    assert all(atomic <= 4 for _, atomic, _ in after["seen"]), after
    assert hint_limits(tmp_path, job="4245")[0] == 4


def test_smallest_micro_batch_is_a_clear_error(tmp_path):
    p, _ = run(tmp_path, "smallest", job="4243")
    assert p.returncode == 1, p.stdout + p.stderr
    assert "DefaultCPUAllocator: can't allocate memory" in p.stderr, p.stderr
    assert ("micro-batch 64 ran out of memory and it is the job's smallest (min_atomic 64): nothing smaller to try"
            in p.stderr), p.stderr
    assert not (tmp_path / "ckpt" / "memory-limit").exists()


def test_rule_and_whose_limit_it_is(tmp_path, monkeypatch):
    """On the agent alone (pollux.Agent): the largest micro-batch run if below
    the one that failed, else one less; kept by the job's later runs and by
    a job that resumes its checkpoint, not by a fresh job."""
    from pollux import Agent, AgentOptions, GradientNorms, PolluxError
    ckpt = tmp_path / "ckpt"

    def agent(job, restart=0):
        monkeypatch.setenv("SLURM_JOB_ID", str(job))
        monkeypatch.setenv("SLURM_RESTART_COUNT", str(restart))
        return Agent(AgentOptions(init_batch=16, max_batch=64, min_atomic=2, max_atomic=64, adapt=False, verbose=0,
                                  write_hints=False, checkpoint_dir=str(ckpt)), None, external=True)

    def step(a):
        for _ in range(a.accum_steps + 1):
            a.micro_step_begin()
            a.micro_step_end()
        a.synchronized(GradientNorms(1.0, 0.5, 1, a.two_step_phase == 2, 1.0, 0.5))
        a.step_end()

    a = agent(7)
    assert not a.restore() and (a.atomic_batch, a.max_atomic) == (16, 64)
    assert a.out_of_memory(16) == 15  # nothing ran: one less
    a.close()
    a = agent(7, 1)
    assert not a.restore() and a.max_atomic == 15  # the same job, no checkpoint: kept
    assert (a.atomic_batch, a.accum_steps) == (8, 1)
    a.set_batch_config(6, 0)
    step(a)
    a.set_batch_config(12, 0)
    assert a.out_of_memory(12) == 6  # the largest that ran
    a.set_batch_config(4, 1)
    a.checkpoint()
    a.close()
    a = agent(7, 2)
    with pytest.raises(PolluxError, match="micro-batch 2 ran out of memory and it is the job's smallest"):
        a.out_of_memory(2)
    a.close()

    a = agent(8, 3)  # another job resumes job 7's checkpoint: kept
    assert a.restore() and a.max_atomic == 6
    a.close()
    os.remove(ckpt / "latest")
    a = agent(9, 4)  # a fresh job: not its limit
    assert not a.restore() and a.max_atomic == 64 and not (ckpt / "memory-limit").exists()
    a.close()

    (ckpt / "memory-limit").write_text("max_atomic: many\n")
    a = agent(9, 5)
    with pytest.raises(PolluxError, match="memory-limit: max_atomic: 'many' is not a count"):
        a.restore()
    a.close()


def test_rule_what_counts_as_out_of_memory():
    import torch
    from pollux.torch._session import is_out_of_memory
    assert is_out_of_memory(RuntimeError("[enforce fail at alloc_cpu.cpp:75] err == 0. DefaultCPUAllocator: can't "
                                         "allocate memory: you tried to allocate 268435456 bytes."))
    assert is_out_of_memory(torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB"))
    assert not is_out_of_memory(RuntimeError("expected scalar type Float but found Double"))
    assert not is_out_of_memory(MemoryError())
    assert not is_out_of_memory(ValueError("DefaultCPUAllocator: can't allocate memory"))
    assert not is_out_of_memory(RuntimeError("can't allocate memory for the cache"))
