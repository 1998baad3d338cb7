"""ElasticFSDP: a model sharded with FSDP under pollux.torch, either torch's
FullyShardedDataParallel wrapper (FSDP1) or fully_shard (FSDP2, DTensor
parameters), with the agent's gradient statistics taken from what each
rank holds and a sharded checkpoint (doc/pytorch.md, "Sharded models:
FSDP").

The port differs from DDP's in one place: FSDP replaces the model's
parameters with its shards, so the optimizer is made after sharding, over
the sharded model's parameters, and ElasticFSDP is given both:

    model = FullyShardedDataParallel(Net(), device_id=pollux.device())
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model = pollux.ElasticFSDP(model, optimizer, schedule)

or, with fully_shard (each block, then the root):

    model = Net().to(pollux.device())
    for block in model.blocks:
        fully_shard(block)
    fully_shard(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model = pollux.ElasticFSDP(model, optimizer, schedule)

Gradient statistics. FSDP's reduce-scatter leaves each rank one shard of
the averaged gradient. Both numbers DDP's hook measures are taken around
it:

FSDP1: the communication hook (FSDP's register_comm_hook, in place of its
default reduce-scatter) sees, before it, this rank's whole local gradient
(the flat, padded, unsharded gradient of one FSDP unit, summed over the
step's micro-steps): its squared norm is the DDP hook's local_sqr, exactly,
and the agent's per-step packet sums it over the ranks as it does for DDP.
After the reduce-scatter the rank holds shard r of the averaged gradient.

FSDP2 (fully_shard) takes no communication hook (torch 2.6). Autograd
accumulates each parameter's gradient into FSDP2's unsharded parameter
(the all-gathered one the forward used), and FSDP2 reads that .grad in its
post-backward to reduce-scatter it, after autograd's AccumulateGrad node
of the parameter ran: a post-accumulate-grad hook on the unsharded
parameter (registered after the forward that made it) sees the whole
local gradient of the parameter, before the reduce-scatter. On a
micro-step that only accumulates, FSDP2 (set_requires_gradient_sync(False))
keeps the unsharded .grad and the next backward adds to it, so on the
step's last micro-step the hook sees the sum over the micro-steps (which it
divides into their mean, as DDP's hook does). After the backward (a
callback of autograd's engine, queued after FSDP2's own, which ends the
reduce-scatters) each parameter's sharded .grad is a DTensor whose local
tensor is this rank's shard of the averaged gradient. (A mixed-precision
policy whose reduce dtype differs from the parameters' makes FSDP2 keep
the accumulated gradient elsewhere: refused.)

Either way the shards partition the gradient (padding, FSDP1's, is zeros,
which add nothing), so |g_avg|^2 = sum_r |shard_r(g_avg)|^2: one scalar
all-reduce (SUM) of the per-shard squared norms per step gives every rank
the averaged gradient's squared norm. Both numbers are the same sums of
squares as DDP's, only added in another order: the estimator gets what
DDP would give it (equal up to floating-point rounding, ~1e-7 relative),
so it stays unbiased exactly as it is for DDP (libgoodput's
GradNoiseEstimator: E|g_local|^2 = |G|^2 + tr(Sigma)/b and E|g_avg|^2 =
|G|^2 + tr(Sigma)/(n b) for independent local gradients), with no
estimate of one rank's norm from another's shard. The cost over plain
FSDP: one norm pass over the local unsharded gradient per FSDP1 unit or
FSDP2 parameter (what DDP's hook reads per bucket), one over the shard,
and the 8-byte all-reduce per step.

Checkpoint: torch.distributed.checkpoint (DCP) saves the sharded model and
optimizer state, every rank writing its own shards, nothing gathered on
rank 0; loading reshards, so a job checkpointed on N ranks resumes on M.
FSDP1's goes into pytorch-fsdp/ (FSDP's own sharded state dicts), FSDP2's
into pytorch-fsdp2/ (torch.distributed.checkpoint.state_dict's
get_state_dict/set_state_dict). The rest (loader position, LR scheduler,
registered objects, RNGs) is saved as for DDP. A checkpoint of another
wrapping (DDP's, or the other FSDP's) is refused.

Supported: FSDP1 on torch >= 2.2 (FSDP's sharded state dicts with
torch.distributed.checkpoint's save and load), FSDP2 on torch >= 2.6
(fully_shard exported by torch.distributed.fsdp); tested on Debian 13's
2.6 (CPU, gloo) only. FSDP1: sharding strategies FULL_SHARD, SHARD_GRAD_OP
and NO_SHARD (the hybrid ones take no communication hook in torch). FSDP2:
fully_shard over a 1-D device mesh of every rank; HSDP (a 2-D mesh),
DTensor tensor parallelism, CPU offload and a reduce dtype other than the
parameters' are refused. FSDP2 on torch 2.6's CPU needs three workarounds,
made here (_cpu_streams, parameters unsharded from forward to backward,
_forget_post_forward), and gloo's reduce-scatter a sum in place of
FSDP2's average (ElasticFSDP.__init__); not yet run on a GPU.
"""
import importlib
import os

