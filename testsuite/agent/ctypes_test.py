#!/usr/bin/env python3
"""libpollux-agent from Python through ctypes (pollux/agent_c.h): a
single-process agent trains a least-squares model with NumPy-free float32
buffers, checkpoints through a Python callback and restores."""
import array
import ctypes
import os
import random
import sys
import tempfile

lib = ctypes.CDLL(sys.argv[1])


class Options(ctypes.Structure):
    _fields_ = [("init_batch", ctypes.c_double), ("max_batch", ctypes.c_double),
                ("min_atomic", ctypes.c_int), ("max_atomic", ctypes.c_int), ("accumulation", ctypes.c_int),
                ("adapt", ctypes.c_int), ("smoothing", ctypes.c_double), ("spool_dir", ctypes.c_char_p),
                ("write_hints", ctypes.c_int), ("hint_interval", ctypes.c_double),
                ("checkpoint_dir", ctypes.c_char_p), ("requeue_mode", ctypes.c_int),
                ("requeue_wait", ctypes.c_double), ("requeue_exit_code", ctypes.c_int),
                ("resize_signal", ctypes.c_int), ("verbose", ctypes.c_int),
                ("checkpoint_interval", ctypes.c_double), ("gpu_type", ctypes.c_char_p),
                ("device_name", ctypes.c_char_p)]


# The library's own account of the struct (pollux_agent_struct_layout): the
# declaration above must match it field by field.
lib.pollux_agent_struct_layout.restype = ctypes.c_char_p
reported = lib.pollux_agent_struct_layout(b"pollux_agent_options").decode().split(";")
assert reported[0] == str(ctypes.sizeof(Options)), (reported[0], ctypes.sizeof(Options))
assert [f.split(":")[0] for f in reported[1:]] == [n for n, _ in Options._fields_], reported
assert [int(f.split(":")[2]) for f in reported[1:]] == [getattr(Options, n).offset for n, _ in Options._fields_]

CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.c_longlong,
                            ctypes.c_void_p)
lib.pollux_agent_create.restype = ctypes.c_void_p
lib.pollux_agent_create.argtypes = [ctypes.POINTER(Options), ctypes.c_int]
for name in ("micro_step_begin", "step_end", "restore", "checkpoint"):
    getattr(lib, "pollux_agent_" + name).argtypes = [ctypes.c_void_p]
lib.pollux_agent_micro_step_end.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
lib.pollux_agent_synchronize.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
lib.pollux_agent_lr_gain.restype = ctypes.c_double
lib.pollux_agent_lr_gain.argtypes = [ctypes.c_void_p]
lib.pollux_agent_step.restype = ctypes.c_longlong
lib.pollux_agent_step.argtypes = [ctypes.c_void_p]
lib.pollux_agent_atomic_batch.argtypes = [ctypes.c_void_p]
lib.pollux_agent_on_checkpoint.argtypes = [ctypes.c_void_p, CALLBACK, ctypes.c_void_p]
lib.pollux_agent_on_restore.argtypes = [ctypes.c_void_p, CALLBACK, ctypes.c_void_p]
lib.pollux_agent_destroy.argtypes = [ctypes.c_void_p]
lib.pollux_agent_last_error.restype = ctypes.c_char_p

DIM = 4
w = array.array("f", [0.0] * DIM)
grad = array.array("f", [0.0] * DIM)
addr = lambda a: a.buffer_info()[0]


def save(path, rank, replicas, step, user):
    with open(os.path.join(path.decode(), "w.txt"), "w") as f:
        f.write(" ".join(map(repr, w)))
    return 0


def load(path, rank, replicas, step, user):
    with open(os.path.join(path.decode(), "w.txt")) as f:
        w[:] = array.array("f", map(float, f.read().split()))
    return 0


save_cb, load_cb = CALLBACK(save), CALLBACK(load)  # kept alive while the agent lives
work = tempfile.mkdtemp()
opt = Options()
lib.pollux_agent_options_init(ctypes.byref(opt))
opt.init_batch, opt.max_batch, opt.min_atomic, opt.max_atomic = 8, 8, 1, 8
opt.adapt, opt.write_hints, opt.verbose = 0, 0, 0
opt.checkpoint_dir = work.encode()

agent = lib.pollux_agent_create(ctypes.byref(opt), -1)
assert agent, lib.pollux_agent_last_error()
lib.pollux_agent_on_checkpoint(agent, save_cb, None)
rng = random.Random(1)
for t in range(200):
    m = lib.pollux_agent_atomic_batch(agent)
    assert lib.pollux_agent_micro_step_begin(agent) == 0
    for i in range(DIM):
        grad[i] = 0.0
    for _ in range(m):
        x = [rng.random() for _ in range(DIM)]
        err = sum(wi * xi for wi, xi in zip(w, x)) - sum((i + 1) * xi for i, xi in enumerate(x))
        for i in range(DIM):
            grad[i] += err * x[i] / m
    assert lib.pollux_agent_micro_step_end(agent, addr(grad), DIM, 0) == 0, lib.pollux_agent_last_error()
    assert lib.pollux_agent_synchronize(agent, addr(grad), DIM, 0) == 0, lib.pollux_agent_last_error()
    gain = lib.pollux_agent_lr_gain(agent)
    for i in range(DIM):
        w[i] -= 0.5 * gain * grad[i]
    assert lib.pollux_agent_step_end(agent) == 0
assert lib.pollux_agent_checkpoint(agent) == 0, lib.pollux_agent_last_error()
trained = list(w)
lib.pollux_agent_destroy(agent)
assert all(abs(trained[i] - (i + 1)) < 0.2 for i in range(DIM)), trained

w[:] = array.array("f", [0.0] * DIM)
agent = lib.pollux_agent_create(ctypes.byref(opt), -1)
lib.pollux_agent_on_restore(agent, load_cb, None)
assert lib.pollux_agent_restore(agent) == 1, lib.pollux_agent_last_error()
assert lib.pollux_agent_step(agent) == 200
assert list(w) == trained
lib.pollux_agent_destroy(agent)
print("ctypes: trained 200 steps to w =", [round(x, 3) for x in trained], "checkpointed and restored")
