#!/usr/bin/env python3
"""The GPU figures of pollux.torch (issue 18, items 1-5) in one process on
one GPU (doc/benchmarks.md, "pollux.torch on a GPU"; run by
contrib/bench/gpu-figures/run, part "torch"):

    bench_gpu.py [--tiny] [--parts overhead,model,micro,fp16,bf16,compile,workers]

- overhead: plain DDP as users write it (no synchronisation in the step)
  against pollux.torch, alternating blocks in one process, same batch and
  precision: ResNet-50 (bf16, SGD, batch 64, 224x224) and a 12-layer
  GPT-like transformer (d 768, 32 k vocabulary, untied head: 134 M
  parameters; bf16, AdamW, batch 8 x 512 tokens); with each loop's host
  time per step in its phases (loader, forward, backward, optimizer
  step) and the time pollux.torch's step waits for the device;
- model: the agent fixed to ResNet-50 configurations (atomic 16 to 256,
  64 x 2 and 64 x 4 micro-steps), the measured loader-to-loader time per
  optimizer step against the agent's fitted model;
- micro: the micro-step path alone: ResNet-50 at 64 x 1, 128 x 1, 64 x 2
  and 64 x 4, plain DDP with no_sync() accumulation against pollux.torch
  (alternating blocks), the time per optimizer step and per micro-step
  (from each batch to the next, by its index in the step);
- fp16: GradScaler with a forced overflow (an infinite loss at one step):
  the skipped step is no error, no progress and no statistics, the
  statistics stay finite and equal in size to bf16's;
- bf16: the statistics and gain under bf16 autocast;
- compile: torch.compile'd ResNet-50 trains under pollux.torch;
- workers: the loader with num_workers (when ElasticDataLoader takes it).

--tiny: the same code on small models, few steps, on the CPU when there is
no GPU (bf16 autocast on CPU; fp16 and its GradScaler need CUDA, so the
overflowed step is left out by hand there, as GradScaler would): it checks
the script, not the figures. One JSON line per figure on stdout.
"""
import argparse
import json
import math
import statistics
import sys
import time
import warnings


def emit(**kv):
    print(json.dumps(kv), flush=True)


def _add(ph, ta, tb, tc, td, te):
    """Sums one (micro-)step's host phases into ph: the loader (ta to tb),
    zero_grad + forward, backward, the optimizer; counts it; returns te."""
    for i, d in enumerate((tb - ta, tc - tb, td - tc, te - td)):
        ph[i] += d
    ph[4] += 1
    return te


