"""Parquet panels larger than memory: the sampled fit, the partitions, Dask (issue 43, item 5).

The streamed path (:mod:`judgerisk.engine.partitioned`) must give the in-memory table when its
fit sample is the whole panel (every step is per item or frozen on the sample), the same table
on a Dask cluster as in this process, and, with a real sample, nearly the full fit's ranking:
``benchmarks/partitioned.py --compare 300000`` measures that on 300,000 items (Spearman of SCUR
0.99998, AUROCs within 1e-4); the slow test below holds it to the issue's bounds, and a fast one
holds a 6,000-item panel to looser ones.
"""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr
from sklearn.metrics import roc_auc_score

from judgerisk._provenance import read_record
from judgerisk.engine.certified import score_panel
from judgerisk.engine.partitioned import plan_stream, score_parquet, score_partition
from judgerisk.options import StreamSettings
from judgerisk.panel import PanelError, load_panel
from judgerisk.simulate import simulate_panel


def _panel(n_items: int, seed: int = 0, conditions=("original", "swap", "rubric1")):
    return simulate_panel(n_items=n_items, n_judges=5, conditions=conditions, seed=seed).data


@pytest.fixture(scope="module")
def small(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("stream") / "panel.parquet"
    _panel(600).to_parquet(path, index=False)
    return path


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def test_the_full_fit_streamed_is_the_in_memory_table(small):
    for protocol, n_seeds in (("kfold", 2), ("paper", 3)):
        mem = _quiet(score_panel, load_panel(small), n_seeds=n_seeds, protocol=protocol)
        streamed = _quiet(
            score_parquet, small, n_seeds=n_seeds, protocol=protocol, partition_items=150
        )
        assert streamed.attrs["full_fit"] and streamed.attrs["partitions"] == 4
        pd.testing.assert_frame_equal(streamed, mem, check_exact=False, rtol=1e-12, atol=1e-12)


def test_a_hive_partitioned_folder_is_one_panel(small, tmp_path):
    panel = pd.read_parquet(small)
    folder = tmp_path / "dataset"
    panel.to_parquet(folder, partition_cols=["condition"], index=False)
    assert sorted(p.name for p in folder.iterdir()) == [
        "condition=original",
        "condition=rubric1",
        "condition=swap",
    ]
    memory = _quiet(score_panel, load_panel(small))
    streamed = _quiet(score_parquet, folder, partition_items=250)
    pd.testing.assert_frame_equal(streamed, memory, check_exact=False, rtol=1e-12, atol=1e-12)


def test_the_sample_is_declared_seeded_and_a_subsample_of_every_fold(small):
    plan = _quiet(plan_stream, small, fit_sample=200, partition_items=100)
    assert plan.sample_items == 200 and plan.n_items == 600 and len(plan.partitions) == 6
    assert plan.settings()["sample_rule"].startswith("numpy.random.default_rng([seed, 1])")
    again = _quiet(plan_stream, small, fit_sample=200, partition_items=100)
    assert plan.state.sample_items.equals(again.state.sample_items)
    other = _quiet(plan_stream, small, seed=1, fit_sample=200, partition_items=100)
    assert not plan.state.sample_items.equals(other.state.sample_items)
    for model in plan.state.models:  # each fold fits on the sample's items among its fit items
        fit = model.lmm.q_.index
        assert fit.isin(plan.state.sample_items).all() and 0 < len(fit) < 200


def test_every_partition_alone_gives_its_rows(small):
    plan = _quiet(plan_stream, small, fit_sample=300, partition_items=200)
    whole = pd.concat([_quiet(score_partition, p, plan.state) for p in plan.partitions])
    again = _quiet(score_partition, plan.partitions[1], plan.state)
    pd.testing.assert_frame_equal(again, whole.loc[again.index])
    assert whole.index.is_monotonic_increasing and len(whole) == 600
    assert (whole["n_scored"] == 1).all()


def _agreement(sub: pd.DataFrame, full: pd.DataFrame) -> tuple[float, float]:
    rho = spearmanr(sub["scur"], full["scur"]).statistic
    err = (full["majority"] != full["gold"]).to_numpy()
    gap = max(
        abs(roc_auc_score(err, sub[c]) - roc_auc_score(err, full[c]))
        for c in ("scur", "pe", "ds_entropy")
    )
    return float(rho), float(gap)


def test_a_sampled_fit_ranks_like_the_full_fit(tmp_path):
    path = tmp_path / "panel.parquet"
    _panel(6000, seed=3, conditions=("original", "swap")).to_parquet(path, index=False)
    full = _quiet(score_parquet, path, fit_sample=6000, partition_items=3000)
    sub = _quiet(score_parquet, path, fit_sample=2000, partition_items=3000)
    assert sub.attrs["fit_sample_items"] == 2000 and not sub.attrs["full_fit"]
    rho, gap = _agreement(sub, full)
    assert rho >= 0.995 and gap <= 0.01, (rho, gap)


@pytest.mark.slow
def test_a_sampled_fit_on_300k_items_ranks_like_the_full_fit(tmp_path):
    """The issue's bounds: Spearman of SCUR >= 0.999, AUROCs within 0.002 (about 5 minutes)."""
    path = tmp_path / "panel.parquet"
    _panel(300_000, conditions=("original", "swap")).to_parquet(path, index=False)
    sub = _quiet(score_parquet, path, fit_sample=StreamSettings().fit_sample)
    full = _quiet(score_parquet, path, fit_sample=300_000)
    rho, gap = _agreement(sub, full)
    assert rho >= 0.999 and gap <= 0.002, (rho, gap)


def test_the_dask_path_equals_the_in_process_path_cell_for_cell(small):
    distributed = pytest.importorskip("distributed")
    inproc = _quiet(score_parquet, small, fit_sample=250, partition_items=120)
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
    ) as cluster:
        on_dask = _quiet(
            score_parquet,
            small,
            fit_sample=250,
            partition_items=120,
            dask=cluster.scheduler_address,
        )
    pd.testing.assert_frame_equal(on_dask, inproc, check_exact=True)


