"""One rank of a pollux.torch test scenario (testsuite/python/test_*.py run
it under RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT, as torchrun would).

    worker.py SCENARIO OUT_JSON [ARGS...]

Writes what it measured to OUT_JSON.<rank> for the test to check."""
import json
import os
import sys

import torch
import torch.nn.functional as F

if os.environ.get("POLLUX_TEST_WEIGHTS_ONLY_LOAD") == "1" and "weights_only" in torch.load.__code__.co_varnames:
    # torch >= 2.6 loads with weights_only=True unless told otherwise: the
    # same default here, on older torch, so that the tests see what it does.
    _load = torch.load

    def _weights_only_by_default(*args, weights_only=True, **kwargs):
        return _load(*args, weights_only=weights_only, **kwargs)

    torch.load = _weights_only_by_default

import pollux
import pollux.torch as pt
from toy_data import Indexed, mlp


def flat_grad(params):
    return torch.cat([p.grad.reshape(-1) for p in params])


def stats(out, steps):
    """The DDP hook's statistics against the C++ agent in buffer mode fed
    the same local gradients (computed on a plain copy of the model)."""
    env = pt.init_process_group()
    ds = Indexed(4096)
    loader = pt.ElasticDataLoader(ds, batch_size=16 * env.world_size, atomic_batch_size=(16, 16))
    model = mlp()
    ref_model = mlp()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    ref_opt = torch.optim.SGD(ref_model.parameters(), lr=0.05)
    # Small buckets: the statistics are summed over several.
    torch.distributed._DEFAULT_FIRST_BUCKET_BYTES = 4096
    model = pt.ElasticDataParallel(model, opt, bucket_cap_mb=0.005)
    s = pt._session.get()
    ref = pollux.Agent(pollux.AgentOptions(init_batch=loader.batch_size, max_atomic=16, adapt=False,
                                           write_hints=False, resize_signal=0, verbose=0,
                                           checkpoint_dir=os.environ["POLLUX_CHECKPOINT_DIR"] + "-ref"),
                       comm=s.comm if env.world_size > 1 else None, external=False)
    rows = []
    for x, y, _ in loader:
        opt.zero_grad()
        F.mse_loss(model(x).squeeze(1), y).backward()
        ref_opt.zero_grad()
        F.mse_loss(ref_model(x).squeeze(1), y).backward()
        g = flat_grad(list(ref_model.parameters())).detach().clone().contiguous()
        ref.micro_step_begin()
        ref.micro_step_end(g.numpy())
        ref.synchronize(g.numpy())
        ref.step_end()
        with torch.no_grad():  # the reference takes the averaged step too
            off = 0
            for p in ref_model.parameters():
                p.grad.copy_(g[off:off + p.numel()].view_as(p))
                off += p.numel()
        ref_opt.step()
        opt.step()
        a = pt.agent()
        rows.append({"step": a.step, "stats": a.grad_stats, "ref": ref.grad_stats,
                     "local": s.pending.norms.tolist()[0], "sync": s.pending.norms.tolist()[1],
                     "buckets": s.buckets,
                     "grad_diff": max((p.grad - q.grad).abs().max().item()
                                      for p, q in zip(model.parameters(), ref_model.parameters()))})
        if a.step >= steps:
            break
    ref.close()
    json.dump(rows, open(f"{out}.{env.rank}", "w"))


def accum(out, rule):
    """One replica, 4 micro-steps of 8 per step (M0 = 30 -> total 32): the
    update equals SGD on the mean gradient of the 32 examples with the
    learning rate times the rule's factor."""
    pt.init_process_group()
    ds = Indexed(512)
    loader = pt.ElasticDataLoader(ds, batch_size=30, atomic_batch_size=(1, 8))
    model = mlp()
    ref = mlp()
    lr = 0.05
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    model = pt.ElasticDataParallel(model, opt, lr_rule=rule)
    a = pt.agent()
    rows = []
    micro = 0
    for x, y, idx in loader:
        if micro == 0:
            # The reference: the whole batch at once, from the agent's position.
            start = a.samples_seen
            ids = loader.indices(start, a.total_batch)
            factor = {"adascale": a.lr_gain, "sqrt": (a.total_batch / 30) ** 0.5, "linear": a.total_batch / 30}[rule]
            shape = (a.atomic_batch, a.accum_steps)
        opt.zero_grad()
        F.mse_loss(model(x).squeeze(1), y).backward()
        opt.step()
        micro += 1
        if micro <= shape[1]:
            continue
        micro = 0
        bx, by = ds.x[ids], ds.y[ids]
        ref.zero_grad()
        # Mean of the micro-batch means = mean over the batch (equal sizes).
        F.mse_loss(ref(bx).squeeze(1), by).backward()
        with torch.no_grad():
            for p in ref.parameters():
                p -= lr * factor * p.grad
        err = max((p - q).abs().max().item() for p, q in zip(model.module.parameters(), ref.parameters()))
        rows.append({"step": a.step, "atomic": shape[0], "accum": shape[1], "factor": factor, "err": err,
                     "ids": sorted(ids) == sorted(ids)})
        if a.step >= 12:
            break
    json.dump(rows, open(f"{out}.0", "w"))


