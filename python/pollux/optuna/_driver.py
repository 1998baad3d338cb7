"""The driver: keeps K trials of a study in flight, one job per trial.

Its whole state is in the study's storage: each trial's job id is the
trial's user attribute `pollux_job`, so a driver killed and started again
with the same study and storage finds its RUNNING trials, keeps those
whose jobs still exist and fails the others (it never asks them again).
A job that ends while its trial is still RUNNING in the storage crashed
(the script tells COMPLETE, PRUNED or FAIL before it exits; a requeue for
a resize does not end the job): its trial is told FAIL with the reason in
`pollux_fail_reason`, and the search goes on.

Two launchers: Slurm (sbatch, squeue, scancel: the jobs are elastic jobs
that sched/pollux sizes) and local (the command as a child process, no
Slurm: for trying a script and for the tests).
"""
import os
import shlex
import signal
import subprocess
import time

import optuna
from optuna.trial import TrialState

from ._specs import make_pruner, make_sampler
from ._storage import PolluxOptunaError, open_storage

# Slurm's states of a job that has ended for good (a requeued job is
# PENDING, REQUEUED or COMPLETING in between, never one of these).
ENDED = {"COMPLETED", "CANCELLED", "FAILED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "BOOT_FAIL", "DEADLINE",
         "OUT_OF_MEMORY", "REVOKED"}


class LauncherUnavailable(Exception):
    """The launcher cannot tell the jobs' states now (slurmctld restarting)."""


