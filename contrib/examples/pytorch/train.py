#!/usr/bin/env python3
"""An elastic PyTorch training job: a small convolutional network on
scikit-learn's handwritten digits (1797 8x8 images, the digits.csv.gz
that Debian's python3-sklearn ships: --data), data-parallel with DistributedDataParallel, made elastic
and goodput-adaptive by pollux.torch (doc/pytorch.md). The same script runs
on CPUs (gloo) and on GPUs (NCCL), as one process or as many as srun
starts, at whatever size sched/pollux gives the job.

    srun python3 train.py --epochs 30          # in an elastic sbatch job (train.sbatch)
    python3 train.py --epochs 5                # one process, no Slurm

Prints the lines contrib/demo and testsuite/e2e/check-training-log read
(rank 0): "resumed step ...", "step N epoch E progress P/T replicas R
batch B (AxS) lr_gain G loss L val_acc A", "checkpoint step ...", "final ...",
then one "timing replicas R batch B (AxS) steps N step_median_ms T" line per
configuration trained (wall time of an optimizer step, loader to the end of
optimizer.step(), validation and checkpoints not counted).
"""
# pollux first: importing it installs the agent's handler of the resize
# signal, which may come while `import torch` still takes its seconds.
import pollux.torch as pollux  # noqa: I001

import argparse
import math
import os
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


# scikit-learn's own copy of the data set (what load_digits() reads); the
# file is read here, so that neither sklearn nor its scipy must be installed.
DIGITS = "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz"


