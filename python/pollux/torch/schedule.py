"""ProgressScheduler: a torch learning-rate scheduler stepped by the job's
scale-invariant progress instead of by data epochs or optimizer steps.

With a larger batch an optimizer step (and a data epoch) counts for more
than one M0-step of progress (up to M / M0, as the AdaScale gain says), so
a schedule written for M0 and stepped per data epoch or per step runs
ahead of or behind the training it was tuned for. Wrapped, the scheduler's
own counter (last_epoch) is the progress done: whole progress epochs
(per="epoch") or whole M0-steps (per="step"), and the schedule is the one
the job would follow at M0 whatever batch sizes the agent picks.
"""
import math

from .._capi import PolluxError
from . import _session

PER = ("epoch", "step")


class ProgressScheduler:
    """ProgressScheduler(scheduler, per="epoch")

    Give it to ElasticDataParallel(model, optimizer, lr_scheduler=...)
    and do not call step(): after every optimizer step it steps the
    wrapped scheduler until the scheduler's last_epoch equals the whole
    progress epochs (or M0-steps) done, and no further than the last step
    of a schedule with `total_steps` (OneCycleLR: per="epoch" takes
    total_steps=epochs, the number given to remaining_epochs_until).
    Checkpointed with the model.
    """

    follows_progress = True

    def __init__(self, scheduler, per="epoch"):
        if per not in PER:
            raise ValueError(f"per={per!r}: one of {', '.join(PER)}")
        if not hasattr(scheduler, "step") or not hasattr(scheduler, "last_epoch"):
            raise TypeError(f"ProgressScheduler wraps a torch LR scheduler, not {type(scheduler).__name__}")
        self.scheduler, self.per = scheduler, per

    def target(self):
        """The scheduler's last_epoch for the progress done so far."""
        s = _session.get("ProgressScheduler")
        if s.agent is None or s.loader is None:
            raise PolluxError("ProgressScheduler needs the ElasticDataLoader first")
        done = s.agent.progress  # M0-steps
        if self.per == "epoch":
            done = done * s.loader.batch_size / len(s.loader.dataset)
        return math.floor(done + 1e-9)

    def step(self):
        target = self.target()
        # A schedule of a fixed length (OneCycleLR's total_steps, which raises
        # when stepped past it) keeps its last rate once the progress runs
        # past its end: the last step of remaining_epochs_until(n) may end a
        # little beyond n epochs (and per="step" beyond n epochs' M0-steps).
        total = getattr(self.scheduler, "total_steps", None)
        if isinstance(total, int):
            target = min(target, total - 1)
        while self.scheduler.last_epoch < target:
            self.scheduler.step()

    @property
    def last_epoch(self):
        return self.scheduler.last_epoch

    def get_last_lr(self):
        return self.scheduler.get_last_lr()

    def state_dict(self):
        return {"per": self.per, "scheduler": self.scheduler.state_dict()}

    def load_state_dict(self, state):
        if state.get("per") != self.per:
            raise PolluxError(f"the checkpoint's ProgressScheduler steps per {state.get('per')}, this one per "
                              f"{self.per}")
        self.scheduler.load_state_dict(state["scheduler"])
