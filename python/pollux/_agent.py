"""pollux.Agent: libpollux-agent's agent (pollux/agent_c.h) as a Python object.

Both modes of the agent (doc/agent.md): the framework-neutral mode
(external=True: the framework all-reduces, the caller reports
GradientNorms) and the buffer mode (the agent all-reduces a float32 or
float64 host buffer). The agent's own collectives run over a Python
communicator: any object with `rank`, `size`, `nodes`,
`allreduce_sum(values)` (a writable memoryview of doubles, summed in place
over the ranks) and `broadcast(data, root)` (a writable memoryview of
bytes); None for one process.
"""
import ctypes
import enum
import sys
import traceback
from dataclasses import dataclass, field, make_dataclass

from . import _capi
from ._capi import PolluxError, check


class TwoStep(enum.IntEnum):
    """What the one-replica gradient-noise estimate asks of the next step."""
    OFF = 0      # more than one replica: nothing to do
    KEEP = 1     # keep this step's averaged gradient
    COMPARE = 2  # report |kept|^2 and <kept, this step's>


@dataclass
class GradientNorms:
    """One rank's squared norms of one optimizer step, summed over buckets."""
    local_sqr: float
    sync_sqr: float
    local_grads: int = 1
    has_prev: bool = False
    prev_sqr: float = 0.0
    dot_prev: float = 0.0


# What the Python binding takes besides the C options, and its defaults
# where they differ from the library's (the library's M0 = M_max = 1 and
# m in [1, 1] are placeholders for limits every job sets).
_PY_DEFAULTS = {"min_atomic": 1, "accumulation": True}
_PY_ONLY = [("requeue_exit", object, None)]  # True: exit for RequeueExit; False: wait to be requeued


def _to_c(self):
    lib = _capi.lib()
    o = _capi.Options()
    lib.pollux_agent_options_init(ctypes.byref(o))
    o.init_batch = float(self.init_batch)
    o.max_batch = float(self.max_batch if self.max_batch is not None else self.init_batch)
    o.max_atomic = int(self.max_atomic if self.max_atomic is not None else max(1, int(self.init_batch)))
    for name in ("min_atomic", "accumulation"):
        setattr(o, name, int(getattr(self, name)))
    check(lib.pollux_agent_options_from_env(ctypes.byref(o)), "POLLUX_* environment")
    # What the caller set explicitly overrides the environment.
    keep = []
    for name, ctype in _capi.Options._fields_:
        value = getattr(self, name)
        if value is None or name in _LIMITS:
            continue
        if ctype is ctypes.c_char_p:
            keep.append(str(value).encode())
            value = keep[-1]
        elif ctype is ctypes.c_int:
            value = int(value)
        setattr(o, name, value)
    if self.requeue_exit is not None:
        o.requeue_mode = 1 if self.requeue_exit else 0
    # Kept alive by the Options object's owner (the Agent) until created.
    self._keep = keep
    return o


_LIMITS = ("init_batch", "max_batch", "min_atomic", "max_atomic", "accumulation")

# The job's batch limits and the agent's options: one field per field of
# the C struct (pollux/agent_c.h's list, which _capi checks against the
# loaded library), so an option is spelled once; None leaves the agent's
# default (after POLLUX_* environment overrides, doc/agent.md).
AgentOptions = make_dataclass(
    "AgentOptions",
    [("init_batch", float)] +
    [(name, object, field(default=_PY_DEFAULTS.get(name))) for name, _ in _capi.Options._fields_
     if name != "init_batch"] + _PY_ONLY,
    namespace={"to_c": _to_c, "__module__": __name__,
               "__doc__": "The job's batch limits and the agent's options (the fields of pollux_agent_options, "
                          "doc/agent.md); None leaves the agent's default, after POLLUX_* overrides."})


def checkpoint_waiting(options):
    """True if a committed checkpoint waits in the checkpoint directory of
    `options` (what Agent.restore() would resume from)."""
    c_opts = options.to_c()
    return check(_capi.lib().pollux_agent_checkpoint_waiting(ctypes.byref(c_opts)), "checkpoint_waiting") == 1


