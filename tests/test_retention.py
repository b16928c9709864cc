"""Tests of retention curves (METHODS §6, paper 1 Figure 5)."""

import numpy as np
import pandas as pd
import pytest

from judgerisk.aggregators.aggregate import AGGREGATORS
from judgerisk.engine.analysis import METHODS
from judgerisk.engine.retention import (
    RHOS,
    gains_at,
    retention_analysis,
    retention_curve,
    summarize_retention,
)
from judgerisk.simulate import simulate_panel


def test_curve_by_hand_and_ceil():
    risk = pd.Series([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0], index=list("abcdefghij"))
    correct = pd.Series([1, 1, 1, 1, 0, 1, 1, 0, 0, 0], index=risk.index)
    out = retention_curve(risk, correct, rhos=(1.0, 0.8, 0.5, 0.25))
    assert out["n_kept"].tolist() == [10, 8, 5, 3]  # ceil(.25 * 10) = 3, ceil(.8 * 10) = 8
    np.testing.assert_allclose(out["accuracy"], [0.6, 6 / 8, 4 / 5, 1.0])
    np.testing.assert_allclose(out["gain"], out["accuracy"] - 0.6)
    # Series are aligned by item, not position
    shuffled = retention_curve(risk.iloc[::-1], correct, rhos=(1.0, 0.8, 0.5, 0.25))
    pd.testing.assert_frame_equal(out, shuffled)


def test_tie_handling_average_vs_stable():
    # Four items share the lowest risk; two of them are errors.
    risk = pd.Series([0.0, 0.0, 0.0, 0.0, 1.0, 2.0], index=[1, 2, 3, 4, 5, 6])
    correct = pd.Series([0, 0, 1, 1, 1, 1], index=risk.index)
    avg = retention_curve(risk, correct, rhos=(0.5,))
    # keep 3 of the tied block of 4 (2 errors): expected errors 3 * 2/4 = 1.5
    assert avg["accuracy"].iloc[0] == pytest.approx(1 - 1.5 / 3)
    stable = retention_curve(risk, correct, rhos=(0.5,), ties="stable")
    assert stable["accuracy"].iloc[0] == pytest.approx(1 / 3)  # items 1, 2, 3 in index order
    flipped = pd.Series([1, 1, 0, 0, 1, 1], index=risk.index)  # errors moved within the tie
    assert retention_curve(risk, flipped, rhos=(0.5,))["accuracy"].iloc[0] == pytest.approx(
        1 - 1.5 / 3
    )
    stable_flipped = retention_curve(risk, flipped, rhos=(0.5,), ties="stable")
    assert stable_flipped["accuracy"].iloc[0] == pytest.approx(2 / 3)
    # constant risk: every rho has the base accuracy
    flat = retention_curve(np.zeros(6), correct.to_numpy(), rhos=RHOS)
    np.testing.assert_allclose(flat["gain"], 0.0, atol=1e-12)
    with pytest.raises(ValueError, match="ties"):
        retention_curve(risk, correct, ties="random")


def test_curve_matches_brute_force_on_random_data():
    rng = np.random.default_rng(0)
    risk = rng.integers(0, 6, 200).astype(float)  # heavy ties
    correct = (rng.random(200) < 0.7).astype(int)
    out = retention_curve(risk, correct, rhos=RHOS)
    # brute force: average over many random tie-breaking orders
    accs = []
    for _ in range(3000):
        order = np.lexsort((rng.random(200), risk))
        accs.append([correct[order[: int(np.ceil(r * 200 - 1e-9))]].mean() for r in RHOS])
    np.testing.assert_allclose(out["accuracy"], np.mean(accs, axis=0), atol=3e-3)


@pytest.fixture(scope="module")
def sim_table():
    panel = simulate_panel(n_items=600, n_judges=5, seed=4).data
    return retention_analysis(panel, seeds=range(3))