import torch
import torch.distributed as dist

from .._capi import PolluxError
from . import _session
from .parallel import _Norms, _pair, _OTHER_PARALLELISMS

MIN_TORCH = (2, 2)
MIN_TORCH_FSDP2 = (2, 6)  # torch.distributed.fsdp.fully_shard and FSDPModule, public
_DCP_DIR = "pytorch-fsdp"  # the DCP checkpoint's folder inside the agent's checkpoint directory (FSDP1)
_DCP_DIR2 = "pytorch-fsdp2"  # the same for FSDP2 (fully_shard)


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


def _has_class(module, name):
    return any(cls.__name__ == name for cls in type(module).__mro__)


def _is_fsdp2(module):
    """Whether fully_shard (FSDP2) sharded the model or a part of it (by
    class name: torch before 2.6 has no public FSDPModule to compare with)."""
    return any(_has_class(sub, "FSDPModule") for sub in module.modules())


def _fsdp2_module(fsdp):
    """torch.distributed.fsdp with fully_shard, or a PolluxError naming the torch needed."""
    need = ".".join(map(str, MIN_TORCH_FSDP2))
    if _torch_version() < MIN_TORCH_FSDP2 or not hasattr(fsdp, "fully_shard") or not hasattr(fsdp, "FSDPModule"):
        raise PolluxError(f"pollux.torch.ElasticFSDP needs torch >= {need} for a model sharded with fully_shard "
                          f"(FSDP2: torch.distributed.fsdp.fully_shard and FSDPModule, public); this is torch "
                          f"{torch.__version__}: use FSDP's FullyShardedDataParallel wrapper on it (torch >= "
                          f"{'.'.join(map(str, MIN_TORCH))}), or a newer torch (doc/pytorch.md, \"Sharded models: FSDP\")")
    return fsdp


def _refuse_other_inside(module, fsdp_name, own):
    """ValueError for a wrapper of another parallelism inside the FSDP
    model; `own`: the class names of the FSDP that wraps it."""
    for sub in module.modules():
        for cls in type(sub).__mro__:
            what = _OTHER_PARALLELISMS.get(cls.__name__)
            if what and cls.__name__ not in own:
                raise ValueError(f"the model is wrapped with {what} inside {fsdp_name}; pollux.torch supports data "
                                 f"parallelism (ElasticDataParallel) and FSDP (ElasticFSDP: FullyShardedDataParallel "
                                 f"or fully_shard) only: tensor and pipeline parallel models are not supported")


def _cpu_streams():
    """torch 2.6's CPU stand-in streams (torch.cpu.Stream) lack
    record_event() and wait_event(), which FSDP2's all-gather and
    reduce-scatter call on more than one rank: added where missing. The CPU
    runs every operation in order on one thread, so an event is recorded
    when it is made and waiting on it is nothing (torch.cpu.Event's own
    methods are no-ops too)."""
    cpu = getattr(torch, "cpu", None)
    stream, event = getattr(cpu, "Stream", None), getattr(cpu, "Event", None)
    if stream is None or event is None:
        return
    if not hasattr(stream, "record_event"):
        stream.record_event = lambda self, e=None: e if e is not None else event()
    if not hasattr(stream, "wait_event"):
        stream.wait_event = lambda self, e: None


