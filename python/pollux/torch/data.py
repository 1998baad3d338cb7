"""ElasticDataLoader: batches of the agent's atomic batch size, sharded by
rank, that resume at the exact sample after a resize.

The examples form one stream: epoch e is a permutation of the dataset
(seeded by seed + e, the same on every rank and at every size), epochs
follow each other. Optimizer step t takes the next total_batch examples
of the stream, from the agent's samples_seen() on: micro-step k of rank r
the slice at samples_seen + (k * replicas + r) * atomic_batch. The
position is thus the agent's (checkpointed) example count, so a resize
neither skips nor repeats an example whatever the sizes before and after.
An iteration over the loader is one epoch: it ends at the first step
boundary at or after the epoch's last example (a step that straddles two
epochs takes the first examples of the next one, which that epoch then
does not take again).

With DataLoader workers the loader plans ahead: the index lists of the
coming micro-steps are computed from the agent's position and batch
configuration and handed to a torch DataLoader, whose workers load and
collate them in order while the model trains. The plan holds while the
configuration does; at every step boundary the loader checks that the
agent's position and configuration are those it planned for, and when the
agent changed them (a new batch size takes effect at a step boundary) it
drops what the workers prefetched and plans again from there. So the
stream is the same with or without workers.
"""
import functools
import signal

import torch
from torch.utils.data import DataLoader, IterableDataset
from torch.utils.data.dataloader import default_collate

from .. import _agent
from .._capi import PolluxError
from . import _session


class _Plan:
    """The micro-batches' indices from a position on, for one batch
    configuration, to the first step boundary at or after `end`."""

    def __init__(self, loader, pos, atomic, accum, replicas, rank, end):
        self.loader, self.pos, self.end = loader, pos, end
        self.atomic, self.accum, self.replicas, self.rank = atomic, accum, replicas, rank
        self.step = atomic * replicas * (accum + 1)

    def config(self):
        return self.atomic, self.accum, self.replicas, self.rank

    def __iter__(self):
        pos = self.pos
        while pos < self.end:
            for k in range(self.accum + 1):
                yield self.loader.indices(pos + (k * self.replicas + self.rank) * self.atomic, self.atomic)
            pos += self.step


def _ignore_resize_signal(sig, worker_init_fn, worker_id):
    """A DataLoader worker's start: Slurm signals every process of the step,
    so the resize signal (and Slurm's --signal warning on it) reaches the
    workers too, where the program's own handler, inherited over fork, has
    nothing to do; it is ignored there. It was blocked while the worker was
    started (ElasticDataLoader._start_workers), so no delivery slips in
    before this."""
    from .. import _signals
    _signals._original(sig, signal.SIG_IGN)  # not the wrapper: the agent's handler stays out
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {sig})
    if worker_init_fn is not None:
        worker_init_fn(worker_id)


class _PlanSampler:
    """The DataLoader's batch_sampler: the loader's current plan."""

    def __init__(self):
        self.plan = None

    def __iter__(self):
        return iter(self.plan)


