"""The one elastic training session of a process: the process group, the
agent, what is checkpointed, and the step protocol that ties the loader,
the DDP wrapper and the optimizer to the agent (doc/pytorch.md).

Per optimizer step of s + 1 micro-steps the session drives the agent as
the framework-neutral mode asks (doc/agent.md): the loader's yield begins
a micro-step; an accumulation micro-step ends at optimizer.step() (a no-op
then, gradients accumulate under no_sync); on the last one the DDP comm
hook ends the computation when the last bucket is ready, and
optimizer.step() queues the step's norms to host memory, hands the agent
the previous step's record (synchronized_late: times and norms measured on
the device, read a step late, so nothing waits for the GPU), applies the
learning-rate rule, takes the real step and ends the agent's step. A step
whose optimizer.step() is left out after its backward (GradScaler's skip
on overflow) ends when the next batch is asked for, as a skipped update.
"""
import math
import os
import random
import sys
import traceback
import types

import torch

from .. import _agent
from .._capi import PolluxError
from . import _dist, _timing

_STATE_FILE = "pytorch-state.pt"
_RNG_FILE = "pytorch-rng-{}.pt"
LR_RULES = ("adascale", "adamscale", "sqrt", "linear")
# Adam-family optimizers get AdamScale by default (doc/pytorch.md,
# "Learning-rate rules"): their update is normalised by the gradient's
# second moment, so the gain that is right for SGD overshoots there.
_ADAM_FAMILY = tuple(getattr(torch.optim, n) for n in ("Adam", "AdamW", "Adamax", "NAdam", "RAdam", "SparseAdam")
                     if hasattr(torch.optim, n))


def default_lr_rule(optimizer):
    """The learning-rate rule for `optimizer` when the user names none."""
    return "adamscale" if isinstance(optimizer, _ADAM_FAMILY) else "adascale"

_session = None


def get(what="this"):
    if _session is None:
        raise PolluxError(f"{what} needs pollux.torch.init_process_group() first")
    return _session


def create(backend=None):
    global _session
    if _session is not None:
        raise PolluxError("pollux.torch.init_process_group() was already called in this process")
    _session = Session(_dist.setup(backend))
    _install_excepthook()
    return _session


def is_out_of_memory(error):
    """Whether `error` is torch running out of memory: its OutOfMemoryError
    (CUDA's; torch.OutOfMemoryError where torch has it), or the RuntimeError
    of torch's CPU allocator ("DefaultCPUAllocator: can't allocate memory")."""
    kinds = tuple(t for t in (getattr(torch, "OutOfMemoryError", None), getattr(torch.cuda, "OutOfMemoryError", None))
                  if isinstance(t, type))
    if kinds and isinstance(error, kinds):
        return True
    return isinstance(error, RuntimeError) and "DefaultCPUAllocator: can't allocate memory" in str(error)


def _install_excepthook():
    """An out-of-memory error that ends the program (uncaught) inside a
    micro-step is recorded (Session.out_of_memory) after Python prints it."""
    previous = sys.excepthook

    def hook(kind, value, tb):
        previous(kind, value, tb)
        try:
            if _session is not None:
                _session.failed = True
                _session.out_of_memory(value)
        except BaseException:  # never instead of the program's own error
            traceback.print_exc(file=sys.stderr)

    sys.excepthook = hook


