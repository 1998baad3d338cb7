"""python3 -m pollux.optuna run --study NAME --storage PATH|URL --trials N --in-flight K [options] -- SBATCH_ARGS...

Runs an Optuna study whose trials are elastic Slurm jobs (doc/hpo.md).
After `--`: sbatch's options and the batch script with its arguments, as
for sbatch (make the job elastic: a node range, --gpus-per-node; the
driver adds --requeue); with --local, the trial's command, run as a local
process without Slurm.
"""
import argparse
import sys

from . import PolluxOptunaError, open_storage
from ._driver import Driver, LocalLauncher, SlurmLauncher


def trials(study_name, storage):
    """One line per trial, as the storage has it (Optuna's own `optuna
    trials` reads database URLs only on Optuna 3.1, and wants pandas)."""
    import optuna
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    try:
        study = optuna.load_study(study_name=study_name, storage=open_storage(storage))
    except KeyError:
        print(f"pollux.optuna: error: no study {study_name!r} in {storage}", file=sys.stderr)
        return 2
    except PolluxOptunaError as e:
        print(f"pollux.optuna: error: {e}", file=sys.stderr)
        return 2
    print("trial state    value      steps job        params")
    for t in study.get_trials(deepcopy=False):
        value = f"{t.value:.6g}" if t.value is not None else "-"
        params = " ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in t.params.items())
        why = t.user_attrs.get("pollux_fail_reason")
        print(f"{t.number:<5} {t.state.name:<8} {value:<10} {len(t.intermediate_values):<5} "
              f"{t.user_attrs.get('pollux_job', '-'):<10} {params}" + (f"  ({why})" if why else ""))
    try:
        print(f"best: trial {study.best_trial.number} value {study.best_value:.6g}")
    except ValueError:
        pass
    return 0


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    rest = []
    if "--" in argv:
        i = argv.index("--")
        argv, rest = argv[:i], argv[i + 1:]
    p = argparse.ArgumentParser(prog="python3 -m pollux.optuna", description=__doc__.split("\n\n")[1],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run (or resume) a study: one elastic job per trial")
    r.add_argument("--study", required=True, help="the study's name (created, or loaded when it exists)")
    r.add_argument("--storage", required=True,
                   help="journal file on a directory every node sees (default kind), or a database URL")
    r.add_argument("--trials", type=int, required=True, help="trials the study holds in the end (earlier ones count)")
    r.add_argument("--in-flight", type=int, default=4, help="jobs at a time (default %(default)s)")
    r.add_argument("--direction", choices=("minimize", "maximize"), default="minimize")
    r.add_argument("--sampler", default="tpe", help="tpe, random, cmaes, qmc [:KEY=VALUE,...] (default %(default)s)")
    r.add_argument("--pruner", default="median",
                   help="median, percentile, successive-halving, hyperband, threshold, none [:KEY=VALUE,...] "
                        "(Optuna's keyword arguments; default %(default)s)")
    r.add_argument("--poll", type=float, default=2.0, help="seconds between polls of the jobs (default %(default)s)")
    r.add_argument("--log-dir", default=".", help="where each trial's output goes, STUDY.trial-N.out "
                                                  "(unless the sbatch options give -o)")
    r.add_argument("--keep-jobs", action="store_true",
                   help="on SIGINT/SIGTERM leave the jobs running (a later run follows them) instead of cancelling")
    r.add_argument("--local", action="store_true", help="run each trial's command as a local process, no Slurm")
    t = sub.add_parser("trials", help="the study's trials: number, state, value, parameters, job, why it failed")
    t.add_argument("--study", required=True)
    t.add_argument("--storage", required=True)
    o = p.parse_args(argv)
    if o.cmd == "trials":
        return trials(o.study, o.storage)
    if not rest:
        p.error("nothing after `--`: give sbatch's options and the batch script (with --local: the command)")
    try:
        launcher = LocalLauncher(rest, o.log_dir) if o.local else SlurmLauncher(rest, o.log_dir)
        d = Driver(o.study, o.storage, o.trials, o.in_flight, launcher, direction=o.direction, sampler=o.sampler,
                   pruner=o.pruner, poll=o.poll, keep_jobs=o.keep_jobs)
        d.open()
        d.log(f"study {o.study} in {o.storage}: {len(d.study.trials)} trials so far, {o.trials} wanted, "
              f"{o.in_flight} in flight; sampler {o.sampler}, pruner {o.pruner}")
        d.run()
        d.log(d.summary())
    except PolluxOptunaError as e:
        print(f"pollux.optuna: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as e:
        print(f"pollux.optuna: stopped ({e})", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
