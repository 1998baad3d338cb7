"""One rank of a pollux.torch FSDP scenario (test_fsdp.py runs it under
RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT, as torchrun would).

    fsdp_worker.py SCENARIO OUT_JSON [ARGS...]

Writes what it measured to OUT_JSON.<rank>. On a torch without FSDP
support (Debian 12's 1.13) every scenario records ElasticFSDP's error
instead ({"old_torch": ..., "error": ...}) for the test to check."""
import json
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

import pollux.torch as pt
from pollux.torch import fsdp as pfsdp
from toy_data import Indexed, mlp

MODERN = pfsdp._torch_version() >= pfsdp.MIN_TORCH


def shard2(model):
    """fully_shard (FSDP2) per Linear, then the root, with fully_shard's
    defaults (on the CPU ElasticFSDP keeps the parameters unsharded from
    forward to backward: torch 2.6 fails otherwise)."""
    from torch.distributed.fsdp import fully_shard
    for m in model.modules():
        if isinstance(m, nn.Linear):
            fully_shard(m)
    fully_shard(model)
    return model


def wrap(kind, model, make_opt):
    """(wrapped model, optimizer): ElasticDataParallel, or ElasticFSDP over
    FSDP units per Linear (several units: per-unit norms are summed), or
    over fully_shard per Linear then the root ("fsdp2")."""
    if kind == "ddp":
        opt = make_opt(model.parameters())
        return pt.ElasticDataParallel(model, opt), opt
    if kind == "fsdp2":
        model = shard2(model)
        opt = make_opt(model.parameters())
        return pt.ElasticFSDP(model, opt), opt
    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
    from torch.distributed.fsdp.wrap import ModuleWrapPolicy
    model = FSDP(model, device_id=pt.device(), auto_wrap_policy=ModuleWrapPolicy({nn.Linear}))
    opt = make_opt(model.parameters())
    return pt.ElasticFSDP(model, opt), opt


def old_torch(out, rank):
    """Torch < 2.2: ElasticFSDP's error, on a plain model (FSDP itself cannot be made there)."""
    pt.init_process_group()
    model = mlp()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    try:
        pt.ElasticFSDP(model, opt)
        err = None
    except pt.PolluxError as e:
        err = str(e)
    json.dump({"old_torch": torch.__version__, "error": err}, open(f"{out}.{rank}", "w"))


def stats(out, kind, steps):
    """SGD on the same data and seed, DDP or FSDP: each step's norms and the estimate."""
    env = pt.init_process_group()
    loader = pt.ElasticDataLoader(Indexed(4096, with_index=False), batch_size=16 * env.world_size,
                                  max_batch_size=16 * env.world_size, atomic_batch_size=(8, 16))
    model, opt = wrap(kind, mlp(), lambda p: torch.optim.SGD(p, lr=0.05))
    s = pt._session.get()
    a = pt.agent()
    rows = []
    for x, y in loader:
        opt.zero_grad()
        F.mse_loss(model(x).squeeze(1), y).backward()
        before = a.step
        opt.step()
        if a.step == before:
            continue  # a micro-step that only accumulates
        n = s.pending.norms.tolist()
        rows.append({"step": a.step, "local": n[0], "sync": n[1], "stats": a.grad_stats, "units": s.buckets,
                     "accum": a.accum_steps})
        if a.step == 4:
            a.set_batch_config(8, 1)  # two micro-steps per step from here: no_sync's path
        if a.step >= steps:
            break
    json.dump(rows, open(f"{out}.{env.rank}", "w"))


def sharded(out, kind, order):
    """Whether the agent was declared sharded (the model's form), the loader
    made before the model or after it."""
    env = pt.init_process_group()

    def loader():
        return pt.ElasticDataLoader(Indexed(64, with_index=False), batch_size=8 * env.world_size,
                                    max_batch_size=8 * env.world_size, atomic_batch_size=(8, 8))
    if order == "loader-first":
        loader()
        wrap(kind, mlp(), lambda p: torch.optim.SGD(p, lr=0.05))
    else:
        wrap(kind, mlp(), lambda p: torch.optim.SGD(p, lr=0.05))
        loader()
    json.dump({"sharded": pt.agent().sharded}, open(f"{out}.{env.rank}", "w"))


def _full_params(model):
    """The whole model's parameters as one list (gathered for the check only)."""
    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
    if model._fsdp2:
        # (FSDP2's sharded DTensor parameters: the module holds the unsharded ones after a forward that did
        # not reshard)
        return torch.cat([fp.sharded_param.full_tensor().detach().reshape(-1) for fp, _ in model._params]).tolist()
    with FSDP.summon_full_params(model.module):
        return torch.cat([p.detach().reshape(-1) for p in model.module.parameters()]).tolist()


def _adam_sq(opt):
    """sum over every rank's optimizer shards of |exp_avg|^2 + |exp_avg_sq|^2: independent of the sharding."""
    t = torch.zeros(1, dtype=torch.float64)
    for st in opt.state.values():
        for k in ("exp_avg", "exp_avg_sq"):
            if k in st:
                v = st[k].to_local() if hasattr(st[k], "to_local") else st[k]  # (FSDP2: a DTensor)
                t += v.double().square().sum()
    if torch.distributed.get_world_size() > 1:
        torch.distributed.all_reduce(t)
    return t.item()


