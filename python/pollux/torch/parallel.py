"""ElasticDataParallel: DistributedDataParallel whose communication hook
feeds the agent's gradient statistics bucket by bucket."""
import torch
from torch.nn.parallel import DistributedDataParallel

from .. import _agent
from . import _session


_CHUNK = 4096


def _device_norm(t, out):
    """A GPU's way: |t| in one reduction kernel, accumulated in out's dtype
    (float32 but for a float64 model; CUDA's tree reduction: ~1e-7
    relative, squared in double later), into `out`. The float64 copy and
    dot product before it cost two more launches, an allocation and 5x the
    memory traffic per bucket, and the step is host-bound there
    (doc/benchmarks.md, "GPU figures")."""
    return torch.linalg.vector_norm(t if t.dim() == 1 else t.reshape(-1), dtype=out.dtype, out=out)


def _device_dot(a, b, out):
    """<a, b> in one kernel (cuBLAS, out's dtype) into `out`."""
    a, b = a.reshape(-1), b.reshape(-1)
    if a.dtype != out.dtype:  # a half-precision dot product would round its result to half
        a, b = a.to(out.dtype), b.to(out.dtype)
    return torch.dot(a, b, out=out)


def _wide(dtype):
    """The GPU's accumulation type for gradients of `dtype`."""
    return torch.float64 if dtype == torch.float64 else torch.float32


