"""The studies of the chapter "Which perturbations reveal risk?", by hand on small panels."""

from __future__ import annotations

import matplotlib
import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

from judgerisk._book.studies.families import (
    family_recovery,
    family_table,
    one_judge_scores,
    padding_shift,
    position_bias,
    recovery_study,
    score_intervals,
)
from judgerisk._book.studies.paired import auroc_interval, paired_auroc_difference
from judgerisk.panel import PanelError, validate_panel
from judgerisk.risk.metrics import auroc
from judgerisk.simulate import simulate_panel

matplotlib.use("Agg")


def _one_judge(n=200, seed=0):
    """One judge: first-slot bias 1.0, padding helps A by 0.5 log-odds, labels add noise."""
    rng = np.random.default_rng(seed)
    q = rng.normal(0, 2, n)
    gold = np.where(q + rng.normal(0, 1, n) > 0, "A", "B")
    logit = {
        "original": q + 1.0,
        "swap": q - 1.0,
        "label1": q + 1.0 + rng.normal(0, 0.3, n),
        "swap_label1": q - 1.0 + rng.normal(0, 0.3, n),
        "verbosity1": q + 1.0 + 0.5,
        "verbosity2": q + 1.0 - 0.5,
    }
    rows = [
        {"item": i, "judge": "J", "condition": c, "logit": m[i], "gold": gold[i]}
        for c, m in logit.items()
        for i in range(n)
    ]
    return validate_panel(pd.DataFrame(rows)), q


def test_family_table_lists_the_registry_and_the_pairs():
    table = family_table(["original", "swap", "label1", "verbosity2"])
    assert list(table.index[:5]) == ["order", "rubric", "label", "format", "verbosity"]
    assert table.loc["label", "pairs"] == "label1 vs original"
    assert table.loc["rubric", "pairs"] == "" and table.loc["format", "conditions"] == ""
    assert table["invariance"].str.len().gt(10).all()


def test_recovery_matrix_and_study():
    conds = ("original", "swap", "label1", "verbosity1", "verbosity2")
    sim = simulate_panel(n_items=200, n_judges=3, seed=0, conditions=conds, label_sensitivity=5)
    from judgerisk.risk.signals import signal_s

    s = signal_s(sim.data)
    matrix = family_recovery(s, sim.truth.items)
    assert list(matrix.index) == ["order", "label", "verbosity"]  # rubric: no S value
    flag = sim.truth.items["label_sensitive"].astype(int)
    assert matrix.loc["label", "S_label"] == pytest.approx(auroc(s["S_label"], flag))
    study = recovery_study([1.0, 6.0], families=("label",), n_items=150, n_judges=3)
    assert list(study.columns) == ["family", "sensitivity", "seed", "own", "other"]
    own = study.set_index("sensitivity")["own"]
    assert own.loc[6.0] > own.loc[1.0]
    with pytest.raises(ValueError, match="no family"):
        family_recovery(s.drop(columns=["S_order", "S_label", "S_verbosity"]), sim.truth.items)


def test_one_judge_scores_by_hand():
    panel, q = _one_judge()
    table = one_judge_scores(panel)
    wide = panel.pivot(index="item", columns="condition", values="p")
    assert list(table.columns) == [
        "error",
        "pe",
        "bpe",
        "S_order",
        "S_label",
        "S_verbosity",
        "s_paper",
        "s_all",
    ]
    gold = panel.drop_duplicates("item").set_index("item")["gold"]
    np.testing.assert_array_equal(table["error"], ((wide["original"] > 0.5) != (gold == "A")))
    s_label = (wide["label1"] - wide["original"]).abs() + (wide["swap_label1"] - wide["swap"]).abs()
    np.testing.assert_allclose(table["S_label"], s_label / 2)
    np.testing.assert_allclose(table["s_paper"], table["S_order"].rank(method="max", pct=True))
    assert (table["s_all"] >= table["s_paper"]).all()
    bpe = one_judge_scores(panel, verdict="bpe")
    pbar = (wide["original"] + wide["swap"]) / 2
    np.testing.assert_array_equal(bpe["error"], ((pbar >= 0.5) != (gold == "A")))
    with pytest.raises(PanelError, match="one judge"):
        one_judge_scores(pd.concat([panel, panel.assign(judge="K")]))
    with pytest.raises(PanelError, match="gold"):
        one_judge_scores(panel.drop(columns="gold"))


