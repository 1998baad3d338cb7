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
"""
import torch
from torch.utils.data.dataloader import default_collate

from .. import _agent
from .._capi import PolluxError
from . import _session


class ElasticDataLoader:
    """ElasticDataLoader(dataset, batch_size, max_batch_size=None,
    atomic_batch_size=(1, None), accumulation=True, shuffle=True, seed=0,
    collate_fn=None)

    `batch_size` is M0, the batch size the learning rate was tuned for;
    the agent picks the batch size up to `max_batch_size` (default:
    batch_size, i.e. fixed), split into per-replica micro-batches within
    `atomic_batch_size` = (min, max) (max default: batch_size) and, when
    `accumulation`, several micro-steps per optimizer step.
    """

    def __init__(self, dataset, batch_size, max_batch_size=None, atomic_batch_size=(1, None), accumulation=True,
                 shuffle=True, seed=0, collate_fn=None):
        session = _session.get("ElasticDataLoader")
        try:
            n = len(dataset)
        except TypeError:
            raise TypeError("ElasticDataLoader needs a map-style dataset (with __len__ and __getitem__)") from None
        if n < 1:
            raise ValueError("the dataset is empty")
        if int(batch_size) != batch_size or batch_size < 1:
            raise ValueError(f"batch_size {batch_size!r}: a positive integer")
        lo, hi = atomic_batch_size
        self.dataset, self.batch_size, self.shuffle, self.seed = dataset, int(batch_size), bool(shuffle), int(seed)
        self.collate_fn = collate_fn or default_collate
        self._perm = (None, None)
        options = _agent.AgentOptions(init_batch=self.batch_size,
                                      max_batch=max_batch_size if max_batch_size is not None else self.batch_size,
                                      min_atomic=int(lo), max_atomic=int(hi if hi is not None else self.batch_size),
                                      accumulation=accumulation)
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
        out = []
        for pos in range(start, start + count):
            out.append(self._order(pos // n)[pos % n])
        return out

    @property
    def epoch(self):
        """The data epoch the next example belongs to."""
        return self._session.agent.samples_seen // len(self.dataset)

    def __iter__(self):
        s = self._session
        s.start()
        a = s.agent
        end = (a.samples_seen // len(self.dataset) + 1) * len(self.dataset)
        while a.samples_seen < end:
            pos, atomic, accum, replicas, rank = a.samples_seen, a.atomic_batch, a.accum_steps, a.replicas, a.rank
            for k in range(accum + 1):
                idx = self.indices(pos + (k * replicas + rank) * atomic, atomic)
                batch = self.collate_fn([self.dataset[i] for i in idx])
                s.begin_micro(k, accum)
                yield batch
            if s.micro != -1:  # optimizer.step() left out: a skipped update, or a misuse
                s.end_left_out_step()

    def state_dict(self):
        return {"seed": self.seed, "shuffle": self.shuffle, "examples": len(self.dataset),
                "batch_size": self.batch_size}

    def load_state_dict(self, state):
        if state.get("examples") != len(self.dataset):
            raise PolluxError(f"the checkpoint was taken on a dataset of {state.get('examples')} examples, "
                              f"this one has {len(self.dataset)}")
        self.seed, self.shuffle = state["seed"], state["shuffle"]
        self._perm = (None, None)