class SlurmLauncher:
    """One elastic batch job per trial: `sbatch --requeue` with the user's
    options (a node range and --gpus-per-node make it elastic for
    job_submit/pollux) and the trial's environment."""

    confirm = 2  # polls that must find a job ended: see Driver.step

    def __init__(self, sbatch_args, log_dir=None):
        self.args = list(sbatch_args)
        if not self.args:
            raise PolluxOptunaError("no sbatch arguments: give the job's options and batch script after `--`")
        self.log_dir = os.path.abspath(log_dir or ".")

    def _gave(self, *names):
        return any(a == n or a.startswith(n + "=") or (len(n) == 2 and a.startswith(n) and len(a) > 2)
                   for a in self.args for n in names)

    def submit(self, study_name, number, env):
        extra = ["--parsable", "--requeue"]
        if not self._gave("--open-mode"):
            extra.append("--open-mode=append")  # a requeued run appends to its trial's log
        if not self._gave("-J", "--job-name"):
            extra.append(f"--job-name={study_name}.{number}")
        if not self._gave("-o", "--output"):
            extra.append(f"--output={os.path.join(self.log_dir, f'{study_name}.trial-{number}.out')}")
        cmd = ["sbatch"] + extra + self.args
        p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if p.returncode != 0:
            raise PolluxOptunaError(f"sbatch failed for trial {number} ({shlex.join(cmd)}): "
                                    f"{p.stderr.strip() or p.stdout.strip()}")
        return p.stdout.strip().split(";")[0]

    def states(self, jobs):
        """{job: Slurm state or None (no longer known to slurmctld)}."""
        p = subprocess.run(["squeue", "-h", "-u", str(os.getuid()), "-o", "%i|%T"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
        if p.returncode != 0:
            raise LauncherUnavailable(p.stderr.strip())
        known = dict(line.split("|", 1) for line in p.stdout.split() if "|" in line)
        return {j: known.get(j) for j in jobs}

    @staticmethod
    def ended(state):
        return state is None or state in ENDED

    def cancel(self, jobs):
        if jobs:
            subprocess.run(["scancel"] + list(jobs), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


class LocalLauncher:
    """The trial's command as a local process (its own session), no Slurm;
    the job id is local:PID. A process the driver did not start itself (a
    driver restarted) is followed by its pid."""

    confirm = 1  # polls that must find a job ended: a child's exit is final

    def __init__(self, command, log_dir=None):
        self.command = list(command)
        if not self.command:
            raise PolluxOptunaError("no command: give the trial's command after `--`")
        self.log_dir = os.path.abspath(log_dir or ".")
        self.checkpoint_base = self.log_dir
        self.children = {}

    def submit(self, study_name, number, env):
        log = open(os.path.join(self.log_dir, f"{study_name}.trial-{number}.out"), "ab")
        try:
            p = subprocess.Popen(self.command, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        except OSError as e:
            raise PolluxOptunaError(f"cannot start trial {number}'s command {shlex.join(self.command)}: {e}") from None
        finally:
            log.close()
        job = f"local:{p.pid}"
        self.children[job] = p
        return job

    def states(self, jobs):
        out = {}
        for j in jobs:
            p = self.children.get(j)
            if p is not None:
                rc = p.poll()
                out[j] = "RUNNING" if rc is None else ("COMPLETED" if rc == 0 else f"FAILED (exit {rc})")
                continue
            try:
                os.kill(int(j.split(":", 1)[1]), 0)
                out[j] = "RUNNING"
            except (ProcessLookupError, ValueError):
                out[j] = None
            except PermissionError:
                out[j] = "RUNNING"
        return out

    @staticmethod
    def ended(state):
        return state is None or state != "RUNNING"

    def cancel(self, jobs):
        for j in jobs:
            try:
                os.killpg(int(j.split(":", 1)[1]), signal.SIGTERM)
            except (ProcessLookupError, ValueError, PermissionError):
                pass
        for j in jobs:
            p = self.children.get(j)
            if p is not None:
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, signal.SIGKILL)
                    p.wait()


class _Stop(Exception):
    def __init__(self, signum):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


class Driver:
    """Runs `study_name` in `storage` up to `n_trials` trials (all trials
    the study holds count, those of earlier drivers too), `in_flight` jobs
    at a time. `launcher`: SlurmLauncher(sbatch_args) or
    LocalLauncher(command)."""

    SUBMIT_RETRIES = 5  # polls in a row whose submission failed before the study stops

    def __init__(self, study_name, storage, n_trials, in_flight, launcher, direction="minimize", sampler="tpe",
                 pruner="median", poll=2.0, keep_jobs=False, log=None):
        if n_trials < 1 or in_flight < 1:
            raise PolluxOptunaError(f"--trials {n_trials} and --in-flight {in_flight} must be at least 1")
        self.study_name, self.storage_spec = study_name, storage
        self.n_trials, self.in_flight, self.launcher = n_trials, in_flight, launcher
        self.direction, self.sampler_spec, self.pruner_spec = direction, sampler, pruner
        self.poll, self.keep_jobs = poll, keep_jobs
        self.log = log or (lambda msg: print(f"[{time.strftime('%H:%M:%S')}] pollux.optuna: {msg}", flush=True))
        self.jobs = {}           # trial number -> job id, the trials in flight
        self.pending = None      # a trial asked whose job could not be submitted yet
        self.submitted, self.submit_failures = 0, 0
        self.gone = {}           # trial number -> polls that found its job ended
        self.earlier = {}        # parameter -> distribution, of the study's trials before this driver

    # -- the study --------------------------------------------------------
    def open(self):
        storage = open_storage(self.storage_spec)  # a clear error when unreachable
        self.storage_path = self.storage_spec if "://" in self.storage_spec else os.path.abspath(self.storage_spec)
        make_sampler(self.sampler_spec, 0)          # bad specs fail here, not in every job
        try:
            study = optuna.create_study(study_name=self.study_name, storage=storage, load_if_exists=True,
                                        direction=self.direction, sampler=make_sampler(self.sampler_spec),
                                        pruner=make_pruner(self.pruner_spec))
        except Exception as e:  # noqa: BLE001 - a database gone between connect and create
            raise PolluxOptunaError(f"study {self.study_name!r} in {self.storage_spec}: {type(e).__name__}: {e}") from None
        want = optuna.study.StudyDirection[self.direction.upper()]
        if study.directions != [want]:
            raise PolluxOptunaError(
                f"study {self.study_name!r} exists in {self.storage_spec} with direction(s) "
                f"{[d.name.lower() for d in study.directions]}, not {self.direction}: give another --study name")
        for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE, TrialState.PRUNED)):
            for k, d in t.distributions.items():
                self.earlier.setdefault(k, (t.number, d))
        self.study = study
        return study

    def _env(self, number):
        env = dict(os.environ, POLLUX_OPTUNA_STUDY=self.study_name, POLLUX_OPTUNA_STORAGE=self.storage_path,
                   POLLUX_OPTUNA_TRIAL=str(number), POLLUX_OPTUNA_SAMPLER=self.sampler_spec,
                   POLLUX_OPTUNA_PRUNER=self.pruner_spec)
        # One checkpoint directory per trial: a POLLUX_CHECKPOINT_DIR of the
        # driver's environment, used as it is by every job, would make each
        # trial resume the one before it (the agent's default is per Slurm
        # job, but a local process has no job id).
        base = os.environ.get("POLLUX_CHECKPOINT_DIR") or getattr(self.launcher, "checkpoint_base", None)
        if base:
            env["POLLUX_CHECKPOINT_DIR"] = os.path.join(base, f"{self.study_name}.trial-{number}")
        return env

    def _trial(self, number):
        return self.study._storage.get_trial(self.study._storage.get_trial_id_from_study_id_trial_number(
            self.study._study_id, number))

    def _fail(self, number, reason):
        tid = self.study._storage.get_trial_id_from_study_id_trial_number(self.study._study_id, number)
        self.study._storage.set_trial_user_attr(tid, "pollux_fail_reason", reason)
        self.study.tell(number, state=TrialState.FAIL, skip_if_finished=True)
        self.log(f"trial {number} FAIL: {reason}")

    # -- resuming ---------------------------------------------------------
    def resume(self):
        """RUNNING trials of an earlier driver: kept when their jobs exist."""
        running = self.study.get_trials(deepcopy=False, states=(TrialState.RUNNING,))
        if not running:
            return
        with_jobs = {t.number: t.user_attrs.get("pollux_job") for t in running}
        try:
            states = self.launcher.states([j for j in with_jobs.values() if j])
        except LauncherUnavailable as e:
            raise PolluxOptunaError(f"cannot read the jobs of the study's running trials: {e}") from None
        for number, job in sorted(with_jobs.items()):
            if not job:
                self._fail(number, "asked by an earlier driver that stopped before submitting its job")
            elif self.launcher.ended(states[job]):
                self._trial_ended(number, job, states[job], note="while no driver watched")
            else:
                self.jobs[number] = job
                self.log(f"trial {number}: job {job} {states[job]}, resumed")

    # -- the loop ---------------------------------------------------------
    def _submit_one(self):
        """Asks a trial (or takes the one whose submission failed) and
        submits its job. A failed submission aborts the study when nothing
        was ever submitted (the options are wrong) or after
        SUBMIT_RETRIES polls in a row (slurmctld gone for good); in
        between, the same trial is submitted again at the next poll (a
        restarting slurmctld refuses sbatch for a few seconds). Returns
        whether it submitted."""
        if self.pending is None:
            self.pending = self.study.ask()
        t = self.pending
        try:
            job = self.launcher.submit(self.study_name, t.number, self._env(t.number))
        except PolluxOptunaError as e:
            self.submit_failures += 1
            if self.submitted == 0 or self.submit_failures >= self.SUBMIT_RETRIES:
                self.pending = None
                self._fail(t.number, str(e))
                raise
            self.log(f"{e}; trying again at the next poll ({self.submit_failures} of {self.SUBMIT_RETRIES})")
            return False
        self.pending, self.submit_failures = None, 0
        self.submitted += 1
        t.set_user_attr("pollux_job", job)
        self.jobs[t.number] = job
        self.log(f"trial {t.number}: job {job} submitted")
        return True

    def _trial_ended(self, number, job, state, note=""):
        frozen = self._trial(number)
        if frozen.state == TrialState.RUNNING:
            self._fail(number, f"job {job} ended ({state or 'gone from the queue'}{', ' + note if note else ''}) "
                       "while its trial was running: the script crashed, was cancelled or returned without "
                       "telling the trial's end (pollux.optuna.run, or finish)")
        else:
            value = f" value {frozen.value}" if frozen.value is not None else ""
            last = max(frozen.intermediate_values) if frozen.intermediate_values else None
            self.log(f"trial {number} {frozen.state.name}{value} (job {job}"
                     f"{', last step ' + str(last) if last is not None else ''}; params {frozen.params})")

    def _check_parameters(self, number):
        """A study that existed with other parameters: the same name drawn
        from another distribution is an error (the pruner and sampler would
        compare unlike trials)."""
        if not self.earlier:
            return
        for k, d in self._trial(number).distributions.items():
            if k in self.earlier and self.earlier[k][1] != d:
                n0, d0 = self.earlier[k]
                raise PolluxOptunaError(
                    f"study {self.study_name!r} exists with parameter {k!r} drawn from {d0} (trial {n0}); "
                    f"trial {number} of this run draws it from {d}: give another --study name")

    def step(self):
        """One poll: ended jobs, then new trials up to the limits. Returns
        False when the study is done."""
        if self.jobs:
            try:
                states = self.launcher.states(list(self.jobs.values()))
            except LauncherUnavailable as e:
                self.log(f"cannot read the jobs' states ({e}); trying again")
                return True
            for number, job in sorted(self.jobs.items()):
                if self.launcher.ended(states[job]):
                    # Twice in a row for Slurm: no state between a job's
                    # end and its requeue is taken for its end.
                    self.gone[number] = self.gone.get(number, 0) + 1
                    if self.gone[number] >= self.launcher.confirm or self._trial(number).state != TrialState.RUNNING:
                        del self.jobs[number]
                        self.gone.pop(number, None)
                        self._trial_ended(number, job, states[job])
                else:
                    self.gone.pop(number, None)
                    self._check_parameters(number)
        asked = len(self.study.get_trials(deepcopy=False))
        while len(self.jobs) < self.in_flight and (asked < self.n_trials or self.pending is not None):
            if self.pending is None:
                asked += 1
            if not self._submit_one():
                break
        return bool(self.jobs) or asked < self.n_trials or self.pending is not None

    def run(self):
        """Until n_trials have ended. SIGINT/SIGTERM: cancels the jobs in
        flight and fails their trials (keep_jobs: leaves them running and
        says which), then raises KeyboardInterrupt."""
        if not hasattr(self, "study"):
            self.open()
        # The handler only notes the signal: raised in the middle of a
        # storage operation or of sbatch, it would leave either half done.
        stopping = []
        old = {s: signal.signal(s, lambda signum, frame: stopping.append(signum))
               for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            self.resume()
            while not stopping and self.step():
                end = time.monotonic() + self.poll
                while not stopping and time.monotonic() < end:
                    time.sleep(min(0.1, self.poll))
            if stopping:
                stop = _Stop(stopping[0])
                self._stop(stop)
                raise KeyboardInterrupt(str(stop))
        except PolluxOptunaError as e:
            self._stop(e)
            raise
        finally:
            for s, h in old.items():
                signal.signal(s, h)
        return self.study

    def _stop(self, why):
        if self.pending is not None:
            self._fail(self.pending.number, f"never submitted: the driver was stopped ({why})")
            self.pending = None
        if not self.jobs:
            return
        what = f"stopped by {why}" if isinstance(why, _Stop) else f"stopped: {why}"
        if self.keep_jobs:
            self.log(f"{what}; left running: " + ", ".join(f"trial {n} job {j}" for n, j in sorted(self.jobs.items()))
                     + " (run the same command again to follow them)")
            return
        self.launcher.cancel(list(self.jobs.values()))
        for number, job in sorted(self.jobs.items()):
            self._fail(number, f"job {job} cancelled: the driver was {what}")
        self.jobs.clear()

    def summary(self):
        trials = self.study.get_trials(deepcopy=False)
        counts = {}
        for t in trials:
            counts[t.state.name] = counts.get(t.state.name, 0) + 1
        line = f"study {self.study_name}: {len(trials)} trials: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
        try:
            best = self.study.best_trial
            line += f"; best trial {best.number} value {best.value} params {best.params}"
        except ValueError:
            line += "; no trial completed"
        return line


def run_study(study_name, storage, n_trials, in_flight, sbatch_args=None, command=None, local=False, **kwargs):
    """The driver as a function: Slurm jobs from `sbatch_args` (options and
    batch script with its arguments), or with local=True the `command` as
    local processes. Returns the optuna.Study."""
    log_dir = kwargs.pop("log_dir", None)
    launcher = LocalLauncher(command or sbatch_args, log_dir) if local else SlurmLauncher(sbatch_args or command, log_dir)
    d = Driver(study_name, storage, n_trials, in_flight, launcher, **kwargs)
    study = d.run()
    d.log(d.summary())
    return study

