"""Figures of the error-ranking analyses: AUROC per method and subset, matched vote patterns."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.axes import Axes
from matplotlib.patches import Patch

from judgerisk._plots import style
from judgerisk.engine.analysis import SUBSET_NAMES
from judgerisk.risk.registry import COMPARED

__all__ = [
    "SUBSET_LABELS",
    "plot_auroc_by_method",
    "plot_vote_patterns",
    "plot_matched_group_auroc",
]

#: Display names of the evaluation subsets (:data:`judgerisk.engine.analysis.SUBSET_NAMES`).
SUBSET_LABELS = SUBSET_NAMES


def _ordered(values: pd.Series, preferred: Sequence[str]) -> list[str]:
    present = list(pd.unique(values))
    return [v for v in preferred if v in present] + [v for v in present if v not in preferred]


def plot_auroc_by_method(
    result: pd.DataFrame,
    subsets: Sequence[str] | None = None,
    methods: Sequence[str] | None = None,
    axes: Any = None,
) -> plt.Figure:
    """AUROC of each risk score for panel errors, one panel per subset, spread over seeds.

    Parameters
    ----------
    result : pandas.DataFrame
        Output of :func:`judgerisk.engine.analysis.evaluate_risk` (``seed, method, subset, auroc, ...``).
    subsets, methods : sequence of str, optional
        Which subsets (panels) and methods (x positions) to draw, in order; default all present.
    axes : sequence of matplotlib Axes, optional
        One Axes per subset; a new figure is made when omitted.

    Returns
    -------
    matplotlib.figure.Figure
        Each seed is a dot; the black marker and bar are the mean ± one standard deviation over
        seeds; the dashed line is chance (AUROC .5). Panel titles give the mean number of items
        and errors per seed in the subset (as in the paper's Figure 4).
    """
    subsets = (
        list(subsets) if subsets is not None else _ordered(result["subset"], list(SUBSET_LABELS))
    )
    methods = list(methods) if methods is not None else _ordered(result["method"], COMPARED)
    if axes is None:
        nrows, ncols = style.grid_shape(len(subsets))
        fig, grid = style.subplots(nrows, ncols, height=3.3 * nrows, sharey=True, squeeze=False)
        for ax in grid.ravel()[len(subsets) :]:
            ax.set_axis_off()
        axes = grid.ravel()[: len(subsets)]
    else:
        axes = np.atleast_1d(axes)
        fig = axes[0].figure
    if len(axes) != len(subsets):
        raise ValueError(f"got {len(axes)} axes for {len(subsets)} subsets")
    labels = [style.label(m) for m in methods]
    for ax, subset in zip(axes, subsets, strict=True):
        sub = result[(result["subset"] == subset) & result["method"].isin(methods)]
        if sub.empty:
            raise ValueError(f"no rows for subset {subset!r}")
        sub = sub.assign(label=sub["method"].map(style.label))
        palette = style.palette(methods)
        sns.stripplot(
            data=sub,
            x="label",
            y="auroc",
            hue="label",
            order=labels,
            palette=palette,
            ax=ax,
            alpha=0.55,
            size=4,
            jitter=0.15,
            legend=False,
        )
        stats = sub.groupby("label")["auroc"].agg(["mean", "std"]).reindex(labels)
        ax.errorbar(
            np.arange(len(labels)),
            stats["mean"],
            yerr=stats["std"].fillna(0.0),
            fmt="D",
            color="black",
            markersize=5,
            capsize=4,
            lw=1.2,
            zorder=5,
        )
        ax.axhline(0.5, ls="--", color="grey", lw=1)
        n_items = sub.groupby("seed")["n_items"].first().mean()
        n_err = sub.groupby("seed")["n_errors"].first().mean()
        ax.set_title(
            f"{SUBSET_LABELS.get(subset, subset)}\n~{n_items:.0f} items, ~{n_err:.0f} errors a seed",
            fontsize=style.MIN_FONT,
        )
        ax.set(xlabel="", ylabel="AUROC for errors")
        ax.tick_params(axis="x", labelrotation=30, labelsize=style.MIN_FONT)
    return fig


def plot_vote_patterns(groups: pd.DataFrame, top: int = 15, ax: Axes | None = None) -> plt.Axes:
    """The largest original-condition vote patterns, split into correct and wrong verdicts.

    Parameters
    ----------
    groups : pandas.DataFrame
        Output of :func:`judgerisk.risk.metrics.matched_vote_groups` (``pattern, n_items,
        n_errors, n_correct, weight, usable``).
    top : int, default 15
        Number of patterns shown (largest first).
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
        Horizontal stacked bars per pattern (one letter per judge: the candidate it voted for,
        ``.`` = no vote). Patterns with both errors and non-errors enter the matched-vote AUROC
        and are labelled with their weight n⁺n⁻; the others (all correct or all wrong) are greyed.
    """
    if ax is None:
        _, ax = style.subplots(height=0.32 * min(top, len(groups)) + 1.6)
    g = groups.sort_values("n_items", ascending=False).head(top).iloc[::-1]
    y = np.arange(len(g))
    usable = g["usable"].to_numpy(bool)
    ax.barh(y, g["n_correct"], color=np.where(usable, style.color("correct"), "#b8d6bf"))
    ax.barh(
        y,
        g["n_errors"],
        left=g["n_correct"],
        color=np.where(usable, style.color("error"), "#e4b3b4"),
    )
    for yi, (_, row) in zip(y, g.iterrows(), strict=True):
        if row["usable"]:
            ax.text(
                row["n_items"],
                float(yi),
                f"  n⁺n⁻={int(row['weight'])}",
                va="center",
                fontsize=style.MIN_FONT,
            )
    ax.set_yticks(y, g["pattern"], fontfamily="monospace")
    ax.set(xlabel="evaluation items", ylabel="vote pattern (judge by judge)")
    handles = [
        Patch(color=style.color("correct"), label="correct"),
        Patch(color=style.color("error"), label="error"),
        Patch(color="#b8d6bf", label="pattern without both (not used)"),
    ]
    ax.legend(
        handles=handles, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncols=2, frameon=False
    )
    ax.margins(x=0.2)
    return ax


def plot_matched_group_auroc(
    groups: pd.DataFrame, methods: Sequence[str] | None = None, ax: Axes | None = None
) -> plt.Axes:
    """Within-pattern AUROC of each method for the usable vote patterns, sized by weight.

    Parameters
    ----------
    groups : pandas.DataFrame
        Long table with columns ``pattern``, ``method``, ``auroc`` and ``weight`` (n⁺n⁻), one row
        per usable pattern and method (e.g. :func:`judgerisk.risk.metrics.matched_vote_groups`
        run once per score and concatenated with a ``method`` column).
    methods : sequence of str, optional
        Order of the methods; default all present.
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
        One row per method; each dot a pattern (area ∝ weight); the black diamond is the
        weighted mean, which is the matched-vote AUROC.
    """
    needed = {"pattern", "method", "auroc", "weight"}
    if not needed <= set(groups.columns):
        raise ValueError(f"groups needs columns {sorted(needed)}, got {list(groups.columns)}")
    g = groups.dropna(subset=["auroc"])
    methods = list(methods) if methods is not None else _ordered(g["method"], COMPARED)
    if ax is None:
        _, ax = style.subplots(height=0.55 * len(methods) + 1.2)
    rng = np.random.default_rng(0)  # vertical jitter only, for legibility
    wmax = max(float(g["weight"].max()), 1.0)
    for k, m in enumerate(methods):
        gm = g[g["method"] == m]
        yk = len(methods) - 1 - k
        ax.scatter(
            gm["auroc"],
            yk + rng.uniform(-0.18, 0.18, len(gm)),
            s=15 + 250 * gm["weight"] / wmax,
            color=style.color(m),
            alpha=0.5,
            edgecolor="none",
        )
        if len(gm):
            mean = np.average(gm["auroc"], weights=gm["weight"])
            ax.plot(mean, yk, "D", color="black", markersize=7)
            ax.text(mean, yk + 0.3, f"{mean:.3f}", ha="center", fontsize=style.MIN_FONT)
    ax.axvline(0.5, ls="--", color="grey", lw=1)
    ax.set_yticks(range(len(methods)), [style.label(m) for m in methods][::-1])
    ax.set(xlabel="AUROC within a vote pattern", xlim=(-0.03, 1.03))
    return ax
