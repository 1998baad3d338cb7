#!/usr/bin/env python3
"""An elastic sharded PyTorch training job: a small GPT-like transformer
(pre-norm blocks, causal self-attention) sharded with FSDP (torch's
FullyShardedDataParallel, one FSDP unit per block by an auto-wrap policy,
plus the root's embeddings and head), made elastic and goodput-adaptive by
pollux.torch.ElasticFSDP (doc/pytorch.md, "Sharded models: FSDP"). Needs
torch >= 2.2. The same script runs on CPUs (gloo) and on GPUs (NCCL), as
one process or as many as srun starts, at whatever size sched/pollux gives
the job; every run resumes from the agent's latest (sharded) checkpoint,
on however many ranks it now has.

    POLLUX_TRAIN_PY=train_fsdp.py sbatch -N 1-4 --gpus-per-node=2 --requeue --open-mode=append \\
        train.sbatch --epochs 10                # an elastic sbatch job (train.sbatch runs this script)
    python3 train_fsdp.py --epochs 2            # one process, no Slurm

The data need no download: sequences of a fixed synthetic language,
generated from --seed. Each sequence starts with a random token, and every
later token is 3 times the one before it plus 1, modulo the vocabulary,
with probability --noise replaced by a random token; the model learns
next-token prediction (the loss falls from ln(vocabulary) towards the
noise's floor; val_acc: next-token accuracy on held-out sequences).

Its log lines are train.py's (the training loop is train.py's, imported),
which contrib/demo and testsuite/e2e/check-training-log read. --report-model
adds, at the end, the agent's fitted time per optimizer step for every
configuration this job profiled (rank 0: "model replicas R atomic A accum S
fitted_ms F profiled_step_ms P"; doc/benchmarks.md, "FSDP on the CPU").
"""
# pollux first: importing it installs the agent's handler of the resize
# signal, which may come while `import torch` still takes its seconds.
import pollux.torch as pollux  # noqa: I001

import argparse
import math
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

import train  # the options, loader, schedule and training loop train.py uses


def sequences(n, length, vocab, noise, generator):
    """n sequences of `length` tokens of the synthetic language."""
    x = torch.empty(n, length, dtype=torch.long)
    x[:, 0] = torch.randint(0, vocab, (n,), generator=generator)
    for t in range(1, length):
        x[:, t] = (3 * x[:, t - 1] + 1) % vocab
        flip = torch.rand(n, generator=generator) < noise
        x[flip, t] = torch.randint(0, vocab, (int(flip.sum()),), generator=generator)
    return x


def language(seed, n_train, n_val, context, vocab, noise):
    """(inputs, next tokens) for training and validation."""
    g = torch.Generator().manual_seed(seed)
    seqs = sequences(n_train + n_val, context + 1, vocab, noise, g)
    x, y = seqs[:, :-1], seqs[:, 1:]
    return (x[:n_train], y[:n_train]), (x[n_train:], y[n_train:])


