"""pollux: Python binding of libpollux-agent, the job-side half of Pollux
for Slurm (doc/agent.md, doc/pytorch.md).

`pollux.Agent` is the agent itself, through its C API (ctypes; no build
against Python's headers). `pollux.torch` makes a PyTorch
DistributedDataParallel script elastic and goodput-adaptive.
"""
from ._agent import Agent, AgentOptions, GradientNorms, TwoStep
from ._capi import AgentLibraryError, PolluxError, library_path

# Loaded now, not at the first agent: a missing library is reported when
# an agent is made. signal.signal() keeps the agent's resize handler in
# front of the program's own (pollux._signals).
try:
    from ._capi import lib as _lib
    _lib()
except AgentLibraryError:
    pass
from . import _signals
_signals.install()

__all__ = ["Agent", "AgentOptions", "GradientNorms", "TwoStep", "PolluxError", "AgentLibraryError", "library_path"]
