"""pollux.torch's FSDP jobs (label python, issue 33), each test for both
wrappings: "fsdp" (FSDP1, FullyShardedDataParallel per Linear, torch >=
2.2) and "fsdp2" (fully_shard per Linear then the root, torch >= 2.6): the
statistics from shards against DDP's on the same model, data and seed, and
the sharded checkpoint across a 2 -> 3 -> 1 resize and another wrapping;
on an older torch (Debian 12's 1.13, which cannot import FSDP) the clear
error naming the torch needed, which is then what each test checks."""
import pytest

from conftest import ranks_runner


@pytest.fixture
def run_ranks(tmp_path):
    """run_ranks(n, scenario, *args, env=...) -> each rank's JSON (fsdp_worker.py, the batch size fixed)."""
    return ranks_runner(tmp_path, "fsdp_worker.py", every_rank=True, POLLUX_ADAPT="0")


def old_torch(results):
    """True (after checking its error) when this torch cannot run FSDP."""
    first = results[0]
    if not (isinstance(first, dict) and "old_torch" in first):
        return False
    for r in results:
        assert r["error"] and "needs torch >= 2.2" in r["error"] and r["old_torch"] in r["error"], r
    return True


WRAPPINGS = ["fsdp", "fsdp2"]


@pytest.mark.parametrize("kind", WRAPPINGS)
def test_fsdp_statistics_equal_ddps(run_ranks, kind):
    # The same SGD run, DDP and FSDP (three units; FSDP2: six parameters
    # in three groups) on 2 ranks: FSDP's local norm is each rank's whole
    # local gradient, its averaged norm the sum of the ranks' shards (one
    # scalar all-reduce), so both match DDP's up to rounding, and so does
    # the estimate; steps 5-8 take two micro-steps (no_sync's path,
    # FSDP2's set_requires_gradient_sync(False)).
    fsdp = run_ranks(2, "stats", kind, 8)
    if old_torch(fsdp):
        return
    ddp = run_ranks(2, "stats", "ddp", 8)
    for f_rows, d_rows in zip(fsdp, ddp):
        assert len(f_rows) == len(d_rows) == 8
        assert f_rows[-1]["accum"] == 1 and f_rows[0]["accum"] == 0
        units = 3 if kind == "fsdp" else 6  # FSDP1: per unit; FSDP2: per parameter
        assert all(r["units"] == units for r in f_rows), "one norm per FSDP unit (FSDP2: parameter) and step"
        for f, d in zip(f_rows, d_rows):
            for k in ("local", "sync"):
                assert abs(f[k] - d[k]) <= 1e-5 * d[k], (k, f, d)
        f_stats, d_stats = f_rows[-1]["stats"], d_rows[-1]["stats"]
        assert f_stats is not None and d_stats is not None
        for a, b in zip(f_stats, d_stats):
            assert abs(a - b) <= 1e-4 * abs(b) + 1e-9, (f_stats, d_stats)
    # |mean of the ranks' gradients|^2 <= the mean of their |.|^2 (the
    # shards' sum is the whole averaged gradient's, not one shard's).
    for r0, r1 in zip(*fsdp):
        assert r0["sync"] == r1["sync"] and r0["sync"] <= (r0["local"] + r1["local"]) / 2 * (1 + 1e-9)
    # Every rank holds the same estimate.
    assert len({tuple(rows[-1]["stats"]) for rows in fsdp}) == 1


def test_fsdp2_one_rank_estimate_equals_fsdps(run_ranks):
    # One rank: the two-step estimate of one replica (the averaged gradient
    # kept from one step and compared with the next's), from fully_shard's
    # sharded gradients as from the wrapper's and from DDP's buckets: the
    # same norms and estimate. (DDP's first pair straddles its rebuild of
    # the buckets: before parallel._pair laid the kept gradients out as the
    # compared bucket's, DDP's estimate differed from step 3 on, e.g.
    # [0.0, 20.31] against [9.09, 11.12].)
    fsdp2 = run_ranks(1, "stats", "fsdp2", 8)
    if old_torch(fsdp2):
        return
    fsdp = run_ranks(1, "stats", "fsdp", 8)
    ddp = run_ranks(1, "stats", "ddp", 8)
    rows2, rows1, rows0 = fsdp2[0], fsdp[0], ddp[0]
    assert len(rows2) == len(rows1) == len(rows0) == 8
    for f, d in zip(rows2, rows0):
        assert abs(f["local"] - d["local"]) <= 1e-5 * d["local"], (f, d)
    assert all(r["stats"] is None for r in rows2[:2]) and all(r["stats"] is not None for r in rows2[2:])
    for f2, f1, d in zip(rows2, rows1, rows0):
        if f1["stats"] is not None:
            for a, b, c in zip(f2["stats"], f1["stats"], d["stats"]):
                assert abs(a - b) <= 1e-4 * abs(b) + 1e-9, (f2, f1)
                assert abs(c - b) <= 1e-4 * abs(b) + 1e-9, (d, f1)


@pytest.mark.parametrize("kind,order", [("ddp", "loader-first"), ("fsdp", "loader-first"), ("fsdp", "model-first"),
                                        ("fsdp2", "loader-first"), ("fsdp2", "model-first")])
def test_fsdp_declares_the_job_sharded(run_ranks, kind, order):
    # ElasticFSDP declares the agent's throughput model sharded (its
    # collectives are inside every micro-step), whichever of the model and
    # the loader is made first; DDP's is not.
    out = run_ranks(2, "sharded", kind, order)
    if old_torch(out):  # (the worker checks only that on an old torch)
        return
    assert [r["sharded"] for r in out] == [kind != "ddp"] * 2, out


