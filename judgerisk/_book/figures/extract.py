"""Figures for extracted verdict logprobs: canonical log-odds by condition, verdict mass."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from judgerisk._plots import style
from judgerisk.options import ANALYSIS
from judgerisk.panel import validate_panel

__all__ = ["plot_condition_logits", "plot_verdict_mass"]


def plot_condition_logits(panel: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """Canonical log-odds of each item under each condition, one line per (item, judge).

    Parameters
    ----------
    panel : DataFrame
        A panel (validated here).
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
        Conditions on the x axis; flat lines mean the verdict does not depend on answer order or
        rubric, crossings of zero are verdict flips.
    """
    panel = validate_panel(panel, conditions=None)
    ax = ax or style.subplots(height=3.5, width=7)[1]
    conds = list(pd.unique(panel["condition"]))
    wide = panel.pivot_table(index=["item", "judge"], columns="condition", values="logit")[conds]
    x = np.arange(len(conds))
    colors = style.judge_colors(wide.index.get_level_values("judge"))
    for judge, block in wide.groupby(level="judge"):
        color = colors[str(judge)]
        ax.plot(x, block.to_numpy().T, alpha=0.35, lw=1, color=color)
        ax.plot([], [], color=color, label=str(judge))
    ax.axhline(0, color="k", lw=0.8)
    ax.set_xticks(x, conds, rotation=20)
    ax.set_ylabel("canonical log-odds m")
    n = wide.index.get_level_values("judge").nunique()
    ax.legend(
        title="judge", frameon=False, ncols=min(n, 4), loc="lower center", bbox_to_anchor=(0.5, 1.0)
    )
    return ax


def plot_verdict_mass(
    panel: pd.DataFrame, ax: Axes | None = None, threshold: float = ANALYSIS.min_verdict_mass
) -> Axes:
    """Histogram of ``verdict_mass = P("A") + P("B")`` (share of the vocabulary on the verdicts).

    Parameters
    ----------
    panel : DataFrame
        Output of :func:`judgerisk.extract.extract_logprobs` (needs ``verdict_mass``).
    ax : matplotlib Axes, optional
    threshold : float, default ``ANALYSIS.min_verdict_mass``
        The low-mass warning threshold of the extractor, drawn as a dashed line.

    Returns
    -------
    matplotlib.axes.Axes
        On the log10 scale: a judge that answers with a verdict token sits near 0.
    """
    if "verdict_mass" not in panel.columns:
        raise ValueError("panel has no 'verdict_mass' column (not an extraction output?)")
    ax = ax or style.subplots(height=3, width=5)[1]
    mass = np.log10(np.clip(panel["verdict_mass"].to_numpy(float), 1e-12, 1.0))
    bins = np.linspace(min(-3.0, np.floor(mass.min())), 0.0, 41)
    colors = style.judge_colors(panel["judge"])
    for judge, block in pd.Series(mass, index=panel.index).groupby(panel["judge"]):
        ax.hist(block, bins=list(bins), alpha=0.6, label=str(judge), color=colors[str(judge)])
    ax.axvline(np.log10(threshold), color="k", ls="--", lw=0.8)
    ax.set_xlabel('log10 verdict mass  log10(P("A") + P("B"))')
    ax.set_ylabel("prompts")
    ax.legend(title="judge", frameon=False)
    return ax
