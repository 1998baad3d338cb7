"""ElasticDataParallel: DistributedDataParallel whose communication hook
feeds the agent's gradient statistics bucket by bucket."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

from .. import _agent
from . import _session


_CHUNK = 4096


def _chunked(t, f):
    """f over 4096-element chunks (one row each), the chunks' results summed
    in double: as accurate as a double pass (the C++ agent's CPU backend
    does the same) at the cost of a float pass; a float32 sum over a whole
    bucket loses ~1e-4 relative, a float64 pass costs ~20x more."""
    n = t.numel()
    k = n - n % _CHUNK
    total = f(t[:k].view(-1, _CHUNK)).to(torch.float64).sum() if k else t.new_zeros((), dtype=torch.float64)
    if k < n:
        total = total + f(t[k:].view(1, -1)).to(torch.float64).sum()
    return total


def _wide_dot(a, b):
    """A GPU's way: a float64 copy and one dot product, 2-3 kernel launches
    where the chunked pass needs about 8. On an H100 the chunked norms were
    most of pollux.torch's 2-3 ms of host time per step (launches, not
    bandwidth: doc/benchmarks.md, "GPU figures"); the copy is cheap there."""
    x = a.reshape(-1).to(torch.float64)
    return torch.dot(x, x if b is a else b.reshape(-1).to(torch.float64))


def _sqnorm(t):
    if t.is_cuda:
        return _wide_dot(t, t)
    # Half-precision buckets are summed in float32, so they cannot overflow.
    wide = torch.float32 if t.dtype in (torch.float16, torch.bfloat16) else None
    return _chunked(t, lambda rows: torch.linalg.vector_norm(rows, dim=1, dtype=wide).to(torch.float64).square())


def _dot(a, b):
    if a.is_cuda:
        return _wide_dot(a, b)
    if a.dtype in (torch.float32, torch.float64):
        # One dot product per chunk (a batched matrix product): no a * b
        # temporary, a third of the time of the product and a sum.
        n = a.numel()
        k = n - n % _CHUNK
        total = a.new_zeros((), dtype=torch.float64)
        if k:
            total = torch.bmm(a[:k].view(-1, 1, _CHUNK), b[:k].view(-1, _CHUNK, 1)).to(torch.float64).sum()
        if k < n:
            total = total + torch.dot(a[k:].to(torch.float64), b[k:].to(torch.float64))
        return total
    return _chunked(a * b, lambda rows: rows.sum(dim=1, dtype=torch.float32))


def _dot_consuming(kept, t, kept_sqr, t_sqr):
    """<kept, t>, free to overwrite `kept` (the pair is over after it). On
    the CPU from the squared norm of the difference, taken in place:
    <a, b> = (|a|^2 + |b|^2 - |a - b|^2) / 2, with |a|^2 and |b|^2 already
    at hand. One vectorised subtraction and one norm pass cost less than
    the batched product (Debian's torch takes it to a generic BLAS: 4 ms on
    10.5 M floats against 1.4 ms for a norm pass, doc/benchmarks.md), and
    what the agent takes from the pair, |a|^2 + |b|^2 - 2 <a, b>, is then
    the difference's norm itself rather than a cancellation."""
    if kept.is_cuda or kept.dtype not in (torch.float32, torch.float64):
        return _dot(kept, t)
    return (kept_sqr + t_sqr - _sqnorm(kept.sub_(t))) * 0.5


def _keep(session, index, t):
    """A copy of bucket `index` in a buffer kept from pair to pair: a fresh
    tensor of a large bucket costs its page faults every time (16 ms for
    10.5 M floats on the CPU here, against 1.7 ms for the copy alone)."""
    buf = session.keep_buffers.get(index)
    if buf is None or buf.shape != t.shape or buf.dtype != t.dtype or buf.device != t.device:
        buf = session.keep_buffers[index] = torch.empty_like(t)
    return buf.copy_(t.detach())