@pytest.mark.parametrize("kind", WRAPPINGS)
def test_fsdp_checkpoint_resumes_resharded_2_3_1(run_ranks, tmp_path, kind):
    # Saved sharded on 2 ranks, resumed on 3 then on 1: the model, Adam's
    # state and the position are those of the checkpoint (the loss on fixed
    # data continues where it stopped), and training goes on lowering it.
    env = {"POLLUX_CHECKPOINT_DIR": str(tmp_path / "ckpt-resize")}
    prev = None
    for i, (n, steps) in enumerate([(2, 5), (3, 4), (1, 3)]):
        out = run_ranks(n, "resize", kind, steps, env=dict(env, SLURM_RESTART_COUNT=str(i)))
        if old_torch(out):
            return
        o = out[0]
        assert "error" not in o, o
        assert o["replicas"] == n and o["resumed"] == (i > 0)
        assert o["config"][2] == n and o["config"][0] * (o["config"][1] + 1) * n == 24
        assert o["end"][0] - o["start"][0] == steps
        if prev is not None:
            assert o["start"] == prev["end"], "the run did not resume where the last one stopped"
            assert abs(o["start_loss"] - prev["end_loss"]) <= 1e-6 * prev["end_loss"]
            assert abs(o["start_adam"] - prev["end_adam"]) <= 1e-6 * prev["end_adam"]
            assert len(o["start_params"]) == len(prev["end_params"]) == 12 * 64 + 64 + 64 * 64 + 64 + 64 + 1
            assert max(abs(a - b) for a, b in zip(o["start_params"], prev["end_params"])) < 1e-7
        else:
            assert o["start"] == [0, 0] and o["start_adam"] == 0
        # Every rank agrees (the loss is evaluated on the whole model).
        assert len({round(r["end_loss"], 12) for r in out}) == 1
        prev = o


@pytest.mark.parametrize("kind", WRAPPINGS)
def test_fsdp_loss_goes_down_across_resizes(run_ranks, tmp_path, kind):
    # (Kept apart from the resize test so that a failure names what broke.)
    env = {"POLLUX_CHECKPOINT_DIR": str(tmp_path / "ckpt-loss")}
    losses = []
    for i, n in enumerate([2, 1]):
        out = run_ranks(n, "resize", kind, 6, env=dict(env, SLURM_RESTART_COUNT=str(i)))
        if old_torch(out):
            return
        losses.append((out[0]["start_loss"], out[0]["end_loss"]))
    assert losses[1][0] == pytest.approx(losses[0][1], rel=1e-6)
    assert losses[1][1] < losses[0][0], losses


@pytest.mark.parametrize("first,then", [("ddp", "fsdp"), ("fsdp", "ddp"), ("ddp", "fsdp2"), ("fsdp2", "ddp"),
                                        ("fsdp", "fsdp2"), ("fsdp2", "fsdp")])
def test_a_checkpoint_of_another_wrapping_is_refused(run_ranks, tmp_path, first, then):
    env = {"POLLUX_CHECKPOINT_DIR": str(tmp_path / f"ckpt-{first}")}
    saved = run_ranks(2, "resize", first, 2, env=dict(env, SLURM_RESTART_COUNT="0"))
    if old_torch(saved):
        return
    out = run_ranks(2, "resize", then, 2, env=dict(env, SLURM_RESTART_COUNT="1"))
    want = {"ddp": "ElasticDataParallel (DDP", "fsdp": "ElasticFSDP (FSDP:",
            "fsdp2": "ElasticFSDP over fully_shard (FSDP2"}
    for o in out:
        assert "error" in o, o
        assert f"the checkpoint is of a model wrapped with {want[first]}" in o["error"], o
        assert f"this run wraps it with {want[then]}" in o["error"], o


@pytest.mark.parametrize("kind", WRAPPINGS)
def test_fsdp_bad_input_gets_a_clear_exception(run_ranks, kind):
    got = run_ranks(1, "bad_input", kind)
    if old_torch(got):
        return
    got = got[0]
    want = {
        "plain": "ValueError: ElasticFSDP takes a model wrapped with torch.distributed.fsdp.FullyShardedDataParallel "
                 "or sharded with fully_shard",
        "optimizer-before-wrapping": "ValueError: the optimizer holds none of the FSDP model's parameters: make it "
                                     "after sharding",
    }
    if kind == "fsdp":
        want.update({
            "ddp-inside": "ValueError: the model is wrapped with DistributedDataParallel",
            "fsdp-to-elastic-ddp": "ValueError: the model is wrapped with FSDP (FullyShardedDataParallel: give it to "
                                   "pollux.torch.ElasticFSDP instead",
        })
    else:
        want.update({
            "root-unsharded": "ValueError: ElasticFSDP takes a model sharded with fully_shard at its root",
            "hsdp": "ValueError: parameter 0.weight is a DTensor on a 2-D device mesh (HSDP",
            "reduce-dtype": "ValueError: fully_shard's MixedPrecisionPolicy with reduce_dtype torch.float32 and "
                            "param_dtype torch.bfloat16",
            "fsdp-to-elastic-ddp": "ValueError: the model is wrapped with FSDP2 (fully_shard: give it to "
                                   "pollux.torch.ElasticFSDP instead, torch >= 2.6)",
        })
    assert set(got) == set(want), got
    for case, message in want.items():
        assert got[case] is not None and got[case].startswith(message), (case, got[case])