def _refuse_unsupported_fsdp2(module, fsdp):
    """ValueError for what ElasticFSDP does not handle in a fully_shard model;
    returns its FSDP2 parameter groups (torch's FSDPParamGroup, the root's
    first), every group's parameters being sharded over the same 1-D mesh."""
    if not isinstance(module, fsdp.FSDPModule):
        raise ValueError(f"ElasticFSDP takes a model sharded with fully_shard at its root (fully_shard each block, "
                         f"then the whole model, then the optimizer over its parameters); the root here is a "
                         f"{type(module).__name__} that fully_shard did not shard")
    if any(isinstance(sub, fsdp.FullyShardedDataParallel) for sub in module.modules()):
        raise ValueError("the model mixes FSDP's FullyShardedDataParallel wrapper and fully_shard (FSDP2): "
                         "ElasticFSDP takes one of them")
    _refuse_other_inside(module, "fully_shard (FSDP2)", ("FullyShardedDataParallel", "FSDPModule"))
    groups = []
    for sub in module.modules():
        if not isinstance(sub, fsdp.FSDPModule):
            continue
        state = sub._get_fsdp_state()
        group = getattr(state, "_fsdp_param_group", None)
        if group is not None and group not in groups:
            groups.append(group)
    managed = {id(fp.sharded_param) for g in groups for fp in g.fsdp_params}
    for name, p in module.named_parameters():
        if id(p) not in managed:
            raise ValueError(f"parameter {name} is not sharded by fully_shard: ElasticFSDP takes a model that "
                             f"fully_shard shards whole (fully_shard its root last)")
        mesh = p.device_mesh
        if mesh.ndim != 1:
            raise ValueError(f"parameter {name} is a DTensor on a {mesh.ndim}-D device mesh (HSDP, or tensor "
                             f"parallelism with FSDP2): ElasticFSDP supports fully_shard over a 1-D mesh of every "
                             f"rank only")
        if mesh.size() != dist.get_world_size():
            raise ValueError(f"parameter {name} is sharded over {mesh.size()} of the job's "
                             f"{dist.get_world_size()} ranks: ElasticFSDP supports fully_shard over every rank")
    for g in groups:
        if type(g.offload_policy).__name__ == "CPUOffloadPolicy":
            raise ValueError("fully_shard's CPUOffloadPolicy: not supported by ElasticFSDP")
        mp = g.mp_policy
        for fp in g.fsdp_params:
            param_dtype = mp.param_dtype or fp.sharded_param.dtype
            if mp.reduce_dtype is not None and mp.reduce_dtype != param_dtype:
                raise ValueError(f"fully_shard's MixedPrecisionPolicy with reduce_dtype {mp.reduce_dtype} and "
                                 f"param_dtype {param_dtype}: ElasticFSDP supports a reduce dtype equal to the "
                                 f"parameters' only (FSDP2 keeps a gradient accumulated in another dtype where its "
                                 f"statistics cannot see it)")
    return groups