class Session:
    def __init__(self, env):
        self.env = env
        self.comm = _dist.TorchCommunicator(env)
        self.agent = None
        self.loader = None
        self.model = None
        self.optimizer = None
        self.lr_scheduler = None
        self.lr_rule = None
        self.objects = {}
        self.requeue_fns = []    # on_requeue(): the program's last word before a resize's requeue
        self.started = False
        self.failed = False      # an uncaught error ends this process (the excepthook)
        # Known before the agent exists (it restores at the first batch).
        self.resumed = _agent.checkpoint_waiting(_agent.AgentOptions(init_batch=1))
        # Step protocol.
        self.micro = -1          # micro-step of the step in progress, -1 between steps
        self.accum = 0           # accum_steps of the step in progress
        self.micro_ended = False  # the micro-step's forward and backward are done
        self.phase = _agent.TwoStep.OFF
        self.norms = None          # parallel._Norms, once the model is attached
        self.ddp_group = None      # the DDP model's process group (the hook all-reduces over it)
        self.wrapping = "ddp"      # or "fsdp", "fsdp2" (fsdp.ElasticFSDP: FSDP1, fully_shard): what the checkpoint holds
        self.fsdp_group = None     # the FSDP model's process group (fsdp._hook reduce-scatters over it)
        self.fsdp_callback_queued = False
        self.fsdp_backward_done = None
        self.compared = 0
        self.buckets = 0
        self.kept = {}
        self.kept_layout = {}      # bucket index -> what its kept gradients are (parallel._pair; DDP only)
        self.keep_buffers = {}     # bucket index -> the buffer kept[] copies into (parallel._keep)
        self.clock = _timing.clock(env.device)
        self.norm_copy = _timing.Norms(env.device)
        self.record = None         # the step in progress
        self.pending = None        # the last ended step, read at the next step's end
        self.scaler = None
        self.scaler_skipped = False
        self.stepped = False

    # --- set-up -------------------------------------------------------------
    def attach_loader(self, loader, options):
        if self.loader is not None:
            raise PolluxError("one ElasticDataLoader per job: it sets the batch size the agent adapts "
                              "(use a plain DataLoader for validation)")
        comm = self.comm if self.env.world_size > 1 else None
        if options.device_name is None and self.env.device.type == "cuda":
            # The agent names its GPU type from it (unless POLLUX_GPU_TYPE says; doc/agent.md).
            options.device_name = torch.cuda.get_device_name(self.env.device)
        self.agent = _agent.Agent(options, comm, external=True)
        self.agent.on_checkpoint(self.save)
        self.agent.on_restore(self.load)
        self.agent.on_requeue(self.before_requeue)
        if self.wrapping in ("fsdp", "fsdp2"):
            self.agent.set_sharded(True)  # ElasticFSDP came first: its model's form
        self.loader = loader

    def attach_model(self, model, optimizer, lr_scheduler, lr_rule, scaler=None):
        if self.model is not None:
            raise PolluxError("one ElasticDataParallel model per job")
        chosen = lr_rule is None
        if chosen:
            lr_rule = default_lr_rule(optimizer)
        if lr_rule not in LR_RULES:
            raise ValueError(f"lr_rule {lr_rule!r}: one of {', '.join(LR_RULES)}")
        if self.started:
            raise PolluxError("wrap the model in ElasticDataParallel before iterating the ElasticDataLoader")
        self.model, self.optimizer, self.lr_scheduler, self.lr_rule = model, optimizer, lr_scheduler, lr_rule
        _patch_optimizer(self, optimizer)
        if scaler is not None:
            _patch_scaler(self, scaler)
        if self.env.rank == 0 and os.environ.get("POLLUX_VERBOSE", "1") != "0":
            how = "the default for" if chosen else "as asked, for"
            print(f"pollux.torch: learning-rate rule {lr_rule} ({how} {type(optimizer).__name__}; "
                  f"ElasticDataParallel(lr_rule=...) chooses another)", file=sys.stderr, flush=True)

    def start(self):
        """Restores the latest checkpoint once, before the first step. Collective."""
        if self.started:
            return
        if self.agent is None:
            raise PolluxError("create the ElasticDataLoader before training: it gives the agent the batch limits")
        if self.model is None:
            raise PolluxError("wrap the model in pollux.torch.ElasticDataParallel(model, optimizer) before training")
        self.started = True
        self.resumed = self.agent.restore()

    # --- checkpoints (the agent calls these) ----------------------------------
    def save(self, path, rank, replicas, step):
        fsdp = self.wrapping in ("fsdp", "fsdp2")
        if fsdp:  # every rank writes its shards (collective), nothing is gathered
            from . import fsdp as _fsdp
            _fsdp.save(self, path)
        if rank == 0:
            state = {
                "format": 1,
                "wrapping": self.wrapping,
                "replicas": replicas,
                "lr_scheduler": self.lr_scheduler.state_dict() if self.lr_scheduler is not None else None,
                "loader": self.loader.state_dict(),
                "objects": {name: _state_of(obj) for name, obj in self.objects.items()},
            }
            if not fsdp:
                state["model"] = self.model.module.state_dict()
                state["optimizer"] = self.optimizer.state_dict()
            torch.save(state, os.path.join(path, _STATE_FILE))
        torch.save(_rng_state(), os.path.join(path, _RNG_FILE.format(rank)))

    def load(self, path, rank, replicas, step):
        # Full loads (weights_only=False, torch >= 2.6 defaults to True):
        # the state holds the RNGs' numpy and Python states and registered
        # objects, and the files are the job's own (doc/pytorch.md, Limits).
        state = _load(os.path.join(path, _STATE_FILE), map_location=self.env.device)
        if not isinstance(state, dict) or state.get("format") != 1:
            raise PolluxError(f"{path}/{_STATE_FILE}: not a pollux.torch checkpoint")
        # Checkpoints before FSDP support name no wrapping: DDP's.
        saved = state.get("wrapping", "ddp")
        if saved != self.wrapping:
            names = {"ddp": "ElasticDataParallel (DDP: the whole model on rank 0)",
                     "fsdp": "ElasticFSDP (FSDP: FullyShardedDataParallel, sharded, torch.distributed.checkpoint)",
                     "fsdp2": "ElasticFSDP over fully_shard (FSDP2: sharded, torch.distributed.checkpoint)"}
            raise PolluxError(f"{path}: the checkpoint is of a model wrapped with {names.get(saved, saved)}, and this "
                              f"run wraps it with {names[self.wrapping]}: a checkpoint resumes with the wrapping "
                              f"that wrote it (move the job's checkpoint directory away to start afresh)")
        if self.wrapping in ("fsdp", "fsdp2"):
            from . import fsdp as _fsdp
            _fsdp.load(self, path)
        else:
            self.model.module.load_state_dict(state["model"])
            self.optimizer.load_state_dict(state["optimizer"])
        if self.lr_scheduler is not None:
            if state["lr_scheduler"] is None:
                raise PolluxError(f"{path}: the checkpoint has no LR scheduler state but one is given now")
            self.lr_scheduler.load_state_dict(state["lr_scheduler"])
        self.loader.load_state_dict(state["loader"])
        missing = set(self.objects) - set(state["objects"])
        if missing:
            raise PolluxError(f"{path}: no state for the registered object(s) {sorted(missing)}")
        for name, obj in self.objects.items():
            _load_into(obj, state["objects"][name], name)
        mine = os.path.join(path, _RNG_FILE.format(rank))
        if os.path.exists(mine):
            _set_rng_state(_load(mine))
        else:  # more replicas than before: a fresh stream per new rank
            _set_rng_state(_load(os.path.join(path, _RNG_FILE.format(0))))
            torch.manual_seed(torch.initial_seed() + rank)
            random.seed(random.random() + rank)

    def before_requeue(self):
        """The checkpoint of a resize is committed; Slurm's requeue, which
        ends this process with SIGTERM (no atexit, no finally), follows its
        acknowledgement: flush what the program buffered now."""
        for fn in self.requeue_fns:
            try:
                fn()
            except Exception:  # the resize goes on; the job's log says why
                print(f"pollux.torch: on_requeue function {getattr(fn, '__qualname__', fn)!r} failed:",
                      file=sys.stderr)
                traceback.print_exc(file=sys.stderr)
        sys.stdout.flush()
        sys.stderr.flush()

    # --- out of memory -------------------------------------------------------
    def out_of_memory(self, error):
        """`error` ended the program: when it is torch running out of memory
        in a micro-step's forward or backward, the agent lowers the job's
        largest micro-batch below this one, for good (doc/pytorch.md,
        "Memory"). Returns the new limit, or None."""
        if self.agent is None or self.micro < 0 or self.micro_ended or not is_out_of_memory(error):
            return None
        b = self.agent.atomic_batch
        self.micro = -1  # the step is over
        try:
            limit = self.agent.out_of_memory(b)
        except PolluxError as e:
            print(f"pollux.torch: rank {self.env.rank}: {e} (min_atomic: the first of ElasticDataLoader's "
                  f"atomic_batch_size)", file=sys.stderr, flush=True)
            return None
        print(f"pollux.torch: rank {self.env.rank}: micro-batch {b} ran out of memory; this job's micro-batches are "
              f"at most {limit} from now on (the checkpoint directory's memory-limit): requeue the job (scontrol "
              f"requeue) to resume from its last checkpoint under that limit", file=sys.stderr, flush=True)
        return limit

    # --- the step protocol ------------------------------------------------
    def reset_norms(self):
        self.norms.reset()
        self.compared = 0
        self.buckets = 0

    def begin_micro(self, k, accum):
        mark = self.clock.mark()
        if k == 0:
            if self.micro != -1:
                raise PolluxError("the previous step did not end: call optimizer.step() once per batch")
            if self.pending is not None and self.pending.next is None:
                self.pending.next = mark
            self.accum = accum
            self.reset_norms()
            self.phase = self.agent.two_step_phase
            self.record = _timing.StepRecord(mark)
            self.scaler_skipped = False
        elif self.micro != k - 1 or not self.micro_ended:
            raise PolluxError("call optimizer.step() once per batch of the ElasticDataLoader (it is a no-op on "
                              "the batches that only accumulate gradients)")
        else:
            self.record.begins.append(mark)
        self.micro = k
        self.micro_ended = False
        self.agent.micro_step_begin()

    def syncs_now(self):
        """Whether DDP all-reduces in this micro-step's backward."""
        return self.micro == -1 or self.micro == self.accum

    def compute_done(self):
        if self.micro >= 0 and not self.micro_ended:
            if self.micro == self.accum:
                self.record.done = self.clock.mark()
            self.micro_ended = True
            self.agent.micro_step_end()

    def lr_factor(self):
        a = self.agent
        if self.lr_rule == "adascale":
            return a.lr_gain
        if self.lr_rule == "adamscale":
            return math.sqrt(a.lr_gain)
        ratio = a.total_batch / self.loader.batch_size
        return math.sqrt(ratio) if self.lr_rule == "sqrt" else ratio

    def _queue_norms(self):
        """The step's norms, unscaled, on their way to host memory (no wait)."""
        v = self.norms.totals(self.env.world_size)
        if self.phase == _agent.TwoStep.KEEP:
            self.norms.keep_averaged(self.env.world_size)
        inv = _inverse_scale_sq(self.scaler)
        if inv is not None:
            v = v * inv
        self.record.norms = self.norm_copy.to_host(v)
        self.record.has_prev = self.phase == _agent.TwoStep.COMPARE and self.compared == self.buckets > 0

    def _previous(self):
        """The previous step's measurement for the agent, read a step late."""
        rec, self.pending = self.pending, None
        if rec is None or rec.next is None:
            return None
        if rec.verify_skip:
            self.clock.wait(rec.next)
            if _timing.averaged_finite(rec):
                raise PolluxError("optimizer.step() was left out of a step whose gradients were finite: call it "
                                  "once per batch of the ElasticDataLoader (only a step whose gradients "
                                  "overflowed may be left out, as GradScaler does)")
            return None
        return _timing.measurement(rec, self.clock)

    def _end(self, skipped):
        """Hands the previous step's record to the agent (collective)."""
        self._queue_norms()
        self.record.skipped = skipped
        self.record.verify_skip = skipped and not self.scaler_skipped
        previous = self._previous()
        if self.phase != _agent.TwoStep.KEEP:
            self.kept, self.kept_layout = {}, {}
        self.agent.synchronized_late(previous, skipped)

    def _finish(self):
        self.pending, self.record = self.record, None
        self.micro = -1
        if self.agent.step_end():
            sys.stdout.flush()
            sys.stderr.flush()
            raise SystemExit(self.agent.requeue_exit_code)

    def optimizer_step(self, real_step, closure):
        if self.micro == -1:
            raise PolluxError("optimizer.step() outside a step: take a batch from the ElasticDataLoader, "
                              "then forward, backward and optimizer.step()")
        if self.micro < self.accum:  # gradients accumulate (no_sync): no update yet
            self.compute_done()
            return None
        if not self.micro_ended:
            raise PolluxError("optimizer.step() before the gradients were all-reduced: call loss.backward() on "
                              "the output of the ElasticDataParallel model first")
        self.stepped = True
        self._end(skipped=False)
        factor = self.lr_factor()
        groups = self.optimizer.param_groups
        base = [g["lr"] for g in groups]
        for g in groups:
            g["lr"] = g["lr"] * factor
        try:
            result = real_step(closure) if closure is not None else real_step()
        finally:
            for g, lr in zip(groups, base):
                g["lr"] = lr
        self._finish()
        if getattr(self.lr_scheduler, "follows_progress", False):
            self.lr_scheduler.step()
        self.pending.after = self.clock.mark()  # e: the step's own work is done
        return result

    def end_left_out_step(self):
        """The loader's next batch is asked for and the step's optimizer.step()
        was left out: after the last backward, a skipped update (GradScaler's
        on overflow: no progress, no statistics; without a scaler verified a
        step late to have non-finite gradients); otherwise a misuse."""
        if self.micro != self.accum or not self.micro_ended:
            raise PolluxError("call optimizer.step() once per batch of the ElasticDataLoader")
        self._end(skipped=True)
        self._finish()

    def zero_grad_allowed(self):
        # Not while a step accumulates: only before its first backward.
        return self.micro == -1 or (self.micro == 0 and not self.micro_ended)