class _ChunkPlan:
    """The CPU's |t| of one tensor kept from step to step (a bucket, or the
    buffer a bucket is kept in), as three operations and no allocation:
    the 4096-element rows' norms in float32 (half precision widened) into
    a buffer made once, then their norm in double (float32 within a
    4096-element chunk, summed in double: as accurate as a double pass at
    the cost of a float pass, as the C++ agent's CPU backend does; per
    bucket, the dozen operations and temporaries before it were most of
    the hook's host time, doc/benchmarks.md, "Host work per step")."""

    __slots__ = ("ptr", "numel", "dtype", "head", "tail", "rows_head", "rows_tail", "rows", "wide")

    def __init__(self, t):
        flat = t.reshape(-1)
        n = flat.numel()
        k = n - n % _CHUNK
        # A non-contiguous t is read through a copy: such a plan never fits again.
        self.ptr, self.numel, self.dtype = t.data_ptr() if t.is_contiguous() else None, n, t.dtype
        self.wide = torch.float32 if t.dtype in (torch.float16, torch.bfloat16) else None
        self.rows = torch.empty(k // _CHUNK + (k < n), dtype=self.wide or t.dtype)
        self.head = flat[:k].view(-1, _CHUNK) if k else None
        self.rows_head = self.rows[:k // _CHUNK]
        self.tail = flat[k:] if k < n else None
        self.rows_tail = self.rows[-1] if k < n else None

    def fits(self, t):
        # Views of a live tensor: the same address is the same storage.
        return self.ptr == t.data_ptr() and self.numel == t.numel() and self.dtype == t.dtype

    def norm(self, out):
        """|t| (the tensor the plan was made for, as it is now) into out (float64)."""
        if self.head is not None:
            torch.linalg.vector_norm(self.head, dim=1, dtype=self.wide, out=self.rows_head)
        if self.tail is not None:
            torch.linalg.vector_norm(self.tail, dtype=self.wide, out=self.rows_tail)
        return torch.linalg.vector_norm(self.rows, dtype=torch.float64, out=out)


def _sqnorm(t):
    """|t|^2 as a float64 scalar tensor, as the hook takes it on t's device."""
    if t.is_cuda:
        return _device_norm(t, t.new_empty((), dtype=_wide(t.dtype))).to(torch.float64).square()
    return _ChunkPlan(t).norm(t.new_empty((), dtype=torch.float64)).square()


def _dot(a, b):
    """<a, b> as a float64 scalar tensor, as the hook takes it on a GPU (on
    the CPU the hook takes the pair from the difference's norm instead:
    _Norms.dot)."""
    return _device_dot(a, b, a.new_empty((), dtype=_wide(a.dtype))).to(torch.float64)


def _difference(kept, t):
    """kept - t, in place where kept is float32/float64 (the pair is over
    after it); half precision in a float32 copy (its rounding would be the
    difference's)."""
    if kept.dtype in (torch.float32, torch.float64):
        return kept.sub_(t)
    return kept.float().sub_(t)


def _keep(session, index, t):
    """A copy of bucket `index` in a buffer kept from pair to pair: a fresh
    tensor of a large bucket costs its page faults every time (16 ms for
    10.5 M floats on the CPU here, against 1.7 ms for the copy alone)."""
    buf = session.keep_buffers.get(index)
    if buf is None or buf.shape != t.shape or buf.dtype != t.dtype:  # (the model's device is fixed)
        buf = session.keep_buffers[index] = torch.empty_like(t)
    return buf.copy_(t)


class _Norms:
    """The step's per-bucket norms on the device, one column per bucket,
    written in place (on a GPU one kernel each, on the CPU a _ChunkPlan's
    three operations) and summed once at the step's end:

    row 0: |local bucket|, row 1: |averaged bucket| (more than one
    replica), row 2: on a GPU <kept bucket, averaged bucket>, on the CPU
    |kept bucket - averaged bucket| (one replica's COMPARE step), row 3:
    |averaged bucket| of the last KEEP step (kept across steps).
    """

    def __init__(self, device, params):
        """params: the model's parameters (at least as many as its buckets)."""
        self.cuda = device.type == "cuda"
        wide = torch.float64 if not self.cuda or any(p.dtype == torch.float64 for p in params) else torch.float32
        self.acc = torch.zeros((4, max(1, len(params))), dtype=wide, device=device)
        self._cells = {}  # bucket index -> its four cells (0-dim views), made once
        self.plans = {}  # (row, bucket index) -> _ChunkPlan (CPU)
        # The CPU's totals from the rows' sums of squares, one product:
        # local, averaged, kept, and the pair's <a, b> = (|a|^2 + |b|^2 - |a - b|^2) / 2.
        self._mix = {}

    def reset(self):
        self.acc[:3].zero_()

    def cells(self, index):
        """Bucket `index`'s column as four 0-dim views, which the hook's
        operations write into (out=) without an indexing operation."""
        cells = self._cells.get(index)
        if cells is None:
            cells = self._cells[index] = tuple(self.acc[row, index] for row in range(4))
        return cells

    def _cpu_norm(self, t, out, key):
        plan = self.plans.get(key)
        if plan is None or not plan.fits(t):
            plan = self.plans[key] = _ChunkPlan(t)
        plan.norm(out)

    def norm(self, t, cells, row, index):
        """|t| into cells[row] (row 0: the local bucket, 1: the averaged one)."""
        if self.cuda:
            _device_norm(t, cells[row])
        else:
            self._cpu_norm(t, cells[row], (row, index))

    def dot(self, kept, t, cells, index):
        """The pair (kept, t) into cells[2]; may overwrite `kept` (the pair is over after it)."""
        if self.cuda:
            _device_dot(kept, t, cells[2])
        else:
            self._cpu_norm(_difference(kept, t), cells[2], (2, index))

    def totals(self, world):
        """(local_sqr, sync_sqr, prev_sqr, dot_prev): a float64 device tensor."""
        cur = 1 if world > 1 else 0
        if self.cuda:
            w = self.acc.to(torch.float64)
            sq = w.square().sum(1)
            return torch.stack((sq[0], sq[cur], sq[3], w[2].sum()))
        mix = self._mix.get(cur)
        if mix is None:
            mix = torch.zeros((4, 4), dtype=torch.float64)
            mix[0, 0] = mix[1, cur] = mix[2, 3] = 1.0
            mix[3, cur], mix[3, 2], mix[3, 3] = 0.5, -0.5, 0.5
            self._mix[cur] = mix
        return torch.mv(mix, self.acc.square().sum(1))

    def keep_averaged(self, world):
        """After a KEEP step: its averaged norms are the next step's kept ones."""
        self.acc[3].copy_(self.acc[1 if world > 1 else 0])


_KEEP, _COMPARE = _agent.TwoStep.KEEP, _agent.TwoStep.COMPARE


def _pair(s, index, t, cells, bucket=None):
    """One replica's two-step estimate: keep the averaged bucket, or compare
    with the kept one. `bucket`: DDP's GradBucket, whose parameters say
    what its buffer holds. DDP rebuilds its buckets after a run's first
    step (in the order the gradients came), so the bucket of an index kept
    before the rebuild may hold other parameters than the one compared
    after it, even at the same size: the kept gradients are then laid out
    as the compared bucket's, parameter by parameter, before the product."""
    phase = s.phase
    if phase == _KEEP:
        s.kept[index] = _keep(s, index, t)
        if bucket is not None:
            s.kept_layout[index] = _layout(bucket)
    elif phase == _COMPARE:
        kept = s.kept.get(index)
        if bucket is not None:
            layout = _layout(bucket)
            if layout != s.kept_layout.get(index):
                kept = _realigned(s, layout)
        if kept is not None and kept.shape == t.shape:
            s.norms.dot(kept, t, cells, index)
            s.compared += 1


def _layout(bucket):
    """(parameter identity, size) of each gradient in a DDP bucket's flat buffer, in its order."""
    return [(id(p), p.numel()) for p in bucket.parameters()]


def _realigned(s, layout):
    """The kept gradients of `layout`'s parameters, in its order (from
    whichever kept buckets hold them), or None when one was not kept."""
    where = {}
    for index, kept_layout in s.kept_layout.items():
        offset = 0
        for pid, n in kept_layout:
            where[pid] = (index, offset, n)
            offset += n
    parts = []
    for pid, n in layout:
        at = where.get(pid)
        if at is None or at[2] != n or at[0] not in s.kept:
            return None
        index, offset, _ = at
        parts.append(s.kept[index][offset:offset + n])
    return torch.cat(parts) if parts else None


def _hook(session, bucket):
    """Averages a bucket over the batch (replicas x micro-steps) and
    writes its norms before and after the all-reduce into the session's."""
    buf = bucket.buffer()
    s = session
    if s.accum > 0:
        buf.div_(s.accum + 1)  # the accumulated sum of micro-gradients -> their mean
    index = bucket.index()
    norms = s.norms
    cells = norms.cells(index)
    norms.norm(buf, cells, 0, index)
    s.buckets += 1
    if bucket.is_last():
        s.compute_done()  # every gradient is computed; the all-reduce may still run
    world = s.env.world_size
    if world == 1:
        # One replica: the all-reduce would average nothing, and the local
        # bucket is the averaged one: a future completed here hands it
        # back (as torch's own noop_hook does), with no all-reduce call,
        # no future callback on the communicator's thread and no hand-over
        # of the GIL to it: 0.45 ms less per step of the host-bound proxy's
        # 28 buckets on the CPU (doc/benchmarks.md).
        _pair(s, index, buf, cells, bucket)
        done = torch.futures.Future()
        done.set_result(buf)
        return done

    def averaged(f):
        t = f.value()[0]
        t.div_(world)
        norms.norm(t, cells, 1, index)
        _pair(s, index, t, cells, bucket)
        return t

    # The DDP model's process group, called directly (dist.all_reduce's
    # checks cost more than the call on a host-bound step).
    return s.ddp_group.allreduce([buf]).get_future().then(averaged)


# Wrappers of other parallelisms, by class name: importing their modules
# to compare types would itself fail where torch lacks them (Debian 12's
# torch 1.13 cannot import torch.distributed.fsdp under Python 3.11).
_OTHER_PARALLELISMS = {
    "DistributedDataParallel": "DistributedDataParallel (give the plain model: pollux.torch wraps it in DDP itself)",
    "FullyShardedDataParallel": "FSDP (FullyShardedDataParallel: give it to pollux.torch.ElasticFSDP instead, torch >= 2.2)",
    "FSDPModule": "FSDP2 (fully_shard: give it to pollux.torch.ElasticFSDP instead, torch >= 2.6)",
    "DeepSpeedEngine": "DeepSpeed",
    "PipelineModule": "pipeline parallelism (DeepSpeed PipelineModule)",
    "Pipe": "pipeline parallelism (torch Pipe)",
    "PipelineStage": "pipeline parallelism (torch.distributed.pipelining)",
}


def _refuse_other_parallelism(module):
    """Raises ValueError naming the parallelism a model is wrapped with when
    it is not plain data parallelism, the only one pollux.torch handles (its
    statistics and checkpoint assume each rank holds the whole model)."""
    for sub in module.modules():
        for cls in type(sub).__mro__:
            what = _OTHER_PARALLELISMS.get(cls.__name__)
            if what:
                raise ValueError(
                    f"the model is wrapped with {what}; ElasticDataParallel takes a plain torch.nn.Module "
                    f"(on torch {torch.__version__}); pollux.torch supports data parallelism and FSDP "
                    f"(ElasticFSDP: FullyShardedDataParallel or fully_shard): tensor and pipeline parallel "
                    f"models are not supported (doc/pytorch.md, Limits)")
    for name, p in module.named_parameters():
        if type(p).__name__ == "DTensor" or type(getattr(p, "data", None)).__name__ == "DTensor":
            raise ValueError(
                f"parameter {name} is a DTensor (tensor parallelism or FSDP2); pollux.torch supports data "
                f"parallelism and FSDP (ElasticFSDP: FullyShardedDataParallel, or fully_shard over a 1-D mesh) "
                f"only: tensor and pipeline parallel models are not supported (doc/pytorch.md, Limits)")


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
        _refuse_other_parallelism(module)
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
        session.ddp_group = self.process_group
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
