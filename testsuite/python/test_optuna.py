"""pollux.optuna without Slurm (doc/hpo.md): real Optuna storage (the
journal file), real processes for the trials (the driver's local
launcher, or the trial's script run by hand as a requeued job would run
it), the driver run as its command and killed as a user would kill it.

- requeue: the job's script run twice on one trial (the first run killed
  mid-way, as a requeue ends it) gets the same trial: same number and
  parameters, the reported values kept, a step reported again not
  duplicated, then COMPLETE;
- ranks: a job of 2 ranks reports rank 0's value once and every rank
  follows rank 0's pruning decision;
- crash: a trial whose process dies without telling is FAIL with the
  reason, the search goes on; one that returns without telling, likewise;
- resume: the driver killed (SIGKILL) and started again keeps the RUNNING
  trials whose processes live (not asked again), fails the one whose
  process died meanwhile;
- stop: SIGTERM on the driver cancels its trials' processes and fails
  them (none left RUNNING); with --keep-jobs SIGINT leaves them running,
  and says so;
- submit retry: a submission that fails after the first is tried again
  with the same trial;
- bad input: unreachable storage, a study with another direction or
  another parameter range, a script that never reports;
- the doc: doc/hpo.md's objective script, its --local command and its
  trials command, run as written.
"""
import os
import re
import shlex
import signal
import subprocess
import sys
import time

import pytest

try:
    import optuna
except ImportError:
    if os.environ.get("POLLUX_TESTS_NO_SKIP") == "1":  # everything was installed: a skip would hide it
        raise
    pytest.skip("optuna not installed (Debian python3-optuna)", allow_module_level=True)
from optuna.trial import TrialState  # noqa: E402

from conftest import clean_env, run_python  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DOC = os.path.join(HERE, "..", "..", "doc", "hpo.md")

# A trial's script without torch: x drawn, a value reported per step,
# behaviours chosen by the environment of the test.
SCRIPT = r'''
import os, sys, time
import pollux.optuna as hpo

def objective(trial):
    x = trial.suggest_float("x", %(low)s, 10.0)
    start = len(trial.storage.get_trial(trial._trial_id).intermediate_values)
    for step in range(max(0, start - 1), 4):         # a resumed run repeats its last step
        if os.environ.get("WAIT_FILE"):
            while not os.path.exists(os.environ["WAIT_FILE"]):
                time.sleep(0.05)
        if os.environ.get("NO_REPORT"):
            continue
        hpo.report(trial, x * 10 + step + (0.5 if start else 0.0), step)
        print("reported", step, flush=True)
        if os.environ.get("DIE_AT") == str(step):
            os.kill(os.getpid(), signal.SIGKILL)
    if os.environ.get("CRASH") == os.environ["POLLUX_OPTUNA_TRIAL"]:
        os._exit(3)
    return x

import signal
if os.environ.get("NO_TELL"):
    t = hpo.trial(); t.suggest_float("x", 0.0, 10.0)
else:
    hpo.run(objective)
'''


def write_script(tmp_path, low="0.0"):
    path = tmp_path / "objective.py"
    path.write_text(SCRIPT % {"low": low})
    return str(path)


def env(tmp_path, **extra):
    return clean_env(PYTHONPATH=os.environ.get("PYTHONPATH", ""), **extra)


def run(cmd, env, cwd=None, timeout=60):
    """As subprocess.run(cmd, env=env, cwd=cwd, stdout=PIPE, stderr=STDOUT,
    text=True, timeout=timeout), cmd[0] this interpreter: the process forked
    from one that imported optuna (forkserver.py; the import is 2 s of CPU)."""
    assert cmd[0] == sys.executable, cmd
    return run_python(cmd[1:], env, cwd or os.getcwd(), timeout, preload="optuna", stderr_apart=False)


def driver_cmd(tmp_path, study, trials, in_flight, script, *opts):
    return [sys.executable, "-m", "pollux.optuna", "run", "--local", "--study", study, "--storage",
            str(tmp_path / "s.journal"), "--trials", str(trials), "--in-flight", str(in_flight), "--poll", "0.2",
            "--log-dir", str(tmp_path), *opts, "--", sys.executable, script]


def drive(tmp_path, study, trials, in_flight, script, *opts, extra_env=None, timeout=120):
    p = run(driver_cmd(tmp_path, study, trials, in_flight, script, *opts), env(tmp_path, **(extra_env or {})),
            str(tmp_path), timeout)
    return p.returncode, p.stdout


def load(tmp_path, study):
    import pollux.optuna as hpo
    return optuna.load_study(study_name=study, storage=hpo.open_storage(str(tmp_path / "s.journal")))