class ElasticDataLoader:
    """ElasticDataLoader(dataset, batch_size, max_batch_size=None,
    atomic_batch_size=(1, None), accumulation=True, shuffle=True, seed=0,
    collate_fn=None, num_workers=0, pin_memory=False, prefetch_factor=None,
    persistent_workers=False, worker_init_fn=None, **dataloader_options)

    `batch_size` is M0, the batch size the learning rate was tuned for;
    the agent picks the batch size up to `max_batch_size` (default:
    batch_size, i.e. fixed), split into per-replica micro-batches within
    `atomic_batch_size` = (min, max) (max default: batch_size) and, when
    `accumulation`, several micro-steps per optimizer step.

    `collate_fn`, `num_workers`, `pin_memory`, `prefetch_factor`,
    `persistent_workers`, `worker_init_fn` and the other keywords of
    torch's DataLoader (timeout, multiprocessing_context, generator) mean
    what they mean there; the order of the examples (sampler, shuffle,
    batch_sampler, drop_last) is the loader's own.
    """

    def __init__(self, dataset, batch_size, max_batch_size=None, atomic_batch_size=(1, None), accumulation=True,
                 shuffle=True, seed=0, collate_fn=None, num_workers=0, pin_memory=False, prefetch_factor=None,
                 persistent_workers=False, worker_init_fn=None, **dataloader_options):
        session = _session.get("ElasticDataLoader")
        if isinstance(dataset, IterableDataset):
            raise TypeError("ElasticDataLoader needs a map-style dataset (with __len__ and __getitem__), not an "
                            "IterableDataset: the loader resumes at an exact example after a resize, and its "
                            "workers load the examples it names")
        try:
            n = len(dataset)
        except TypeError:
            raise TypeError("ElasticDataLoader needs a map-style dataset (with __len__ and __getitem__)") from None
        if n < 1:
            raise ValueError("the dataset is empty")
        if int(batch_size) != batch_size or batch_size < 1:
            raise ValueError(f"batch_size {batch_size!r}: a positive integer")
        ordering = {"sampler", "batch_sampler", "drop_last", "shuffle"} & set(dataloader_options)
        if ordering:
            raise TypeError(f"ElasticDataLoader: {', '.join(sorted(ordering))} is not accepted: the loader orders "
                            "and batches the examples itself (shuffle=, seed=) so that a resize neither skips nor "
                            "repeats one")
        if int(num_workers) != num_workers or num_workers < 0:
            raise ValueError(f"num_workers {num_workers!r}: a non-negative integer")
        if num_workers == 0 and (persistent_workers or prefetch_factor is not None):
            raise ValueError("persistent_workers and prefetch_factor need worker processes: set num_workers > 0")
        lo, hi = atomic_batch_size
        self.dataset, self.batch_size, self.shuffle, self.seed = dataset, int(batch_size), bool(shuffle), int(seed)
        self.collate_fn = collate_fn or default_collate
        self.num_workers = int(num_workers)
        self._perm = (None, None)
        self._sampler = _PlanSampler()
        workers = {"prefetch_factor": prefetch_factor} if prefetch_factor is not None else {}
        options = _agent.AgentOptions(init_batch=self.batch_size,
                                      max_batch=max_batch_size if max_batch_size is not None else self.batch_size,
                                      min_atomic=int(lo), max_atomic=int(hi if hi is not None else self.batch_size),
                                      accumulation=accumulation)
        self._resize_signal = options.to_c().resize_signal  # POLLUX_RESIZE_SIGNAL's, USR1 by default
        if self.num_workers > 0 and self._resize_signal > 0:
            worker_init_fn = functools.partial(_ignore_resize_signal, self._resize_signal, worker_init_fn)
        self._loader = DataLoader(dataset, batch_sampler=self._sampler, collate_fn=self.collate_fn,
                                  num_workers=self.num_workers, pin_memory=pin_memory,
                                  persistent_workers=persistent_workers, worker_init_fn=worker_init_fn,
                                  **workers, **dataloader_options)
        # Without workers, pinning or other DataLoader options the batches
        # are collated here, batch by batch as asked: nothing is loaded
        # ahead, and no DataLoader draws from the global RNG per epoch.
        self._in_process = self.num_workers == 0 and not pin_memory and not dataloader_options
        session.attach_loader(self, options)
        self._session = session

    def __len__(self):
        """Examples per epoch (the number of batches changes with the batch size)."""
        return len(self.dataset)

    def _order(self, epoch):
        if self._perm[0] != epoch:
            n = len(self.dataset)
            if self.shuffle:
                g = torch.Generator()
                g.manual_seed(self.seed + epoch)
                perm = torch.randperm(n, generator=g)
            else:
                perm = torch.arange(n)
            self._perm = (epoch, perm.tolist())
        return self._perm[1]

    def indices(self, start, count):
        """Dataset indices of stream positions [start, start + count)."""
        n = len(self.dataset)
        out, pos, end = [], start, start + count
        while pos < end:  # a slice of each epoch's order the range spans
            lo = pos % n
            take = min(end - pos, n - lo)
            out += self._order(pos // n)[lo:lo + take]
            pos += take
        return out

    @property
    def epoch(self):
        """The data epoch the next example belongs to."""
        return self._session.agent.samples_seen // len(self.dataset)

    def _plan(self, end):
        a = self._session.agent
        plan = _Plan(self, a.samples_seen, a.atomic_batch, a.accum_steps, a.replicas, a.rank, end)
        if self._in_process:
            return plan, (self.collate_fn([self.dataset[i] for i in idx]) for idx in plan)
        self._sampler.plan = plan
        return plan, self._start_workers()

    def _start_workers(self):
        """iter() of the torch DataLoader, which forks its workers (unless
        persistent): the resize signal stays blocked in this thread
        meanwhile, so a worker starts with it blocked until it ignores it
        (a delivery to this process meanwhile goes to another thread, or
        waits until the mask is restored: it is not lost)."""
        if self.num_workers == 0 or self._resize_signal <= 0:
            return iter(self._loader)
        old = signal.pthread_sigmask(signal.SIG_BLOCK, {self._resize_signal})
        try:
            return iter(self._loader)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)

    def __iter__(self):
        s = self._session
        s.start()
        a = s.agent
        end = (a.samples_seen // len(self.dataset) + 1) * len(self.dataset)
        plan, batches = self._plan(end)
        expected = plan.pos
        while a.samples_seen < end:
            if (a.samples_seen, a.atomic_batch, a.accum_steps, a.replicas, a.rank) != (expected,) + plan.config():
                # The agent changed the configuration at this step boundary:
                # what the workers prefetched is for the old one.
                del batches
                plan, batches = self._plan(end)
                expected = plan.pos
            for k in range(plan.accum + 1):
                batch = next(batches)
                s.begin_micro(k, plan.accum)
                yield batch
            if s.micro != -1:  # optimizer.step() left out: a skipped update, or a misuse
                s.end_left_out_step()
            expected += plan.step

    def state_dict(self):
        return {"seed": self.seed, "shuffle": self.shuffle, "examples": len(self.dataset),
                "batch_size": self.batch_size}

    def load_state_dict(self, state):
        if state.get("examples") != len(self.dataset):
            raise PolluxError(f"the checkpoint was taken on a dataset of {state.get('examples')} examples, "
                              f"this one has {len(self.dataset)}")
        self.seed, self.shuffle = state["seed"], state["shuffle"]
        self._perm = (None, None)
