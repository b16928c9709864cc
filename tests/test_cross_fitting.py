"""Repeated K-fold cross-fitting (issue 26): every item evaluated once per repetition."""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest

from judgerisk._book.studies.convergence import margin_curve, settled_at
from judgerisk._book.studies.presets import PAPER, decide, preset_options
from judgerisk._splits import cross_fit_splits, fold_labels
from judgerisk.engine.certified import score_panel
from judgerisk.simulate import simulate_panel


def test_folds_partition_and_each_item_is_evaluated_once_per_repetition():
    items = [f"i{k}" for k in range(103)]
    splits = cross_fit_splits(items, n_repeats=3, seed=7)
    assert len(splits) == 15
    evaluated = pd.Series(0, index=sorted(items))
    for _, _, split in splits:
        counts = split.value_counts()
        # 60 / 20 / 20 up to one item per fold
        assert abs(counts["evaluation"] - 103 / 5) < 1 and abs(counts["reference"] - 103 / 5) < 1
        evaluated = evaluated.add((split == "evaluation").astype(int), fill_value=0)
    assert (evaluated == 3).all()
    for r in range(3):  # a repetition's evaluation folds are disjoint and cover the items
        sets = [set(s.index[s == "evaluation"]) for _, _, s in splits[5 * r : 5 * r + 5]]
        assert set().union(*sets) == set(items) and sum(map(len, sets)) == len(items)
    # new repetitions are new partitions
    assert not fold_labels(items, 0).equals(fold_labels(items, 1))


def test_paper_protocol_leaves_items_unevaluated():
    items = range(400)
    splits = cross_fit_splits(items, n_repeats=3, protocol="paper")
    evaluated = set().union(*(set(s.index[s == "evaluation"]) for _, _, s in splits))
    assert len(splits) == 3 and len(evaluated) < 400


def test_bad_protocol_and_counts():
    with pytest.raises(ValueError, match="protocol"):
        cross_fit_splits(range(10), 1, protocol="bootstrap")
    with pytest.raises(ValueError, match="n_repeats must be an integer >= 1"):
        cross_fit_splits(range(10), 0)
    with pytest.raises(ValueError, match="n_folds"):
        fold_labels(range(10), 0, n_folds=2)


def test_score_panel_scores_every_item_the_same_number_of_times():
    panel = simulate_panel(n_items=120, seed=3).data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = score_panel(panel, n_seeds=2, aggregators=("majority",))
    assert (out["n_scored"] == 2).all() and out["scur"].notna().all()
    assert out.attrs["protocol"] == "kfold"


def test_cli_refuses_max_seeds_in_one_line(tmp_path):
    panel = simulate_panel(n_items=40, seed=0).data
    path = tmp_path / "p.csv"
    panel.to_csv(path, index=False)
    cmd = [sys.executable, "-m", "judgerisk.cli", "score", str(path), "-o", str(tmp_path / "s.csv")]
    proc = subprocess.run(
        [*cmd, "--max-seeds", "2", "--n-seeds", "5"], capture_output=True, text=True
    )
    assert proc.returncode == 2
    assert "unrecognized arguments: --max-seeds" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "s.csv").exists()


def test_margin_curve_kfold_has_constant_coverage():
    panel = simulate_panel(n_items=150, seed=4).data
    curve = margin_curve(panel, repeats=(1, 2), n_boot=100)
    k = curve[curve["protocol"] == "kfold"]
    assert (k["n_items"] == 150).all() and list(k["evaluations"]) == [1.0, 2.0]
    p = curve[curve["protocol"] == "paper"]
    assert (p["n_items"] < 150).all()
    assert (curve["low"] <= curve["diff"]).all() and (curve["diff"] <= curve["high"]).all()
    settled = settled_at(curve)
    assert set(settled.index) == {"kfold", "paper"}


def test_settled_at_reads_the_last_change():
    curve = pd.DataFrame(
        {
            "protocol": "kfold",
            "n_repeats": [1, 2, 3, 5],
            "diff": [0.10, 0.02, 0.071, 0.07],
            "verdict": ["beats", "ties with", "beats", "beats"],
        }
    )
    assert settled_at(curve)["kfold"] == 3


def test_decision_rule_counts_only_real_panels_and_ties_go_to_the_paper():
    rows = pd.DataFrame(
        {
            "panel": ["sim", "A", "B", "A", "B"],
            "real": [False, True, True, True, True],
            "switch": ["C kind", "C kind", "C kind", "S kind", "S kind"],
            "alternative": [
                "C residual",
                "C residual",
                "C residual",
                "S debiased (log-odds)",
                "S debiased (log-odds)",
            ],
            "verdict": ["trails", "beats", "ties with", "beats", "trails"],
        }
    )
    tally, choice = decide(rows)
    assert choice["C kind"] == "C residual"  # 1 win, 0 losses among real panels
    assert choice["S kind"] == "paper"  # 1 - 1 = 0: the paper's reading stays
    assert preset_options(choice)["c_kind"] == "residual"
    assert preset_options({"C kind": "paper"}) == PAPER
    assert np.array_equal(tally["wins"], [1, 1])


def test_s_on_the_log_odds_scale_is_the_mean_absolute_logit_change():
    from judgerisk.panel import validate_panel
    from judgerisk.risk.signals import signal_s

    panel = validate_panel(simulate_panel(n_items=30, n_judges=3, seed=8).data)
    s = signal_s(panel, kind="logit")
    wide = panel.pivot_table(index=["item", "judge"], columns="condition", values="logit")
    pairs = (("original", "swap"), ("rubric1", "swap_rubric1"), ("rubric2", "swap_rubric2"))
    diffs = pd.concat([(wide[a] - wide[b]).abs() for a, b in pairs])
    by_hand = diffs.groupby(level="item").mean()
    np.testing.assert_allclose(s["S_order"].to_numpy(), by_hand.reindex(s.index).to_numpy())