def test_analysis_schema(sim_table):
    assert list(sim_table.columns) == [
        "seed",
        "aggregator",
        "method",
        "rho",
        "n_kept",
        "accuracy",
        "gain",
    ]
    assert set(sim_table["aggregator"]) == set(AGGREGATORS)
    assert set(sim_table["method"]) == set(METHODS)  # SCUR and every registered baseline
    assert {"scur", "pe", "ve", "msp", "ds_entropy"} <= set(METHODS)
    assert len(sim_table) == 3 * len(AGGREGATORS) * len(METHODS) * len(RHOS)
    assert (sim_table.loc[sim_table["rho"].eq(1.0), "gain"] == 0).all()
    assert (sim_table.loc[sim_table["rho"].eq(1.0), "n_kept"] == 120).all()  # 20 % of 600


def test_scur_retention_accuracy_rises_as_rho_falls(sim_table):
    summary = summarize_retention(sim_table)
    scur = summary[summary["method"].eq("scur")]
    for agg in AGGREGATORS:
        curve = scur[scur["aggregator"].eq(agg)].sort_values("rho", ascending=False)
        acc = curve["accuracy_mean"].to_numpy()
        assert acc[-1] > acc[0] + 0.03, (agg, acc)  # 50 % kept vs all
        assert acc[2] > acc[0], (agg, acc)  # 80 % kept vs all
        assert np.all(np.diff(acc) > -0.01), (agg, acc)  # no real dip on the way
    g = gains_at(sim_table)
    assert list(g.index) == [*AGGREGATORS, "mean"]
    assert (g["gain@50%"] > g["gain@80%"]).all()
    assert g.loc["mean", "gain@50%"] == pytest.approx(g.loc[list(AGGREGATORS), "gain@50%"].mean())


def test_analysis_rejects_bad_arguments():
    panel = simulate_panel(n_items=40, n_judges=3, seed=1).data
    with pytest.raises(ValueError, match="unknown aggregator"):
        retention_analysis(panel, seeds=[0], aggregators=["oracle"])
    with pytest.raises(ValueError, match="seeds is empty"):
        retention_analysis(panel, seeds=[])


def test_every_retention_api_agrees():
    """retention_curve, retention_table and retention_analysis give one number per tie rule."""
    from judgerisk.engine.analysis import risk_table
    from judgerisk.risk.metrics import retention_table

    risk, err = pd.Series([0, 0, 0, 0, 1.0]), pd.Series([1, 0, 0, 0, 0])
    for ties, want in (("average", 0.75), ("stable", 2 / 3)):
        curve = retention_curve(risk, 1 - err, rhos=(0.6,), ties=ties)["accuracy"].iloc[0]
        table = retention_table(risk, err, (0.6,), ties=ties)["accuracy"].iloc[0]
        assert curve == pytest.approx(want) and table == pytest.approx(want)
    panel = simulate_panel(n_items=120, n_judges=3, seed=3).data
    study = retention_analysis(panel, seeds=[0], aggregators=["majority"], methods=["ve"])
    t = risk_table(panel, seed=0, methods=["ve"])
    direct = retention_curve(t["ve"], 1 - t["error"])
    got = study.set_index("rho")["accuracy"]
    np.testing.assert_allclose(got.loc[direct["rho"]].to_numpy(), direct["accuracy"].to_numpy())


def test_retention_plot_by_aggregator_or_method():
    from judgerisk._book.figures.aggregate import plot_retention_curves

    table = pd.DataFrame(
        {
            "seed": [0, 0, 0, 0],
            "aggregator": ["majority"] * 4,
            "method": ["ve", "ve", "pe", "pe"],
            "rho": [1.0, 0.5, 1.0, 0.5],
            "accuracy": [0.6, 0.8, 0.6, 0.7],
        }
    )
    fig = plot_retention_curves(table, by="method")
    assert len(fig.axes[0].get_lines()) == 2
    fig = plot_retention_curves(table, method="pe")
    assert len(fig.axes[0].get_lines()) == 1
    with pytest.raises(ValueError, match="no rows"):
        plot_retention_curves(table, by="method", aggregator="mace")