def resize(out, kind, steps):
    """A phase of the 2 -> 3 -> 1 test: restore, record the model, Adam's
    state and the loss on fixed data, train `steps` steps, record again,
    checkpoint, exit. Total batch 24 whatever the ranks."""
    env = pt.init_process_group()
    ds = Indexed(480, with_index=False)
    loader = pt.ElasticDataLoader(ds, batch_size=24, max_batch_size=24, atomic_batch_size=(2, 12))
    model, opt = wrap(kind, mlp(), lambda p: torch.optim.Adam(p, lr=0.01))
    a = pt.agent()

    def loss():
        with torch.no_grad():
            return F.mse_loss(model(ds.x[:96]).squeeze(1), ds.y[:96]).item()

    rec = {"replicas": env.world_size}
    try:
        for _ in pt.remaining_epochs_until(1000):  # restores
            break
    except pt.PolluxError as e:
        json.dump({"error": str(e)}, open(f"{out}.{env.rank}", "w"))
        return
    rec.update(resumed=pt.resumed(), start=[a.step, a.samples_seen], start_loss=loss(), start_adam=_adam_sq(opt),
               start_params=_full_params(model) if kind != "ddp" else None)
    losses = []
    for x, y in loader:
        opt.zero_grad()
        F.mse_loss(model(x).squeeze(1), y).backward()
        opt.step()
        losses.append(loss())
        if a.step - rec["start"][0] >= steps:
            break
    pt.checkpoint()
    rec.update(end=[a.step, a.samples_seen], end_loss=loss(), end_adam=_adam_sq(opt), losses=losses,
               end_params=_full_params(model) if kind != "ddp" else None,
               config=[a.atomic_batch, a.accum_steps, a.replicas])
    json.dump(rec, open(f"{out}.{env.rank}", "w"))


def bad_input(out, kind):
    """What ElasticFSDP refuses, one process: each case's exception."""
    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
    pt.init_process_group()
    pt.ElasticDataLoader(Indexed(64, with_index=False), batch_size=8)
    got = {}

    def attempt(name, fn):
        try:
            fn()
            got[name] = None
        except (pt.PolluxError, ValueError, TypeError) as e:
            got[name] = f"{type(e).__name__}: {e}"

    plain = mlp()
    attempt("plain", lambda: pt.ElasticFSDP(plain, torch.optim.SGD(plain.parameters(), lr=0.1)))
    if kind == "fsdp2":
        from torch.distributed.fsdp import fully_shard, MixedPrecisionPolicy
        from torch.distributed.device_mesh import init_device_mesh

        def early():
            m = mlp()
            opt = torch.optim.SGD(m.parameters(), lr=0.1)  # before sharding: fully_shard's DTensors are others
            pt.ElasticFSDP(shard2(m), opt)
        attempt("optimizer-before-wrapping", early)

        def root_unsharded():
            m = mlp()
            fully_shard(m[0])
            pt.ElasticFSDP(m, torch.optim.SGD(m.parameters(), lr=0.1))
        attempt("root-unsharded", root_unsharded)

        def hsdp():
            mesh = init_device_mesh("cpu", (1, 1), mesh_dim_names=("replicate", "shard"))
            m = fully_shard(mlp(), mesh=mesh)
            pt.ElasticFSDP(m, torch.optim.SGD(m.parameters(), lr=0.1))
        attempt("hsdp", hsdp)

        def reduce_dtype():
            m = fully_shard(mlp(), mp_policy=MixedPrecisionPolicy(param_dtype=torch.bfloat16,
                                                                   reduce_dtype=torch.float32))
            pt.ElasticFSDP(m, torch.optim.SGD(m.parameters(), lr=0.1))
        attempt("reduce-dtype", reduce_dtype)

        def to_ddp():
            m = shard2(mlp())
            pt.ElasticDataParallel(m, torch.optim.SGD(m.parameters(), lr=0.1))
        attempt("fsdp-to-elastic-ddp", to_ddp)
        json.dump(got, open(f"{out}.0", "w"))
        return
    early = mlp()
    opt = torch.optim.SGD(early.parameters(), lr=0.1)  # before the wrapping: FSDP's flat shards are others
    attempt("optimizer-before-wrapping", lambda: pt.ElasticFSDP(FSDP(early, device_id=pt.device()), opt))

    def ddp_inside():
        m = FSDP(nn.Sequential(torch.nn.parallel.DistributedDataParallel(mlp())), device_id=pt.device())
        pt.ElasticFSDP(m, torch.optim.SGD(m.parameters(), lr=0.1))
    attempt("ddp-inside", ddp_inside)

    def to_ddp():
        m = FSDP(mlp(), device_id=pt.device())
        pt.ElasticDataParallel(m, torch.optim.SGD(m.parameters(), lr=0.1))
    attempt("fsdp-to-elastic-ddp", to_ddp)
    json.dump(got, open(f"{out}.0", "w"))


if __name__ == "__main__":
    scenario, out = sys.argv[1], sys.argv[2]
    args = sys.argv[3:]
    if not MODERN:
        old_torch(out, int(os.environ.get("RANK", "0")))
    else:
        {"stats": lambda: stats(out, args[0], int(args[1])), "bad_input": lambda: bad_input(out, args[0]),
         "resize": lambda: resize(out, args[0], int(args[1])),
         "sharded": lambda: sharded(out, args[0], args[1])}[scenario]()
