"""Figures for a real judge's panel: position bias, verdict mass, accuracy by subset, confidence.

Method names and colours come from :mod:`judgerisk._plots.style`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from judgerisk._plots import style

__all__ = [
    "plot_p_by_condition",
    "plot_mass_by_condition",
    "plot_accuracy_by_group",
    "plot_confidence_metrics",
]


def plot_p_by_condition(panel: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """Canonical probability that the original A wins, per condition (box + median line).

    A judge without position bias has the same distribution in the original and swapped
    conditions; a judge that prefers the first-shown answer sits high in the unswapped
    conditions and low in the swapped ones.
    """
    ax = ax or plt.subplots(figsize=(6.5, 3.2), layout="constrained")[1]
    conds = list(pd.unique(panel["condition"]))
    sns.boxplot(
        data=panel, x="condition", y="p", order=conds, ax=ax, color="#c9d4e6", fliersize=1.5
    )
    ax.axhline(0.5, color="k", lw=0.8, ls=":")
    ax.set(ylim=(0, 1), xlabel="condition", ylabel="canonical p = P(original A wins)")
    ax.tick_params(axis="x", rotation=20)
    return ax


def plot_mass_by_condition(
    panel: pd.DataFrame, by: str = "template", ax: Axes | None = None
) -> Axes:
    """Verdict mass ``P("A") + P("B")`` per condition, one box per value of ``by``."""
    if "verdict_mass" not in panel.columns:
        raise ValueError("panel has no 'verdict_mass' column (not an extraction output?)")
    ax = ax or plt.subplots(figsize=(6.5, 3.2), layout="constrained")[1]
    conds = list(pd.unique(panel["condition"]))
    sns.boxplot(
        data=panel, x="condition", y="verdict_mass", hue=by, order=conds, ax=ax, fliersize=1.5
    )
    ax.axhline(0.5, color="k", lw=0.8, ls="--")
    ax.set(ylim=(0, 1.02), xlabel="condition", ylabel='verdict mass P("A") + P("B")')
    ax.tick_params(axis="x", rotation=20)
    ax.legend(title=by, fontsize=8)
    return ax


def plot_accuracy_by_group(table: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """Heat map of accuracy against gold: conditions (rows) by item group (columns).

    ``table`` is :func:`judgerisk._book.diagnostics.accuracy_by_group` output.
    """
    ax = ax or plt.subplots(figsize=(7, 3.2), layout="constrained")[1]
    sns.heatmap(
        table.astype(float),
        annot=True,
        fmt=".2f",
        vmin=0,
        vmax=1,
        center=0.5,
        cmap="RdBu",
        cbar_kws={"label": "accuracy"},
        ax=ax,
    )
    ax.set(xlabel="", ylabel="condition")
    ax.set_xticklabels(
        [t.get_text().replace("LLMBar/", "") for t in ax.get_xticklabels()], rotation=20, ha="right"
    )
    return ax


def plot_confidence_metrics(
    tables: dict,
    metrics: Sequence[str] = ("ece", "auroc", "auprc"),
    axes: Any = None,
    legend_ax: Axes | None = None,
) -> Figure:
    """Bars of ECE / AUROC / AUPRC per confidence method, one group of bars per judge.

    Parameters
    ----------
    tables : dict of name -> DataFrame
        :func:`judgerisk.selective.confidence.compare_uncertainty` tables (methods as index).
    metrics : sequence of str
    axes : sequence of matplotlib Axes, optional
    legend_ax : matplotlib Axes, optional
        An empty axes (e.g. the spare cell of a grid) that holds the legend, so that it
        covers no bars; default: the last metric's axes.

    Returns
    -------
    matplotlib.figure.Figure
    """
    if axes is None:
        fig, axes = plt.subplots(
            1, len(metrics), figsize=(4.2 * len(metrics), 3.4), layout="constrained"
        )
    axes = np.atleast_1d(axes)
    long = pd.concat(
        {name: t[list(metrics)] for name, t in tables.items()}, names=["judge", "method"]
    ).reset_index()
    methods = list(pd.unique(long["method"]))
    long["method"] = long["method"].map(style.label)
    for ax, metric in zip(axes, metrics, strict=True):
        sns.barplot(
            data=long,
            x="judge",
            y=metric,
            hue="method",
            ax=ax,
            palette=style.palette(methods),
            hue_order=[style.label(m) for m in methods],
        )
        ax.set(xlabel="", ylabel=metric.upper())
        if metric in ("auroc",):
            ax.axhline(0.5, color="grey", ls=":", lw=1)
        ax.tick_params(axis="x", rotation=15)
        if ax is not axes[-1] or legend_ax is not None:
            ax.get_legend().remove()
        else:
            ax.legend(fontsize=7, title=None)
    if legend_ax is not None:
        handles, labels = axes[-1].get_legend_handles_labels()
        legend_ax.set_axis_off()
        legend_ax.legend(handles, labels, loc="center", title="confidence", frameon=False)
    return axes[0].figure