def _patch_optimizer(session, optimizer):
    real_step, real_zero = optimizer.step, optimizer.zero_grad

    def step(opt, closure=None):
        return session.optimizer_step(real_step, closure)

    def zero_grad(opt, *args, **kwargs):
        if session.zero_grad_allowed():
            return real_zero(*args, **kwargs)
        return None

    # Bound methods, as torch's LR schedulers expect to find (they wrap
    # optimizer.step to count calls); and the marks a scheduler created
    # before this wrapper left on the real step, so that the scheduler does
    # not warn that optimizer.step() was overridden after its creation.
    step.__dict__.update(getattr(real_step, "__dict__", {}))
    optimizer.step, optimizer.zero_grad = types.MethodType(step, optimizer), types.MethodType(zero_grad, optimizer)
    # torch.distributed.checkpoint's get_state_dict takes a step of lr 0 on
    # an optimizer without state, outside any step (fsdp.py unpatches for it).
    optimizer._pollux_unpatched = (real_step, real_zero)


def _patch_scaler(session, scaler):
    """The loss scaler of mixed precision: its scale unscales the statistics,
    and its step() tells a skipped update (found inf) from a misuse."""
    if not (hasattr(scaler, "get_scale") or isinstance(getattr(scaler, "_scale", None), torch.Tensor)):
        raise TypeError(f"scaler: a torch GradScaler or an object with get_scale(), not {type(scaler).__name__}")
    session.scaler = scaler
    real_step, real_update = getattr(scaler, "step", None), getattr(scaler, "update", None)
    if real_step is None:
        return
    accumulating = [False]

    def step(optimizer, *args, **kwargs):
        if optimizer is not session.optimizer:
            raise PolluxError("the scaler steps an optimizer that the ElasticDataParallel model does not hold: "
                              "step the optimizer given to ElasticDataParallel")
        # A micro-step that only accumulates: no unscaling (the next
        # backward adds scaled gradients to these), no inf check, no update.
        accumulating[0] = 0 <= session.micro < session.accum
        if accumulating[0]:
            return optimizer.step(*args, **kwargs)
        session.stepped = False
        result = real_step(optimizer, *args, **kwargs)
        if not session.stepped:
            session.scaler_skipped = True  # inf/NaN found: GradScaler left the update out
        return result

    def update(*args, **kwargs):
        if accumulating[0]:
            return None  # the scale stays for the whole step
        return real_update(*args, **kwargs)

    scaler.step = step
    if real_update is not None:
        scaler.update = update