def resize(out, steps):
    """A phase of the 2 -> 4 -> 1 test: restore, train `steps` steps (0:
    to the end of epoch 2), record every example each rank took,
    checkpoint, exit."""
    env = pt.init_process_group()
    resumed_at_init = pt.resumed()
    ds = Indexed(300)
    workers = int(os.environ.get("POLLUX_TEST_WORKERS", "0"))
    extra = {"persistent_workers": True, "prefetch_factor": 4} if workers else {}
    loader = pt.ElasticDataLoader(ds, batch_size=24, max_batch_size=24, atomic_batch_size=(2, 6),
                                  num_workers=workers, **extra)
    model = mlp()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    model = pt.ElasticDataParallel(model, opt)
    a = pt.agent()
    taken = []
    start = None
    for epoch in pt.remaining_epochs_until(100):
        if start is None:
            start = (a.step, a.samples_seen)
        if epoch >= 2:
            break
        for x, y, idx in loader:
            taken.append([a.samples_seen, epoch] + idx.tolist())
            opt.zero_grad()
            F.mse_loss(model(x).squeeze(1), y).backward()
            before = a.step
            opt.step()
            if a.step != before and a.step - start[0] == 2:
                # A new configuration at a step boundary, mid-epoch: what
                # the workers prefetched for the old one must not be used.
                a.set_batch_config(2, 24 // (2 * a.replicas) - 1)
            if steps and a.step - start[0] >= steps:
                break
        if steps and a.step - start[0] >= steps:
            break
    pt.checkpoint()
    json.dump({"taken": taken, "start": start, "end": [a.step, a.samples_seen], "resumed": pt.resumed(),
               "resumed_at_init": resumed_at_init, "replicas": a.replicas}, open(f"{out}.{env.rank}", "w"))


def adam(out, scale, epochs):
    """AdamW on scikit-learn's digits (the example's data and network) at
    `scale` x M0, to `epochs` epochs of scale-invariant progress, with the
    learning-rate rule pollux.torch picks for it; the validation accuracy."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../contrib/examples/pytorch"))
    from train import DIGITS, Net, digits
    torch.manual_seed(0)
    pt.init_process_group()
    (xt, yt), (xv, yv) = digits(0, os.environ.get("POLLUX_DIGITS") or DIGITS)
    m0 = 16
    loader = pt.ElasticDataLoader(torch.utils.data.TensorDataset(xt, yt), batch_size=m0, max_batch_size=scale * m0,
                                  atomic_batch_size=(m0, scale * m0))
    model = Net()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model = pt.ElasticDataParallel(model, opt, lr_rule=os.environ.get("POLLUX_TEST_LR_RULE"))
    a = pt.agent()
    rule = pt._session.get().lr_rule
    factors, accs = [], []

    def accuracy():
        with torch.no_grad():
            return (model.module(xv).argmax(1) == yv).float().mean().item()

    for _ in pt.remaining_epochs_until(epochs):
        if a.step == 0:
            a.set_batch_config(scale * m0, 0)
        for x, y in loader:
            opt.zero_grad()
            F.cross_entropy(model(x), y).backward()
            opt.step()
            factors.append([a.lr_gain, pt._session.get().lr_factor()])
            if int(pt.progress_epochs()) > len(accs):
                accs.append(accuracy())  # at each whole epoch of progress
            if pt.progress_epochs() >= epochs:
                break
    json.dump({"rule": rule, "accs": accs, "steps": a.step, "batch": a.total_batch,
               "progress": pt.progress_epochs(), "gain": a.lr_gain, "factors": factors}, open(f"{out}.0", "w"))


class Counter:
    def __init__(self):
        self.n = 0

    def state_dict(self):
        return {"n": self.n}

    def load_state_dict(self, s):
        self.n = s["n"]


def roundtrip(out, phase):
    """Checkpoint everything, then restore it in a fresh process."""
    pt.init_process_group()
    ds = Indexed(256)
    loader = pt.ElasticDataLoader(ds, batch_size=16)
    model = mlp()
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.5)
    model = pt.ElasticDataParallel(model, opt, sched)
    counter, notes = Counter(), {}
    pt.register("counter", counter)
    pt.register("notes", notes)
    a = pt.agent()
    if phase == "save":
        for x, y, _ in loader:
            opt.zero_grad()
            F.mse_loss(model(x).squeeze(1), y).backward()
            opt.step()
            sched.step()
            counter.n += 1
            notes["last"] = a.step
            if a.step == 7:
                break
        pt.checkpoint()
    else:
        for _ in pt.remaining_epochs_until(100):  # restores
            break
    state = {
        "resumed": pt.resumed(), "step": a.step, "samples": a.samples_seen,
        "params": [p.detach().reshape(-1).tolist() for p in model.module.parameters()],
        "adam": [v["exp_avg"].reshape(-1).tolist() for v in opt.state.values()],
        "sched": sched.last_epoch, "lr": opt.param_groups[0]["lr"], "counter": counter.n, "notes": notes,
        "next_random": torch.rand(3).tolist(),
    }
    json.dump(state, open(f"{out}.0", "w"))


if __name__ == "__main__":
    scenario, out = sys.argv[1], sys.argv[2]
    args = sys.argv[3:]
    {"stats": lambda: stats(out, int(args[0])), "accum": lambda: accum(out, args[0]),
     "resize": lambda: resize(out, int(args[0])), "roundtrip": lambda: roundtrip(out, args[0]),
     "adam": lambda: adam(out, int(args[0]), float(args[1]))}[scenario]()
