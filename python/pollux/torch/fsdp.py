"""ElasticFSDP: a model sharded with FSDP (torch's FullyShardedDataParallel
wrapper) under pollux.torch, with the agent's gradient statistics taken
from what each rank holds and a sharded checkpoint (doc/pytorch.md,
"Sharded models: FSDP").

The port differs from DDP's in one place: FSDP replaces the model's
parameters with its flat shards, so the optimizer is made after wrapping,
over the wrapped model's parameters, and ElasticFSDP is given both:

    model = FullyShardedDataParallel(Net(), device_id=pollux.device())
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model = pollux.ElasticFSDP(model, optimizer, schedule)

Gradient statistics. FSDP's reduce-scatter leaves each rank one shard of
the averaged gradient. The communication hook (FSDP's register_comm_hook,
in place of its default reduce-scatter) sees, before it, this rank's whole
local gradient (the flat, padded, unsharded gradient of one FSDP unit,
summed over the step's micro-steps): its squared norm is the DDP hook's
local_sqr, exactly, and the agent's per-step packet sums it over the ranks
as it does for DDP. After the reduce-scatter the rank holds shard r of the
averaged gradient; the shards partition the flat gradient (FSDP pads with
zeros, which add nothing), so |g_avg|^2 = sum_r |shard_r(g_avg)|^2: one
scalar all-reduce (SUM) of the per-shard squared norms per step gives every
rank the averaged gradient's squared norm. Both numbers are the same sums
of squares as DDP's, only added in another order: the estimator gets what
DDP would give it (equal up to floating-point rounding, ~1e-7 relative),
so it stays unbiased exactly as it is for DDP (libgoodput's
GradNoiseEstimator: E|g_local|^2 = |G|^2 + tr(Sigma)/b and E|g_avg|^2 =
|G|^2 + tr(Sigma)/(n b) for independent local gradients), with no
estimate of one rank's norm from another's shard. The cost over plain
FSDP: one norm pass over the local unsharded gradient per FSDP unit (what
DDP's hook reads per bucket), one over the shard, and the 8-byte
all-reduce per step.

Checkpoint: torch.distributed.checkpoint (DCP) saves the sharded model and
optimizer state, every rank writing its own shards, nothing gathered on
rank 0; loading reshards, so a job checkpointed on N ranks resumes on M.
The rest (loader position, LR scheduler, registered objects, RNGs) is
saved as for DDP. A checkpoint of the other wrapping is refused.

Supported: torch >= 2.2 (FSDP's sharded state dicts with
torch.distributed.checkpoint's save and load); tested on Debian 13's 2.6
(CPU, gloo) only.
Sharding strategies FULL_SHARD, SHARD_GRAD_OP and NO_SHARD (the hybrid
ones take no communication hook in torch). fully_shard (FSDP2, DTensor
parameters) is refused with a clear error: not supported yet.
"""
import importlib
import os

import torch
import torch.distributed as dist

from .._capi import PolluxError
from . import _session
from .parallel import _Norms, _pair, _OTHER_PARALLELISMS

MIN_TORCH = (2, 2)
_DCP_DIR = "pytorch-fsdp"  # the DCP checkpoint's folder inside the agent's checkpoint directory


def _torch_version():
    v = torch.__version__.split("+")[0].split(".")
    try:
        return int(v[0]), int(v[1])
    except (ValueError, IndexError):
        return (0, 0)


def _fsdp_module():
    """torch.distributed.fsdp, or a PolluxError naming the torch needed."""
    need = ".".join(map(str, MIN_TORCH))
    if _torch_version() < MIN_TORCH:
        raise PolluxError(f"pollux.torch.ElasticFSDP needs torch >= {need} (FullyShardedDataParallel with "
                          f"torch.distributed.checkpoint's sharded state dicts); this is torch {torch.__version__}: "
                          f"use ElasticDataParallel (data parallelism) on it, or a newer torch (doc/pytorch.md, "
                          f"\"Sharded models: FSDP\")")
    try:
        fsdp = importlib.import_module("torch.distributed.fsdp")
        importlib.import_module("torch.distributed.checkpoint.state_dict")
    except Exception as e:  # (Debian 12's 1.13 under Python 3.11 fails at import with a ValueError)
        raise PolluxError(f"pollux.torch.ElasticFSDP needs torch >= {need} with torch.distributed.fsdp and "
                          f"torch.distributed.checkpoint; importing them failed on torch {torch.__version__}: "
                          f"{type(e).__name__}: {e}") from e
    return fsdp


