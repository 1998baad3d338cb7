"""pollux: Python binding of libpollux-agent, the job-side half of Pollux
for Slurm (doc/agent.md, doc/pytorch.md).

`pollux.Agent` is the agent itself, through its C API (ctypes; no build
against Python's headers). `pollux.torch` makes a PyTorch
DistributedDataParallel script elastic and goodput-adaptive.
"""
from ._agent import Agent, AgentOptions, GradientNorms, TwoStep
from ._capi import AgentLibraryError, PolluxError, library_path

__all__ = ["Agent", "AgentOptions", "GradientNorms", "TwoStep", "PolluxError", "AgentLibraryError", "library_path"]