def test_score_intervals_use_the_paired_bootstrap():
    panel, _ = _one_judge()
    table = one_judge_scores(panel)
    out = score_intervals(table, ["pe", "S_label", "s_paper"], n_boot=300, random_state=1)
    a, lo, hi = auroc_interval(table["pe"], table["error"], n_boot=300, random_state=1)
    assert (out.loc["pe", "auroc"], out.loc["pe", "low"], out.loc["pe", "high"]) == (a, lo, hi)
    assert lo <= a <= hi and a == pytest.approx(auroc(table["pe"], table["error"]))
    d = paired_auroc_difference(
        table["S_label"], table["pe"], table["error"], n_boot=300, random_state=1
    )
    assert out.loc["S_label", "diff_pe"] == pytest.approx(d.diff)
    assert out.loc["S_label", "verdict_pe"] == d.verdict
    assert np.isnan(out.loc["pe", "diff_pe"]) and out.loc["pe", "verdict_pe"] == ""
    with pytest.raises(ValueError, match="no column"):
        score_intervals(table, ["nope"])


def test_position_bias_and_padding_shift_by_hand():
    panel, q = _one_judge()
    bias = position_bias(panel)
    assert list(bias.index) == ["A/B", "1/2"]
    p_first = (expit(q + 1.0).mean() + (1 - expit(q - 1.0)).mean()) / 2
    assert bias.loc["A/B", "p_first"] == pytest.approx(p_first)
    assert bias.loc["A/B", "first_share"] > 0.5 and bias.loc["A/B", "n_cells"] == 200
    shift = padding_shift(panel)
    assert list(shift["padded"]) == ["A", "B"]
    base = expit(q + 1.0)
    assert shift.iloc[0]["mean_shift"] == pytest.approx((expit(q + 1.5) - base).mean())
    assert shift.iloc[1]["mean_shift"] == pytest.approx((base - expit(q + 0.5)).mean())
    assert (shift["mean_shift"] > 0).all() and (shift["away"] == 0).all()
    one = expit(q + 1.5) - base
    assert shift.iloc[0]["mean_shift_se"] == pytest.approx(one.std(ddof=1) / np.sqrt(len(q)))
    # the two orders of a cell are one draw: the s.e. is over 200 cells, not 400 verdicts
    assert bias.loc["A/B", "n_verdicts"] == 400
    wide = panel.pivot_table(index="item", columns="condition", values="verdict")
    cell = (wide["original"] + 1 - wide["swap"]) / 2
    assert bias.loc["A/B", "first_share"] == pytest.approx(cell.mean())
    assert bias.loc["A/B", "first_share_se"] == pytest.approx(cell.std(ddof=1) / np.sqrt(200))
    with pytest.raises(PanelError, match="verbosity"):
        padding_shift(panel[~panel["condition"].str.startswith("verbosity")])


def test_family_figures_draw():
    from judgerisk._book.figures import families as fplots
    from judgerisk._plots import style

    panel, _ = _one_judge()
    table = score_intervals(one_judge_scores(panel), n_boot=100)
    for draw, arg in (
        (fplots.plot_auroc_intervals, table),
        (fplots.plot_position_bias, position_bias(panel)),
        (fplots.plot_padding_shift, panel),
    ):
        fig, ax = style.subplots()
        draw(arg, ax=ax)
        assert ax.has_data() or ax.texts
        matplotlib.pyplot.close(fig)