def _per_step_ms(ph):
    return {k: round(1e3 * v / max(ph[4], 1), 3) for k, v in zip(("loader", "forward", "backward", "step"), ph)}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tiny", action="store_true", help="small models and few steps (a check of the script)")
    p.add_argument("--parts", default="overhead,model,micro,fp16,bf16,compile,workers")
    p.add_argument("--rounds", type=int, default=4, help="alternating blocks of each kind (overhead)")
    p.add_argument("--steps", type=int, default=30, help="steps per block")
    args = p.parse_args()
    if args.tiny:
        args.steps, args.rounds = 4, 2

    import pollux.torch as pollux  # first: the resize-signal handler
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from torch.nn.parallel import DistributedDataParallel

    env = pollux.init_process_group()
    from pollux.torch import _session

    def pollux_session():
        return _session.get()

    dev = env.device
    cuda = dev.type == "cuda"
    tiny = args.tiny
    emit(part="info", device=torch.cuda.get_device_name(dev) if cuda else "cpu", torch=torch.__version__,
         tiny=tiny)
    if cuda:
        torch.backends.cudnn.benchmark = True
        torch.backends.cuda.matmul.allow_tf32 = True

    # --- models ---------------------------------------------------------------
    class Bottleneck(nn.Module):
        def __init__(self, cin, mid, stride):
            super().__init__()
            cout = 4 * mid
            self.body = nn.Sequential(
                nn.Conv2d(cin, mid, 1, bias=False), nn.BatchNorm2d(mid), nn.ReLU(inplace=True),
                nn.Conv2d(mid, mid, 3, stride, 1, bias=False), nn.BatchNorm2d(mid), nn.ReLU(inplace=True),
                nn.Conv2d(mid, cout, 1, bias=False), nn.BatchNorm2d(cout))
            self.skip = (nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))
                         if stride != 1 or cin != cout else nn.Identity())

        def forward(self, x):
            return F.relu(self.body(x) + self.skip(x))

    def resnet50(width=64, blocks=(3, 4, 6, 3), classes=1000):
        torch.manual_seed(1)
        layers = [nn.Conv2d(3, width, 7, 2, 3, bias=False), nn.BatchNorm2d(width), nn.ReLU(inplace=True),
                  nn.MaxPool2d(3, 2, 1)]
        cin = width
        for i, n in enumerate(blocks):
            mid = width * 2 ** i
            for j in range(n):
                layers.append(Bottleneck(cin, mid, 2 if j == 0 and i > 0 else 1))
                cin = 4 * mid
        layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, classes)]
        return nn.Sequential(*layers)

    class GPT(nn.Module):
        def __init__(self, vocab, d, layers, heads, ctx):
            super().__init__()
            torch.manual_seed(1)
            self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(ctx, d)
            layer = nn.TransformerEncoderLayer(d, heads, 4 * d, dropout=0.0, activation="gelu", batch_first=True,
                                               norm_first=True)
            self.blocks = nn.TransformerEncoder(layer, layers)
            self.norm, self.head = nn.LayerNorm(d), nn.Linear(d, vocab, bias=False)
            self.register_buffer("mask", torch.triu(torch.full((ctx, ctx), float("-inf")), 1), persistent=False)

        def forward(self, idx):
            t = idx.shape[1]
            x = self.tok(idx) + self.pos(torch.arange(t, device=idx.device))
            return self.head(self.norm(self.blocks(x, mask=self.mask[:t, :t])))

    if tiny:
        res_cfg = dict(width=8, blocks=(1, 1, 1, 1), classes=10)
        img, gpt_cfg, tokens = 32, dict(vocab=512, d=64, layers=2, heads=4, ctx=64), 64
    else:
        res_cfg, img = {}, 224
        gpt_cfg, tokens = dict(vocab=32000, d=768, layers=12, heads=12, ctx=512), 512
    res_classes = res_cfg.get("classes", 1000)

    class Images(torch.utils.data.Dataset):
        """Synthetic images from a pool of 64 (cheap to serve: the figures
        are of the step, not of image decoding)."""
        pool = torch.randn(64, 3, img, img, generator=torch.Generator().manual_seed(0))

        def __len__(self):
            return 1 << 16

        def __getitem__(self, i):
            return self.pool[i % 64], i % res_classes

    class Tokens(torch.utils.data.Dataset):
        pool = torch.randint(0, gpt_cfg["vocab"], (256, tokens + 1), generator=torch.Generator().manual_seed(0))

        def __len__(self):
            return 1 << 16

        def __getitem__(self, i):
            return self.pool[i % 256]

    amp_dtype = torch.bfloat16

    def autocast(dtype=None):
        return torch.autocast(device_type=dev.type, dtype=dtype or amp_dtype)

    def image_loss(model, batch):
        x, y = batch
        with autocast():
            return F.cross_entropy(model(x.to(dev, non_blocking=True)), y.to(dev, non_blocking=True))

    def token_loss(model, batch, dtype=None):
        b = batch.to(dev, non_blocking=True)
        with autocast(dtype):
            logits = model(b[:, :-1])
            return F.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(), b[:, 1:].reshape(-1))

    # --- the loops ------------------------------------------------------------
    def plain_block(model, opt, loader_iter, loss_fn, steps, phases=None):
        """Plain DDP as users write it: no synchronisation; per-step times
        from one batch to the next (the host is throttled by the GPU's
        queue, so in steady state this is the GPU's step time). phases:
        a list that sums the host time of the loader, zero_grad + forward,
        backward and optimizer.step(), and counts the steps."""
        times, t0 = [], None
        ph = phases if phases is not None else [0.0] * 5
        for _ in range(steps + 1):
            ta = time.perf_counter()
            batch = next(loader_iter)
            now = time.perf_counter()
            if t0 is not None:
                times.append(now - t0)
            t0 = now
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(model, batch)
            tb = time.perf_counter()
            loss.backward()
            tc = time.perf_counter()
            opt.step()
            _add(ph, ta, now, tb, tc, time.perf_counter())
        return times

    def pollux_block(model, opt, loader, loss_fn, steps, scaler=None, marks=None, phases=None):
        """marks: a list that gets (step, host time) at every batch (micro-steps too);
        phases: as plain_block's."""
        a = pollux.agent()
        times, last = [], None
        ph = phases if phases is not None else [0.0] * 5
        while len(times) < steps:
            ta = time.perf_counter()
            for batch in loader:
                if marks is not None:
                    marks.append((a.step, time.perf_counter()))
                now = time.perf_counter()
                if last is None or a.step != last[0]:
                    if last is not None:
                        times.append(now - last[1])
                    last = (a.step, now)
                opt.zero_grad(set_to_none=True)
                loss = loss_fn(model, batch)
                tb = time.perf_counter()
                if scaler is not None:
                    scaler.scale(loss).backward()
                    tc = time.perf_counter()
                    scaler.step(opt)
                    scaler.update()
                else:
                    loss.backward()
                    tc = time.perf_counter()
                    opt.step()
                ta = _add(ph, ta, now, tb, tc, time.perf_counter())
                if len(times) >= steps and a.step != last[0]:
                    break
        return times

    def forever(loader):
        while True:
            for batch in loader:
                yield batch

    parts = set(args.parts.split(","))
    # One elastic loader and model per process (pollux.torch's rule): the
    # ResNet-50 session runs overhead, model, compile and workers; the
    # transformer's overhead and the fp16/bf16 parts run in child processes.

    def make_resnet():
        fmt = torch.channels_last if cuda else torch.contiguous_format
        return resnet50(**res_cfg).to(dev, memory_format=fmt)

    def make_sgd(net):
        return torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)

    def make_adamw(net):
        return torch.optim.AdamW(net.parameters(), lr=3e-4, weight_decay=0.1)

    def compare(name, make_net, make_opt, dataset, batch, loss_fn, model, opt, loader, **info):
        """Alternating blocks: plain DDP (the same model, optimizer, batch
        and precision, a DataLoader) against the pollux.torch model."""
        plain_net = make_net()
        plain_opt = make_opt(plain_net)
        plain = DistributedDataParallel(plain_net, device_ids=[dev] if cuda else None)
        plain_loader = forever(torch.utils.data.DataLoader(dataset, batch_size=batch, shuffle=True))
        plain_block(plain, plain_opt, plain_loader, loss_fn, 3)
        pollux_block(model, opt, loader, loss_fn, 3)
        pa, pb, pha, phb = [], [], [0.0] * 5, [0.0] * 5
        # The step protocol's only wait (for the device to pass the current
        # step's first event, when the previous step's record is read), timed.
        clock = pollux_session().clock
        real_wait, waited = clock.wait, [0.0]

        def timed_wait(mark):
            t = time.perf_counter()
            real_wait(mark)
            waited[0] += time.perf_counter() - t

        clock.wait = timed_wait
        for _ in range(args.rounds):
            pa += plain_block(plain, plain_opt, plain_loader, loss_fn, args.steps, phases=pha)
            pb += pollux_block(model, opt, loader, loss_fn, args.steps, phases=phb)
        clock.wait = real_wait
        # Host time per step in each phase of the loop: where pollux.torch's
        # host work (or a wait) lies when the step is host-bound.
        emit(part="overhead", model=name, params=sum(q.numel() for q in plain_net.parameters()), batch=batch,
             precision="bf16", plain_ms=1e3 * statistics.median(pa), pollux_ms=1e3 * statistics.median(pb),
             overhead_pct=100 * (statistics.median(pb) / statistics.median(pa) - 1),
             plain_phases_ms=_per_step_ms(pha), pollux_phases_ms=_per_step_ms(phb),
             pollux_wait_ms=round(1e3 * waited[0] / max(phb[4], 1), 3), **info)

    def resnet_session():
        batch = 16 if tiny else 64
        loader = pollux.ElasticDataLoader(Images(), batch_size=batch, max_batch_size=16 * batch,
                                          atomic_batch_size=(16 if not tiny else 4, 256 if not tiny else 64))
        net = make_resnet()
        opt = make_sgd(net)
        model = pollux.ElasticDataParallel(net, opt)
        a = pollux.agent()
        a.set_batch_config(batch, 0)
        if "overhead" in parts:
            compare("resnet50", make_resnet, make_sgd, Images(), batch, image_loss, model, opt, loader)
        if "model" in parts:
            configs = ([(16, 0), (32, 0), (64, 0), (128, 0), (256, 0), (64, 1), (64, 3)] if not tiny
                       else [(4, 0), (16, 0), (64, 0), (16, 1)])
            measured = {}
            for atomic, accum in configs:
                a.set_batch_config(atomic, accum)
                measured[(atomic, accum)] = statistics.median(
                    pollux_block(model, opt, loader, image_loss, max(args.steps, 8))[3:])
            predicted, deadline = {}, time.time() + 60
            while time.time() < deadline:
                predicted = {c: a.predict_iter_time(1, 1, *c) for c in configs}
                if all(v is not None for v in predicted.values()):
                    break
                pollux_block(model, opt, loader, image_loss, 1)
            for c in configs:
                f = predicted.get(c)
                emit(part="model", model="resnet50", atomic=c[0], accum=c[1], measured_ms=1e3 * measured[c],
                     fitted_ms=1e3 * f if f else None, error_pct=100 * (f / measured[c] - 1) if f else None)
        if "micro" in parts:
            micro_part(model, opt, loader, a)

    def plain_accum_block(model, opt, loader_iter, loss_fn, steps, accum, marks):
        """Plain DDP with gradient accumulation as users write it: accum
        micro-steps under no_sync(), then one that all-reduces, then the
        update; marks gets (step, host time) at every batch."""
        times, t0 = [], None
        for step in range(steps + 1):
            for k in range(accum + 1):
                batch = next(loader_iter)
                now = time.perf_counter()
                marks.append((step, now))
                if k == 0:
                    if t0 is not None:
                        times.append(now - t0)
                    t0 = now
                    opt.zero_grad(set_to_none=True)
                if k < accum:
                    with model.no_sync():
                        loss_fn(model, batch).backward()
                else:
                    loss_fn(model, batch).backward()
            opt.step()
        return times

    def micro_intervals(blocks):
        """Median host time from micro-step k's batch to the next batch (the
        last micro-step's: to the next step's first), per k; blocks: one
        list of (step, time) marks per block."""
        by_k = {}
        for marks in blocks:
            k = 0
            for i in range(1, len(marks)):
                by_k.setdefault(k, []).append(marks[i][1] - marks[i - 1][1])
                k = k + 1 if marks[i][0] == marks[i - 1][0] else 0
        return {str(key): round(1e3 * statistics.median(v), 2) for key, v in sorted(by_k.items())}

    def micro_part(model, opt, loader, a):
        """The micro-step path on its own (doc/benchmarks.md: on an H200
        64 x 2 took longer than 128 x 1): per configuration the time per
        optimizer step and per micro-step of plain DDP (no_sync
        accumulation, a DataLoader of the atomic batch) and of
        pollux.torch, alternating blocks."""
        net = make_resnet()
        plain_opt = make_sgd(net)
        plain = DistributedDataParallel(net, device_ids=[dev] if cuda else None)
        configs = [(64, 0), (128, 0), (64, 1), (64, 3)] if not tiny else [(4, 0), (8, 0), (4, 1)]
        steps = 8 if not tiny else 3
        for atomic, accum in configs:
            plain_iter = forever(torch.utils.data.DataLoader(Images(), batch_size=atomic, shuffle=True))
            a.set_batch_config(atomic, accum)
            pollux_block(model, opt, loader, image_loss, 2)
            plain_accum_block(plain, plain_opt, plain_iter, image_loss, 2, accum, [])
            pa, pb, ma, mb = [], [], [], []
            for _ in range(2):
                ma.append([])
                mb.append([])
                pa += plain_accum_block(plain, plain_opt, plain_iter, image_loss, steps, accum, ma[-1])
                pb += pollux_block(model, opt, loader, image_loss, steps, marks=mb[-1])
            emit(part="micro", model="resnet50", atomic=atomic, accum=accum, plain_step_ms=1e3 * statistics.median(pa),
                 pollux_step_ms=1e3 * statistics.median(pb), plain_micro_ms=micro_intervals(ma),
                 pollux_micro_ms=micro_intervals(mb))

    def gpt_session(kind):
        """kind: overhead (bf16), fp16 (GradScaler, forced overflow) or bf16 (statistics)."""
        batch = 8 if not tiny else 4
        loader = pollux.ElasticDataLoader(Tokens(), batch_size=batch, atomic_batch_size=(batch, batch))
        net = GPT(**gpt_cfg).to(dev)
        opt = make_adamw(net)
        scaler = None
        if kind == "fp16":
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # CPU: GradScaler disables itself
                scaler = (torch.amp.GradScaler("cuda", init_scale=2.0 ** 16) if hasattr(torch.amp, "GradScaler")
                          else torch.cuda.amp.GradScaler(init_scale=2.0 ** 16))
        model = pollux.ElasticDataParallel(net, opt, scaler=scaler)
        a = pollux.agent()
        params = sum(q.numel() for q in net.parameters())
        if kind == "overhead":
            compare("gpt", lambda: GPT(**gpt_cfg).to(dev), make_adamw, Tokens(), batch, token_loss, model, opt, loader,
                    tokens=tokens, optimizer="AdamW")
            return
        # fp16 / bf16: 24 steps; fp16 forces an overflow at step 10.
        fp16 = kind == "fp16" and cuda
        rows, overflow_at, i = [], 10, 0
        for batch_ in loader:
            before = (a.step, a.samples_seen, a.progress)
            opt.zero_grad(set_to_none=True)
            loss = token_loss(model, batch_, torch.float16 if fp16 else torch.bfloat16)
            if kind == "fp16" and i == overflow_at:
                loss = loss * float("inf")
            if scaler is not None and scaler.is_enabled():
                scaler.scale(loss).backward()
                scaler.step(opt)
                scaler.update()
            else:
                loss.backward()
                if not (kind == "fp16" and i == overflow_at):  # as GradScaler would on the CPU
                    opt.step()
            rows.append(before)
            i += 1
            if i > 24:
                break
        skipped = [k for k in range(1, len(rows)) if rows[k][2] == rows[k - 1][2]]
        emit(part=kind, model="gpt", params=params, precision="fp16+GradScaler" if fp16 else "bf16",
             steps=a.step, samples=a.samples_seen, progress=a.progress, steps_without_progress=skipped,
             grad_stats=a.grad_stats, finite=a.grad_stats is not None and all(map(math.isfinite, a.grad_stats)),
             scale=scaler.get_scale() if scaler is not None and scaler.is_enabled() else None)

    def compile_session():
        batch = 16 if tiny else 64
        loader = pollux.ElasticDataLoader(Images(), batch_size=batch)
        net = make_resnet()
        opt = make_sgd(net)
        model = pollux.ElasticDataParallel(torch.compile(net) if hasattr(torch, "compile") else net, opt)
        t = pollux_block(model, opt, loader, image_loss, 20 if not tiny else 4)
        emit(part="compile", model="resnet50", compiled=hasattr(torch, "compile"), steps=pollux.agent().step,
             step_ms_last10=1e3 * statistics.median(t[-10:]), stats=pollux.agent().grad_stats)

    def workers_session():
        batch = 16 if tiny else 64
        try:
            loader = pollux.ElasticDataLoader(Images(), batch_size=batch, num_workers=4, pin_memory=cuda)
        except TypeError as e:
            emit(part="workers", skipped=f"ElasticDataLoader takes no num_workers here ({e})")
            return
        net = make_resnet()
        opt = make_sgd(net)
        model = pollux.ElasticDataParallel(net, opt)
        t = pollux_block(model, opt, loader, image_loss, 20 if not tiny else 4)
        emit(part="workers", model="resnet50", num_workers=4, step_ms=1e3 * statistics.median(t[3:]))

    sessions = {"resnet": resnet_session, "gpt-overhead": lambda: gpt_session("overhead"),
                "fp16": lambda: gpt_session("fp16"), "bf16": lambda: gpt_session("bf16"),
                "compile": compile_session, "workers": workers_session}
    session = getattr(main, "session", None)
    sessions[session]()


