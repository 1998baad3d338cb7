"""The process group from Slurm's environment (one task per replica under
srun), or a single process without Slurm. Also the agent's communicator
over torch.distributed (a gloo group of its own: the agent's few doubles
per step stay on the CPU whatever the training backend)."""
import datetime
import hashlib
import os
import re
import shutil
import socket
import subprocess
import tempfile

import torch
import torch.distributed as dist

from .._capi import PolluxError


def _int_env(name, default=None):
    v = os.environ.get(name)
    if v is None or v == "":
        return default
    try:
        return int(v)
    except ValueError:
        raise PolluxError(f"{name}={v!r} is not an integer") from None


def first_host(nodelist):
    """The first host name of a Slurm node list (scontrol's expansion when
    available, else the first name of the compact form: n[01-04],m1 -> n01)."""
    if shutil.which("scontrol"):
        try:
            out = subprocess.run(["scontrol", "show", "hostnames", nodelist], capture_output=True, text=True,
                                 timeout=30, check=True).stdout.split()
            if out:
                return out[0]
        except (subprocess.SubprocessError, OSError):
            pass
    m = re.match(r"^([^\[,]+)(?:\[([0-9]+))?", nodelist)
    if not m:
        raise PolluxError(f"SLURM_JOB_NODELIST={nodelist!r}: no host name")
    return m.group(1) + (m.group(2) or "")


def _address_of(host):
    """An address for `host`: its name if it resolves, else Slurm's NodeAddr
    (nodes of a local test cluster are names that do not resolve)."""
    try:
        socket.getaddrinfo(host, None)
        return host
    except OSError:
        pass
    if shutil.which("scontrol"):
        try:
            out = subprocess.run(["scontrol", "show", "node", host], capture_output=True, text=True, timeout=30,
                                 check=True).stdout
            m = re.search(r"\bNodeAddr=(\S+)", out)
            if m:
                return m.group(1)
        except (subprocess.SubprocessError, OSError):
            pass
    raise PolluxError(f"the job's first node {host!r} does not resolve and Slurm gives no NodeAddr: set MASTER_ADDR")


def _port(job_id, restart):
    """A port that differs between jobs and between the runs of one job.

    Above Linux's default ephemeral range (32768-60999): a port in it can
    be held, at any moment, by some outgoing connection on rank 0's node,
    and rank 0's bind then fails with EADDRINUSE (a CI run saw it). The
    range is fixed, not read from /proc, so that every node computes the
    same port; MASTER_PORT overrides it where a site moved that range."""
    key = f"{job_id}/{restart}/{os.environ.get('SLURM_WORKING_CLUSTER', '')}".encode()
    return 61000 + int.from_bytes(hashlib.sha1(key).digest()[:4], "little") % 4536


class Environment:
    """Where this process stands: rank, world size, local rank, device."""

    def __init__(self, rank, world_size, local_rank, backend, device, master):
        self.rank, self.world_size, self.local_rank = rank, world_size, local_rank
        self.backend, self.device, self.master = backend, device, master


def setup(backend=None, timeout=1800):
    """Initialises torch.distributed (see pollux.torch.init_process_group)."""
    if dist.is_initialized():
        raise PolluxError("torch.distributed is already initialised: call pollux.torch.init_process_group() "
                          "instead of torch.distributed.init_process_group()")
    cuda = torch.cuda.is_available()
    in_slurm = "SLURM_PROCID" in os.environ and "SLURM_NTASKS" in os.environ and "SLURM_STEP_ID" in os.environ
    if in_slurm:
        rank, world = _int_env("SLURM_PROCID"), _int_env("SLURM_NTASKS")
        local_rank = _int_env("SLURM_LOCALID", 0)
    else:
        rank = _int_env("RANK", 0)
        world = _int_env("WORLD_SIZE", 1)
        local_rank = _int_env("LOCAL_RANK", 0)
    if world < 1 or not 0 <= rank < world:
        raise PolluxError(f"rank {rank} of {world} processes is inconsistent")
    if cuda:
        device = torch.device("cuda", local_rank % torch.cuda.device_count())
        torch.cuda.set_device(device)
    else:
        device = torch.device("cpu")
    backend = backend or ("nccl" if cuda else "gloo")
    td = datetime.timedelta(seconds=timeout)
    if world == 1 and "MASTER_ADDR" not in os.environ:
        # One process: a private file store, no port to pick.
        fd, path = tempfile.mkstemp(prefix="pollux-pg-")
        os.close(fd)
        os.unlink(path)
        dist.init_process_group(backend, init_method="file://" + path, rank=0, world_size=1, timeout=td)
        master = "local"
    else:
        addr = os.environ.get("MASTER_ADDR")
        if not addr:
            nodelist = os.environ.get("SLURM_STEP_NODELIST") or os.environ.get("SLURM_JOB_NODELIST")
            if not nodelist:
                raise PolluxError("no MASTER_ADDR and no SLURM_JOB_NODELIST: cannot find rank 0")
            addr = _address_of(first_host(nodelist))
        port = _int_env("MASTER_PORT") or _port(_int_env("SLURM_JOB_ID", 0), _int_env("SLURM_RESTART_COUNT", 0))
        url = f"tcp://{addr}:{port}"
        try:
            dist.init_process_group(backend, init_method=url, rank=rank, world_size=world, timeout=td)
        except RuntimeError as e:
            # torch >= 2.4 asks its TCPStore for the libuv server by default,
            # and a build without libuv (Debian 13's 2.6) refuses before
            # anything is made: the classic store instead (every rank's
            # torch is the same build, so every rank takes the same path).
            if "libuv" not in str(e):
                raise
            dist.init_process_group(backend, init_method=url + "?use_libuv=0", rank=rank, world_size=world,
                                    timeout=td)
        master = f"{addr}:{port}"
    return Environment(rank, world, local_rank, backend, device, master)


class TorchCommunicator:
    """The agent's collectives (pollux.Agent's communicator protocol) over
    a gloo group of the job's ranks."""

    def __init__(self, env):
        self.rank, self.size = env.rank, env.world_size
        self.group = dist.new_group(backend="gloo") if env.world_size > 1 else None
        names = [None] * env.world_size
        me = os.environ.get("SLURMD_NODENAME") or socket.gethostname()
        if env.world_size > 1:
            dist.all_gather_object(names, me, group=self.group)
        else:
            names = [me]
        self.nodes = len(set(names))

    def allreduce_sum(self, values):
        t = torch.frombuffer(values, dtype=torch.float64)
        dist.all_reduce(t, op=dist.ReduceOp.SUM, group=self.group)

    def broadcast(self, data, root):
        t = torch.frombuffer(data, dtype=torch.uint8)
        dist.broadcast(t, src=root, group=self.group)