class Agent:
    """One agent per training process (see pollux/agent.h)."""

    def __init__(self, options, comm=None, external=True):
        lib = _capi.lib()
        self._lib = lib
        self._handle = None
        self._callback_error = None
        self._save = self._load = self._requeue = None
        c_opts = options.to_c()
        self._comm_struct = None
        if comm is not None:
            self._comm = comm
            self._comm_cbs = (_capi.ALLREDUCE_FN(self._allreduce), _capi.BROADCAST_FN(self._broadcast))
            self._comm_struct = _capi.Communicator(int(comm.rank), int(comm.size), int(comm.nodes),
                                                   self._comm_cbs[0], self._comm_cbs[1], None)
        ref = ctypes.byref(self._comm_struct) if self._comm_struct is not None else None
        if external:
            handle = lib.pollux_agent_create_external(ctypes.byref(c_opts), ref)
        elif ref is not None:
            handle = lib.pollux_agent_create_with_communicator(ctypes.byref(c_opts), ref)
        else:
            handle = lib.pollux_agent_create(ctypes.byref(c_opts), -1)
        if not handle:
            raise PolluxError("cannot create the agent: " + self._reason())
        self._handle = handle
        self.external = external

    # --- the communicator's callbacks (exceptions become -1 and are kept) ---
    def _guard(self, f):
        try:
            f()
            return 0
        except BaseException as e:  # noqa: B902 - nothing may unwind into C
            self._callback_error = e
            traceback.print_exc(file=sys.stderr)
            return -1

    def _allreduce(self, values, n, user):
        view = memoryview((ctypes.c_double * n).from_address(ctypes.addressof(values.contents))).cast("B").cast("d")
        return self._guard(lambda: self._comm.allreduce_sum(view))

    def _broadcast(self, data, nbytes, root, user):
        view = memoryview((ctypes.c_ubyte * nbytes).from_address(data)).cast("B")
        return self._guard(lambda: self._comm.broadcast(view, root))

    def _reason(self):
        reason = _capi.last_error()
        if self._callback_error is not None:
            reason += f" (from Python: {self._callback_error!r})"
            self._callback_error = None
        return reason

    def _call(self, rc, what):
        if rc is None or rc < 0:
            raise PolluxError(f"{what}: {self._reason()}")
        return rc

    @property
    def handle(self):
        if not self._handle:
            raise PolluxError("the agent was closed")
        return self._handle

    def close(self):
        """Destroys the agent (rank 0 writes its last hint). Idempotent."""
        if self._handle:
            self._lib.pollux_agent_destroy(self._handle)
            self._handle = None

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    # --- checkpoints ---------------------------------------------------------
    def _wrap_ckpt(self, fn):
        def cb(path, rank, replicas, step, user):
            return self._guard(lambda: fn(path.decode(), rank, replicas, step))
        return _capi.CHECKPOINT_FN(cb)

    def on_checkpoint(self, fn):
        """fn(dir, rank, replicas, step) writes this rank's state into dir."""
        self._save = self._wrap_ckpt(fn)
        self._lib.pollux_agent_on_checkpoint(self.handle, self._save, None)

    def on_restore(self, fn):
        """fn(dir, rank, replicas, step) reads the state back."""
        self._load = self._wrap_ckpt(fn)
        self._lib.pollux_agent_on_restore(self.handle, self._load, None)

    def on_requeue(self, fn):
        """fn() runs on every rank once a resize's checkpoint is committed,
        before the agent acknowledges it and waits for Slurm's requeue, which
        ends the process with SIGTERM (or, in the exit mode, before step_end()
        says to exit): flush the program's own output there. An exception is
        printed and logged; the resize goes on."""
        self._requeue = _capi.REQUEUE_FN(lambda user: self._guard(fn))
        self._lib.pollux_agent_on_requeue(self.handle, self._requeue, None)

    def restore(self):
        """True if a checkpoint was restored. Collective."""
        return self._call(self._lib.pollux_agent_restore(self.handle), "restore") == 1

    def checkpoint(self):
        """Checkpoints now, between steps. Collective."""
        self._call(self._lib.pollux_agent_checkpoint(self.handle), "checkpoint")

    # --- where training stands -----------------------------------------------
    atomic_batch = property(lambda self: self._lib.pollux_agent_atomic_batch(self.handle))
    accum_steps = property(lambda self: self._lib.pollux_agent_accum_steps(self.handle))
    total_batch = property(lambda self: self._lib.pollux_agent_total_batch(self.handle))
    lr_gain = property(lambda self: self._lib.pollux_agent_lr_gain(self.handle))
    step = property(lambda self: self._lib.pollux_agent_step(self.handle))
    samples_seen = property(lambda self: self._lib.pollux_agent_samples_seen(self.handle))
    progress = property(lambda self: self._lib.pollux_agent_progress(self.handle))
    rank = property(lambda self: self._lib.pollux_agent_rank(self.handle))
    replicas = property(lambda self: self._lib.pollux_agent_replicas(self.handle))
    nodes = property(lambda self: self._lib.pollux_agent_nodes(self.handle))
    requeue_exit_code = property(lambda self: self._lib.pollux_agent_requeue_exit_code(self.handle))
    two_step_phase = property(lambda self: TwoStep(self._lib.pollux_agent_two_step_phase(self.handle)))

    @property
    def grad_stats(self):
        """(|g|^2, tr(Sigma) at M0), or None before the first estimate."""
        sqr, var = ctypes.c_double(), ctypes.c_double()
        if self._lib.pollux_agent_grad_stats(self.handle, ctypes.byref(sqr), ctypes.byref(var)) != 1:
            return None
        return sqr.value, var.value

    def set_batch_config(self, atomic_batch, accum_steps):
        """Fixes the configuration from the next step on (between steps, every rank)."""
        self._call(self._lib.pollux_agent_set_batch_config(self.handle, int(atomic_batch), int(accum_steps)),
                   "set_batch_config")

    @property
    def max_atomic(self):
        """The largest micro-batch the agent configures: the job's max_atomic, lowered by out_of_memory()."""
        return self._lib.pollux_agent_max_atomic(self.handle)

    def out_of_memory(self, micro_batch):
        """Micro-batch `micro_batch` ran out of memory on this rank (not
        collective; the rank stops after it): lowers max_atomic and keeps it
        in the checkpoint directory for the job's later runs (doc/agent.md,
        "Memory"). Returns the new max_atomic; PolluxError when it was the
        job's smallest micro-batch (nothing smaller to try) or the limit
        could not be kept."""
        return self._call(self._lib.pollux_agent_out_of_memory(self.handle, int(micro_batch)), "out_of_memory")

    @property
    def sharded(self):
        """Whether the job is declared sharded (set_sharded)."""
        return self._call(self._lib.pollux_agent_sharded(self.handle), "sharded") == 1

    def set_sharded(self, sharded=True):
        """Declares the job's parameters sharded across its ranks (FSDP): the
        agent fits the throughput model's sharded form, whose all-gathers and
        reduce-scatters are paid in every micro-step, and its hint says so
        (perf.sharded). Every rank, before the first step; ElasticFSDP does."""
        self._call(self._lib.pollux_agent_set_sharded(self.handle, 1 if sharded else 0), "set_sharded")

    def predict_iter_time(self, nodes, replicas, atomic_batch, accum_steps=0):
        """Seconds per optimizer step by the fitted model (rank 0), or None before the first fit."""
        t = ctypes.c_double()
        ok = self._lib.pollux_agent_predict_iter_time(self.handle, nodes, replicas, atomic_batch, accum_steps,
                                                       ctypes.byref(t))
        return t.value if ok == 1 else None

    @property
    def profile(self):
        """The profiled configurations: dicts of nodes, replicas, atomic_batch, grad_time, step_time."""
        n = self._lib.pollux_agent_profile(self.handle, None, 0)
        buf = (_capi.ProfileSample * max(n, 1))()
        n = min(n, self._lib.pollux_agent_profile(self.handle, buf, n))
        return [{k: getattr(buf[i], k) for k, _ in _capi.ProfileSample._fields_} for i in range(n)]

    # --- the step protocol ---------------------------------------------------
    def micro_step_begin(self):
        self._call(self._lib.pollux_agent_micro_step_begin(self.handle), "micro_step_begin")

    def micro_step_end(self, buffer=None):
        """Framework-neutral mode: no argument. Buffer mode: a contiguous
        float32/float64 host buffer (anything with the buffer protocol)."""
        if buffer is None:
            return self._call(self._lib.pollux_agent_micro_step_done(self.handle), "micro_step_end")
        addr, count, dtype = _buffer_info(buffer)
        self._call(self._lib.pollux_agent_micro_step_end(self.handle, addr, count, dtype), "micro_step_end")

    def synchronize(self, buffer):
        """Buffer mode: all-reduces the buffer in place (the batch's mean gradient). Collective."""
        addr, count, dtype = _buffer_info(buffer)
        self._call(self._lib.pollux_agent_synchronize(self.handle, addr, count, dtype), "synchronize")

    def synchronized(self, norms):
        """Framework-neutral mode: the framework's all-reduce is done. Collective."""
        n = _capi.Norms(float(norms.local_sqr), int(norms.local_grads), float(norms.sync_sqr),
                        int(bool(norms.has_prev)), float(norms.prev_sqr), float(norms.dot_prev))
        self._call(self._lib.pollux_agent_synchronized(self.handle, ctypes.byref(n)), "synchronized")

    def synchronized_late(self, previous, skipped=False):
        """Framework-neutral mode, in place of synchronized(): `previous` is
        the previous step's (GradientNorms, grad_time_sum, micro_steps,
        step_time) measured on the device and read a step late, or None;
        `skipped`: this step's update was left out. Collective."""
        ref = None
        if previous is not None:
            norms, grad_time, micro, step_time = previous
            m = _capi.StepMeasurement(_capi.Norms(float(norms.local_sqr), int(norms.local_grads),
                                                  float(norms.sync_sqr), int(bool(norms.has_prev)),
                                                  float(norms.prev_sqr), float(norms.dot_prev)),
                                      float(grad_time), int(micro), float(step_time))
            ref = ctypes.byref(m)
        self._call(self._lib.pollux_agent_synchronized_late(self.handle, ref, int(bool(skipped))),
                   "synchronized_late")

    def step_end(self):
        """True when the process is to exit with requeue_exit_code (RequeueExit mode). Collective."""
        return self._call(self._lib.pollux_agent_step_end(self.handle), "step_end") == 1


def _buffer_info(buffer):
    view = memoryview(buffer)
    if not view.c_contiguous:
        raise ValueError("the gradient buffer must be contiguous")
    if view.format not in ("f", "d"):
        raise TypeError(f"the CPU agent takes float32 or float64 gradients, not format {view.format!r}")
    if view.readonly:
        raise ValueError("the gradient buffer must be writable (the agent reads it in place)")
    flat = view.cast("B")
    addr = ctypes.addressof((ctypes.c_ubyte * len(flat)).from_buffer(flat))
    return addr, view.nbytes // view.itemsize, 0 if view.format == "f" else 1
