"""Step measurements of pollux.torch (label python): the agent's fitted
step-time model predicts the loader-to-loader time per optimizer step with
a slow loader; a left-out (skipped) update counts as neither progress nor
statistics; the statistics do not move with the loss scale."""
import json
import math
import os
from conftest import HERE, clean_env, run_python


def run(tmp_path, scenario, *args, **env):
    out = str(tmp_path / scenario)
    e = clean_env(POLLUX_CHECKPOINT_DIR=str(tmp_path / f"ckpt-{scenario}-{'-'.join(map(str, args))}"),
                  POLLUX_ADAPT="0", **env)
    p = run_python([os.path.join(HERE, "steps_worker.py"), scenario, out, *map(str, args)], e, os.getcwd(), 240)
    assert p.returncode == 0, p.stdout + p.stderr
    return json.load(open(f"{out}.0"))


def test_profile_the_fitted_model_predicts_loader_to_loader_steps(tmp_path):
    # A loader that sleeps 15 ms + 0.2 ms per example: most of a step at
    # atomic 8, outside what a timing of forward + backward alone sees.
    # 20% (the benchmark's goal is 10%, doc/benchmarks.md): two shared
    # cores add noise; timing the computation alone is 40-75% below.
    rows = run(tmp_path, "profile", 14)
    for r in rows:
        assert r["fitted"] is not None, rows
        assert abs(r["fitted"] / r["measured"] - 1) < 0.20, rows


def test_skipped_a_left_out_step_counts_neither_as_progress_nor_statistics(tmp_path):
    rows = run(tmp_path, "scaled", 1, 5)
    by_i = {r["i"]: r for r in rows}
    # Step 5's gradients were non-finite and its update left out: its batch
    # is consumed (the sample stream goes on), its progress is not counted.
    step, samples, progress = by_i[6]["before"]
    assert (step, samples) == (6, 96)
    assert progress == by_i[5]["before"][2] == 5.0
    assert by_i[7]["before"][2] == 6.0
    # No non-finite value reached the statistics.
    for r in rows[5:]:
        assert r["stats"] is not None and all(math.isfinite(v) for v in r["stats"]), rows
    assert all(math.isfinite(v) for p in rows[-1]["params"] for v in p)


def test_statistics_are_invariant_to_the_loss_scale(tmp_path):
    plain = run(tmp_path, "scaled", 1, -1)
    scaled = run(tmp_path, "scaled", 4096, -1)
    assert plain[-1]["stats"] is not None
    for a, b in zip(plain[-1]["stats"], scaled[-1]["stats"]):
        assert abs(a - b) <= 1e-9 * abs(a), (plain[-1]["stats"], scaled[-1]["stats"])
    # Without the scale handed over, the statistics are in scaled units: the test can tell.


def test_skipped_a_finite_step_left_out_is_a_clear_error(tmp_path):
    r = run(tmp_path, "left_out")["result"]
    assert r.startswith("PolluxError optimizer.step() was left out of a step whose gradients were finite"), r


def test_skipped_a_scaler_stepping_another_optimizer_is_a_clear_error(tmp_path):
    r = run(tmp_path, "wrong_optimizer")["result"]
    assert r.startswith("PolluxError the scaler steps an optimizer that the ElasticDataParallel model does not"), r