def _refuse_unsupported(module, fsdp):
    """ValueError for what ElasticFSDP does not handle inside an FSDP model."""
    FSDP = fsdp.FullyShardedDataParallel
    if not isinstance(module, FSDP):
        for cls in type(module).__mro__:
            if cls.__name__ == "FSDPModule":
                break
        else:
            raise ValueError(f"ElasticFSDP takes a model wrapped with torch.distributed.fsdp.FullyShardedDataParallel "
                             f"(then an optimizer over its parameters), not a {type(module).__name__}: a plain model "
                             f"goes to ElasticDataParallel")
    for sub in module.modules():
        for cls in type(sub).__mro__:
            if cls.__name__ == "FSDPModule":
                raise ValueError("the model is sharded with fully_shard (FSDP2); pollux.torch supports FSDP through "
                                 "the FullyShardedDataParallel wrapper only (doc/pytorch.md, \"Sharded models: FSDP\")")
            what = _OTHER_PARALLELISMS.get(cls.__name__)
            if what and cls.__name__ != "FullyShardedDataParallel":
                raise ValueError(f"the model is wrapped with {what} inside FSDP; pollux.torch supports data "
                                 f"parallelism (ElasticDataParallel) and FSDP's FullyShardedDataParallel "
                                 f"(ElasticFSDP) only: tensor and pipeline parallel models are not supported")
    for name, p in module.named_parameters():
        if type(p).__name__ == "DTensor" or type(getattr(p, "data", None)).__name__ == "DTensor":
            raise ValueError(f"parameter {name} is a DTensor (tensor parallelism or FSDP2); pollux.torch supports "
                             f"DDP and FSDP's FullyShardedDataParallel only")
    hybrid = {"HYBRID_SHARD", "_HYBRID_SHARD_ZERO2"}
    for m in FSDP.fsdp_modules(module):
        strategy = getattr(m, "sharding_strategy", None)
        if strategy is not None and strategy.name in hybrid:
            raise ValueError(f"sharding strategy {strategy.name}: ElasticFSDP supports FULL_SHARD, SHARD_GRAD_OP and "
                             f"NO_SHARD (torch takes no communication hook for the hybrid ones)")


def _hook(session, grad, output=None):
    """FSDP's communication hook, once per FSDP unit and synchronized
    backward: `grad` is this rank's whole local gradient of the unit (flat,
    padded with zeros, summed over the step's micro-steps), `output` the
    shard of the averaged gradient to fill (None for NO_SHARD: average
    `grad` in place). Writes |local|^2 and |shard of the average|^2 into
    the session's norms (parallel._Norms, one column per unit)."""
    s = session
    if s.accum > 0:
        grad.div_(s.accum + 1)  # the sum of the micro-gradients -> their mean
    index = s.buckets
    s.buckets += 1
    norms = s.norms
    cells = norms.cells(index)
    norms.norm(grad, cells, 0, index)
    if not s.fsdp_callback_queued:
        # c, the step's last gradient computed, is the backward's end: a
        # callback of autograd's engine, after every unit's hook.
        s.fsdp_callback_queued = True
        torch.autograd.Variable._execution_engine.queue_callback(s.fsdp_backward_done)
    world = s.env.world_size
    group = s.fsdp_group
    if output is None:  # NO_SHARD: every rank holds the whole averaged gradient
        if world > 1:
            dist.all_reduce(grad, group=group)
            grad.div_(world)
            norms.norm(grad, cells, 1, index)
        _pair(s, index, grad, cells)
        return
    if world > 1:
        dist.reduce_scatter_tensor(output, grad, group=group)
        output.div_(world)
    else:
        output.copy_(grad)
    norms.norm(output, cells, 1, index)
    _pair(s, index, output, cells)


class _ShardedNorms(_Norms):
    """_Norms whose averaged row holds per-shard squares: their sum over
    the ranks is one scalar all-reduce at the step's end."""

    def __init__(self, device, params, group, sharded):
        super().__init__(device, params)
        self.group, self.sharded = group, sharded

    def totals(self, world):
        v = super().totals(world)
        if world > 1 and self.sharded:
            # local_sqr is this rank's (the agent's packet sums it); the
            # averaged gradient's is the sum of every rank's shard.
            dist.all_reduce(v[1:2], group=self.group)
        return v