class Block(nn.Module):
    """A pre-norm transformer block: causal self-attention, then an MLP.
    One FSDP unit each (the auto-wrap policy)."""

    def __init__(self, width, heads):
        super().__init__()
        self.ln1 = nn.LayerNorm(width)
        self.attn = nn.MultiheadAttention(width, heads, batch_first=True)
        self.ln2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))

    def forward(self, x, mask):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, attn_mask=mask, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, vocab, context, width, heads, layers):
        super().__init__()
        self.tok = nn.Embedding(vocab, width)
        self.pos = nn.Embedding(context, width)
        self.blocks = nn.ModuleList(Block(width, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocab)

    def forward(self, x):
        t = x.shape[1]
        mask = torch.triu(torch.ones(t, t, dtype=torch.bool, device=x.device), 1)  # True: not attended
        h = self.tok(x) + self.pos(torch.arange(t, device=x.device))
        for b in self.blocks:
            h = b(h, mask)
        return self.head(self.ln(h))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    train.common_options(p, epochs=10, batch_size=32, max_batch_size=256, atomic=(8, 128), lr=0.01)
    p.add_argument("--optimizer", choices=("sgd", "adamw"), default="adamw",
                   help="AdamW (AdamScale's learning-rate rule), or SGD with --momentum (AdaScale's)")
    p.add_argument("--vocab", type=int, default=16, help="tokens of the synthetic language")
    p.add_argument("--context", type=int, default=16, help="tokens per training sequence")
    p.add_argument("--noise", type=float, default=0.1, help="chance that a token breaks the rule")
    p.add_argument("--train-sequences", type=int, default=4096)
    p.add_argument("--val-sequences", type=int, default=512)
    p.add_argument("--width", type=int, default=32)
    p.add_argument("--heads", type=int, default=2)
    p.add_argument("--layers", type=int, default=2, help="transformer blocks (FSDP units)")
    p.add_argument("--report-model", action="store_true",
                   help="at the end, the agent's fitted step time of every profiled configuration")
    o = train.parse(p)

    # FSDP itself: torch >= 2.2 (pollux.torch.ElasticFSDP says so clearly on an older one).
    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
    from torch.distributed.fsdp.wrap import ModuleWrapPolicy

    torch.manual_seed(o.seed)
    pollux.init_process_group()                      # srun's tasks (gloo on CPU, NCCL on GPU) or one process
    dev = pollux.device()
    (xt, yt), (xv, yv) = language(o.seed, o.train_sequences, o.val_sequences, o.context, o.vocab, o.noise)
    train_set = torch.utils.data.TensorDataset(xt, yt)
    loader = train.make_loader(o, train_set)
    torch.manual_seed(o.seed)                        # the same initial model on every rank
    model = FSDP(GPT(o.vocab, o.context, o.width, o.heads, o.layers).to(dev),
                 device_id=dev, auto_wrap_policy=ModuleWrapPolicy({Block}))
    if o.optimizer == "adamw":
        optimizer = torch.optim.AdamW(model.parameters(), lr=o.lr)   # after the wrapping: over FSDP's shards
    else:
        optimizer = torch.optim.SGD(model.parameters(), lr=o.lr, momentum=o.momentum)
    model = pollux.ElasticFSDP(model, optimizer, train.cosine(o, optimizer), lr_rule=o.lr_rule)
    xv, yv = xv.to(dev), yv.to(dev)

    def loss_of(x, y):
        return F.cross_entropy(model(x.to(dev)).flatten(0, 1), y.to(dev).flatten())

    def evaluate():
        # Under FSDP every rank takes part in the forward pass (its
        # all-gathers): all ranks evaluate, rank 0 prints.
        out = model.module(xv)                     # the FSDP model: outside the step protocol
        loss = F.cross_entropy(out.flatten(0, 1), yv.flatten()).item()
        acc = (out.argmax(-1) == yv).float().mean().item()
        return loss, acc

    train.train(o, model, optimizer, loader, loss_of, evaluate, len(train_set))
    if o.report_model:
        report_model()
    return 0


def report_model():
    """Rank 0: the agent's fitted step time of each profiled configuration
    (a collective-free query of rank 0's adapter; None before its first fit)."""
    agent = pollux.agent()
    if pollux.rank() != 0:
        return
    for s in sorted(agent.profile, key=lambda s: (s["nodes"], s["replicas"], s["atomic_batch"])):
        nodes, replicas, atomic = int(s["nodes"]), int(s["replicas"]), int(s["atomic_batch"])
        fitted = agent.predict_iter_time(nodes, replicas, atomic, 0)
        print(f"model nodes {nodes} replicas {replicas} atomic {atomic} accum 0 "
              f"fitted_ms {1e3 * fitted if fitted else math.nan:.3f} "
              f"profiled_step_ms {1e3 * s['step_time']:.3f} profiled_grad_ms {1e3 * s['grad_time']:.3f}",
              flush=True)


if __name__ == "__main__":
    sys.exit(main())
