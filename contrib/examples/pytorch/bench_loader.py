#!/usr/bin/env python3
"""pollux.torch's ElasticDataLoader with DataLoader workers against a plain
torch DataLoader with the same workers, on a loader-bound pipeline
(doc/benchmarks.md, "PyTorch: DataLoader workers").

    bench_loader.py [--workers 2] [--batch 64] [--steps 30] [--rounds 5] [--item-ms 0.5]

One process (gloo). Each example is made and transformed on the CPU in
the worker that loads it (a seeded 3x32x32 image, then reflect-padded 3x3
box filters, repeated until it costs about --item-ms), and the model is a
linear layer, so the step waits for the loader. The same pipeline runs
under plain DistributedDataParallel with DataLoader(batch_size, shuffle,
num_workers, persistent_workers) and under ElasticDataParallel with
ElasticDataLoader(batch_size, num_workers, persistent_workers) at a fixed
batch size; --steps steps of one then of the other, --rounds times
alternately (both see the same machine load, each keeps its workers).
Prints the examples per second of each (median over the rounds), the
ratio of the medians and the median of each round's ratio (its two blocks
ran back to back, under the same load).
"""
import pollux.torch as pollux  # noqa: I001

import argparse
import itertools
import os
import statistics
import time

import torch
import torch.nn.functional as F


class Transformed(torch.utils.data.Dataset):
    """Example i: a seeded image through `passes` box filters, and a label."""

    def __init__(self, n, passes):
        self.n, self.passes = n, passes

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        x = torch.randn(1, 3, 32, 32, generator=torch.Generator().manual_seed(i))
        for _ in range(self.passes):
            x = F.avg_pool2d(F.pad(x, (1, 1, 1, 1), mode="reflect"), 3, stride=1)
        return x[0], i % 10


def passes_for(ms):
    """Box-filter passes that cost about `ms` milliseconds here."""
    ds = Transformed(64, 10)
    t = time.perf_counter()
    for i in range(64):
        ds[i]
    per_pass = (time.perf_counter() - t) / 64 / 10
    return max(1, round(ms / 1e3 / per_pass))


def forever(loader):
    while True:
        yield from loader


def block(batches, model, opt, steps):
    t = time.perf_counter()
    n = 0
    for x, y in itertools.islice(batches, steps):
        opt.zero_grad()
        F.cross_entropy(model(x.flatten(1)), y).backward()
        opt.step()
        n += len(x)
    return n / (time.perf_counter() - t)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--item-ms", type=float, default=0.5)
    p.add_argument("--examples", type=int, default=4096)
    o = p.parse_args()
    torch.set_num_threads(1)
    os.environ.setdefault("POLLUX_CHECKPOINT_DIR", "/tmp/pollux-bench-loader-%d" % os.getpid())
    pollux.init_process_group()
    ds = Transformed(o.examples, passes_for(o.item_ms))
    workers = dict(num_workers=o.workers, persistent_workers=o.workers > 0)
    torch.manual_seed(0)
    plain_model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(3 * 32 * 32, 10))
    plain_opt = torch.optim.SGD(plain_model.parameters(), lr=0.01)
    plain = forever(torch.utils.data.DataLoader(ds, batch_size=o.batch, shuffle=True, **workers))
    loader = pollux.ElasticDataLoader(ds, batch_size=o.batch, atomic_batch_size=(o.batch, o.batch), **workers)
    torch.manual_seed(0)
    model = torch.nn.Linear(3 * 32 * 32, 10)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    model = pollux.ElasticDataParallel(model, opt)
    elastic = forever(loader)
    block(plain, plain_model, plain_opt, 3)  # workers started, first batches out of the way
    block(elastic, model, opt, 3)
    rates = {"plain": [], "pollux": []}
    for _ in range(o.rounds):
        rates["plain"].append(block(plain, plain_model, plain_opt, o.steps))
        rates["pollux"].append(block(elastic, model, opt, o.steps))
    med = {k: statistics.median(v) for k, v in rates.items()}
    print(f"workers {o.workers} batch {o.batch} item_ms {o.item_ms} steps {o.steps} rounds {o.rounds}")
    for k, v in rates.items():
        print(f"{k}: median {med[k]:.0f} examples/s (rounds: {' '.join(f'{r:.0f}' for r in v)})")
    paired = statistics.median(e / q for e, q in zip(rates["pollux"], rates["plain"]))
    print(f"pollux / plain: {med['pollux'] / med['plain']:.3f} (medians), {paired:.3f} (median of the rounds' "
          f"ratios: adjacent blocks, the same load)")


if __name__ == "__main__":
    main()
