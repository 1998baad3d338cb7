"""The study's storage: Optuna's journal file (the default) or a database
URL, opened the same way by the driver and by every trial's job.

Why a journal file by default: it needs no database server, only a
directory that the driver's host and every compute node see, which every
Slurm site has (the jobs' working directories); Optuna appends each
operation to it under a lock, which is safe on NFS. A URL
(`mysql+pymysql://...`, `postgresql://...`, `sqlite:///...`) is handed to
Optuna's RDBStorage as Optuna itself would.
"""
import importlib
import os
import re
import time
import uuid
import warnings

import optuna


class PolluxOptunaError(RuntimeError):
    """A study, storage or trial that pollux.optuna cannot work with; the
    message says which and what to do."""


def _lock_grace():
    """Seconds one waiter sees the same lock before it takes the holder for
    dead: $POLLUX_OPTUNA_LOCK_GRACE, else 30 (Optuna 4's grace_period)."""
    text = os.environ.get("POLLUX_OPTUNA_LOCK_GRACE", "30")
    try:
        grace = float(text)
    except ValueError:
        grace = -1.0
    if not 0 < grace <= 86400:
        raise PolluxOptunaError(f"POLLUX_OPTUNA_LOCK_GRACE={text}: not a number of seconds in (0, 86400]")
    return grace


class JournalLock:
    """The journal's lock: Optuna's own protocol (a symbolic link
    `<journal>.lock`, which Optuna's default lock uses too, safe on NFS), with
    the stale-lock recovery Optuna 4 has (`grace_period=30`) and 3.x lacks:
    a holder keeps the lock for one append, so a lock a waiter has seen
    unchanged for `grace` seconds is taken for a dead holder's (a driver
    or a trial killed with SIGKILL while appending, a node lost) and
    removed. Without it every later write of the study waits forever (found
    in a fresh-clone run of the tests: a trial killed while it reported left
    the lock, and the driver started again after it never submitted)."""

    def __init__(self, path, grace):
        self._target = path
        self._lock = path + ".lock"
        self._grace = grace

    def acquire(self):
        sleep, seen, since = 0.001, None, time.monotonic()
        while True:
            try:
                os.symlink(self._target, self._lock)
                return True
            except FileExistsError:
                pass
            try:
                st = os.lstat(self._lock)
                now_seen = (st.st_ino, st.st_mtime_ns)
            except FileNotFoundError:
                continue
            if now_seen != seen:  # another holder, or the first look: the wait starts again
                seen, since = now_seen, time.monotonic()
            elif time.monotonic() - since > self._grace:
                self._remove(f"the lock {self._lock}, unchanged for {self._grace:g} s: its holder died holding it")
                seen = None
                continue
            time.sleep(sleep)
            sleep = min(sleep * 2, 1.0)

    def release(self):
        self._remove(None)

    def _remove(self, stale):
        # Renamed first, so that of two waiters that found it stale one removes it.
        moved = f"{self._lock}.{uuid.uuid4().hex}.rename"
        try:
            os.rename(self._lock, moved)
        except FileNotFoundError:
            if stale is None:
                raise RuntimeError(f"pollux.optuna: {self._lock}: released but not held") from None
            return
        os.unlink(moved)
        if stale is not None:
            warnings.warn(f"pollux.optuna: removed {stale}", RuntimeWarning, stacklevel=3)


def _journal_backend(path):
    """Optuna's journal file: JournalFileStorage up to 3.x,
    journal.JournalFileBackend from 4.0 (the old name deprecated there),
    with JournalLock."""
    try:
        backend = importlib.import_module("optuna.storages.journal").JournalFileBackend
    except (ImportError, AttributeError):
        backend = optuna.storages.JournalFileStorage
    with warnings.catch_warnings():  # "JournalStorage is experimental" (3.x): it is the documented default here
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        return optuna.storages.JournalStorage(backend(path, lock_obj=JournalLock(path, _lock_grace())))


def _hide_password(url):
    return re.sub(r"(://[^:/@]*:)[^@]*@", r"\1***@", url)


def open_storage(spec):
    """An Optuna storage from a path (journal file; its directory must
    exist and be writable) or a database URL (connected now). Raises
    PolluxOptunaError naming the storage and the cause."""
    if not isinstance(spec, str):
        return spec  # an Optuna storage object already
    if "://" in spec:
        try:
            return optuna.storages.RDBStorage(spec)
        except Exception as e:  # noqa: BLE001 - SQLAlchemy's and the drivers' many errors
            raise PolluxOptunaError(f"storage {_hide_password(spec)}: cannot open the database: "
                                    f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}") from None
    path = os.path.abspath(spec)
    where = os.path.dirname(path)
    if os.path.isdir(path):
        raise PolluxOptunaError(f"storage {spec}: is a directory; give the journal file's path in it, "
                                f"e.g. {os.path.join(spec, 'study.journal')}")
    if not os.path.isdir(where):
        raise PolluxOptunaError(f"storage {spec}: directory {where} does not exist (the journal file must be "
                                "on a file system that the driver and every compute node see)")
    if not os.access(where, os.W_OK | os.X_OK) or (os.path.exists(path) and not os.access(path, os.R_OK | os.W_OK)):
        raise PolluxOptunaError(f"storage {spec}: cannot write {path if os.path.exists(path) else where}")
    try:
        return _journal_backend(path)
    except PolluxOptunaError:
        raise
    except Exception as e:  # noqa: BLE001
        raise PolluxOptunaError(f"storage {spec}: cannot open the journal file: {type(e).__name__}: {e}") from None
