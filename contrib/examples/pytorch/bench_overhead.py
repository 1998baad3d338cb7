#!/usr/bin/env python3
"""What pollux.torch (the DDP hook and the agent underneath) adds to a
PyTorch training step, and the agent's fitted step-time model against the
measured step times (doc/benchmarks.md, "PyTorch: hook and agent overhead").

    bench_overhead.py [--ranks 1] [--steps 8] [--rounds 12] [--batch 32] [--width 2048]
                      [--model-steps 6] [--cycles 3] [--fsdp | --fully-shard]

Starts --ranks local processes (one CPU thread each; gloo on CPU, NCCL on
a GPU, or --backend: two ranks on one GPU need gloo, NCCL refuses them).
Each holds the same MLP (1024-W-W-W-10; W = 2048: 10.5 M parameters)
twice: under plain DistributedDataParallel with a DataLoader and a
DistributedSampler, written as users write it (no synchronisation in the
step), and under pollux.torch's ElasticDataParallel and ElasticDataLoader;
it runs --steps steps of one then of the other, --rounds times
alternately (so both see the same machine load), and reports the median
time per step of each, from one step's batch to the next's as the loop
sees it (wall time, then the process's CPU time), and the median of the
per-round ratios. Then, with the agent fixed to each of several (atomic
batch, accumulation) configurations in turn (atomic 16 to 256, and 64 x 2
and 64 x 4 micro-steps; --cycles round-robin visits of --model-steps
steps), it compares the agent's fitted model of the time per optimizer
step with the measured median time between the first batches of
consecutive steps.

--fsdp: the same with the MLP sharded by FSDP (torch's
FullyShardedDataParallel, one unit per Linear, torch >= 2.2): plain FSDP
against pollux.torch's ElasticFSDP (whose communication hook does the
reduce-scatter and takes the shards' norms), the optimizer made after the
wrapping in both. --fully-shard: the same with fully_shard (FSDP2, torch
>= 2.6): each Linear, then the whole MLP (on the CPU with
reshard_after_forward=False in the plain loop too, as ElasticFSDP keeps
it there: torch 2.6's FSDP2 fails otherwise on the CPU).

--host-bound: instead, a step that is all host overhead (the case of a
GPU step that the host's Python and launches bound): 40 Linear(128, 128)
layers in DDP buckets of --bucket-kb (26 buckets), 4 examples a step.
It reports the median wall time per step of each loop in microseconds
(alternating blocks, --repeats runs of --rounds blocks) and pollux.torch's
added host time per step, and attributes the hook's share (the DDP comm
hook's own time, measured in it with the host clock: it runs on
autograd's thread, where a profiler of the main thread does not look)
and each loop's host time per step in its phases (next(loader),
zero_grad + forward, backward, optimizer.step()). --shape gpt: 12
pre-norm transformer blocks of width 64 over 32 tokens with AdamW instead
(27 buckets).
"""
import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time


def launch(args):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), WORLD_SIZE=str(args.ranks),
               OMP_NUM_THREADS="1", POLLUX_ADAPT="0", POLLUX_VERBOSE="0", POLLUX_CHECKPOINT_INTERVAL="0")
    env.setdefault("POLLUX_CHECKPOINT_DIR", "/tmp/pollux-bench-ckpt-%d" % os.getpid())
    procs = [subprocess.Popen([sys.executable, __file__, "--worker"] + sys.argv[1:],
                              env=dict(env, RANK=str(r)), stdout=subprocess.PIPE, text=True)
             for r in range(args.ranks)]
    outs = [p.communicate()[0] for p in procs]
    if any(p.returncode for p in procs):
        sys.exit("a rank failed")
    print(outs[0], end="")


