"""pollux.optuna: an Optuna study whose trials are elastic Slurm jobs
(doc/hpo.md).

The driver (`run_study`, or `python3 -m pollux.optuna run`) asks Optuna for
trials and submits one elastic sbatch job per trial; sched/pollux sizes and
resizes each as any other elastic job. The job's script gets its trial with
`trial()` (a real `optuna.trial.Trial`: `suggest_*`, `report`,
`should_prune` are Optuna's) and ends it with `finish()`, or hands an
objective function to `run()`. The study lives in Optuna's own storage,
shared by the driver and the jobs: a journal file on a shared directory by
default, or a database URL. Optuna's samplers and pruners decide; nothing
of theirs is re-implemented here.

What a job reads from its environment (set by the driver):
POLLUX_OPTUNA_STUDY, POLLUX_OPTUNA_STORAGE, POLLUX_OPTUNA_TRIAL (the trial
number), POLLUX_OPTUNA_SAMPLER and POLLUX_OPTUNA_PRUNER (specs, below: the
sampler's independent draws and the pruner's decisions happen in the job).
A requeued job (a resize, a node failure, `scontrol requeue`) gets the same
trial again: same number, same parameters, its reported values kept.
"""
import math
import os
import sys
import warnings

import optuna
from optuna.trial import TrialState

from ._storage import PolluxOptunaError, open_storage
from ._specs import make_pruner, make_sampler

__all__ = ["PolluxOptunaError", "open_storage", "make_pruner", "make_sampler", "trial", "report", "finish",
           "run", "run_study", "Driver"]

ENV = ("POLLUX_OPTUNA_STUDY", "POLLUX_OPTUNA_STORAGE", "POLLUX_OPTUNA_TRIAL")


def _rank():
    """This process's rank in the job: pollux.torch's when it is set up,
    else srun's or torchrun's."""
    torch_mod = sys.modules.get("pollux.torch")
    if torch_mod is not None:
        try:
            return torch_mod.rank()
        except Exception:  # noqa: BLE001 - not initialised yet
            pass
    for name in ("SLURM_PROCID", "RANK"):
        if os.environ.get(name, "").isdigit():
            return int(os.environ[name])
    return 0


def _say(msg):
    print(f"pollux.optuna: {msg}", file=sys.stderr, flush=True)


def load(study_name=None, storage=None):
    """The study of this job's trial (from the environment unless given),
    with the sampler and pruner the driver chose."""
    missing = [n for n in ENV if not os.environ.get(n)] if study_name is None else []
    if missing:
        raise PolluxOptunaError(
            f"{', '.join(missing)} not set: this script runs as a trial of a study that "
            "`python3 -m pollux.optuna run` (pollux.optuna.run_study) submits (doc/hpo.md)")
    study_name = study_name or os.environ["POLLUX_OPTUNA_STUDY"]
    storage = open_storage(storage or os.environ["POLLUX_OPTUNA_STORAGE"])
    number = int(os.environ.get("POLLUX_OPTUNA_TRIAL", "0"))
    # Independent draws happen here, in the job: one seed per trial (the
    # driver's seed plus the trial number), or every trial of a seeded
    # study would draw the same values.
    sampler = make_sampler(os.environ.get("POLLUX_OPTUNA_SAMPLER", "tpe"), trial_number=number)
    pruner = make_pruner(os.environ.get("POLLUX_OPTUNA_PRUNER", "median"))
    try:
        return optuna.load_study(study_name=study_name, storage=storage, sampler=sampler, pruner=pruner)
    except KeyError:
        raise PolluxOptunaError(f"study {study_name!r} not found in the storage") from None


def trial():
    """The Optuna trial this job runs (POLLUX_OPTUNA_TRIAL of the study in
    the environment): a real optuna.trial.Trial. After a requeue the same
    trial again: suggest_* returns the values drawn before, and a report
    of a step already reported is ignored (Optuna keeps the first value).
    A trial that is already finished: COMPLETE or PRUNED ends the script
    here (exit 0, nothing left to do), FAIL raises PolluxOptunaError."""
    study = load()
    number = int(os.environ["POLLUX_OPTUNA_TRIAL"])
    storage = study._storage
    try:
        trial_id = storage.get_trial_id_from_study_id_trial_number(
            storage.get_study_id_from_name(study.study_name), number)
    except KeyError:
        raise PolluxOptunaError(f"study {study.study_name!r} has no trial {number}") from None
    frozen = storage.get_trial(trial_id)
    if frozen.state in (TrialState.COMPLETE, TrialState.PRUNED):
        _say(f"trial {number} of study {study.study_name!r} is already {frozen.state.name}: nothing to do")
        sys.exit(0)
    if frozen.state != TrialState.RUNNING:
        why = frozen.user_attrs.get("pollux_fail_reason", "")
        raise PolluxOptunaError(f"trial {number} of study {study.study_name!r} is {frozen.state.name}"
                                f"{': ' + why if why else ''}; this job has nothing to run")
    t = optuna.trial.Trial(study, trial_id)
    if _rank() == 0 and os.environ.get("SLURM_RESTART_COUNT", "0") not in ("", "0"):
        _say(f"trial {number} resumed (restart {os.environ['SLURM_RESTART_COUNT']}): parameters "
             f"{frozen.params}, reported steps {sorted(frozen.intermediate_values)}")
    return t


