"""Certified panel decisions: label-free scores, SCOPE selection, validity over 1,000 splits."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judgerisk.datasets import data_root
from judgerisk.engine.certified import (
    SCORE_COLUMNS,
    best_single_judge,
    certify_panel,
    judge_bpe,
    panel_errors,
    score_panel,
    score_selectors,
    select_items,
    summarize_certified,
)
from judgerisk.engine.describe import judge_accuracy
from judgerisk.panel import PanelError
from judgerisk.risk.registry import CERTIFIED, get_risk_score
from judgerisk.selective.protocol import ALPHAS
from judgerisk.selective.scope import scope_threshold
from judgerisk.simulate import simulate_panel

FAST = {"lmm_params": {"accelerate": "anderson"}}
_ROOT = data_root(required=False)


@pytest.fixture(scope="module")
def sim():
    return simulate_panel(n_items=300, n_judges=5, seed=3).data


@pytest.fixture(scope="module")
def sim_scores(sim):
    return score_panel(sim, n_seeds=2, seed=0, scur_options=FAST)


def test_score_panel_covers_every_item(sim, sim_scores):
    s = sim_scores
    assert s.index.equals(pd.Index(np.sort(sim["item"].unique()), name="item"))
    assert (s["n_scored"] >= 1).all()
    assert s["scur"].between(0, 1).all()
    for col in (
        *SCORE_COLUMNS,
        "scur_sd",
        "pe",
        "ve",
        "msp",
        "ds_entropy",
        "majority",
        "dawid_skene",
        "gold",
    ):
        assert col in s.columns, col
    assert set(s["majority"]) <= {"A", "B"}


def test_score_panel_never_reads_gold(sim, sim_scores):
    rng = np.random.default_rng(0)
    flip = pd.Series(rng.random(sim["item"].nunique()) < 0.5, index=np.sort(sim["item"].unique()))
    other = sim.copy()
    swap = flip.reindex(other["item"]).to_numpy()
    other["gold"] = np.where(swap, np.where(other["gold"] == "A", "B", "A"), other["gold"])
    s2 = score_panel(other, n_seeds=2, seed=0, scur_options=FAST)
    cols = [c for c in sim_scores.columns if c != "gold"]
    pd.testing.assert_frame_equal(sim_scores[cols], s2[cols])
    assert not sim_scores["gold"].equals(s2["gold"])


def test_select_items_applies_the_scope_threshold():
    rng = np.random.default_rng(1)
    n = 200
    score = rng.random(n)
    gold = np.where(rng.random(n) < 0.5, "A", "B")
    wrong = rng.random(n) < score * 0.6  # riskier items are wrong more often
    verdict = np.where(wrong, np.where(gold == "A", "B", "A"), gold)
    scores = pd.DataFrame({"item": np.arange(n), "scur": score, "majority": verdict})
    cal_items = rng.choice(n, 100, replace=False)
    cal = pd.DataFrame({"item": cal_items, "gold": gold[cal_items]})
    out = select_items(scores, cal, alpha=0.2)
    thr = scope_threshold(score[cal_items], wrong[cal_items], 0.2)
    assert out.attrs["threshold"] == thr and np.isfinite(thr)
    test = out[out["role"] == "test"]
    np.testing.assert_array_equal(test["accepted"], test["score"] <= thr)
    assert not out.loc[out["role"] == "calibration", "accepted"].any()
    assert set(out["decision"]) == {"accept", "abstain", "calibration"}
    assert out.attrs["calibration_errors"] == int(wrong[cal_items].sum())
    with pytest.raises(ValueError, match="not in the scores"):
        select_items(scores, pd.DataFrame({"item": [999], "gold": ["A"]}))
    with pytest.raises(ValueError, match="'A' or 'B'"):
        select_items(scores, pd.DataFrame({"item": [0], "gold": ["C"]}))
    with pytest.raises(ValueError, match="no column 'nope'"):
        select_items(scores, cal, score="nope")


def test_best_judge_and_bpe(sim):
    judge = best_single_judge(sim)
    acc = judge_accuracy(sim)
    assert acc[judge] == acc.max()
    b = judge_bpe(sim, judge)
    assert b["bpe"].between(0, np.log(2) + 1e-12).all()
    with pytest.raises(PanelError, match="swap"):
        best_single_judge(sim[sim["condition"] == "original"])
    e = panel_errors(pd.Series(["A", "B"], index=[1, 2]), pd.Series(["A", "A"], index=[1, 2]))
    assert e.tolist() == [False, True]


def _check_validity(table, n_splits):
    summary = summarize_certified(table)
    scope = summary.xs("scope", level="method")
    assert (scope["n_splits"] == n_splits).all()
    # METHODS §7: expected FDP <= alpha (Monte-Carlo tolerance: 2 standard errors)
    assert (
        scope["risk_mean"] <= scope.index.get_level_values("alpha") + 2 * scope["risk_se"]
    ).all()
    assert scope["valid"].all()
    return summary


def _certified_labels() -> set[str]:
    """The panel scores certify_panel compares by default: SCUR, PE and the reported extensions."""
    labels = {f"{get_risk_score(name).label} (panel)" for name in CERTIFIED}
    assert {"SCUR (panel)", "PE (panel)"} <= labels
    return labels


def test_certified_validity_simulated_1000_splits(sim, sim_scores):
    table = certify_panel(sim, scores=sim_scores, n_splits=1000, split_seed=0)
    shown = {*_certified_labels(), f"BPE ({best_single_judge(sim)})"}
    assert set(table["score"]) == shown
    assert len(table) == len(shown) * len(score_selectors()) * len(ALPHAS) * 1000
    summary = _check_validity(table, 1000)
    cov = summary.xs(("SCUR (panel)", "scope"), level=("score", "method"))["coverage_mean"]
    assert cov.loc[0.25] > cov.loc[0.05] > 0  # coverage grows with alpha, and is not zero
    vanilla = summary.xs(("SCUR (panel)", "vanilla"), level=("score", "method"))
    err = panel_errors(sim_scores["majority"], sim_scores["gold"]).mean()
    assert vanilla["risk_mean"].iloc[0] == pytest.approx(err, abs=0.01)


def test_certify_without_swap_skips_bpe(sim, sim_scores):
    orig = sim[sim["condition"] == "original"]
    with pytest.warns(UserWarning, match="no 'swap'"):
        table = certify_panel(orig, scores=sim_scores, n_splits=50, alphas=(0.2,))
    assert set(table["score"]) == _certified_labels()
    with pytest.raises(PanelError, match="gold"):
        certify_panel(orig.drop(columns="gold"), scores=sim_scores, n_splits=10)


@pytest.mark.data
@pytest.mark.skipif(
    _ROOT is None or not (_ROOT / "llmbar" / "verdicts_long.csv").is_file(),
    reason="shared LLMBar data not found (set JUDGERISK_DATA or place it in ../shared/data/llmbar)",
)
def test_certified_validity_llmbar_1000_splits():
    from judgerisk.datasets.llmbar import load_llmbar_panel

    with pytest.warns(UserWarning, match="unparseable"):
        panel = load_llmbar_panel(_ROOT)
    table = certify_panel(panel, n_splits=1000, n_seeds=2, scur_options=FAST)
    assert table.attrs["n_items"] == 419 and table.attrs["judge"] == "GPT-4"
    _check_validity(table, 1000)


def test_validity_cells_are_one_readable_cell_per_alpha(sim, sim_scores):
    from judgerisk._plots.certified import validity_cells

    table = certify_panel(sim, scores=sim_scores, n_splits=50, split_seed=0)
    cells = validity_cells(summarize_certified(table))
    assert list(cells.columns) == [f"{a:.3f}" for a in ALPHAS] and cells.columns.name == "α"
    assert cells.columns[0] == "0.050"  # as format_table prints an α header, not 0.050000
    assert cells.stack().str.fullmatch(r"\d\.\d{3} [≤>] \d\.\d{3}").all()
