"""One process of a step-measurement test (testsuite/python/test_steps.py):
the fitted step-time model against loader-to-loader times with a slow
loader, skipped updates, and the statistics under a loss scale.

    steps_worker.py SCENARIO OUT_JSON [ARGS...]
"""
import json
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

import pollux.torch as pt


def data(n, dim, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, dim, generator=g)
    y = (x @ torch.randn(dim, 1, generator=g)).squeeze(1) + 0.3 * torch.randn(n, generator=g)
    return torch.utils.data.TensorDataset(x, y)


def mlp(dim, hidden):
    torch.manual_seed(1)
    return nn.Sequential(nn.Linear(dim, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(), nn.Linear(hidden, 1))


def slow_collate(per_batch, per_item):
    """The default collation after a sleep: a loader that reads and decodes."""
    from torch.utils.data.dataloader import default_collate

    def collate(items):
        time.sleep(per_batch + per_item * len(items))
        return default_collate(items)
    return collate


def profile(out, steps):
    """The agent fixed to each configuration in turn; the median measured
    time per optimizer step (from one step's first batch to the next's, as
    the user's loop sees it) against the agent's fitted model."""
    steps = int(steps)
    pt.init_process_group()
    loader = pt.ElasticDataLoader(data(1 << 14, 64), batch_size=32, max_batch_size=512, atomic_batch_size=(8, 128),
                                  collate_fn=slow_collate(0.015, 0.0002))
    opt_model = mlp(64, 256)
    opt = torch.optim.SGD(opt_model.parameters(), lr=0.01)
    model = pt.ElasticDataParallel(opt_model, opt)
    a = pt.agent()
    configs = [(8, 0), (32, 0), (128, 0), (32, 2)]

    measured = {}
    for atomic, accum in configs:
        a.set_batch_config(atomic, accum)
        times, last, step0 = [], None, a.step
        while a.step - step0 < steps:
            for x, y in loader:
                if last is None or a.step != last[0]:  # the first batch of a step
                    now = time.perf_counter()
                    if last is not None:
                        times.append(now - last[1])
                    last = (a.step, now)
                opt.zero_grad()
                F.mse_loss(model(x).squeeze(1), y).backward()
                opt.step()
                if a.step - step0 >= steps:
                    break
        measured[(atomic, accum)] = statistics.median(times[3:])
    predicted = {}
    deadline = time.time() + 60
    while time.time() < deadline:
        predicted = {c: a.predict_iter_time(1, 1, *c) for c in configs}
        if all(v is not None for v in predicted.values()):
            break
        for x, y in loader:  # the refit happens at a step's end
            opt.zero_grad()
            F.mse_loss(model(x).squeeze(1), y).backward()
            opt.step()
            break
        time.sleep(0.5)
    json.dump([{"atomic": c[0], "accum": c[1], "measured": measured[c], "fitted": predicted[c]} for c in configs],
              open(f"{out}.0", "w"))


class StaticScale:
    """A user's own static loss scale, handed over as a scaler."""

    def __init__(self, scale):
        self.scale = scale

    def get_scale(self):
        return self.scale


def scaled(out, scale, skip_at):
    """`steps` steps with the loss multiplied by `scale` and the gradients
    divided back before the step (what GradScaler does), the scale handed
    over as a scaler; at step `skip_at` (>= 0) the gradients are made
    non-finite and optimizer.step() is left out, as GradScaler does on an
    overflow."""
    scale, skip_at = float(scale), int(skip_at)
    pt.init_process_group()
    loader = pt.ElasticDataLoader(data(4096, 16), batch_size=16, atomic_batch_size=(16, 16))
    net = mlp(16, 64)
    opt = torch.optim.SGD(net.parameters(), lr=0.05)
    model = pt.ElasticDataParallel(net, opt, scaler=StaticScale(scale) if scale != 1 else None)
    a = pt.agent()
    rows, i = [], 0
    for x, y in loader:
        before = (a.step, a.samples_seen, a.progress)
        opt.zero_grad()
        loss = F.mse_loss(model(x).squeeze(1), y)
        if i == skip_at:
            loss = loss * float("inf")
        (loss * scale).backward()
        if i != skip_at:
            for p in net.parameters():
                p.grad.div_(scale)
            opt.step()
        rows.append({"i": i, "before": before, "stats": a.grad_stats})
        i += 1
        if i == 14:
            break
    # The last step's end (a left-out step ends when the next batch is asked for).
    rows.append({"i": i, "before": (a.step, a.samples_seen, a.progress), "stats": a.grad_stats,
                 "params": [p.detach().reshape(-1)[:4].tolist() for p in net.parameters()]})
    json.dump(rows, open(f"{out}.0", "w"))


def left_out(out):
    """optimizer.step() left out of a step whose gradients were finite."""
    pt.init_process_group()
    loader = pt.ElasticDataLoader(data(512, 16), batch_size=16)
    net = mlp(16, 32)
    opt = torch.optim.SGD(net.parameters(), lr=0.05)
    model = pt.ElasticDataParallel(net, opt)
    try:
        for i, (x, y) in enumerate(loader):
            opt.zero_grad()
            F.mse_loss(model(x).squeeze(1), y).backward()
            if i != 2:
                opt.step()
            if i == 6:
                break
        result = "no error"
    except pt.PolluxError as e:
        result = f"PolluxError {e}"
    json.dump({"result": result}, open(f"{out}.0", "w"))


def wrong_optimizer(out):
    """A GradScaler stepping an optimizer the model does not hold."""
    pt.init_process_group()
    loader = pt.ElasticDataLoader(data(512, 16), batch_size=16)
    net = mlp(16, 32)
    opt = torch.optim.SGD(net.parameters(), lr=0.05)
    other = torch.optim.SGD(mlp(16, 32).parameters(), lr=0.05)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # CPU: "CUDA is not available. Disabling."
        scaler = torch.cuda.amp.GradScaler()
    model = pt.ElasticDataParallel(net, opt, scaler=scaler)
    try:
        for x, y in loader:
            opt.zero_grad()
            scaler.scale(F.mse_loss(model(x).squeeze(1), y)).backward()
            scaler.step(other)
            scaler.update()
        result = "no error"
    except pt.PolluxError as e:
        result = f"PolluxError {e}"
    json.dump({"result": result}, open(f"{out}.0", "w"))


if __name__ == "__main__":
    scenario, out, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    {"profile": profile, "scaled": scaled, "left_out": left_out, "wrong_optimizer": wrong_optimizer}[scenario](
        out, *args)