def _inverse_scale_sq(scaler):
    """1 / scale^2 as a device tensor (a GradScaler's, no wait) or a float;
    None without scaling."""
    if scaler is None:
        return None
    scale = getattr(scaler, "_scale", None)
    if isinstance(scale, torch.Tensor):
        if hasattr(scaler, "is_enabled") and not scaler.is_enabled():
            return None
        return scale.double().reciprocal().square()
    if hasattr(scaler, "is_enabled") and not scaler.is_enabled():
        return None
    return 1.0 / float(scaler.get_scale()) ** 2


def _state_of(obj):
    if hasattr(obj, "state_dict"):
        return obj.state_dict()
    if isinstance(obj, dict):
        return dict(obj)
    if isinstance(obj, list):
        return list(obj)
    raise TypeError(f"cannot checkpoint a {type(obj).__name__}")


def _load_into(obj, state, name):
    if hasattr(obj, "load_state_dict"):
        obj.load_state_dict(state)
    elif isinstance(obj, dict):
        obj.clear()
        obj.update(state)
    elif isinstance(obj, list):
        obj[:] = state
    else:
        raise TypeError(f"registered object {name!r}: cannot restore a {type(obj).__name__}")


def _load(path, **kwargs):
    return torch.load(path, weights_only=False, **kwargs)


def _rng_state():
    s = {"torch": torch.get_rng_state(), "python": random.getstate()}
    if torch.cuda.is_available():
        s["cuda"] = torch.cuda.get_rng_state()
    try:
        import numpy
        s["numpy"] = numpy.random.get_state()
    except ImportError:
        pass
    return s


def _set_rng_state(s):
    torch.set_rng_state(s["torch"].cpu())
    random.setstate(s["python"])
    if "cuda" in s and torch.cuda.is_available():
        torch.cuda.set_rng_state(s["cuda"].cpu())
    if "numpy" in s:
        try:
            import numpy
            numpy.random.set_state(s["numpy"])
        except ImportError:
            pass