def digits(seed, path=DIGITS):
    """Normalised images and labels, split 80/20 with a fixed permutation.
    `path`: digits.csv.gz, one image a line: 64 pixels (0-16), then the label."""
    import csv
    import gzip
    with gzip.open(path, "rt") as f:
        rows = [[int(float(v)) for v in row] for row in csv.reader(f) if row]
    d = torch.tensor(rows, dtype=torch.long)
    x = d[:, :64].reshape(-1, 1, 8, 8).float() / 16.0
    y = d[:, 64]
    perm = torch.randperm(len(x), generator=torch.Generator().manual_seed(seed))
    x, y = x[perm], y[perm]
    n_val = len(x) // 5
    return (x[n_val:], y[n_val:]), (x[:n_val], y[:n_val])


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, padding=1)
        self.conv2 = nn.Conv2d(32, 64, 3, padding=1)
        self.fc1 = nn.Linear(64 * 4 * 4, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc2(F.relu(self.fc1(x.flatten(1))))


def common_options(p, epochs=30, batch_size=32, max_batch_size=128, atomic=(8, 64), lr=0.1):
    """The options train.py and train_fsdp.py share (the defaults are each script's)."""
    p.add_argument("--epochs", type=float, default=epochs, help="scale-invariant epochs to train")
    p.add_argument("--batch-size", type=int, default=batch_size, help="M0, the batch size the learning rate is tuned for")
    p.add_argument("--max-batch-size", type=int, default=max_batch_size)
    p.add_argument("--atomic", type=int, nargs=2, default=atomic, metavar=("MIN", "MAX"),
                   help="per-replica micro-batch bounds")
    p.add_argument("--lr", type=float, default=lr,
                   help="for batch_size; the AdaScale gain (up to max/batch size) multiplies it")
    p.add_argument("--momentum", type=float, default=0.0)
    p.add_argument("--lr-rule", choices=("adascale", "adamscale", "sqrt", "linear"), default=None,
                   help="default: pollux.torch's for the optimizer (adascale for SGD)")
    p.add_argument("--schedule", choices=("cosine", "constant"), default="cosine",
                   help="learning-rate schedule over the scale-invariant epochs (stepped by progress)")
    p.add_argument("--workers", type=int, default=0, help="DataLoader worker processes per rank")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--log-every", type=int, default=10, help="steps between progress lines")
    p.add_argument("--eval-every", type=int, default=10, help="steps between validations")
    p.add_argument("--checkpoint-every", type=int, default=0, help="steps between explicit checkpoints (0: none)")
    p.add_argument("--step-delay", type=float, default=0.0,
                   help="seconds added per micro-step (emulates a GPU); divided by $POLLUX_GPU_SPEED where set "
                        "(pollux-local-cluster --gpu-types: a faster GPU type)")
    p.add_argument("--example-delay", type=float, default=0.0, help="seconds added per example (likewise)")


def parse(p):
    """The options, with the delays divided by $POLLUX_GPU_SPEED where set."""
    o = p.parse_args()
    speed = os.environ.get("POLLUX_GPU_SPEED")
    if speed:
        try:
            speed = float(speed)
        except ValueError:
            speed = 0.0
        if not (0 < speed < math.inf):
            p.error(f"POLLUX_GPU_SPEED={os.environ['POLLUX_GPU_SPEED']!r}: not a positive number")
        o.step_delay /= speed
        o.example_delay /= speed
    return o


def make_loader(o, train_set):
    return pollux.ElasticDataLoader(train_set, batch_size=o.batch_size, max_batch_size=o.max_batch_size,
                                    atomic_batch_size=tuple(o.atomic), seed=o.seed, num_workers=o.workers,
                                    persistent_workers=o.workers > 0)


def cosine(o, optimizer):
    """The --schedule option's scheduler (None: constant): per epoch of
    progress, not of data (the scheduler's epochs are progress epochs)."""
    if o.schedule != "cosine":
        return None
    return pollux.ProgressScheduler(torch.optim.lr_scheduler.CosineAnnealingLR(
        optimizer, T_max=max(1, round(o.epochs)), eta_min=0.05 * o.lr))


def train(o, model, optimizer, loader, loss_of, evaluate, n_train):
    """The elastic training loop and its log lines (the module's docstring):
    `model` the pollux.torch wrapper, `loss_of(x, y)` a micro-batch's loss
    on the device, `evaluate()` (val_loss, val_acc) with the model in
    eval mode, `n_train` the training set's size. Returns the timing lines'
    figures: {(replicas, batch, atomic, micro-steps): [seconds per step]}."""
    agent = pollux.agent()
    lead = pollux.rank() == 0

    def say(*args):
        if lead:
            print(*args, flush=True)

    def validate():
        model.eval()
        with torch.no_grad():
            v = evaluate()
        model.train()
        return v

    target = o.epochs * n_train / o.batch_size       # in M0 steps, as the agent counts progress
    val_loss, val_acc = float("nan"), 0.0
    first, last_step = True, agent.step
    step_times = {}                                  # (replicas, batch, atomic, micro-steps) -> seconds
    for epoch in pollux.remaining_epochs_until(o.epochs):   # the first one restores the latest checkpoint
        if first and pollux.resumed():
            say(f"resumed step {agent.step} progress {agent.progress:.3f} samples {agent.samples_seen} "
                f"replicas {agent.replicas} batch {agent.total_batch}")
        first, last_step = False, agent.step
        t0 = time.perf_counter()
        for x, y in loader:
            delay = o.step_delay + o.example_delay * len(x)
            if delay > 0:
                time.sleep(delay)
            optimizer.zero_grad()
            loss = loss_of(x, y)
            loss.backward()
            shape = (agent.atomic_batch, agent.accum_steps + 1)
            config = (agent.replicas, agent.total_batch) + shape  # what this step trains with
            optimizer.step()                         # a no-op while gradients accumulate
            if agent.step == last_step:
                continue
            step = last_step = agent.step
            step_times.setdefault(config, []).append(time.perf_counter() - t0)
            if step % o.eval_every == 0:
                val_loss, val_acc = validate()
            if step % o.log_every == 0:
                say(f"step {step} epoch {agent.samples_seen / n_train:.2f} progress {agent.progress:.2f}/"
                    f"{target:.2f} replicas {agent.replicas} batch {agent.total_batch} ({shape[0]}x{shape[1]}) "
                    f"lr_gain {agent.lr_gain:.3f} loss {loss.item():.4f} val_acc {val_acc:.4f}")
            if o.checkpoint_every and step % o.checkpoint_every == 0 and agent.progress < target:
                pollux.checkpoint()
                say(f"checkpoint step {step} progress {agent.progress:.3f} samples {agent.samples_seen}")
            if agent.progress >= target:
                break
            t0 = time.perf_counter()
    val_loss, val_acc = validate()
    say(f"final step {agent.step} progress {agent.progress:.4f} samples {agent.samples_seen} "
        f"replicas {agent.replicas} val_loss {val_loss:.4f} val_acc {val_acc:.4f}")
    for (replicas, batch, atomic, micro), times in sorted(step_times.items()):
        say(f"timing replicas {replicas} batch {batch} ({atomic}x{micro}) steps {len(times)} "
            f"step_median_ms {1e3 * statistics.median(times):.3f}")
    return step_times


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    common_options(p)
    p.add_argument("--data", default=DIGITS, help="the digits data set, digits.csv.gz (default: %(default)s)")
    o = parse(p)

    torch.manual_seed(o.seed)
    pollux.init_process_group()                      # srun's tasks (gloo on CPU, NCCL on GPU) or one process
    dev = pollux.device()
    (xt, yt), (xv, yv) = digits(o.seed, o.data)
    train_set = torch.utils.data.TensorDataset(xt, yt)
    loader = make_loader(o, train_set)
    model = Net()
    optimizer = torch.optim.SGD(model.parameters(), lr=o.lr, momentum=o.momentum)
    model = pollux.ElasticDataParallel(model, optimizer, cosine(o, optimizer), lr_rule=o.lr_rule)
    xv, yv = xv.to(dev), yv.to(dev)

    def evaluate():
        out = model.module(xv)
        return F.cross_entropy(out, yv).item(), (out.argmax(1) == yv).float().mean().item()

    train(o, model, optimizer, loader, lambda x, y: F.cross_entropy(model(x.to(dev)), y.to(dev)), evaluate,
          len(train_set))
    return 0


if __name__ == "__main__":
    sys.exit(main())
