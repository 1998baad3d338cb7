"""doc/pytorch.md's loops, run as the document writes them (issue 18: "an
fp16 + GradScaler loop and an AdamW loop from doc/pytorch.md run
unchanged"): the code is taken from the document itself, so a change of
the API that the document does not follow fails here.

- the ported script: the "after" side of "Porting a script"'s diff (its
  context and `+` lines), with SGD, and with AdamW as the document says
  ("nothing else changes");
- the fp16 loop of "Mixed precision", with its GradScaler from
  pollux.grad_scaler() (issue 34: the document's
  `torch.amp.GradScaler("cuda")` does not exist on torch 1.13);
- AdamW with OneCycleLR under ProgressScheduler(per="epoch") of
  "Learning-rate schedules" (issue 34: how to size total_steps).

Each runs as one process, on the GPU when there is one (then fp16 and its
scaler are real), else on the CPU: there autocast to float16 and the
scaler disable themselves with a warning. Every line runs as the
document writes it, on any supported torch. The data is a small
synthetic classification set that the model can learn, so a loss that
does not fall fails the test.
"""
import json
import os
import re
import subprocess
import sys

import pytest

from conftest import clean_env

HERE = os.path.dirname(os.path.abspath(__file__))
DOC = os.environ.get("POLLUX_DOC_PYTORCH", os.path.join(HERE, "..", "..", "doc", "pytorch.md"))

# What the document's snippets take as given: a dataset, a model class, a
# loss function, torch.nn.functional as F. Defined after the snippet's own
# `import pollux.torch` (its first line), as a script would.
GIVEN = '''
import torch.nn.functional as F
g = torch.Generator().manual_seed(0)
_x = torch.randn(512, 16, generator=g)
_y = (_x[:, :4].sum(1) > 0).long() + 2 * (_x[:, 4:8].sum(1) > 0).long()
train_set = torch.utils.data.TensorDataset(_x, _y)


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.body = torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4))

    def forward(self, x):
        return self.body(x)


loss_fn = torch.nn.CrossEntropyLoss()
'''

REPORT = '''
import json as _json
_a = pollux.agent()
with torch.no_grad():
    _first = F.cross_entropy(Net().to(pollux.device())(_x.to(pollux.device())), _y.to(pollux.device())).item()
    _last = F.cross_entropy(model(_x.to(pollux.device())).float(), _y.to(pollux.device())).item()
print("RESULT " + _json.dumps(dict(steps=_a.step, progress=_a.progress, samples=_a.samples_seen,
                                   untrained_loss=_first, loss=_last, device=str(pollux.device()))))
'''


def blocks(kind):
    text = open(DOC).read()
    return re.findall(r"^```" + kind + r"\n(.*?)^```", text, re.S | re.M)


def ported_script(which=0):
    """The after side of a porting diff (0: DDP's, 1: FSDP's, 2: fully_shard's): context and + lines."""
    diff = blocks("diff")[which]
    lines = [ln[1:] for ln in diff.splitlines() if ln[:1] in (" ", "+")]
    return "\n".join(lines)


def run(code, tmp_path):
    path = tmp_path / "loop.py"
    path.write_text(code)
    env = clean_env(POLLUX_CHECKPOINT_DIR=str(tmp_path / "ckpt"), POLLUX_VERBOSE="1")  # the rule's log line
    p = subprocess.run([sys.executable, str(path)], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300, cwd=str(tmp_path))
    assert p.returncode == 0, f"the document's loop failed:\n{code}\n----\n{p.stdout}"
    result = [ln for ln in p.stdout.splitlines() if ln.startswith("RESULT ")]
    assert result, p.stdout
    return json.loads(result[-1][len("RESULT "):]), p.stdout


def with_given(script):
    """The snippet with the givens inserted after its first two lines
    (`import pollux.torch as pollux`, `import torch`)."""
    head, _, rest = script.partition("\n")
    second, _, rest = rest.partition("\n")
    assert head.startswith("import pollux.torch") and second.startswith("import torch"), script
    return "\n".join([head, second, GIVEN, rest, REPORT])


@pytest.mark.parametrize("optimizer", ["sgd", "adamw"])
def test_ported_script(tmp_path, optimizer):
    script = ported_script()
    assert "torch.optim.SGD(" in script and "remaining_epochs_until(30)" in script
    if optimizer == "adamw":
        # "The same with torch.optim.AdamW: nothing else changes."
        assert "The same with `torch.optim.AdamW`: nothing else changes" in open(DOC).read()
        script = re.sub(r"torch\.optim\.SGD\([^\n]*\)", "torch.optim.AdamW(model.parameters(), lr=3e-3)", script)
    r, log = run(with_given(script), tmp_path)
    assert r["progress"] >= 30 * 512 / 32 * 0.99, log  # 30 epochs of scale-invariant progress at M0 = 32
    assert r["loss"] < 0.6 * r["untrained_loss"], log
    if optimizer == "adamw":
        assert "adamscale" in log, log  # the Adam family's rule, stated in the job's log
    else:
        assert "adascale" in log, log


