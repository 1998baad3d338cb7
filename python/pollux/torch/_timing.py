"""Step records measured where the work happens, read a step late.

A step's times are marks on the device's own timeline: on a GPU CUDA
events recorded on the current stream, on the CPU the host clock, taken
at the same points (doc/agent.md, "What pollux.torch measures"):

- b_k, the loader's delivery of micro-step k's batch;
- c, the last gradient ready (DDP's last bucket), on the last micro-step;
- e, the end of optimizer.step() (the update, the agent's step end);
- n, the delivery of the next step's first batch.

So the time between two deliveries is the time a user observes per batch:
the loader, the user's code, the computation, the all-reduce not hidden
by it and the optimizer. Nothing waits for the device while the step
runs: the step's norms are copied to pinned host memory asynchronously,
and the record is read at the next step's optimizer.step(), by when the
device has passed n (in steady state it has long since: the host queues
one step ahead at most).
"""
import math
import time

import torch

from .. import _agent


class _HostClock:
    def mark(self):
        return time.perf_counter()

    def wait(self, mark):
        pass

    def seconds(self, a, b):
        return b - a


class _CudaClock:
    def __init__(self, device):
        self.device = device

    def mark(self):
        e = torch.cuda.Event(enable_timing=True)
        e.record(torch.cuda.current_stream(self.device))
        return e

    def wait(self, mark):
        mark.synchronize()  # only this event: the work queued after it goes on

    def seconds(self, a, b):
        return a.elapsed_time(b) / 1000.0


def clock(device):
    return _CudaClock(device) if device.type == "cuda" else _HostClock()


class StepRecord:
    """One step's marks and norms, as they are queued."""

    __slots__ = ("begins", "done", "after", "next", "norms", "has_prev", "skipped", "verify_skip")

    def __init__(self, first):
        self.begins = [first]
        self.done = None          # c
        self.after = None         # e
        self.next = None          # n
        self.norms = None         # host (pinned) tensor: local_sqr, sync_sqr, prev_sqr, dot_prev
        self.has_prev = False
        self.skipped = False
        self.verify_skip = False  # left out without a scaler's word: its gradients must be non-finite


class Norms:
    """The step's four squared norms on the device, and their asynchronous copy to host."""

    def __init__(self, device):
        self.device = device
        self.pinned = device.type == "cuda"
        self._host = [None, None]
        self._turn = 0

    def to_host(self, values):
        """values: a float64 device tensor; returns a host tensor filled in stream order."""
        if not self.pinned:
            return values  # the CPU: already a fresh tensor of the step's own
        self._turn ^= 1  # two buffers: the pending record's and this one's
        buf = self._host[self._turn]
        if buf is None:
            buf = self._host[self._turn] = torch.empty(values.shape, dtype=torch.float64, pin_memory=True)
        buf.copy_(values, non_blocking=True)
        return buf


def measurement(rec, clk):
    """The agent's record of a finished step (rec.next marked): (GradientNorms,
    grad_time_sum, micro_steps, step_time), or None when there is nothing
    to report (a skipped step, non-finite norms). Waits for the device to
    reach rec.next, the only wait of the step protocol."""
    clk.wait(rec.next)
    vals = rec.norms.tolist() if rec.norms is not None else None
    if rec.skipped or vals is None or not all(math.isfinite(v) for v in vals):
        return None
    b = rec.begins
    accum_times = sum(clk.seconds(b[k], b[k + 1]) for k in range(len(b) - 1))
    step_time = clk.seconds(b[-1], rec.next)
    # The last micro-step is its computation (b_s to c) and the next
    # batch's loading and user code (e to n), as every accumulation
    # micro-step has its batch's; what lies between c and e (the all-reduce
    # not hidden, the optimizer, the agent) is once per step, the model's
    # T_sync (one replica: alpha_1), with one replica too (doc/agent.md).
    last = step_time
    if rec.done is not None and rec.after is not None:
        last = clk.seconds(b[-1], rec.done) + clk.seconds(rec.after, rec.next)
    norms = _agent.GradientNorms(vals[0], vals[1], 1, rec.has_prev, vals[2], vals[3])
    return norms, accum_times + last, len(b), step_time


def averaged_finite(rec):
    """Whether the averaged gradient's norm was finite (the same on every rank)."""
    return rec.norms is not None and math.isfinite(rec.norms.tolist()[1])
