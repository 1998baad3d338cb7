"""pollux: Python binding of libpollux-agent, the job-side half of Pollux
for Slurm (doc/agent.md, doc/pytorch.md).

`pollux.Agent` is the agent itself, through its C API (ctypes; no build
against Python's headers). `pollux.torch` makes a PyTorch
DistributedDataParallel script elastic and goodput-adaptive.
"""
from ._agent import Agent, AgentOptions, GradientNorms, TwoStep
from ._capi import AgentLibraryError, PolluxError, library_path

# Loaded now, not at the first agent: its start-up handler of the resize
# signal (SIGUSR1) then covers the seconds `import torch` takes. A missing
# library is reported when an agent is made.
try:
    from ._capi import lib as _lib
    _lib()
except AgentLibraryError:
    pass

__all__ = ["Agent", "AgentOptions", "GradientNorms", "TwoStep", "PolluxError", "AgentLibraryError", "library_path"]
