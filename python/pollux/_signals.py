"""The resize signal beside the program's own handlers.

The agent's C handler sits in front of whatever the program installed for
its resize signal (SIGUSR1 by default): it keeps sched/pollux's resize
requests and passes every other delivery (Slurm's --signal warning, a
user's scancel --signal, PyTorch Lightning's auto-requeue) on to the
program's handler (doc/agent.md). Python's signal.signal() replaces the C
handler; wrapped here, it puts the agent's back in front at once, with the
new Python handler behind it (the agent also does so at every step).
"""
import signal as _signal

from ._capi import AgentLibraryError, lib

_original = _signal.signal


def _signal_then_reclaim(signalnum, handler):
    previous = _original(signalnum, handler)
    try:
        lib().pollux_agent_reclaim_signal()
    except AgentLibraryError:
        pass
    return previous


_signal_then_reclaim.__doc__ = _original.__doc__
_signal_then_reclaim.__wrapped__ = _original


def install():
    """Wraps signal.signal (once)."""
    if _signal.signal is not _signal_then_reclaim:
        _signal.signal = _signal_then_reclaim
