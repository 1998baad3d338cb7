"""ctypes declarations of pollux/agent_c.h, and where the library is found.

The library is looked up, in order: $POLLUX_AGENT_LIBRARY (a path), the
libdir configure installed it to (_paths.py, written by `make install`),
then the system's search (ctypes.util.find_library). Loaded on first use,
so that `import pollux` never fails.
"""
import ctypes
import ctypes.util
import os

try:
    from ._paths import LIBDIR  # written by make install
except ImportError:  # running from the source tree
    LIBDIR = None


class PolluxError(RuntimeError):
    """An agent call failed; the message is the agent's reason."""


class AgentLibraryError(PolluxError, OSError):
    """libpollux-agent could not be found or loaded."""


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


ALLREDUCE_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_double), ctypes.c_int, ctypes.c_void_p)
BROADCAST_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_void_p)
CHECKPOINT_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.c_longlong,
                                 ctypes.c_void_p)
REQUEUE_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)


class Communicator(ctypes.Structure):
    _fields_ = [("rank", ctypes.c_int), ("size", ctypes.c_int), ("nodes", ctypes.c_int),
                ("allreduce_sum", ALLREDUCE_FN), ("broadcast", BROADCAST_FN), ("user", ctypes.c_void_p)]


class ProfileSample(ctypes.Structure):
    _fields_ = [("nodes", ctypes.c_int), ("replicas", ctypes.c_int), ("atomic_batch", ctypes.c_double),
                ("grad_time", ctypes.c_double), ("step_time", ctypes.c_double)]


class Norms(ctypes.Structure):
    _fields_ = [("local_sqr", ctypes.c_double), ("local_grads", ctypes.c_int), ("sync_sqr", ctypes.c_double),
                ("has_prev", ctypes.c_int), ("prev_sqr", ctypes.c_double), ("dot_prev", ctypes.c_double)]


class StepMeasurement(ctypes.Structure):
    _fields_ = [("norms", Norms), ("grad_time_sum", ctypes.c_double), ("micro_steps", ctypes.c_int),
                ("step_time", ctypes.c_double)]


_P = ctypes.c_void_p
_SIGNATURES = {
    "options_init": (None, [ctypes.POINTER(Options)]),
    "options_from_env": (ctypes.c_int, [ctypes.POINTER(Options)]),
    "checkpoint_waiting": (ctypes.c_int, [ctypes.POINTER(Options)]),
    "create": (_P, [ctypes.POINTER(Options), ctypes.c_int]),
    "create_external": (_P, [ctypes.POINTER(Options), ctypes.POINTER(Communicator)]),
    "create_with_communicator": (_P, [ctypes.POINTER(Options), ctypes.POINTER(Communicator)]),
    "destroy": (None, [_P]),
    "on_checkpoint": (None, [_P, CHECKPOINT_FN, _P]),
    "on_restore": (None, [_P, CHECKPOINT_FN, _P]),
    "on_requeue": (None, [_P, REQUEUE_FN, _P]),
    "restore": (ctypes.c_int, [_P]),
    "checkpoint": (ctypes.c_int, [_P]),
    "atomic_batch": (ctypes.c_int, [_P]),
    "accum_steps": (ctypes.c_int, [_P]),
    "total_batch": (ctypes.c_longlong, [_P]),
    "lr_gain": (ctypes.c_double, [_P]),
    "step": (ctypes.c_longlong, [_P]),
    "samples_seen": (ctypes.c_longlong, [_P]),
    "progress": (ctypes.c_double, [_P]),
    "rank": (ctypes.c_int, [_P]),
    "replicas": (ctypes.c_int, [_P]),
    "nodes": (ctypes.c_int, [_P]),
    "requeue_exit_code": (ctypes.c_int, [_P]),
    "grad_stats": (ctypes.c_int, [_P, ctypes.POINTER(ctypes.c_double), ctypes.POINTER(ctypes.c_double)]),
    "micro_step_begin": (ctypes.c_int, [_P]),
    "micro_step_end": (ctypes.c_int, [_P, _P, ctypes.c_size_t, ctypes.c_int]),
    "synchronize": (ctypes.c_int, [_P, _P, ctypes.c_size_t, ctypes.c_int]),
    "micro_step_done": (ctypes.c_int, [_P]),
    "synchronized": (ctypes.c_int, [_P, ctypes.POINTER(Norms)]),
    "synchronized_late": (ctypes.c_int, [_P, ctypes.POINTER(StepMeasurement), ctypes.c_int]),
    "two_step_phase": (ctypes.c_int, [_P]),
    "step_end": (ctypes.c_int, [_P]),
    "set_batch_config": (ctypes.c_int, [_P, ctypes.c_int, ctypes.c_int]),
    "max_atomic": (ctypes.c_int, [_P]),
    "out_of_memory": (ctypes.c_int, [_P, ctypes.c_int]),
    "set_sharded": (ctypes.c_int, [_P, ctypes.c_int]),
    "sharded": (ctypes.c_int, [_P]),
    "predict_iter_time": (ctypes.c_int, [_P, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                                         ctypes.POINTER(ctypes.c_double)]),
    "profile": (ctypes.c_int, [_P, ctypes.POINTER(ProfileSample), ctypes.c_int]),
    "last_error": (ctypes.c_char_p, []),
    "struct_layout": (ctypes.c_char_p, [ctypes.c_char_p]),
    "reclaim_signal": (ctypes.c_int, []),
}