# Seconds per child process, so that one slow part (torch.compile's first
# compilation) cannot take the others' time: 310 s in all.
TIMEOUTS = {"resnet": 110, "gpt-overhead": 45, "fp16": 25, "bf16": 25, "compile": 80, "workers": 25}


def launch():
    """One child process per session (pollux.torch: one loader and model per process)."""
    import os
    import socket
    import subprocess
    argv = [a for a in sys.argv[1:]]
    parts = "overhead,model,micro,fp16,bf16,compile,workers"
    for i, a in enumerate(argv):
        if a == "--parts":
            parts = argv[i + 1]
        elif a.startswith("--parts="):
            parts = a.split("=", 1)[1]
    parts = set(parts.split(","))
    plan = []
    if parts & {"overhead", "model", "micro"}:
        plan.append("resnet")
    if "overhead" in parts:
        plan.append("gpt-overhead")
    plan += [p for p in ("fp16", "bf16", "compile", "workers") if p in parts]
    failed = 0
    for session in plan:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), WORLD_SIZE="1", RANK="0",
                   POLLUX_ADAPT="0", POLLUX_VERBOSE="0", POLLUX_CHECKPOINT_INTERVAL="0", BENCH_GPU_SESSION=session)
        env.setdefault("POLLUX_CHECKPOINT_DIR", "/tmp/pollux-bench-gpu-%d" % os.getpid())
        env["POLLUX_CHECKPOINT_DIR"] += "-" + session
        try:
            r = subprocess.run([sys.executable, __file__] + argv, env=env, timeout=TIMEOUTS[session])
        except subprocess.TimeoutExpired:
            print(json.dumps({"part": session, "failed": f"timeout {TIMEOUTS[session]} s"}), flush=True)
            failed += 1
            continue
        if r.returncode != 0:
            print(json.dumps({"part": session, "failed": r.returncode}), flush=True)
            failed += 1
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    import os
    if "BENCH_GPU_SESSION" in os.environ:
        main.session = os.environ["BENCH_GPU_SESSION"]
        main()
    else:
        launch()