# ---------------------------------------------------------------------------- the command line
def _cli(*args, cwd):
    script = Path(sys.executable).with_name("judgerisk")
    cmd = [str(script)] if script.exists() else [sys.executable, "-m", "judgerisk.cli"]
    return subprocess.run(
        [*cmd, *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=300
    )


def test_score_streams_above_the_threshold_and_verify_reproduces_it(small, tmp_path):
    r = _cli("score", small, "-o", "mem.parquet", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = _cli(
        "score", small, "-o", "s.parquet", "--stream-rows", 1000, "--partition-items", 200,
        cwd=tmp_path,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "streaming 9000 rows" in r.stderr and "in 3 part(s)" in r.stderr
    mem, streamed = (pd.read_parquet(tmp_path / f) for f in ("mem.parquet", "s.parquet"))
    pd.testing.assert_frame_equal(streamed, mem)
    settings = read_record(tmp_path / "s.parquet")["settings"]
    assert settings["streamed"] and settings["full_fit"] and settings["partitions"] == 3
    assert settings["fit_sample_items"] == 600 and "default_rng" in settings["sample_rule"]
    r = _cli("verify", "s.parquet", cwd=tmp_path)
    assert r.returncode == 0 and "reproduced" in r.stderr, r.stdout + r.stderr


def test_score_refuses_what_it_cannot_stream(small, tmp_path):
    folder = tmp_path / "dataset"
    folder.mkdir()
    pd.read_parquet(small).to_parquet(folder / "part-0.parquet", index=False)
    r = _cli("score", folder, "-o", folder / "scores.parquet", cwd=tmp_path)
    assert r.returncode == 2 and "inside the input folder" in r.stderr
    r = _cli("score", folder, "-o", "scores.csv", cwd=tmp_path)
    assert r.returncode == 2 and "written as parquet" in r.stderr
    r = _cli("score", small, "-o", small, "--stream-rows", 1, cwd=tmp_path)
    assert r.returncode == 2 and "overwrite the input" in r.stderr
    pd.read_parquet(small).to_csv(tmp_path / "panel.csv", index=False)
    r = _cli("score", "panel.csv", "-o", "s.parquet", "--dask", "tcp://x:1", cwd=tmp_path)
    assert r.returncode == 2 and "--dask streams a parquet panel" in r.stderr
    assert not (tmp_path / "s.parquet").exists() and not (tmp_path / "scores.csv").exists()
    assert sorted(p.name for p in folder.iterdir()) == ["part-0.parquet"]


def test_a_bad_partition_names_the_file_and_the_partition(tmp_path):
    panel = _panel(200).drop(columns="p")
    path = tmp_path / "bad.parquet"
    panel.to_parquet(path, index=False)
    plan = _quiet(plan_stream, path, fit_sample=50, partition_items=100)
    outside = np.setdiff1d(plan.partitions[1].items, plan.state.sample_items)[0]
    panel.loc[panel["item"] == outside, "logit"] = np.nan  # a row the sample did not read
    panel.to_parquet(path, index=False)
    with pytest.raises(PanelError, match=r"bad\.parquet \(partition 1, items 100 to 199\)"):
        _quiet(score_partition, plan.partitions[1], plan.state)
