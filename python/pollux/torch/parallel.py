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


def _cpu_sqnorm(t):
    # Half-precision buckets are summed in float32, so they cannot overflow.
    wide = torch.float32 if t.dtype in (torch.float16, torch.bfloat16) else None
    return _chunked(t, lambda rows: torch.linalg.vector_norm(rows, dim=1, dtype=wide).to(torch.float64).square())


def _cpu_dot(a, b):
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


def _device_norm(t, out):
    """A GPU's way: |t| in one reduction kernel, accumulated in out's dtype
    (float32 but for a float64 model; CUDA's tree reduction: ~1e-7
    relative, squared in double later), into `out`. The float64 copy and
    dot product before it cost two more launches, an allocation and 5x the
    memory traffic per bucket, and the step is host-bound there
    (doc/benchmarks.md, "GPU figures")."""
    return torch.linalg.vector_norm(t.reshape(-1), dtype=out.dtype, out=out)


def _device_dot(a, b, out):
    """<a, b> in one kernel (cuBLAS, out's dtype) into `out`."""
    a, b = a.reshape(-1), b.reshape(-1)
    if a.dtype != out.dtype:  # a half-precision dot product would round its result to half
        a, b = a.to(out.dtype), b.to(out.dtype)
    return torch.dot(a, b, out=out)


def _wide(dtype):
    """The GPU's accumulation type for gradients of `dtype`."""
    return torch.float64 if dtype == torch.float64 else torch.float32


def _sqnorm(t):
    """|t|^2 as a float64 scalar tensor, as the hook takes it on t's device."""
    if t.is_cuda:
        return _device_norm(t, t.new_empty((), dtype=_wide(t.dtype))).to(torch.float64).square()
    return _cpu_sqnorm(t)


def _dot(a, b):
    """<a, b> as a float64 scalar tensor, as the hook takes it on a's device."""
    if a.is_cuda:
        return _device_dot(a, b, a.new_empty((), dtype=_wide(a.dtype))).to(torch.float64)
    return _cpu_dot(a, b)


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
    return (kept_sqr + t_sqr - _cpu_sqnorm(kept.sub_(t))) * 0.5


def _keep(session, index, t):
    """A copy of bucket `index` in a buffer kept from pair to pair: a fresh
    tensor of a large bucket costs its page faults every time (16 ms for
    10.5 M floats on the CPU here, against 1.7 ms for the copy alone)."""
    buf = session.keep_buffers.get(index)
    if buf is None or buf.shape != t.shape or buf.dtype != t.dtype or buf.device != t.device:
        buf = session.keep_buffers[index] = torch.empty_like(t)
    return buf.copy_(t.detach())


class _Norms:
    """The step's per-bucket norms on the device, one column per bucket,
    written in place by one kernel each (on a GPU; the CPU's chunked sums
    are written there as they come) and summed once at the step's end:

    row 0: |local bucket|, row 1: |averaged bucket| (more than one
    replica), row 2: <kept bucket, averaged bucket> (one replica's COMPARE
    step), row 3: |averaged bucket| of the last KEEP step (kept across steps).
    """

    def __init__(self, device, params):
        """params: the model's parameters (at least as many as its buckets)."""
        self.cuda = device.type == "cuda"
        wide = torch.float64 if not self.cuda or any(p.dtype == torch.float64 for p in params) else torch.float32
        self.acc = torch.zeros((4, max(1, len(params))), dtype=wide, device=device)
        self.columns = list(self.acc.t())  # column views, made once

    def reset(self):
        self.acc[:3].zero_()

    def norm(self, t, out):
        if self.cuda:
            _device_norm(t, out)
        else:
            out.copy_(_cpu_sqnorm(t).sqrt())

    def dot(self, kept, t, col, world):
        """<kept, t> into col[2]; may overwrite `kept` (the pair is over after it)."""
        if self.cuda:
            _device_dot(kept, t, col[2])
        else:
            col[2].copy_(_dot_consuming(kept, t, col[3].square(), col[1 if world > 1 else 0].square()))

    def totals(self, world):
        """(local_sqr, sync_sqr, prev_sqr, dot_prev): a float64 device tensor."""
        w = self.acc.to(torch.float64)
        sq = w.square().sum(1)
        return torch.stack((sq[0], sq[1 if world > 1 else 0], sq[3], w[2].sum()))

    def keep_averaged(self, world):
        """After a KEEP step: its averaged norms are the next step's kept ones."""
        self.acc[3].copy_(self.acc[1 if world > 1 else 0])


def _pair(s, index, t, col):
    """One replica's two-step estimate: keep the averaged bucket, or compare with the kept one."""
    if s.phase == _agent.TwoStep.KEEP:
        s.kept[index] = _keep(s, index, t)
    elif s.phase == _agent.TwoStep.COMPARE:
        kept = s.kept.get(index)
        if kept is not None and kept.shape == t.shape:
            s.norms.dot(kept, t, col, s.env.world_size)
            s.compared += 1


def _hook(session, bucket):
    """Averages a bucket over the batch (replicas x micro-steps) and
    writes its norms before and after the all-reduce into the session's."""
    buf = bucket.buffer()
    s = session
    if s.accum > 0:
        buf.div_(s.accum + 1)  # the accumulated sum of micro-gradients -> their mean
    index = bucket.index()
    col = s.norms.columns[index]
    s.norms.norm(buf, col[0])
    s.buckets += 1
    if bucket.is_last():
        s.compute_done()  # every gradient is computed; the all-reduce may still run
    world = s.env.world_size
    if world == 1:
        # One replica: the all-reduce averages nothing, and the local
        # bucket is the averaged one; its future only hands the bucket
        # back. (A future completed here, with no all-reduce, made DDP's
        # backward slower, not faster, on torch 1.13.)
        _pair(s, index, buf, col)
        return dist.all_reduce(buf, async_op=True).get_future().then(_first)

    def averaged(f):
        t = f.value()[0]
        t.div_(world)
        s.norms.norm(t, col[1])
        _pair(s, index, t, col)
        return t

    return dist.all_reduce(buf, async_op=True).get_future().then(averaged)


def _first(f):
    return f.value()[0]


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
        session.norms = _Norms(device, list(module.parameters()))
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
