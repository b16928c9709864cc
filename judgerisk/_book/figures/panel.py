"""Figures describing a panel: judge accuracy, consensus and perturbation flips."""

from __future__ import annotations

import pandas as pd
import seaborn as sns
from matplotlib.axes import Axes

from judgerisk._plots import style
from judgerisk.engine.describe import consensus, flip_rates, judge_accuracy

__all__ = ["plot_judge_accuracy", "plot_consensus", "plot_flip_rates", "plot_logit_by_condition"]


def plot_judge_accuracy(panel: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """Bar chart of each judge's original-condition accuracy against gold."""
    ax = ax or style.subplots(height=3, width=5)[1]
    acc = judge_accuracy(panel).sort_values()
    sns.barplot(x=acc.values, y=acc.index.astype(str), ax=ax, color=style.color("majority"))
    ax.axvline(0.5, color="grey", ls=":", lw=1)
    ax.set(xlim=(0, 1), xlabel="accuracy (original condition)", ylabel="judge")
    for y, v in enumerate(acc.values):
        ax.text(v + 0.01, y, f"{v:.2f}", va="center", fontsize=style.MIN_FONT)
    ax.set_xlim(0, 1.12)
    return ax


def plot_consensus(panel: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """Items per consensus level (majority share), split by whether the majority is right."""
    ax = ax or style.subplots(height=3, width=5)[1]
    cons = consensus(panel)
    level = cons["consensus"].round(2).rename("consensus")
    if "gold" in panel.columns:
        gold = panel.drop_duplicates("item").set_index("item")["gold"].reindex(cons.index)
        outcome = (cons["majority"] == gold).map({True: "majority right", False: "majority wrong"})
        outcome = outcome.rename("outcome")
        counts = pd.crosstab(level, outcome)
        colors = [
            {"majority right": style.color("correct"), "majority wrong": style.color("error")}[c]
            for c in counts.columns
        ]
    else:
        counts = level.value_counts().sort_index().to_frame("items")
        colors = ["#4c72b0"]
    counts.plot.bar(stacked=True, ax=ax, color=colors, width=0.8, rot=0)
    ax.set(xlabel="majority share (≥ 0.8 = high consensus)", ylabel="items")
    ax.legend(title=None, frameon=False)
    return ax


def plot_flip_rates(panel: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """Verdict flip rate per judge for the order and rubric perturbation families."""
    ax = ax or style.subplots(height=3, width=6)[1]
    flips = flip_rates(panel)
    if flips.empty:
        ax.text(0.5, 0.5, "no perturbation pairs in this panel", ha="center", va="center")
        ax.set_axis_off()
        return ax
    per = flips.groupby(["family", "judge"], as_index=False).apply(
        lambda g: pd.Series({"flip_rate": (g.flip_rate * g.n_pairs).sum() / g.n_pairs.sum()}),
        include_groups=False,
    )
    families = list(pd.unique(per["family"]))
    sns.barplot(
        data=per.assign(family=per["family"].map(style.label)),
        x="judge",
        y="flip_rate",
        hue="family",
        palette=style.palette(families),
        ax=ax,
    )
    ax.set(ylabel="share of verdicts that flip", xlabel="judge")
    ax.legend(title=None, frameon=False)
    return ax


def plot_logit_by_condition(panel: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """Distribution of canonical logits per condition (a first look at order effects)."""
    ax = ax or style.subplots(height=3, width=6)[1]
    sns.violinplot(
        data=panel,
        x="condition",
        y="logit",
        ax=ax,
        cut=0,
        inner="quartile",
        color=style.color("msp"),
    )
    ax.set(ylabel="canonical logit  log P(A)/P(B)", xlabel="condition")
    ax.tick_params(axis="x", rotation=30)
    return ax
