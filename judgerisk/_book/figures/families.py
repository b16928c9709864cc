"""Figures of the perturbation families: recovery of planted sensitivity, AUROC with intervals,
position bias under each labelling and the shift a padding gives (book chapter "Which
perturbations reveal risk?")."""

from __future__ import annotations

import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.axes import Axes

from judgerisk._plots import style

__all__ = [
    "plot_auroc_intervals",
    "plot_padding_shift",
    "plot_position_bias",
    "plot_recovery",
    "plot_recovery_curve",
]


def _family_of(column: str) -> str:
    return column[2:] if column.startswith("S_") else column


def plot_recovery(matrix: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """Heat map of :func:`judgerisk._book.studies.families.family_recovery`: AUROC of each family's S
    (columns) for the items planted as sensitive to each family (rows); 0.5 is chance."""
    ax = ax or style.subplots(height=3.2, width=4.8)[1]
    shown = matrix.rename(
        index=lambda f: f"planted: {style.label(f)}", columns=lambda c: style.label(c)
    )
    sns.heatmap(
        shown,
        vmin=0.4,
        vmax=1.0,
        cmap="rocket_r",
        annot=True,
        fmt=".2f",
        cbar_kws={"label": "AUROC"},
        linewidths=0.5,
        ax=ax,
    )
    ax.set(xlabel="sensitivity signal", ylabel=None)
    ax.tick_params(axis="x", rotation=30)
    for tick in ax.get_xticklabels():
        tick.set_horizontalalignment("right")
    return ax


def plot_recovery_curve(study: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """AUROC of each family's own S (solid) and of the best other family's S (dashed) for its
    planted items, against the planted shift's sd (:func:`recovery_study`, mean over seeds)."""
    ax = ax or style.subplots(height=3.2)[1]
    mean = study.groupby(["family", "sensitivity"], sort=False)[["own", "other"]].mean()
    for family in pd.unique(study["family"]):
        rows = mean.loc[family]
        colour = style.color(f"S_{family}")
        ax.plot(rows.index, rows["own"], marker="o", color=colour, label=style.label(f"S_{family}"))
        ax.plot(rows.index, rows["other"], ls="--", color=colour, alpha=0.7)
    ax.axhline(0.5, color="black", lw=0.8, ls=":")
    ax.set(
        xlabel="sd of the planted shift (log-odds)",
        ylabel="AUROC for the planted items",
        ylim=(0.4, 1.0),
    )
    ax.plot([], [], ls="--", color="grey", label="best other family's S")
    ax.legend(frameon=False, loc="upper left")
    return ax


def plot_auroc_intervals(table: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """AUROC of each score for the errors with its 95 % bootstrap interval
    (:func:`judgerisk._book.studies.families.score_intervals`), one row per score; 0.5 is chance."""
    ax = ax or style.subplots(height=0.42 * len(table) + 1.0)[1]
    y = np.arange(len(table))[::-1]
    for k, (name, row) in zip(y, table.iterrows(), strict=True):
        colour = style.color(str(name))
        ax.errorbar(
            row["auroc"],
            k,
            xerr=[[row["auroc"] - row["low"]], [row["high"] - row["auroc"]]],
            fmt="o",
            color=colour,
            capsize=3,
        )
        ax.text(row["high"] + 0.01, k, f"{row['auroc']:.2f}", va="center", fontsize=style.MIN_FONT)
    ax.axvline(0.5, color="black", lw=0.8, ls=":")
    ax.set_yticks(y, [style.label(str(n)) for n in table.index])
    ax.set(xlabel="AUROC for the judge's errors (95 % interval)")
    low, high = float(table["low"].min()), float(table["high"].max())
    ax.set_xlim(min(0.35, low - 0.03), max(0.75, high + 0.08))
    return ax


def plot_position_bias(table: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """Share of verdicts for the first-shown answer under each labelling
    (:func:`judgerisk._book.studies.families.position_bias`); 0.5 is no position bias."""
    ax = ax or style.subplots(height=2.8, width=4.8)[1]
    labels = [
        "\n".join([str(lab), *row["conditions"].split(" / ")]) for lab, row in table.iterrows()
    ]
    ax.bar(labels, table["first_share"], color=style.color("label"), width=0.6)
    for k, v in enumerate(table["first_share"]):
        ax.text(k, v + 0.02, f"{v:.2f}", ha="center", fontsize=style.MIN_FONT)
    ax.axhline(0.5, color="black", lw=0.8, ls=":")
    ax.set(ylim=(0, 1.1), ylabel="verdicts for the first-shown answer", xlabel="answer labels")
    return ax


def plot_padding_shift(panel: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """Per verbosity pair, the distribution over items of the change of the probability that
    the padded answer wins (positive: padding helps it); 0 is no length bias."""
    from judgerisk.families import family_pairs, parse_condition

    ax = ax or style.subplots(height=2.8, width=4.8)[1]
    wide = panel.pivot_table(index=["item", "judge"], columns="condition", values="p")
    labels, shifts = [], []
    for c, base in family_pairs(wide.columns).get("verbosity", []):
        sign = 1.0 if int(parse_condition(c).variant or 0) % 2 else -1.0  # type: ignore[union-attr]
        labels.append(f"{c}\n(pads {'A' if sign > 0 else 'B'})")
        shifts.append((sign * (wide[c] - wide[base])).dropna().to_numpy())
    if not shifts:
        raise ValueError("the panel has no verbosity pair")
    colour = style.color("verbosity")
    ax.boxplot(
        shifts,
        patch_artist=True,
        boxprops={"facecolor": colour, "alpha": 0.7},
        medianprops={"color": "black"},
        flierprops={"markersize": 2},
    )
    # the labels set on the axis: boxplot's keyword is labels= before Matplotlib 3.9 and
    # tick_labels= after it (the oldest supported Matplotlib is 3.7)
    ax.set_xticks(range(1, len(labels) + 1), labels)
    ax.axhline(0.0, color="black", lw=0.8, ls=":")
    ax.set(xlabel=None, ylabel="change of P(padded answer wins)")
    return ax
