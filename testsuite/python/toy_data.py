"""The workers' data set and model: a fixed random regression problem and
a small MLP (worker.py, fsdp_worker.py)."""
import torch
import torch.nn as nn


class Indexed(torch.utils.data.Dataset):
    """Example i: a fixed random input and its target, and with `with_index`
    i itself (the tests follow which examples each rank saw)."""

    def __init__(self, n, dim=12, seed=0, with_index=True):
        g = torch.Generator().manual_seed(seed)
        self.x = torch.randn(n, dim, generator=g)
        self.y = (self.x @ torch.randn(dim, 1, generator=g)).squeeze(1) + 0.3 * torch.randn(n, generator=g)
        self.with_index = with_index

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return (self.x[i], self.y[i], i) if self.with_index else (self.x[i], self.y[i])


def mlp(dim=12):
    torch.manual_seed(1)
    return nn.Sequential(nn.Linear(dim, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, 1))