def _hook(session, bucket):
    """Averages a bucket over the batch (replicas x micro-steps) and sums
    the squared norms before and after the all-reduce into the session."""
    buf = bucket.buffer()
    s = session
    if s.accum > 0:
        buf.div_(s.accum + 1)  # the accumulated sum of micro-gradients -> their mean
    local = _sqnorm(buf)
    s.local_sqr.add_(local)
    s.buckets += 1
    index, phase, world = bucket.index(), s.phase, s.env.world_size
    if bucket.is_last():
        s.compute_done()  # every gradient is computed; the all-reduce may still run
    fut = dist.all_reduce(buf, async_op=True).get_future()

    def averaged(f):
        t = f.value()[0]
        if world > 1:
            t.div_(world)
            sqr = _sqnorm(t)
        else:
            sqr = local  # one replica: the all-reduce averaged nothing, no second pass
        s.sync_sqr.add_(sqr)
        if phase == _agent.TwoStep.KEEP:
            s.kept[index] = (_keep(s, index, t), sqr)
        elif phase == _agent.TwoStep.COMPARE:
            kept = s.kept.get(index)
            if kept is not None and kept[0].shape == t.shape:
                s.prev_sqr.add_(kept[1])  # measured when it was kept
                s.dot_prev.add_(_dot_consuming(kept[0], t, kept[1], sqr))
                s.compared += 1
        return t

    return fut.then(averaged)


class ElasticDataParallel(DistributedDataParallel):
    """DistributedDataParallel for an elastic job.

    ElasticDataParallel(model, optimizer, lr_scheduler=None, lr_rule=None, scaler=None, **ddp_options)

    `model` is moved to pollux.torch.device(). The optimizer's step() and
    zero_grad() are wrapped: within a step of several micro-steps (gradient
    accumulation, chosen by the agent) step() only marks the micro-step and
    the gradients accumulate without an all-reduce (no_sync); on the last
    one the learning rate of every group is multiplied, for this update
    only, by the rule's factor: "adascale" the agent's gain r (the default
    for SGD and others), "adamscale" sqrt(r) (the default for Adam, AdamW
    and the Adam family), "sqrt" sqrt(M / M0), "linear" M / M0 (M the
    batch size, M0 the loader's batch_size). Rank 0 states the rule in the
    job's log. A pollux.torch.ProgressScheduler given as lr_scheduler is
    stepped by scale-invariant progress after every optimizer step. The gradients the optimizer sees are the mean
    over the whole batch. The model, optimizer and scheduler are
    checkpointed and restored by the agent's protocol.

    `scaler`: the loss scaler of fp16 mixed precision (torch.amp /
    torch.cuda.amp GradScaler, or an object with get_scale() for a static
    scale): the statistics are taken on unscaled gradients, and a step its
    step() skips (gradients overflowed) counts as neither progress nor
    statistics (doc/pytorch.md, "Mixed precision").
    """

    def __init__(self, module, optimizer, lr_scheduler=None, lr_rule=None, scaler=None, **ddp_options):
        session = _session.get("ElasticDataParallel")
        if not isinstance(optimizer, torch.optim.Optimizer):
            raise TypeError(f"optimizer: a torch.optim.Optimizer, not {type(optimizer).__name__}")
        ids = list(module.parameters())
        owned = {id(p) for g in optimizer.param_groups for p in g["params"]}
        if not any(id(p) in owned for p in ids):
            raise ValueError("the optimizer holds none of the model's parameters")
        device = session.env.device
        module = module.to(device)
        if device.type == "cuda":
            ddp_options.setdefault("device_ids", [device])
            ddp_options.setdefault("output_device", device)
        super().__init__(module, **ddp_options)
        self.register_comm_hook(session, _hook)
        session.attach_model(self, optimizer, lr_scheduler, lr_rule, scaler)
        self._pollux = session

    def forward(self, *inputs, **kwargs):
        # DDP decides at forward time whether the coming backward all-reduces.
        self.require_backward_grad_sync = self._pollux.syncs_now()
        return super().forward(*inputs, **kwargs)

    def zero_grad(self, set_to_none=True):
        if self._pollux.zero_grad_allowed():
            super().zero_grad(set_to_none=set_to_none)
