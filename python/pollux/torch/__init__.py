"""pollux.torch: elastic, goodput-adaptive PyTorch DDP training under
Slurm's sched/pollux (doc/pytorch.md).

    import pollux.torch as pollux
    pollux.init_process_group()                      # srun's tasks, or one process
    loader = pollux.ElasticDataLoader(train_set, batch_size=64, max_batch_size=1024,
                                      atomic_batch_size=(16, 128))
    schedule = pollux.ProgressScheduler(torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=30))
    model = pollux.ElasticDataParallel(model, optimizer, schedule)   # steps schedule by progress epochs
    for epoch in pollux.remaining_epochs_until(30):
        for x, y in loader:
            optimizer.zero_grad()
            loss_fn(model(x.to(pollux.device())), y.to(pollux.device())).backward()
            optimizer.step()

Underneath is libpollux-agent in its framework-neutral mode: one agent,
one hint format, one model, the same as C and C++ programs use.
"""
import atexit

from .._capi import AgentLibraryError, PolluxError
from . import _session
from .data import ElasticDataLoader
from .fsdp import ElasticFSDP
from .parallel import ElasticDataParallel
from .schedule import ProgressScheduler

__all__ = ["init_process_group", "ElasticDataParallel", "ElasticFSDP", "ElasticDataLoader", "ProgressScheduler", "remaining_epochs_until", "register",
           "checkpoint", "on_requeue", "grad_scaler", "device", "rank", "world_size", "agent", "resumed",
           "progress_epochs", "PolluxError", "AgentLibraryError"]


def init_process_group(backend=None, timeout=1800):
    """Initialises torch.distributed for this job: under srun one process
    per task (rank SLURM_PROCID of SLURM_NTASKS, rank 0's address from the
    job's node list, or MASTER_ADDR/MASTER_PORT), without Slurm a single
    process (or RANK/WORLD_SIZE/MASTER_ADDR as torchrun sets them). gloo
    on CPU, NCCL on GPU (one GPU per task: SLURM_LOCALID), unless
    `backend` says otherwise."""
    s = _session.create(backend)
    atexit.register(_close)
    return s.env


def _close():
    # The agent first (rank 0 writes its last hint), then the groups: gloo
    # aborts the process when its threads outlive the interpreter.
    s = _session._session
    if s is None:
        return
    if s.agent is not None:
        s.agent.close()
    # The model (DDP, which holds the process groups), optimizer and loader
    # are freed now, while the groups exist, not in the interpreter's
    # teardown in whatever order it takes.
    s.model = s.optimizer = s.lr_scheduler = s.loader = None
    s.kept = {}
    import gc
    gc.collect()
    import datetime
    import torch.distributed as dist
    if dist.is_initialized():
        # Nobody tears its connections down while a peer still talks: that
        # can abort a rank in gloo's destructors. A peer that died already
        # only costs the timeout.
        # A rank that an uncaught error ends does not wait: its peers may be
        # blocked in a collective it never joins (they fail when its
        # connections close).
        if s.comm.group is not None and not s.failed:
            try:
                dist.monitored_barrier(group=s.comm.group, timeout=datetime.timedelta(seconds=30))
            except Exception:
                pass
        dist.destroy_process_group()


def device():
    """The torch.device of this process (its GPU, or the CPU)."""
    return _session.get("pollux.torch.device()").env.device


def rank():
    return _session.get("pollux.torch.rank()").env.rank


def world_size():
    return _session.get("pollux.torch.world_size()").env.world_size


def agent():
    """The pollux.Agent underneath (step, samples_seen, progress,
    total_batch, atomic_batch, accum_steps, lr_gain, grad_stats, ...)."""
    s = _session.get("pollux.torch.agent()")
    if s.agent is None:
        raise PolluxError("the agent starts with the ElasticDataLoader: create it first")
    return s.agent


def resumed():
    """True when this run resumes from a checkpoint, from init_process_group() on (a committed checkpoint
    waits; the first batch or remaining_epochs_until restores it)."""
    return _session.get("pollux.torch.resumed()").resumed


def register(name, obj):
    """Checkpoints `obj` with the model: anything with state_dict() and
    load_state_dict(), or a dict or list (restored in place)."""
    s = _session.get("pollux.torch.register()")
    if not (hasattr(obj, "state_dict") and hasattr(obj, "load_state_dict")) and not isinstance(obj, (dict, list)):
        raise TypeError(f"register({name!r}, ...): an object with state_dict()/load_state_dict(), a dict or a "
                        f"list, not {type(obj).__name__}")
    if s.started:
        raise PolluxError(f"register({name!r}, ...) after training started: register before the first batch")
    s.objects[name] = obj


def on_requeue(fn):
    """fn() runs on every rank when a resize's checkpoint is committed, just
    before sched/pollux requeues the job: the requeue ends the process with
    SIGTERM, so no atexit function, finally block or interpreter shutdown
    runs after it. Flush the program's own logs there (open files, a
    logging handler's buffer, a metrics writer); flush rather than close,
    since training goes on if the requeue does not come. Functions run in
    the order given, then sys.stdout and sys.stderr are flushed; one that
    raises is reported in the job's log and the resize goes on. Returns fn
    (usable as a decorator)."""
    s = _session.get("pollux.torch.on_requeue()")
    if not callable(fn):
        raise TypeError(f"on_requeue(fn): a callable, not {type(fn).__name__}")
    s.requeue_fns.append(fn)
    return fn


def grad_scaler(**kwargs):
    """fp16's CUDA GradScaler on every supported torch: what
    torch.amp.GradScaler("cuda") gives where torch has it (2.3 and later),
    else torch.cuda.amp.GradScaler() (1.13 to 2.2, deprecated from 2.4 on).
    Without CUDA it disables itself (with torch's warning), as either does.
    Keywords (init_scale, growth_interval, ...) pass on."""
    import torch
    if hasattr(torch.amp, "GradScaler"):
        return torch.amp.GradScaler("cuda", **kwargs)
    return torch.cuda.amp.GradScaler(**kwargs)


def checkpoint():
    """Checkpoints now, between steps (every rank). The agent also
    checkpoints periodically and on every resize without this call."""
    s = _session.get("pollux.torch.checkpoint()")
    s.start()
    if s.micro != -1:
        raise PolluxError("checkpoint() inside a step: call it after optimizer.step()")
    s.agent.checkpoint()


def remaining_epochs_until(epochs):
    """Yields the data epoch to train while fewer than `epochs` epochs of
    scale-invariant progress are done (the agent's progress in M0-batches,
    times M0, over the dataset's size). With a batch M > M0 a data epoch
    counts for r M0 / M <= 1 epochs of progress (r the AdaScale gain, at
    most M / M0), so this loop runs more iterations than `epochs` when the
    batch grows: do not step a schedule per iteration of it, wrap the
    scheduler in ProgressScheduler or read progress_epochs(). After a
    requeue it resumes where the job stopped."""
    s = _session.get("remaining_epochs_until()")
    if s.loader is None:
        raise PolluxError("remaining_epochs_until() needs the ElasticDataLoader first")
    s.start()
    n = len(s.loader.dataset)
    while s.agent.progress * s.loader.batch_size / n < epochs - 1e-9:
        yield s.agent.samples_seen // n


def progress_epochs():
    """Epochs of scale-invariant progress done so far."""
    s = _session.get("progress_epochs()")
    return s.agent.progress * s.loader.batch_size / len(s.loader.dataset)

