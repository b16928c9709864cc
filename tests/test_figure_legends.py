"""Legends say what the figure draws: one swatch for every panel's bars, no hidden lines."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from judgerisk._book.figures.real_judge import plot_confidence_metrics  # noqa: E402
from judgerisk._book.figures.selective import reliability_diagrams, risk_coverage_curves  # noqa: E402
from judgerisk._plots import style  # noqa: E402


def test_reliability_legend_sits_in_the_spare_cell_with_a_neutral_swatch():
    rng = np.random.default_rng(0)
    conf = {k: rng.uniform(0.5, 1, 200) for k in ("predictive_probability", "bpe", "x")}
    fig = reliability_diagrams(conf, rng.uniform(size=200) < 0.7, n_bins=5)
    spare = fig.axes[3]
    legend = spare.get_legend()
    assert legend is not None and not fig.legends  # in the empty grid cell, not over bars
    texts = [t.get_text() for t in legend.get_texts()]
    assert texts == ["accuracy in bin (bar)", "mean confidence", "perfect calibration"]
    swatch = legend.legend_handles[0].get_facecolor()
    bar_colors = {tuple(ax.patches[0].get_facecolor()) for ax in fig.axes[:3]}
    assert tuple(swatch) not in bar_colors  # no panel's colour stands for all panels


def _summary(methods: dict[str, float]) -> pd.DataFrame:
    rows = []
    for method, shift in methods.items():
        for alpha in (0.1, 0.2):
            rows.append(
                dict(method=method, alpha=alpha, risk_mean=alpha - shift, risk_std=0.01,
                     coverage_mean=0.5 + shift, coverage_std=0.01)
            )  # fmt: skip
    return pd.DataFrame(rows).set_index(["method", "alpha"])


def test_a_curve_hidden_under_another_is_dashed_and_named():
    fig = risk_coverage_curves(_summary({"scope": 0.05, "naive": 0.05, "vanilla": 0.2}))
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    naive = f"{style.label('naive')} (same as {style.label('scope')})"
    assert naive in labels and style.label("vanilla") in labels
    dashed = [ln for ln in fig.axes[0].lines if ln.get_label() == naive]
    assert dashed and dashed[0].get_linestyle() == "--"


def test_confidence_metrics_legend_in_its_own_cell():
    table = pd.DataFrame(
        {"ece": [0.1, 0.2], "auroc": [0.7, 0.6], "auprc": [0.5, 0.4]}, index=["bpe", "pp"]
    )
    fig, axes = style.subplots(2, 2, height=6.4)
    plot_confidence_metrics({"judge": table}, axes=axes.ravel()[:3], legend_ax=axes[1, 1])
    assert all(ax.get_legend() is None for ax in axes.ravel()[:3])
    assert axes[1, 1].get_legend() is not None and not axes[1, 1].axison
    assert len(axes[1, 1].get_legend().get_texts()) == 2


def test_score_histogram_keeps_unlabelled_items_apart_from_the_errors():
    from judgerisk._plots.certified import plot_score_distribution

    scores = pd.DataFrame({"bpe": np.linspace(0.0, 0.69, 10)}, index=range(10))
    error = pd.Series([False, False, True, False], index=[0, 1, 2, 3])  # 4 labelled, 1 wrong
    fig = plot_score_distribution(scores, "bpe", error=error)
    texts = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert texts == ["right", "wrong", "no gold"]
    # (the six items without gold were drawn as "wrong" before: no "no gold" group)
    as_int = plot_score_distribution(scores, "bpe", error=error.astype("int8"))  # error_labels
    assert [t.get_text() for t in as_int.axes[0].get_legend().get_texts()] == texts
    labelled_only = plot_score_distribution(scores.loc[:3], "bpe", error=error)
    assert [t.get_text() for t in labelled_only.axes[0].get_legend().get_texts()] == [
        "right",
        "wrong",
    ]