def worker(args):
    import pollux.torch as pollux  # first: the resize-signal handler
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from torch.nn.parallel import DistributedDataParallel

    env = pollux.init_process_group(backend=args.backend)
    if args.host_bound:
        return host_bound(args, env, pollux, torch, nn, F, DistributedDataParallel)
    dev = env.device
    cuda = dev.type == "cuda"
    torch.manual_seed(0)
    n = 8192
    data = torch.utils.data.TensorDataset(torch.randn(n, 1024), torch.randint(0, 10, (n,)))

    def mlp():
        torch.manual_seed(1)
        w = args.width
        return nn.Sequential(nn.Linear(1024, w), nn.ReLU(), nn.Linear(w, w), nn.ReLU(), nn.Linear(w, w), nn.ReLU(),
                             nn.Linear(w, 10))

    per_rank = args.batch
    clock = time.perf_counter
    params = sum(p.numel() for p in mlp().parameters())
    if args.fully_shard:
        # fully_shard as a script would have it: each Linear, then the
        # root, the optimizer made after the sharding; the same under
        # ElasticFSDP (doc/pytorch.md's fully_shard port).
        from torch.distributed.fsdp import fully_shard

        def sharded():
            m = mlp().to(dev)
            opts = {} if cuda else {"reshard_after_forward": False}
            for layer in m:
                if isinstance(layer, nn.Linear):
                    fully_shard(layer, **opts)
            return fully_shard(m, **opts)

        model = sharded()
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        model = pollux.ElasticFSDP(model, opt)  # (first: on the CPU it gives torch 2.6's CPU streams what FSDP2 calls)
        plain = sharded()
        plain_opt = torch.optim.SGD(plain.parameters(), lr=0.01)
    elif args.fsdp:
        # FSDP as a script would have it: one unit per Linear (the
        # auto-wrap policy), the optimizer made after the wrapping; the
        # same under ElasticFSDP (doc/pytorch.md's FSDP port).
        from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
        from torch.distributed.fsdp.wrap import ModuleWrapPolicy

        def wrapped():
            return FSDP(mlp().to(dev), device_id=dev, auto_wrap_policy=ModuleWrapPolicy({nn.Linear}))

        plain = wrapped()
        plain_opt = torch.optim.SGD(plain.parameters(), lr=0.01)
        model = wrapped()
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        model = pollux.ElasticFSDP(model, opt)
    else:
        # Plain DDP, as a script would have it.
        plain = mlp().to(dev)
        plain_opt = torch.optim.SGD(plain.parameters(), lr=0.01)
        plain = DistributedDataParallel(plain, device_ids=[dev] if cuda else None)
        model = mlp()
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        model = pollux.ElasticDataParallel(model, opt)
    sampler = torch.utils.data.DistributedSampler(data, shuffle=True)
    plain_loader = torch.utils.data.DataLoader(data, batch_size=per_rank, sampler=sampler)
    # pollux.torch: M0 = the same global batch.
    loader = pollux.ElasticDataLoader(data, batch_size=per_rank * env.world_size,
                                      max_batch_size=16 * per_rank * env.world_size,
                                      atomic_batch_size=(16, 256))
    agent = pollux.agent()

    def run_plain(steps):
        """The baseline loop: times from one batch to the next."""
        times, t0 = [], None
        while len(times) < steps:
            for x, y in plain_loader:
                now = clock()
                if t0 is not None:
                    times.append(now - t0)
                    if len(times) >= steps:
                        break
                t0 = now
                plain_opt.zero_grad()
                F.cross_entropy(plain(x.to(dev)), y.to(dev)).backward()
                plain_opt.step()
        return times

    def run_pollux(steps):
        """The same loop under pollux.torch: times from one step's first batch to the next's."""
        times, last = [], None
        while len(times) < steps:
            for x, y in loader:
                if last is None or agent.step != last[0]:
                    now = clock()
                    if last is not None:
                        times.append(now - last[1])
                    last = (agent.step, now)
                opt.zero_grad()
                F.cross_entropy(model(x.to(dev)), y.to(dev)).backward()
                opt.step()  # ends the agent's step on the last micro-batch
                if len(times) >= steps and agent.step != last[0]:
                    break
        return times

    out = {"ranks": env.world_size, "params": params, "batch_per_rank": per_rank, "backend": env.backend,
           "wrapping": ("fully_shard (each Linear, then the root)" if args.fully_shard else
                        "FSDP (a unit per Linear)" if args.fsdp else "DDP"),
           "device": torch.cuda.get_device_name(dev) if cuda else "cpu", "torch": torch.__version__,
           "threads": torch.get_num_threads()}
    agent.set_batch_config(per_rank, 0)  # the same batch as the plain step
    # Wall time, and the process's CPU time (all its threads), which other
    # jobs preempting ours do not inflate; short alternating blocks, and the
    # median of the per-round ratios, so that a load that drifts during the
    # run weighs on both alike.
    for name, clock in (("wall", time.perf_counter), ("cpu", time.process_time)) if args.rounds else ():
        run_plain(3)
        run_pollux(3)
        a, b, ratios = [], [], []
        for _ in range(args.rounds):
            pa, pb = run_plain(args.steps), run_pollux(args.steps)
            a += pa
            b += pb
            ratios.append(statistics.median(pb) / statistics.median(pa))
        out[name] = {"plain_ms": 1e3 * statistics.median(a), "pollux_ms": 1e3 * statistics.median(b),
                     "overhead_pct": 100 * (statistics.median(b) / statistics.median(a) - 1),
                     "paired_overhead_pct": 100 * (statistics.median(ratios) - 1), "rounds": args.rounds,
                     "steps_per_block": args.steps}
    clock = time.perf_counter
    # The hook's arithmetic alone: one squared-norm pass over a gradient
    # of the model's size.
    from pollux.torch.parallel import _sqnorm
    g = torch.randn(params, device=dev)
    passes = []
    for _ in range(30):
        t0 = clock()
        _sqnorm(g).item()  # .item() waits for the GPU
        passes.append(clock() - t0)
    out["norm_pass_ms"] = 1e3 * statistics.median(passes)

    # The fitted model against measured step times, per configuration.
    configs = [(16, 0), (32, 0), (64, 0), (128, 0), (256, 0), (64, 1), (64, 3)] if args.cycles else []
    # Round-robin over the configurations, --cycles times, so that the
    # machine's load weighs on all alike; the first 2 steps of each visit
    # are not counted, as the agent does not profile them either.
    measured = {c: [] for c in configs}
    for _ in range(args.cycles):
        for atomic, accum in configs:
            agent.set_batch_config(atomic, accum)
            measured[(atomic, accum)] += run_pollux(args.model_steps)[2:]
    measured = {c: statistics.median(v) for c, v in measured.items()}
    # Let rank 0's adapter fit the final profile (it refits at a step's end).
    deadline = time.time() + 60
    predicted = {}
    while time.time() < deadline:
        run_pollux(2)
        predicted = {c: agent.predict_iter_time(agent.nodes, agent.replicas, *c) for c in configs}
        if env.rank != 0 or all(v is not None for v in predicted.values()):
            break
        time.sleep(1)
    profile = {(int(p["atomic_batch"]),): p for p in agent.profile if p["replicas"] == agent.replicas}
    out["model"] = [{"atomic": c[0], "accum": c[1], "measured_ms": 1e3 * measured[c],
                     "fitted_ms": 1e3 * predicted[c] if predicted.get(c) else None,
                     "error_pct": 100 * (predicted[c] / measured[c] - 1) if predicted.get(c) else None,
                     "profiled_grad_ms": 1e3 * profile[(c[0],)]["grad_time"] if (c[0],) in profile else None,
                     "profiled_step_ms": 1e3 * profile[(c[0],)]["step_time"] if (c[0],) in profile else None}
                    for c in configs]
    if env.rank == 0:
        print(json.dumps(out, indent=1))
    if args.cprofile:
        # Where a pollux.torch step's host time goes (rank 0's Python
        # functions, by their own time), next to a plain DDP step's.
        import cProfile
        import pstats
        agent.set_batch_config(per_rank, 0)  # the same batch as the plain step
        run_pollux(5)
        for name, run in (("plain", run_plain), ("pollux", run_pollux)):
            prof = cProfile.Profile()
            prof.enable()
            run(args.cprofile)
            prof.disable()
            if env.rank == 0:
                print(f"== cProfile: {args.cprofile} {name} steps, by own time")
                pstats.Stats(prof, stream=sys.stdout).sort_stats("tottime").print_stats(18)


