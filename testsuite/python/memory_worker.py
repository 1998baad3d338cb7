"""One process of a memory-limit test (testsuite/python/test_memory.py):
a model whose activations grow with the micro-batch, run under an address
space limit (RLIMIT_AS) that torch's CPU allocator meets at a large
micro-batch and not at a small one: a real out-of-memory error.

    memory_worker.py SCENARIO OUT_JSON [ARGS...]
"""
import json
import re
import resource
import sys

import torch
import torch.nn as nn

import pollux.torch as pt

WIDE = 1 << 20        # activations per example: 4 MiB of float32
HEADROOM = 200 << 20  # bytes above the address space in use: 4 examples fit, 64 do not


class Wide(nn.Module):
    """Few parameters (a cheap all-reduce), WIDE activations per example."""
    def __init__(self):
        super().__init__()
        torch.manual_seed(1)
        self.up = nn.Linear(8, 8)

    def forward(self, x):
        return self.up(x).repeat(1, WIDE // 8).relu().mean(dim=1)


def limit_memory():
    """The address space from now on: what is mapped, plus HEADROOM."""
    mapped = int(re.search(r"VmSize:\s+(\d+) kB", open("/proc/self/status").read()).group(1)) * 1024
    resource.setrlimit(resource.RLIMIT_AS, (mapped + HEADROOM, resource.getrlimit(resource.RLIMIT_AS)[1]))


def setup(min_atomic=1, init_batch=16, wrap="ddp"):
    """The loader and the model under ElasticDataParallel, or (wrap "fsdp")
    FSDP's wrapper under ElasticFSDP (torch >= 2.2)."""
    torch.set_num_threads(1)
    pt.init_process_group()
    g = torch.Generator().manual_seed(0)
    data = torch.utils.data.TensorDataset(torch.randn(4096, 8, generator=g), torch.randn(4096, generator=g))
    loader = pt.ElasticDataLoader(data, batch_size=init_batch, max_batch_size=64,
                                  atomic_batch_size=(min_atomic, 64))
    net = Wide()
    if wrap == "fsdp":
        from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
        net = FSDP(net, device_id=pt.device())
        opt = torch.optim.SGD(net.parameters(), lr=0.01)
        return loader, pt.ElasticFSDP(net, opt), opt
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    return loader, pt.ElasticDataParallel(net, opt), opt


def train(loader, model, opt, steps, at_step=None):
    """`steps` optimizer steps, each's (step, atomic_batch, accum_steps); at_step(step) between steps."""
    a, seen = pt.agent(), []
    while len(seen) < steps:
        for x, y in loader:
            config = (a.atomic_batch, a.accum_steps)
            opt.zero_grad()
            ((model(x) - y) ** 2).mean().backward()
            step = a.step
            opt.step()
            if a.step > step:  # the step's last micro-step
                seen.append((a.step,) + config)
                if at_step is not None:
                    at_step(a.step)
                if len(seen) >= steps:
                    break
    return seen


def oom(out, limited_rank=None, wrap="ddp"):
    """Micro-batch 4 (x 4 micro-steps) for 3 steps, a checkpoint after the
    second, the address space limited after it (on every rank, or on
    `limited_rank`); then micro-batch 64: out of memory. The program does
    not catch it."""
    loader, model, opt = setup(wrap=wrap)
    a = pt.agent()
    a.set_batch_config(4, 3)

    def between(step):
        if step == 2:
            pt.checkpoint()
            if limited_rank is None or int(limited_rank) == pt.rank():
                limit_memory()
        if step == 3:
            json.dump({"max_atomic": a.max_atomic, "steps": step}, open(f"{out}.{pt.rank()}", "w"))
            a.set_batch_config(64, 0)
    train(loader, model, opt, 10, between)
    raise AssertionError("micro-batch 64 did not run out of memory")


def resume(out, wrap="ddp"):
    """The next run of the job: restores, tries micro-batch 64, trains."""
    loader, model, opt = setup(wrap=wrap)
    a = pt.agent()
    it = iter(loader)  # restores (the first batch)
    x, y = next(it)
    first = {"resumed": pt.resumed(), "step": a.step, "max_atomic": a.max_atomic, "atomic_batch": a.atomic_batch,
             "accum_steps": a.accum_steps, "batch": len(x)}
    opt.zero_grad()
    ((model(x) - y) ** 2).mean().backward()
    opt.step()
    for k in range(a.accum_steps):  # the rest of the step
        x, y = next(it)
        ((model(x) - y) ** 2).mean().backward()
        opt.step()
    try:
        a.set_batch_config(64, 0)
        refused = None
    except pt.PolluxError as e:
        refused = str(e)
    seen = train(loader, model, opt, 2)
    json.dump({"first": first, "refused": refused, "seen": seen}, open(out + ".0", "w"))


def smallest(out):
    """Micro-batches of 64 at the least, out of memory at the first."""
    loader, model, opt = setup(min_atomic=64, init_batch=64)
    limit_memory()
    train(loader, model, opt, 1)
    raise AssertionError("micro-batch 64 did not run out of memory")


if __name__ == "__main__":
    globals()[sys.argv[1]](*sys.argv[2:])
