#!/usr/bin/env python3
"""One trial of an Optuna study, as an elastic job (doc/hpo.md): train.py's
network on the digits, its learning rate and weight decay drawn by the
study's sampler, the validation accuracy reported after every epoch
(pollux.optuna.report, which raises optuna.TrialPruned when the study's
pruner stops the trial) and returned as the trial's value.

    python3 -m pollux.optuna run --study digits --storage $PWD/digits.journal --trials 8 --in-flight 3 \\
        --direction maximize -- -N 1-2 --gpus-per-node=1 hpo.sbatch --epochs 5

Every run of the job (a resize's requeue too) starts here again: the trial
is the same, its parameters are those drawn before, and training resumes
from pollux.torch's checkpoint.
"""
# pollux.torch first: its import installs the handler of the resize signal.
import pollux.torch as pollux  # noqa: I001
import pollux.optuna as hpo

import argparse
import os
import time

import torch
import torch.nn.functional as F

from train import DIGITS, Net, digits

p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
p.add_argument("--epochs", type=int, default=5, help="scale-invariant epochs per trial (default %(default)s)")
p.add_argument("--data", default=os.environ.get("POLLUX_DIGITS") or DIGITS, help="digits.csv.gz")
p.add_argument("--step-delay", type=float, default=0.0, help="seconds added per micro-step (emulates a GPU)")
p.add_argument("--example-delay", type=float, default=0.0, help="seconds added per example (likewise)")
o = p.parse_args()


def objective(trial):
    lr = trial.suggest_float("lr", 1e-4, 0.5, log=True)
    weight_decay = trial.suggest_float("weight_decay", 1e-6, 1e-2, log=True)
    torch.manual_seed(0)
    pollux.init_process_group()
    dev = pollux.device()
    (xt, yt), (xv, yv) = digits(0, o.data)
    loader = pollux.ElasticDataLoader(torch.utils.data.TensorDataset(xt, yt), batch_size=32,
                                      max_batch_size=128, atomic_batch_size=(8, 64))
    model = Net()
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, weight_decay=weight_decay)
    model = pollux.ElasticDataParallel(model, optimizer)
    xv, yv = xv.to(dev), yv.to(dev)

    def accuracy():
        with torch.no_grad():
            return (model.module(xv).argmax(1) == yv).float().mean().item()

    for epoch in pollux.remaining_epochs_until(o.epochs):   # resumes after a requeue
        for x, y in loader:
            if o.step_delay or o.example_delay:
                time.sleep(o.step_delay + o.example_delay * len(x))
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x.to(dev)), y.to(dev))
            loss.backward()
            optimizer.step()
        acc = accuracy()
        if pollux.rank() == 0:
            print(f"trial {trial.number} epoch {epoch} progress {pollux.progress_epochs():.2f} "
                  f"replicas {pollux.world_size()} lr {lr:.3g} weight_decay {weight_decay:.3g} val_acc {acc:.4f}",
                  flush=True)
        hpo.report(trial, acc, epoch)           # raises optuna.TrialPruned when the pruner says so
    # After the loop, not from its last epoch: a run requeued by a resize
    # just after the last step resumes with no epoch left to train.
    return accuracy()


hpo.run(objective)