def submitted(tmp_path, study):
    """The study's trials with a job (none while the study is not made yet)."""
    try:
        return [t for t in load(tmp_path, study).trials if "pollux_job" in t.user_attrs]
    except KeyError:
        return []


def wait_for(cond, what, limit=60):
    end = time.monotonic() + limit
    while not cond():
        assert time.monotonic() < end, f"timed out waiting for {what}"
        time.sleep(0.1)


def test_requeue(tmp_path):
    """Two runs of one trial's job: the first killed after step 1's report."""
    import pollux.optuna as hpo
    storage = str(tmp_path / "s.journal")
    study = optuna.create_study(study_name="rq", storage=hpo.open_storage(storage), direction="maximize")
    number = study.ask().number
    script = write_script(tmp_path)
    e = env(tmp_path, POLLUX_OPTUNA_STUDY="rq", POLLUX_OPTUNA_STORAGE=storage, POLLUX_OPTUNA_TRIAL=str(number),
            POLLUX_OPTUNA_SAMPLER="random:seed=4", POLLUX_OPTUNA_PRUNER="none")
    p = run([sys.executable, script], dict(e, DIE_AT="1"))
    assert p.returncode == -signal.SIGKILL, p.stdout
    first = load(tmp_path, "rq").trials[number]
    assert first.state == TrialState.RUNNING and sorted(first.intermediate_values) == [0, 1], first
    p = run([sys.executable, script], dict(e, SLURM_RESTART_COUNT="1"))
    assert p.returncode == 0, p.stdout
    assert "trial 0 resumed (restart 1)" in p.stdout, p.stdout
    assert "reported 1" in p.stdout, p.stdout        # step 1 again: accepted without error ...
    final = load(tmp_path, "rq").trials
    assert len(final) == 1, final                     # ... no new trial
    t = final[number]
    assert t.state == TrialState.COMPLETE and t.params == first.params, t
    x = t.params["x"]
    # The first run's values kept (the second run's are +0.5), once each.
    assert t.intermediate_values == {0: x * 10, 1: x * 10 + 1, 2: x * 10 + 2.5, 3: x * 10 + 3.5}, t
    assert t.value == x
    # A third run (a requeue after the end) has nothing to do.
    p = run([sys.executable, script], e)
    assert p.returncode == 0 and "already COMPLETE: nothing to do" in p.stdout, p.stdout


RANKS = r'''
import os, json
import pollux.torch as pollux
import pollux.optuna as hpo
import optuna

pollux.init_process_group()
trial = hpo.trial()
value = 0.1 if pollux.rank() == 0 else 0.9       # only rank 0's is reported and judged
try:
    hpo.report(trial, value, 0)
    print("RESULT", json.dumps({"rank": pollux.rank(), "pruned": False}), flush=True)
except optuna.TrialPruned:
    print("RESULT", json.dumps({"rank": pollux.rank(), "pruned": True}), flush=True)
'''