class ElasticFSDP(torch.nn.Module):
    """A FullyShardedDataParallel model for an elastic job.

    ElasticFSDP(fsdp_model, optimizer, lr_scheduler=None, lr_rule=None, scaler=None)

    `fsdp_model`: the model wrapped with torch.distributed.fsdp.
    FullyShardedDataParallel (its units as the user chose: auto_wrap_policy,
    nested wrappers), not yet run; `optimizer` over its parameters (made
    after the wrapping). As ElasticDataParallel otherwise: the optimizer's
    step() and zero_grad() are wrapped (micro-steps accumulate without a
    reduce-scatter, as FSDP's no_sync; the learning-rate rule on the last),
    the lr_scheduler, rule and scaler mean the same, and the model,
    optimizer (sharded, through torch.distributed.checkpoint), scheduler
    and loader are checkpointed and restored by the agent's protocol. The
    wrapped model is `.module`.
    """

    def __init__(self, module, optimizer, lr_scheduler=None, lr_rule=None, scaler=None):
        fsdp = _fsdp_module()
        super().__init__()
        session = _session.get("ElasticFSDP")
        _refuse_unsupported(module, fsdp)
        if not isinstance(optimizer, torch.optim.Optimizer):
            raise TypeError(f"optimizer: a torch.optim.Optimizer, not {type(optimizer).__name__}")
        params = list(module.parameters())
        owned = {id(p) for g in optimizer.param_groups for p in g["params"]}
        if not any(id(p) in owned for p in params):
            raise ValueError("the optimizer holds none of the FSDP model's parameters: make it after wrapping, "
                             "over the wrapped model's parameters (FSDP replaces them with its flat shards)")
        self.module = module
        self._units = fsdp.FullyShardedDataParallel.fsdp_modules(module)
        strategy = getattr(module, "sharding_strategy", None)
        sharded = strategy is None or strategy.name != "NO_SHARD"
        group = getattr(module, "process_group", None)
        session.norms = _ShardedNorms(session.env.device, params, group, sharded)
        session.fsdp_group = group
        session.fsdp_callback_queued = False
        session.fsdp_backward_done = self._backward_done
        session.wrapping = "fsdp"
        if session.agent is not None:  # else attach_loader() declares it
            # The throughput model's sharded form: FSDP's collectives are
            # inside every micro-step (libgoodput's pollux/throughput.h).
            session.agent.set_sharded(True)
        try:
            module.register_comm_hook(session, _hook)
        except AssertionError as e:
            raise PolluxError(f"ElasticFSDP could not register its communication hook ({e}): give it the FSDP model "
                              f"before its first forward pass, without a communication hook of its own") from e
        session.attach_model(self, optimizer, lr_scheduler, lr_rule, scaler)
        self._pollux = session

    def _backward_done(self):
        s = self._pollux
        s.fsdp_callback_queued = False
        s.compute_done()

    def forward(self, *inputs, **kwargs):
        # What FSDP's no_sync() sets, for the coming backward: reduce-scatter
        # on the step's last micro-step only.
        sync = self._pollux.syncs_now()
        for m in self._units:
            m._sync_gradients = sync
        return self.module(*inputs, **kwargs)

    def zero_grad(self, set_to_none=True):
        if self._pollux.zero_grad_allowed():
            self.module.zero_grad(set_to_none=set_to_none)


# --- checkpoint (Session.save/load call these on every rank) -----------------

class _Unpatched:
    """The optimizer's own step() and zero_grad() for a while: FSDP's
    optim_state_dict initialises an optimizer without state by a step on
    zero gradients,
    outside the step protocol that the patched step() enforces."""

    def __init__(self, optimizer):
        self.optimizer = optimizer

    def __enter__(self):
        o = self.optimizer
        self.patched = o.step, o.zero_grad
        o.step, o.zero_grad = o._pollux_unpatched
        return o

    def __exit__(self, *exc):
        self.optimizer.step, self.optimizer.zero_grad = self.patched


def _sharded(model):
    """FSDP's sharded state dicts (ShardedTensor: every rank its own parts)
    for a while. (FSDP's own calls, not torch.distributed.checkpoint's
    get_state_dict: on 2.6 that fails on a rank holding no part of some
    parameter, "Only single local shard is supported", as a small bias
    is held by one rank.)"""
    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP, StateDictType
    return FSDP.state_dict_type(model, StateDictType.SHARDED_STATE_DICT)


def save(session, path):
    """The sharded model and optimizer into path/pytorch-fsdp (collective)."""
    import torch.distributed.checkpoint as dcp
    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
    model = session.model.module
    with _Unpatched(session.optimizer) as opt, _sharded(model):
        state = {"model": model.state_dict(), "optimizer": FSDP.optim_state_dict(model, opt)}
    dcp.save(state, checkpoint_id=os.path.join(path, _DCP_DIR))


def load(session, path):
    """Loads path/pytorch-fsdp into the model and optimizer, resharded to
    this run's ranks (collective)."""
    import torch.distributed.checkpoint as dcp
    from torch.distributed.checkpoint.optimizer import load_sharded_optimizer_state_dict
    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
    where = os.path.join(path, _DCP_DIR)
    if not os.path.isdir(where):
        raise PolluxError(f"{path}: no sharded model state ({_DCP_DIR}/) in this FSDP job's checkpoint")
    model = session.model.module
    with _Unpatched(session.optimizer) as opt, _sharded(model):
        state = {"model": model.state_dict()}
        dcp.load(state, checkpoint_id=where)
        model.load_state_dict(state["model"])
        optim = load_sharded_optimizer_state_dict(model_state_dict=state["model"], optimizer_key="optimizer",
                                                  storage_reader=dcp.FileSystemReader(where))["optimizer"]
        # An optimizer without state (SGD without momentum) saved an empty
        # "state", which torch.distributed.checkpoint does not write back.
        optim.setdefault("state", {})
        opt.load_state_dict(FSDP.optim_state_dict_to_load(model, opt, optim))