def _agree(flag):
    """Rank 0's decision on every rank (torch.distributed's broadcast when
    a process group is up): each rank asking the pruner itself could read
    the storage at another moment and decide otherwise, leaving the others
    waiting in an all-reduce."""
    torch_mod = sys.modules.get("torch")
    if torch_mod is None or not torch_mod.distributed.is_available() or not torch_mod.distributed.is_initialized():
        return flag
    if torch_mod.distributed.get_world_size() == 1:
        return flag
    dev = torch_mod.device("cpu")
    if torch_mod.distributed.get_backend() == "nccl":
        dev = torch_mod.device("cuda", torch_mod.cuda.current_device())
    t = torch_mod.tensor([1 if flag else 0], dtype=torch_mod.int32, device=dev)
    torch_mod.distributed.broadcast(t, 0)
    return bool(t.item())


def report(trial, value, step):
    """trial.report(value, step) on rank 0, then trial.should_prune() there,
    the same decision on every rank: raises optuna.TrialPruned when the
    pruner stops the trial. A step already reported (a requeued job
    repeating its last epoch) is not reported again: the first value
    stays."""
    prune = False
    if _rank() == 0:
        value = float(value)
        if not math.isfinite(value):
            raise PolluxOptunaError(f"trial {trial.number}: reported value {value} at step {step} is not finite")
        if step not in trial.storage.get_trial(trial._trial_id).intermediate_values:
            with warnings.catch_warnings():  # the cached copy may be older than the storage
                warnings.simplefilter("ignore")
                trial.report(value, step)
        prune = trial.should_prune()
    if _agree(prune):
        raise optuna.TrialPruned(f"trial {trial.number} pruned at step {step}")


def _state(trial):
    return trial.storage.get_trial(trial._trial_id)


def finish(trial, value=None, state=TrialState.COMPLETE):
    """Tells the storage the trial's end (rank 0; the other ranks return):
    COMPLETE with `value`, or PRUNED (its last reported value is kept), or
    FAIL. A trial whose objective never reported an intermediate value is
    still told, with a warning: the pruner could not judge it."""
    if _rank() != 0:
        return
    frozen = _state(trial)
    if frozen.state != TrialState.RUNNING:
        _say(f"trial {trial.number} already {frozen.state.name}: not told again")
        return
    if state == TrialState.COMPLETE:
        if value is None:
            raise PolluxOptunaError(f"trial {trial.number}: finish() needs the objective's value")
        value = float(value)
        if not math.isfinite(value):
            state, value = TrialState.FAIL, None
            trial.set_user_attr("pollux_fail_reason", "the objective's value is not finite")
    if not frozen.intermediate_values and state != TrialState.FAIL:
        _say(f"trial {trial.number} ends without having reported an intermediate value "
             "(pollux.optuna.report or trial.report, e.g. once per epoch): the pruner could not judge it")
    trial.study.tell(trial.number, value if state == TrialState.COMPLETE else None, state=state,
                     skip_if_finished=True)
    _say(f"trial {trial.number} {state.name}" + (f" value {value}" if state == TrialState.COMPLETE else ""))


def run(objective):
    """Runs `objective(trial)` on this job's trial and tells its end:
    COMPLETE with its return value, PRUNED when it raises
    optuna.TrialPruned (then returns normally: the job ends COMPLETED),
    FAIL with the exception's text as user attribute `pollux_fail_reason`
    when it raises anything else (re-raised). Returns the value (None when
    pruned)."""
    t = trial()
    try:
        value = objective(t)
    except optuna.TrialPruned:
        finish(t, state=TrialState.PRUNED)
        return None
    except BaseException as e:  # noqa: BLE001 - the trial's failure is recorded, then re-raised
        if _rank() == 0 and not isinstance(e, (KeyboardInterrupt, SystemExit)):
            t.set_user_attr("pollux_fail_reason", f"{type(e).__name__}: {e}"[:500])
            finish(t, state=TrialState.FAIL)
        raise
    if value is None:
        if _rank() == 0:
            t.set_user_attr("pollux_fail_reason", "the objective returned None, not its value")
            finish(t, state=TrialState.FAIL)
        raise PolluxOptunaError(f"trial {t.number}: the objective returned None, not its value")
    finish(t, value)
    return value


from ._driver import Driver, run_study  # noqa: E402 - after the trial side it uses