def check_fsdp_port(tmp_path, which, marker, min_torch):
    """The FSDP port number `which` of "Sharded models: FSDP", its after
    side as one process (FSDP runs NO_SHARD there; test_fsdp.py runs 2
    and 3 ranks); on a torch older than `min_torch` ElasticFSDP's clear
    error instead (Debian 12's 1.13 cannot import torch.distributed.fsdp)."""
    script = ported_script(which)
    assert "pollux.ElasticFSDP(model, optimizer, schedule)" in script and marker in script
    version = subprocess.run([sys.executable, "-c", "import torch; print(torch.__version__)"], env=clean_env(),
                             stdout=subprocess.PIPE, text=True, check=True).stdout.strip()
    if tuple(int(v) for v in version.split("+")[0].split(".")[:2]) < min_torch:
        code = ("import pollux.torch as pollux\nimport torch\npollux.init_process_group()\n"
                "m = torch.nn.Linear(1, 1)\ntry:\n    pollux.ElasticFSDP(m, torch.optim.SGD(m.parameters(), lr=1))\n"
                "except pollux.PolluxError as e:\n    print('RESULT', __import__('json').dumps(str(e)))\n")
        err, log = run(code, tmp_path)
        assert "needs torch >= 2.2" in err and version in err, log
        return
    r, log = run(with_given(script), tmp_path)
    assert r["progress"] >= 30 * 512 / 32 * 0.99, log
    assert r["loss"] < 0.6 * r["untrained_loss"], log
    assert "adascale" in log, log


def test_fsdp_port(tmp_path):
    # The wrapper's port (FullyShardedDataParallel, torch >= 2.2).
    check_fsdp_port(tmp_path, 1, "FSDP(Net()", (2, 2))


def test_fsdp2_port(tmp_path):
    # The same with fully_shard (FSDP2, torch >= 2.6; on 1.13 the error
    # naming the torch FSDP needs at all).
    check_fsdp_port(tmp_path, 2, "fully_shard(model)", (2, 6))


def test_fp16_loop(tmp_path):
    block = [b for b in blocks("python") if "grad_scaler(" in b]
    assert len(block) == 1, "doc/pytorch.md has one fp16 loop"
    loop = block[0]
    setup = '''import pollux.torch as pollux
import torch
''' + GIVEN + '''
import warnings
warnings.simplefilter("ignore")  # on the CPU: autocast to float16 and the scaler disable themselves
pollux.init_process_group()
loader = pollux.ElasticDataLoader(train_set, batch_size=32)
model = Net().to(pollux.device())
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
_loss_fn = loss_fn
loss_fn = lambda out, y: _loss_fn(out.float(), y.to(out.device))
_loader = loader
loader = ((x.to(pollux.device()), y) for epoch in range(20) for x, y in _loader)
'''
    r, log = run(setup + loop + REPORT, tmp_path)
    assert r["steps"] >= 20 * 512 // 32 * 0.99 - 1, log
    assert r["loss"] < 0.6 * r["untrained_loss"], log


def test_onecycle_loop(tmp_path):
    block = [b for b in blocks("python") if "OneCycleLR" in b]
    assert len(block) == 1, "doc/pytorch.md has one OneCycle script"
    script = block[0]
    assert "total_steps=epochs" in script and 'per="epoch"' in script
    report = REPORT + '''
print("SCHEDULE " + _json.dumps(dict(last=cycle.last_epoch, lr=optimizer.param_groups[0]["lr"],
                                     final=optimizer.param_groups[0]["min_lr"], epochs=epochs,
                                     progress_epochs=pollux.progress_epochs())))
'''
    r, log = run(with_given(script).replace(REPORT, report), tmp_path)
    sched = json.loads(next(ln for ln in log.splitlines() if ln.startswith("SCHEDULE "))[len("SCHEDULE "):])
    assert sched["progress_epochs"] >= sched["epochs"], log
    # The cycle ran to its end and stopped there (stepped to total_steps it
    # would raise past it, or go back up from its final rate).
    assert sched["last"] == sched["epochs"] - 1 and sched["lr"] == sched["final"], log
    assert r["loss"] < 0.6 * r["untrained_loss"], log