def _refuse_unsupported(module, fsdp):
    """ValueError for what ElasticFSDP does not handle inside an FSDP model."""
    FSDP = fsdp.FullyShardedDataParallel
    if not isinstance(module, FSDP):
        raise ValueError(f"ElasticFSDP takes a model wrapped with torch.distributed.fsdp.FullyShardedDataParallel "
                         f"or sharded with fully_shard (then an optimizer over its parameters), not a "
                         f"{type(module).__name__}: a plain model goes to ElasticDataParallel")
    _refuse_other_inside(module, "FSDP", ("FullyShardedDataParallel",))
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
    """An FSDP model for an elastic job.

    ElasticFSDP(fsdp_model, optimizer, lr_scheduler=None, lr_rule=None, scaler=None)

    `fsdp_model`: the model wrapped with torch.distributed.fsdp.
    FullyShardedDataParallel (its units as the user chose: auto_wrap_policy,
    nested wrappers; torch >= 2.2), or sharded with fully_shard (FSDP2:
    typically each block, then the root; torch >= 2.6), not yet run;
    `optimizer` over its parameters (made after the sharding). As
    ElasticDataParallel otherwise: the optimizer's step() and zero_grad()
    are wrapped (micro-steps accumulate without a reduce-scatter, as FSDP's
    no_sync or FSDP2's set_requires_gradient_sync(False); the learning-rate
    rule on the last), the lr_scheduler, rule and scaler mean the same, and
    the model, optimizer (sharded, through torch.distributed.checkpoint),
    scheduler and loader are checkpointed and restored by the agent's
    protocol. The sharded model is `.module`.
    """

    def __init__(self, module, optimizer, lr_scheduler=None, lr_rule=None, scaler=None):
        fsdp = _fsdp_module()
        super().__init__()
        session = _session.get("ElasticFSDP")
        fsdp2 = _is_fsdp2(module)
        if fsdp2:
            _fsdp2_module(fsdp)
            groups = _refuse_unsupported_fsdp2(module, fsdp)
            if session.env.device.type == "cpu":
                _cpu_streams()
                # torch 2.6's FSDP2 on the CPU fails in the backward after a
                # forward that resharded ("one of the variables needed for
                # gradient computation has been modified by an inplace
                # operation", with or without pollux.torch): on the CPU the
                # parameters stay unsharded from the forward to the
                # backward (reshard_after_forward=False).
                for g in groups:
                    g.post_forward_mesh_info = None
        else:
            _refuse_unsupported(module, fsdp)
        if not isinstance(optimizer, torch.optim.Optimizer):
            raise TypeError(f"optimizer: a torch.optim.Optimizer, not {type(optimizer).__name__}")
        params = list(module.parameters())
        owned = {id(p) for g in optimizer.param_groups for p in g["params"]}
        if not any(id(p) in owned for p in params):
            raise ValueError("the optimizer holds none of the FSDP model's parameters: make it after sharding, "
                             "over the sharded model's parameters (FSDP replaces them with its shards)")
        self.module = module
        self._fsdp2 = fsdp2
        if fsdp2:
            # FSDP2's parameters, one norm column each: (FSDPParam, the unsharded parameter hooked).
            self._params = [[fp, None] for g in groups for fp in g.fsdp_params]
            self._groups = groups
            self._sync = None  # what set_requires_gradient_sync was last given
            group = groups[0].mesh_info.shard_process_group if groups else None
            sharded = session.env.world_size > 1
            # gloo's reduce-scatter sums where FSDP2 asks it to average
            # (ReduceOp.AVG, for float32 and bfloat16 gradients; torch 2.6
            # on the CPU: the sharded gradients came out world_size times
            # the mean): FSDP2 is told to sum, and the hook divides.
            # (A group given a reduce op of its own, set_reduce_scatter_divide_factor's, keeps it.)
            self._divide = [1] * len(self._params)  # per parameter: what the hook divides by after the norm
            if sharded and dist.get_backend(group) == "gloo":
                i = 0
                for g in groups:
                    if g.reduce_scatter_reduce_op is None:
                        g.reduce_scatter_reduce_op = dist.ReduceOp.SUM
                        self._divide[i:i + len(g.fsdp_params)] = [session.env.world_size] * len(g.fsdp_params)
                    i += len(g.fsdp_params)
            session.wrapping = "fsdp2"
        else:
            self._units = fsdp.FullyShardedDataParallel.fsdp_modules(module)
            strategy = getattr(module, "sharding_strategy", None)
            sharded = strategy is None or strategy.name != "NO_SHARD"
            group = getattr(module, "process_group", None)
            session.wrapping = "fsdp"
        session.norms = _ShardedNorms(session.env.device, params, group, sharded)
        session.fsdp_group = group
        session.fsdp_callback_queued = False
        session.fsdp_backward_done = self._backward_done
        if session.agent is not None:  # else attach_loader() declares it
            # The throughput model's sharded form: FSDP's collectives are
            # inside every micro-step (libgoodput's pollux/throughput.h).
            session.agent.set_sharded(True)
        if not fsdp2:
            try:
                module.register_comm_hook(session, _hook)
            except AssertionError as e:
                raise PolluxError(f"ElasticFSDP could not register its communication hook ({e}): give it the FSDP "
                                  f"model before its first forward pass, without a communication hook of its own") from e
        session.attach_model(self, optimizer, lr_scheduler, lr_rule, scaler)
        self._pollux = session

    def _backward_done(self):
        s = self._pollux
        s.fsdp_callback_queued = False
        if self._fsdp2:
            self._shard_norms()
        s.compute_done()

    # --- FSDP2 ---------------------------------------------------------------
    def _hook_unsharded(self):
        """A post-accumulate-grad hook on each FSDP2 unsharded parameter that
        the forward made (FSDP2 makes them at its first all-gather and keeps
        them; checked at every forward, in case it makes another)."""
        for i, entry in enumerate(self._params):
            p = getattr(entry[0], "_unsharded_param", None)
            if p is not None and p is not entry[1]:
                entry[1] = p
                p.register_post_accumulate_grad_hook(lambda param, i=i: self._accumulated(i, param))

    def _post_forward_order(self):
        order = getattr(self._groups[0].comm_ctx, "post_forward_order", None) if self._groups else None
        return len(order) if order is not None else 0

    def _forget_post_forward(self, before):
        """After a forward without gradients (evaluation): no backward
        follows, so the groups it ran are taken off FSDP2's post-forward
        order, which the next backward prefetches by (torch 2.6 clears it
        at a backward's end only: the next backward's prefetches went to
        the wrong groups, and on the CPU its end failed, "Torch not
        compiled with CUDA enabled")."""
        if not self._groups:
            return
        order = getattr(self._groups[0].comm_ctx, "post_forward_order", None)
        if order is None or len(order) <= before:
            return
        del order[before:]
        for g in self._groups:
            indices = getattr(g, "_post_forward_indices", None)
            if indices:
                indices[:] = [i for i in indices if i < before]

    def _accumulated(self, index, param):
        """After autograd accumulated the unsharded parameter's gradient of
        this backward: on the step's last micro-step its .grad is the whole
        local gradient summed over the micro-steps (FSDP2 reads it after
        this, to reduce-scatter it): their mean, and its norm."""
        s = self._pollux
        g = param.grad
        if g is None or not s.syncs_now():
            return  # a micro-step that only accumulates
        if s.accum > 0:
            g.div_(s.accum + 1)  # the sum of the micro-gradients -> their mean
        norms = s.norms
        norms.norm(g, norms.cells(index), 0, index)
        if self._divide[index] > 1 and g.dtype in (torch.float32, torch.bfloat16):
            g.div_(self._divide[index])  # (float16: FSDP2's own pre- and post-division, with the sum)
        s.buckets += 1
        if not s.fsdp_callback_queued:
            # The backward's end: a callback of autograd's engine, queued
            # after FSDP2's own (queued at the backward's start), which
            # ends the reduce-scatters and leaves the sharded gradients.
            s.fsdp_callback_queued = True
            torch.autograd.Variable._execution_engine.queue_callback(s.fsdp_backward_done)

    def _shard_norms(self):
        """|this rank's shard of the averaged gradient| per parameter."""
        s = self._pollux
        norms = s.norms
        world = s.env.world_size
        for i, (fp, _) in enumerate(self._params):
            g = fp.sharded_param.grad
            if g is None:
                continue
            t = g.to_local() if hasattr(g, "to_local") else g
            cells = norms.cells(i)
            if world > 1:
                norms.norm(t, cells, 1, i)
            _pair(s, i, t, cells)

    def forward(self, *inputs, **kwargs):
        # What FSDP's no_sync() sets, for the coming backward: reduce-scatter
        # on the step's last micro-step only.
        sync = self._pollux.syncs_now()
        if self._fsdp2:
            if sync != self._sync:
                self.module.set_requires_gradient_sync(sync)
                self._sync = sync
            if torch.is_grad_enabled():
                out = self.module(*inputs, **kwargs)
                self._hook_unsharded()
                return out
            before = self._post_forward_order()
            out = self.module(*inputs, **kwargs)
            self._forget_post_forward(before)
            return out
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
    """The sharded model and optimizer into path/pytorch-fsdp (FSDP1) or
    path/pytorch-fsdp2 (FSDP2) (collective)."""
    import torch.distributed.checkpoint as dcp
    if session.wrapping == "fsdp2":
        from torch.distributed.checkpoint.state_dict import get_state_dict
        with _Unpatched(session.optimizer) as opt:
            model_state, optim_state = get_state_dict(session.model.module, opt)
        dcp.save({"model": model_state, "optimizer": optim_state}, checkpoint_id=os.path.join(path, _DCP_DIR2))
        return
    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
    model = session.model.module
    with _Unpatched(session.optimizer) as opt, _sharded(model):
        state = {"model": model.state_dict(), "optimizer": FSDP.optim_state_dict(model, opt)}
    dcp.save(state, checkpoint_id=os.path.join(path, _DCP_DIR))


def load(session, path):
    """Loads path/pytorch-fsdp into the model and optimizer, resharded to
    this run's ranks (collective)."""
    import torch.distributed.checkpoint as dcp
    if session.wrapping == "fsdp2":
        return _load_fsdp2(session, path, dcp)
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


def _load_fsdp2(session, path, dcp):
    """FSDP2: torch.distributed.checkpoint.state_dict's sharded (DTensor)
    state dicts, filled by dcp.load (resharded to this run's ranks) and set."""
    from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict
    where = os.path.join(path, _DCP_DIR2)
    if not os.path.isdir(where):
        raise PolluxError(f"{path}: no sharded model state ({_DCP_DIR2}/) in this FSDP2 job's checkpoint")
    model = session.model.module
    with _Unpatched(session.optimizer) as opt:
        model_state, optim_state = get_state_dict(model, opt)
        state = {"model": model_state, "optimizer": optim_state}
        dcp.load(state, checkpoint_id=where)
        set_state_dict(model, opt, model_state_dict=state["model"], optim_state_dict=state["optimizer"])
