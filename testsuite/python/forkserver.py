"""A fork server for the tests' torch processes: `import torch` costs 2-3 s
of CPU per process (loading libtorch), more than most of these tests' own
work, so one server process imports it once and forks each process the
tests start (a rank of worker.py, a `python -c` snippet) from there. The
same with optuna (2 s) for pollux.optuna's driver (`python -m`).

Each forked process is a fresh process as far as the package goes: torch
(and numpy) already imported but never used (no thread started), pollux
imported by the process itself, its own environment (os.environ, so the
C library's getenv too), working directory, argv, stdin /dev/null, output
to a file; it ends as the interpreter would (threads joined, atexit
functions, streams flushed) and its exit status is the script's
(SystemExit's code, 1 on an uncaught exception, -N when killed by signal N).
What the forked processes share that fresh ones would not: the server's
hash seed (set iteration order) and numpy's global random state (Python's
`random` reseeds itself in a child); pollux.torch depends on neither, and
the e2e tests' ranks are fresh processes under srun.

POLLUX_TESTS_NO_FORKSERVER=1 starts each process afresh instead (as
subprocess would): the same tests, to check that they do not depend on
the server."""
import json
import os
import subprocess
import sys
import time

SERVER = r'''
import gc, importlib, json, os, sys
importlib.import_module(sys.argv[1])  # torch: the expensive import, once; nothing runs, so no thread is forked
# Out of the collector's sight: a child's gc.collect() (pollux.torch's exit
# runs one) would touch every object and copy the whole heap (0.6 s each).
gc.freeze()
ctl_in = os.fdopen(os.dup(0), "r")
ctl_out = os.fdopen(os.dup(1), "w")


def child(p):
    import atexit, runpy, threading
    ctl_in.close(); ctl_out.close()
    null = os.open(os.devnull, os.O_RDONLY)
    out = os.open(p["out"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    err = os.open(p["err"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644) if p["err"] != p["out"] else out
    os.dup2(null, 0); os.dup2(out, 1); os.dup2(err, 2)
    os.environ.clear(); os.environ.update(p["env"])
    os.chdir(p["cwd"])
    argv = p["argv"]
    rc = 0
    try:
        if argv[0] == "-c":
            sys.argv = ["-c"] + argv[2:]
            sys.path[0] = ""
            exec(compile(argv[1], "<string>", "exec"), {"__name__": "__main__", "__builtins__": __builtins__})
        elif argv[0] == "-m":
            sys.argv = [argv[1]] + argv[2:]
            sys.path[0] = os.getcwd()
            runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        else:
            sys.argv = list(argv)
            sys.path[0] = os.path.dirname(os.path.abspath(argv[0]))
            runpy.run_path(argv[0], run_name="__main__")
    except SystemExit as e:
        rc = e.code if isinstance(e.code, int) else (0 if e.code is None else (print(e.code, file=sys.stderr), 1)[1])
    except BaseException:
        sys.excepthook(*sys.exc_info())  # as the interpreter does (pollux.torch's hook records an out-of-memory error)
        rc = 1
    try:
        threading._shutdown()
        atexit._run_exitfuncs()
        sys.stdout.flush(); sys.stderr.flush()
    finally:
        os._exit(rc & 0xff)


for line in ctl_in:
    procs = json.loads(line)
    sys.stdout.flush(); sys.stderr.flush()
    pids = []
    for p in procs:
        pid = os.fork()
        if pid == 0:
            child(p)
        pids.append(pid)
    ctl_out.write(json.dumps(pids) + "\n"); ctl_out.flush()
    ctl_out.write(json.dumps([os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) for pid in pids]) + "\n")
    ctl_out.flush()
'''


class Result:
    def __init__(self, returncode, stdout, stderr):
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


class ForkServer:
    def __init__(self, env, preload="torch"):
        """env: the server's (its children replace it); preload: the module it imports."""
        self.env, self.preload = env, preload
        self.proc = None

    def _server(self):
        if self.proc is None or self.proc.poll() is not None:
            self.proc = subprocess.Popen([sys.executable, "-c", SERVER, self.preload], env=self.env, stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, bufsize=0)
            self.buf = b""
        return self.proc

    def _readline(self, deadline):
        """The server's next line, None at the deadline (or if it died)."""
        import select
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return None
            data = os.read(fd, 65536)
            if not data:
                raise RuntimeError("the fork server ended")
            self.buf += data
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def run_many(self, procs, tmpdir, timeout, stderr_apart=True):
        """procs: [(argv, env, cwd)], argv[0] a script, "-c" or "-m"; runs them at
        once, waits for all. [Result] (stdout, stderr text; stderr "" and
        in stdout when not stderr_apart). subprocess.TimeoutExpired after
        `timeout` s (every process killed)."""
        os.makedirs(tmpdir, exist_ok=True)
        stamp = f"{os.getpid()}-{time.monotonic_ns()}"
        files = [(os.path.join(tmpdir, f"fs-{stamp}-{i}.out"),
                  os.path.join(tmpdir, f"fs-{stamp}-{i}.err" if stderr_apart else f"fs-{stamp}-{i}.out"))
                 for i in range(len(procs))]
        if os.environ.get("POLLUX_TESTS_NO_FORKSERVER") == "1":
            rcs = self._afresh(procs, files, timeout)
        else:
            rcs = self._forked(procs, files, timeout)
        results = []
        for rc, (out, err) in zip(rcs, files):
            text = open(out).read()
            results.append(Result(rc, text, open(err).read() if err != out else ""))
        return results

    def _forked(self, procs, files, timeout):
        s = self._server()
        s.stdin.write((json.dumps([{"argv": list(argv), "env": env, "cwd": str(cwd), "out": out, "err": err}
                                   for (argv, env, cwd), (out, err) in zip(procs, files)]) + "\n").encode())
        deadline = time.monotonic() + timeout
        pids = self._readline(time.monotonic() + 60)
        rcs = self._readline(deadline)
        if rcs is not None:
            return rcs
        for pid in pids:
            try:
                os.kill(pid, 9)
            except ProcessLookupError:
                pass
        self._readline(time.monotonic() + 60)  # the server reaped them
        raise subprocess.TimeoutExpired(procs[0][0], timeout)

    def _afresh(self, procs, files, timeout):
        running = []
        for (argv, env, cwd), (out, err) in zip(procs, files):
            with open(out, "w") as o, open(err, "w") if err != out else o as e:
                running.append(subprocess.Popen([sys.executable, *argv], env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                                                stdout=o, stderr=e))
        deadline = time.monotonic() + timeout
        try:
            return [p.wait(timeout=max(0.0, deadline - time.monotonic())) for p in running]
        finally:
            for p in running:
                p.kill()
                p.wait()

    def close(self):
        if self.proc is not None:
            self.proc.stdin.close()
            self.proc.wait()
            self.proc = None