def host_bound(args, env, pollux, torch, nn, F, DistributedDataParallel):
    """The --host-bound proxy: a step of many tiny layers and buckets."""
    from pollux.torch import parallel
    dev = env.device
    cuda = dev.type == "cuda"
    torch.manual_seed(0)
    batch = 4
    if args.shape == "gpt":
        # A GPT-like step: 12 pre-norm transformer blocks of width 64 over
        # 32 tokens (the real one's structure and parameter count per
        # block, AdamW; its buckets at --bucket-kb), next-token loss.
        vocab, ctx, d = 512, 32, 64
        seqs = torch.randint(0, vocab, (4096, ctx + 1))
        data = torch.utils.data.TensorDataset(seqs[:, :-1], seqs[:, 1:])

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(ctx, d)
                layer = nn.TransformerEncoderLayer(d, 4, 4 * d, dropout=0.0, batch_first=True, norm_first=True)
                self.blocks = nn.TransformerEncoder(layer, 12)
                self.norm, self.head = nn.LayerNorm(d), nn.Linear(d, vocab, bias=False)
                self.register_buffer("mask", torch.triu(torch.full((ctx, ctx), float("-inf")), 1), persistent=False)

            def forward(self, idx):
                x = self.tok(idx) + self.pos(torch.arange(idx.shape[1], device=idx.device))
                return self.head(self.norm(self.blocks(x, mask=self.mask)))

        def loss_of(model, x, y):
            out = model(x.to(dev))
            return F.cross_entropy(out.reshape(-1, vocab), y.to(dev).reshape(-1))

        def make_opt(net):
            return torch.optim.AdamW(net.parameters(), lr=1e-4)
    else:
        data = torch.utils.data.TensorDataset(torch.randn(4096, 128), torch.randint(0, 10, (4096,)))

        class Net(nn.Sequential):
            def __init__(self):
                layers = []
                for _ in range(40):
                    layers += [nn.Linear(128, 128), nn.ReLU()]
                super().__init__(*layers, nn.Linear(128, 10))

        def loss_of(model, x, y):
            return F.cross_entropy(model(x.to(dev)), y.to(dev))

        def make_opt(net):
            return torch.optim.SGD(net.parameters(), lr=0.01)

    def net():
        torch.manual_seed(1)
        return Net().to(dev)

    opts = dict(bucket_cap_mb=args.bucket_kb / 1024.0)
    plain_net = net()
    plain_opt = make_opt(plain_net)
    plain = DistributedDataParallel(plain_net, device_ids=[dev] if cuda else None, **opts)
    sampler = torch.utils.data.DistributedSampler(data, shuffle=True)
    plain_loader = torch.utils.data.DataLoader(data, batch_size=batch, sampler=sampler)
    # The hook's own time and calls, by the host clock on autograd's
    # thread: the hook ElasticDataParallel registers, wrapped.
    hook_time = [0.0, 0]
    real_hook = parallel._hook

    def timed_hook(state, bucket):
        t0 = clock()
        fut = real_hook(state, bucket)
        hook_time[0] += clock() - t0
        hook_time[1] += 1
        return fut

    parallel._hook = timed_hook
    loader = pollux.ElasticDataLoader(data, batch_size=batch * env.world_size, atomic_batch_size=(batch, batch))
    model_net = net()
    opt = make_opt(model_net)
    model = pollux.ElasticDataParallel(model_net, opt, **opts)
    parallel._hook = real_hook
    agent = pollux.agent()
    agent.set_batch_config(batch, 0)
    # thread: the training thread's CPU time, blind to other processes'
    # load (autograd's own threads excluded); wall: what a user waits.
    clock = time.thread_time if args.clock == "thread" else time.perf_counter

    def sync():
        if cuda:
            torch.cuda.synchronize(dev)

    phases = {}  # loop -> [loader, forward, backward, step] seconds, summed

    def block(model, opt, loader, steps):
        """steps timed steps, batch to batch; the block ends after a full step.
        Also sums the host time of each phase of the loop into phases."""
        times, t0 = [], None
        ph = phases.setdefault(id(model), [0.0] * 5)
        while len(times) < steps:
            it = iter(loader)
            while True:
                ta = clock()
                batch = next(it, None)
                if batch is None:
                    break
                x, y = batch
                now = clock()
                if t0 is not None:
                    times.append(now - t0)
                t0 = now
                opt.zero_grad()
                loss = loss_of(model, x, y)
                tb = clock()
                loss.backward()
                tc = clock()
                opt.step()
                td = clock()
                ph[0] += now - ta
                ph[1] += tb - now
                ph[2] += tc - tb
                ph[3] += td - tc
                ph[4] += 1
                if len(times) >= steps:
                    break
        sync()
        return times

    def run_plain(steps):
        return block(plain, plain_opt, plain_loader, steps)

    def run_pollux(steps):
        return block(model, opt, loader, steps)

    run_plain(20)
    run_pollux(20)
    hook_time[:] = [0.0, 0]
    phases.clear()
    def low(v):  # the 10th percentile: the steps other processes disturbed least
        return sorted(v)[len(v) // 10]

    repeats = []
    for _ in range(args.repeats):
        a, b, diffs = [], [], []
        for _ in range(args.rounds):
            pa, pb = run_plain(args.steps), run_pollux(args.steps)
            a += pa
            b += pb
            diffs.append(statistics.median(pb) - statistics.median(pa))
        repeats.append({"plain_us": 1e6 * statistics.median(a), "pollux_us": 1e6 * statistics.median(b),
                        "added_us": 1e6 * statistics.median(diffs), "plain_p10_us": 1e6 * low(a),
                        "pollux_p10_us": 1e6 * low(b), "added_p10_us": 1e6 * (low(b) - low(a))})
    steps = args.repeats * args.rounds * args.steps
    out = {"ranks": env.world_size, "device": str(dev), "torch": torch.__version__, "clock": args.clock,
           "params": sum(p.numel() for p in model_net.parameters()), "buckets_per_step": hook_time[1] / steps,
           "hook_us_per_step": 1e6 * hook_time[0] / steps, "repeats": repeats}
    for key in ("plain_us", "pollux_us", "added_us", "plain_p10_us", "pollux_p10_us", "added_p10_us"):
        out[key] = statistics.median(r[key] for r in repeats)
    # Host time per step of each phase of the loop (all blocks, mean):
    # next(loader), zero_grad + forward, backward (the hook included),
    # optimizer.step().
    for name, m in (("plain", plain), ("pollux", model)):
        ph = phases[id(m)]
        out[name + "_phases_us"] = {k: round(1e6 * v / ph[4], 1)
                                    for k, v in zip(("loader", "forward", "backward", "step"), ph)}
    if env.rank == 0:
        print(json.dumps(out, indent=1))
    if args.cprofile and env.rank == 0:
        import cProfile
        import pstats
        prof = cProfile.Profile()
        prof.enable()
        run_pollux(args.cprofile)
        prof.disable()
        print(f"== cProfile: {args.cprofile} pollux steps (main thread), by own time")
        pstats.Stats(prof, stream=sys.stdout).sort_stats("tottime").print_stats(25)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    for flag, default, what in (("--ranks", 1, "local processes"), ("--steps", 8, "steps per block"),
                                ("--rounds", 12, "alternating blocks of each (0: no overhead figures)"),
                                ("--batch", 32, "examples per rank and step"),
                                ("--width", 2048, "hidden width of the MLP"),
                                ("--model-steps", 6, "steps per visit of a configuration (model check)"),
                                ("--cycles", 3, "visits of each configuration (model check; 0: none)")):
        p.add_argument(flag, type=int, default=default, help=what)
    p.add_argument("--backend", choices=("gloo", "nccl"), help="default: NCCL on a GPU, else gloo")
    p.add_argument("--cprofile", type=int, default=0, metavar="STEPS",
                   help="then profile this many steps of each with cProfile (rank 0 prints)")
    p.add_argument("--fsdp", action="store_true",
                   help="FSDP (a unit per Linear) under ElasticFSDP against plain FSDP, instead of DDP (torch >= 2.2)")
    p.add_argument("--fully-shard", action="store_true",
                   help="fully_shard (FSDP2: each Linear, then the root) under ElasticFSDP against plain fully_shard, "
                        "instead of DDP (torch >= 2.6)")
    p.add_argument("--host-bound", action="store_true",
                   help="the host-overhead proxy instead: 40 small layers, 26 buckets, 4 examples a step")
    p.add_argument("--bucket-kb", type=int, default=64, help="DDP bucket size of --host-bound (KiB)")
    p.add_argument("--shape", choices=("mlp", "gpt"), default="mlp",
                   help="--host-bound's model: 40 Linear(128, 128) (SGD), or 12 transformer blocks of width 64 "
                        "(AdamW)")
    p.add_argument("--clock", choices=("thread", "wall"), default="wall",
                   help="--host-bound's clock: wall time (default) or the training thread's CPU time")
    p.add_argument("--repeats", type=int, default=3, help="runs of --rounds alternating blocks (--host-bound)")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        worker(args)
    else:
        launch(args)


if __name__ == "__main__":
    main()