def test_ranks(tmp_path):
    """A job of 2 ranks (gloo): rank 0 reports and asks the pruner, rank 1
    follows its decision (it would not have pruned on its own value)."""
    import pollux.optuna as hpo
    from conftest import free_port
    storage = str(tmp_path / "s.journal")
    study = optuna.create_study(study_name="ranks", storage=hpo.open_storage(storage), direction="maximize")
    number = study.ask().number
    (tmp_path / "ranks.py").write_text(RANKS)
    e = env(tmp_path, POLLUX_OPTUNA_STUDY="ranks", POLLUX_OPTUNA_STORAGE=storage, POLLUX_OPTUNA_TRIAL=str(number),
            POLLUX_OPTUNA_PRUNER="threshold:lower=0.5", POLLUX_CHECKPOINT_DIR=str(tmp_path / "ckpt"),
            MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()), WORLD_SIZE="2")
    procs = [subprocess.Popen([sys.executable, str(tmp_path / "ranks.py")], env=dict(e, RANK=str(r), LOCAL_RANK=str(r)),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for r in range(2)]
    outs = [p.communicate(timeout=180)[0] for p in procs]
    for p, out in zip(procs, outs):
        assert p.returncode == 0, out
        assert '"pruned": true' in out, out
    t = load(tmp_path, "ranks").trials[number]
    assert t.intermediate_values == {0: 0.1}, t        # rank 1's value was not reported


def test_crash(tmp_path):
    """Trial 1 dies without telling: FAIL with the reason, the others go on."""
    rc, out = drive(tmp_path, "crash", 4, 2, write_script(tmp_path), "--sampler", "random:seed=1",
                    "--pruner", "none", extra_env={"CRASH": "1"})
    assert rc == 0, out
    trials = load(tmp_path, "crash").trials
    assert [t.state for t in trials] == [TrialState.COMPLETE, TrialState.FAIL, TrialState.COMPLETE,
                                         TrialState.COMPLETE], out
    reason = trials[1].user_attrs["pollux_fail_reason"]
    assert "ended (FAILED (exit 3))" in reason and "crashed" in reason, reason
    assert "trial 1 FAIL" in out, out
    # Seeded: each trial its own draws (seed + number), not one value for all.
    assert len({t.params["x"] for t in trials}) == 4, [t.params for t in trials]


def test_no_tell(tmp_path):
    """A script that returns without telling the trial's end: FAIL, said why."""
    rc, out = drive(tmp_path, "notell", 1, 1, write_script(tmp_path), extra_env={"NO_TELL": "1"})
    assert rc == 0, out
    t = load(tmp_path, "notell").trials[0]
    assert t.state == TrialState.FAIL and "without telling the trial's end" in t.user_attrs["pollux_fail_reason"], out


def test_never_reports(tmp_path):
    rc, out = drive(tmp_path, "quiet", 1, 1, write_script(tmp_path), extra_env={"NO_REPORT": "1"})
    assert rc == 0, out
    log = (tmp_path / "quiet.trial-0.out").read_text()
    assert "trial 0 ends without having reported an intermediate value" in log, log
    assert load(tmp_path, "quiet").trials[0].state == TrialState.COMPLETE


def test_resume(tmp_path):
    """The driver killed with 2 trials running and started again."""
    script = write_script(tmp_path)
    gate = tmp_path / "go"
    e = env(tmp_path, WAIT_FILE=str(gate))
    d = subprocess.Popen(driver_cmd(tmp_path, "res", 4, 2, script, "--pruner", "none"), env=e,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=str(tmp_path))
    running = lambda: submitted(tmp_path, "res")  # noqa: E731
    # Both trials drew x and wait at the gate: nobody writes the journal
    # until it opens (a process killed while it appends would leave the
    # lock itself).
    wait_for(lambda: len([t for t in running() if t.params]) == 2, "two trials submitted, their x drawn")
    d.kill()
    d.communicate()
    jobs = {t.number: t.user_attrs["pollux_job"] for t in running()}
    # Trial 1's process dies while no driver watches.
    os.killpg(int(jobs[1].split(":")[1]), signal.SIGKILL)
    wait_for(lambda: subprocess.run(["kill", "-0", jobs[1].split(":")[1]], stderr=subprocess.DEVNULL).returncode,
             "trial 1's process gone")
    # ... holding the journal's lock, as a process killed while it appends
    # leaves it (a fresh-clone run: the next driver never wrote again, on
    # Optuna 3.x, which waits for a lock forever): broken after the grace.
    try:
        os.symlink(str(tmp_path / "s.journal"), str(tmp_path / "s.journal.lock"))
    except FileExistsError:  # a killed process's own, between its append and the lock's release
        pass
    e["POLLUX_OPTUNA_LOCK_GRACE"] = "2"
    d = subprocess.Popen(driver_cmd(tmp_path, "res", 4, 2, script, "--pruner", "none"), env=e,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=str(tmp_path))
    # Trial 1 failed, trial 2 in its place: the new driver has resumed.
    try:
        wait_for(lambda: len(submitted(tmp_path, "res")) == 3 or d.poll() is not None, "trial 2 submitted", limit=120)
    finally:
        if d.poll() is None and len(submitted(tmp_path, "res")) != 3:
            d.kill()
            print(d.communicate()[0])
    gate.write_text("")
    out = d.communicate(timeout=120)[0]
    assert d.returncode == 0, out
    assert "removed the lock" in out and "its holder died holding it" in out, out
    assert not os.path.lexists(str(tmp_path / "s.journal.lock"))
    assert f"trial 0: job {jobs[0]} RUNNING, resumed" in out, out
    trials = load(tmp_path, "res").trials
    assert len(trials) == 4, [(t.number, t.state) for t in trials]     # trial 0 not asked again
    assert [t.state for t in trials] == [TrialState.COMPLETE, TrialState.FAIL, TrialState.COMPLETE,
                                         TrialState.COMPLETE], out
    assert "while no driver watched" in trials[1].user_attrs["pollux_fail_reason"], trials[1].user_attrs
    # Trial 0's process, followed across the restart, finished its trial.
    assert trials[0].user_attrs["pollux_job"] == jobs[0] and len(trials[0].intermediate_values) == 4


def test_submit_retry(tmp_path):
    """A submission that fails after the first (sbatch refused while
    slurmctld restarts; here the command gone for a while): the same trial
    is submitted again at a later poll, no trial lost or asked twice."""
    script = write_script(tmp_path)
    py = tmp_path / "python"
    os.symlink(sys.executable, py)
    gate = tmp_path / "go"
    c = driver_cmd(tmp_path, "retry", 3, 1, script)
    c[-2] = str(py)
    c[c.index("--poll") + 1] = "1"               # SUBMIT_RETRIES (5) polls: time to put it back
    log = tmp_path / "driver.log"
    with open(log, "w") as f:
        d = subprocess.Popen(c, env=env(tmp_path, WAIT_FILE=str(gate)), stdout=f, stderr=subprocess.STDOUT,
                             text=True, cwd=str(tmp_path))
    wait_for(lambda: len(submitted(tmp_path, "retry")) == 1, "trial 0 submitted")
    py.unlink()                                   # trial 1's submission will fail
    gate.write_text("")
    wait_for(lambda: "trying again at the next poll" in log.read_text(), "a failed submission")
    os.symlink(sys.executable, py)
    d.wait(timeout=120)
    out = log.read_text()
    assert d.returncode == 0, out
    assert "cannot start trial 1's command" in out and "trying again at the next poll" in out, out
    trials = load(tmp_path, "retry").trials
    assert [t.state for t in trials] == [TrialState.COMPLETE] * 3, out


@pytest.fixture(autouse=True)
def no_trial_left(tmp_path):
    """After each test, whatever it checked: no trial's process of its
    studies left running (a failed check must not leave them waiting)."""
    yield
    journal = tmp_path / "s.journal"
    if journal.exists():
        import pollux.optuna as hpo
        storage = hpo.open_storage(str(journal))
        for summary in optuna.get_all_study_summaries(storage):
            kill_trials(optuna.load_study(study_name=summary.study_name, storage=storage).trials)


def kill_trials(trials):
    """What a failed check leaves running (a local trial is its own session):
    RUNNING trials only (a finished trial's process is gone, its pid free)."""
    for t in trials:
        if t.state != TrialState.RUNNING:
            continue
        try:
            os.killpg(int(t.user_attrs["pollux_job"].split(":")[1]), signal.SIGKILL)
        except (KeyError, ProcessLookupError):
            pass


def test_stop(tmp_path):
    """SIGTERM on the driver: its trials' processes cancelled, trials FAIL."""
    script = write_script(tmp_path)
    e = env(tmp_path, WAIT_FILE=str(tmp_path / "never"))
    d = subprocess.Popen(driver_cmd(tmp_path, "stop", 5, 3, script), env=e, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, cwd=str(tmp_path))
    wait_for(lambda: len(submitted(tmp_path, "stop")) == 3,
             "three trials submitted")
    d.send_signal(signal.SIGTERM)
    out = d.communicate(timeout=60)[0]
    trials = load(tmp_path, "stop").trials
    try:
        assert d.returncode == 130, out
        assert [t.state for t in trials] == [TrialState.FAIL] * 3, out
        for t in trials:
            assert "cancelled: the driver was stopped by SIGTERM" in t.user_attrs["pollux_fail_reason"]
            pid = int(t.user_attrs["pollux_job"].split(":")[1])
            with pytest.raises(ProcessLookupError):
                os.kill(pid, 0)
    finally:
        kill_trials(trials)
    # --keep-jobs: the trials' processes left running, said so, the trials RUNNING (a later driver follows them).
    d = subprocess.Popen(driver_cmd(tmp_path, "keep", 3, 2, script, "--keep-jobs"), env=e, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, cwd=str(tmp_path))
    wait_for(lambda: len(submitted(tmp_path, "keep")) == 2, "two trials submitted")
    d.send_signal(signal.SIGINT)
    out = d.communicate(timeout=60)[0]
    trials = load(tmp_path, "keep").trials
    pids = [int(t.user_attrs["pollux_job"].split(":")[1]) for t in trials]
    try:
        assert d.returncode == 130 and "left running: trial 0 job local:" in out, out
        assert [t.state for t in trials] == [TrialState.RUNNING] * 2, out
        for pid in pids:
            os.kill(pid, 0)
    finally:
        kill_trials(trials)


def test_bad_input(tmp_path):
    script = write_script(tmp_path)
    rc, out = drive(tmp_path, "x", 1, 1, script, extra_env={})
    assert rc == 0, out
    # Unreachable storage: a directory that does not exist, a database that does not answer.
    cmd = driver_cmd(tmp_path, "x", 1, 1, script)
    for storage, msg in ((str(tmp_path / "no" / "s.journal"), "does not exist"),
                         (f"sqlite:///{tmp_path}/no/s.db", "cannot open the database"),
                         ("postgresql://u:secret@127.0.0.1:1/db", "cannot open the database")):
        c = list(cmd)
        c[c.index("--storage") + 1] = storage
        p = run(c, env(tmp_path))
        assert p.returncode == 2 and "pollux.optuna: error: storage" in p.stdout and msg in p.stdout, p.stdout
        assert "secret" not in p.stdout, p.stdout
    # The study exists with another direction.
    rc, out = drive(tmp_path, "x", 2, 1, script, "--direction", "maximize")
    assert rc == 2 and "exists in" in out and "direction(s) ['minimize'], not maximize" in out, out
    # ... or with another range for x: stopped at the first trial that draws it, cancelled, FAIL.
    rc, out = drive(tmp_path, "x", 3, 1, write_script(tmp_path, low="-5.0"),
                    extra_env={"WAIT_FILE": str(tmp_path / "never")})
    assert rc == 2 and "exists with parameter 'x' drawn from" in out and "give another --study name" in out, out
    assert [t.state for t in load(tmp_path, "x").trials] == [TrialState.COMPLETE, TrialState.FAIL], out
    # A command that cannot start: the first submission fails, the study stops, its trial FAIL.
    c = driver_cmd(tmp_path, "nocmd", 2, 1, script)
    c[-2] = str(tmp_path / "no-such-python")
    p = run(c, env(tmp_path))
    assert p.returncode == 2 and "cannot start trial 0's command" in p.stdout, p.stdout
    assert [t.state for t in load(tmp_path, "nocmd").trials] == [TrialState.FAIL], p.stdout
    # A pruner that Optuna does not have.
    rc, out = drive(tmp_path, "y", 1, 1, script, "--pruner", "medain")
    assert rc == 2 and "pruner 'medain': not one of" in out, out
    # Outside a driver's job, trial() says what is missing.
    p = run([sys.executable, script], env(tmp_path))
    assert p.returncode != 0 and "POLLUX_OPTUNA_STUDY" in p.stdout and "not set" in p.stdout, p.stdout


def doc_blocks(kind):
    return re.findall(r"^```" + kind + r"\n(.*?)^```", open(DOC).read(), re.S | re.M)


def test_doc(tmp_path):
    """doc/hpo.md's objective script and its --local command, as written."""
    script = [b for b in doc_blocks("python") if "hpo.run(objective)" in b]
    assert len(script) == 1, "doc/hpo.md has one objective script"
    (tmp_path / "objective.py").write_text(script[0])
    cmd = [b for b in doc_blocks("sh") if "--local" in b]
    assert len(cmd) == 1, "doc/hpo.md has one --local command"
    line = " ".join(ln.rstrip("\\").strip() for ln in cmd[0].strip().splitlines())
    args = shlex.split(line)
    assert args[:3] == ["python3", "-m", "pollux.optuna"], args
    args[0] = sys.executable                       # the interpreter with torch
    args = [sys.executable if a == "python3" else a for a in args]
    e = env(tmp_path, POLLUX_DIGITS=os.environ.get("POLLUX_DIGITS", ""))
    p = run(args, e, str(tmp_path), 400)
    assert p.returncode == 0, p.stdout
    import pollux.optuna as hpo
    s = optuna.load_study(study_name=args[args.index("--study") + 1],
                          storage=hpo.open_storage(os.path.join(str(tmp_path), args[args.index("--storage") + 1])))
    assert len(s.trials) == int(args[args.index("--trials") + 1]), p.stdout
    assert all(t.state in (TrialState.COMPLETE, TrialState.PRUNED) for t in s.trials), p.stdout
    assert s.best_value > 0.5, p.stdout           # the digits are learnt by the best trial
    assert "best trial" in p.stdout, p.stdout
    # "Watching the study": its trials command, as written.
    watch = [b for b in doc_blocks("sh") if "pollux.optuna trials" in b]
    assert len(watch) == 1, "doc/hpo.md has one trials command"
    args = [sys.executable if a == "python3" else a for a in shlex.split(watch[0].split("#")[0])]
    p = run(args, e, str(tmp_path))
    assert p.returncode == 0 and f"best: trial {s.best_trial.number} " in p.stdout, p.stdout
    assert len([ln for ln in p.stdout.splitlines() if re.match(r"\d+ +(COMPLETE|PRUNED) ", ln)]) == len(s.trials), p.stdout