# The structs above and their names in pollux/agent_c.h: checked field by
# field against the layout the loaded library reports (the C side declares
# its structs from one field list and reports them from it), so that a C
# option added, removed or retyped without this file fails at load with
# its name instead of shifting every field after it.
_STRUCTS = {"pollux_agent_options": Options, "pollux_communicator": Communicator,
            "pollux_gradient_norms": Norms, "pollux_profile_sample": ProfileSample,
            "pollux_step_measurement": StepMeasurement}


def _kind(t):
    if t is ctypes.c_double:
        return "d"
    if t is ctypes.c_int:
        return "i"
    if t is ctypes.c_longlong:
        return "q"
    if issubclass(t, (ctypes.c_char_p, ctypes.c_void_p, ctypes._Pointer, ctypes._CFuncPtr)):
        return "p"
    if t in _STRUCTS.values():
        return "s"  # checked on its own
    return "?" + t.__name__


def layout(struct):
    """A ctypes Structure's layout in pollux_agent_struct_layout's form."""
    return ";".join([str(ctypes.sizeof(struct))] +
                    [f"{name}:{_kind(t)}:{getattr(struct, name).offset}:{getattr(struct, name).size}"
                     for name, t in struct._fields_])


def layout_mismatch(handle):
    """The first difference between the structs here and the library's, or None."""
    for c_name, struct in _STRUCTS.items():
        theirs = handle.pollux_agent_struct_layout(c_name.encode())
        theirs = theirs.decode() if theirs is not None else "(unknown to the library)"
        ours = layout(struct)
        if ours != theirs:
            a, b = ours.split(";"), theirs.split(";")
            first = next((f"field {x} here, {y} in the library" for x, y in zip(a[1:], b[1:]) if x != y),
                         f"{len(a) - 1} fields of {a[0]} bytes here, {len(b) - 1} of {b[0]} in the library")
            return f"struct {c_name} differs: {first}"
    return None

_lib = None


def _candidates():
    env = os.environ.get("POLLUX_AGENT_LIBRARY")
    if env:
        return [env]  # explicit: nothing else is tried
    found = []
    if LIBDIR:
        found.append(os.path.join(LIBDIR, "libpollux-agent.so.0"))
    name = ctypes.util.find_library("pollux-agent")
    if name:
        found.append(name)
    return found


def library_path():
    """The path of the libpollux-agent that is (or would be) loaded."""
    return lib()._name


def lib():
    """The loaded library (AgentLibraryError when there is none)."""
    global _lib
    if _lib is not None:
        return _lib
    tried = _candidates()
    errors = []
    for path in tried:
        try:
            handle = ctypes.CDLL(path)
        except OSError as e:
            errors.append(f"{path}: {e}")
            continue
        missing = [n for n in _SIGNATURES if not hasattr(handle, "pollux_agent_" + n)]
        if missing:
            errors.append(f"{path}: too old, lacks pollux_agent_{missing[0]}")
            continue
        for n, (res, args) in _SIGNATURES.items():
            f = getattr(handle, "pollux_agent_" + n)
            f.restype, f.argtypes = res, args
        mismatch = layout_mismatch(handle)
        if mismatch:
            errors.append(f"{path}: built from another pollux/agent_c.h than this package ({mismatch})")
            continue
        _lib = handle
        return _lib
    where = "; ".join(errors) if errors else "not in the configured libdir nor on the library path"
    raise AgentLibraryError(
        "libpollux-agent not found (" + where + "): install Pollux for Slurm (make install) or set "
        "POLLUX_AGENT_LIBRARY to the path of libpollux-agent.so")


def last_error():
    return lib().pollux_agent_last_error().decode(errors="replace")


def check(rc, what):
    """rc of a C call: -1 raises PolluxError with the agent's reason."""
    if rc is None or rc < 0:
        raise PolluxError(f"{what}: {last_error()}")
    return rc
