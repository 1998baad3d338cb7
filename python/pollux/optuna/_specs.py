"""Samplers and pruners by name, so that the driver and each trial's job
build the same ones: the sampler's independent draws (TPE's, random's)
and the pruner's decisions happen in the job, at trial.suggest_* and
trial.should_prune, and Optuna's storage does not keep them.

A spec is NAME or NAME:KEY=VALUE,KEY=VALUE with Optuna's own keyword
arguments, e.g. `median:n_startup_trials=2,n_warmup_steps=1`,
`hyperband:min_resource=1,max_resource=10`, `tpe:seed=3`.
"""
import ast

import optuna

from ._storage import PolluxOptunaError

SAMPLERS = {"tpe": "TPESampler", "random": "RandomSampler", "cmaes": "CmaEsSampler", "qmc": "QMCSampler"}
PRUNERS = {"median": "MedianPruner", "percentile": "PercentilePruner", "successive-halving": "SuccessiveHalvingPruner",
           "successivehalving": "SuccessiveHalvingPruner", "hyperband": "HyperbandPruner",
           "threshold": "ThresholdPruner", "none": "NopPruner", "nop": "NopPruner"}


def parse(spec, table, what):
    name, _, args = spec.partition(":")
    key = name.strip().lower()
    if key not in table:
        raise PolluxOptunaError(f"{what} {name!r}: not one of {', '.join(sorted(set(table)))}")
    kwargs = {}
    for item in filter(None, (a.strip() for a in args.split(","))):
        k, eq, v = item.partition("=")
        if not eq or not k.strip().isidentifier():
            raise PolluxOptunaError(f"{what} {spec!r}: {item!r} is not KEY=VALUE")
        try:
            kwargs[k.strip()] = ast.literal_eval(v.strip())
        except (ValueError, SyntaxError):
            kwargs[k.strip()] = v.strip()
    return table[key], kwargs


def make_sampler(spec, trial_number=None):
    """The sampler of `spec`; in a trial's job (trial_number given) a
    seeded sampler gets seed + trial_number."""
    cls, kwargs = parse(spec, SAMPLERS, "sampler")
    if trial_number is not None and kwargs.get("seed") is not None:
        kwargs["seed"] = int(kwargs["seed"]) + int(trial_number)
    try:
        return getattr(optuna.samplers, cls)(**kwargs)
    except TypeError as e:
        raise PolluxOptunaError(f"sampler {spec!r}: {e}") from None


def make_pruner(spec):
    cls, kwargs = parse(spec, PRUNERS, "pruner")
    try:
        return getattr(optuna.pruners, cls)(**kwargs)
    except (TypeError, ValueError) as e:
        raise PolluxOptunaError(f"pruner {spec!r}: {e}") from None
