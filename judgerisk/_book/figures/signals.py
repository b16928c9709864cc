"""Figures of the SCUR risk signals: one item's evidence, signal distributions, top risks."""

from __future__ import annotations

import textwrap
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from judgerisk._plots import style
from judgerisk.risk.registry import COMPONENTS

__all__ = [
    "plot_item_walkthrough",
    "plot_signal_distributions",
    "plot_risk_reasons",
    "plot_scur_by_outcome",
]

# the normalised signals take the colour of their raw component (style module); S is the
# larger of the two sensitivity families
_Z_COLORS = {
    "z_U": style.color("U"),
    "z_C": style.color("C"),
    "z_S": style.color("S_order"),
    "scur": style.color("scur"),
}
_Z_LABELS = {"z_U": "$z^U$", "z_C": "$z^C$", "z_S": "$z^S$", "scur": "SCUR"}


def _fmt_risk(v: float) -> str:
    """Three decimals, or ``1-1.2e-05`` style when the value rounds to 1."""
    return f"1-{1 - v:.1e}" if 0.9995 <= v < 1 else f"{v:.3f}"


def _heatmap(frame: pd.DataFrame, ax, title: str) -> None:
    """Judge x condition probabilities on a diverging scale centred at .5, annotated."""
    values = frame.to_numpy(dtype=np.float64)
    ax.imshow(np.ma.masked_invalid(values), cmap="RdBu_r", vmin=0, vmax=1, aspect="auto")
    for (r, c), v in np.ndenumerate(values):
        if not np.isnan(v):
            color = "white" if abs(v - 0.5) > 0.3 else "black"
            ax.text(
                c, r, f"{v:.2f}", ha="center", va="center", fontsize=style.MIN_FONT, color=color
            )
    ax.set_xticks(
        range(values.shape[1]),
        [str(c) for c in frame.columns],
        rotation=35,
        ha="right",
        fontsize=style.MIN_FONT,
    )
    ax.set_yticks(range(values.shape[0]), [str(j) for j in frame.index])
    ax.set(xlabel="condition", ylabel="judge")
    ax.set_title(title, parse_math=True)  # the one label in math (the judges are text)


def plot_item_walkthrough(explanation: Any) -> plt.Figure:
    """One item's responses, its held-out predictions, and its z's and SCUR.

    Parameters
    ----------
    explanation : judgerisk.risk.explain.ItemExplanation
        Output of :func:`judgerisk.risk.explain.explain`.

    Returns
    -------
    matplotlib.figure.Figure
        Left: observed canonical P(original A wins), judge x condition. Middle: the
        leave-one-judge-out predictions. Right: the item's z's and SCUR.
    """
    style.use_style()
    fig = plt.figure(figsize=(style.COLUMN_WIDTH, 6.4), layout="constrained")
    mosaic = fig.subplot_mosaic([["obs", "pred"], ["z", "z"]], height_ratios=[3, 2])
    axes = [mosaic["obs"], mosaic["pred"], mosaic["z"]]
    _heatmap(explanation.responses, axes[0], "observed $p_{ijc}$")
    _heatmap(explanation.predicted, axes[1], r"held-out prediction $\hat p_{ijc}$")
    keys = ["z_U", "z_C", "z_S", "scur"]
    vals = explanation.scores.reindex(keys)
    ax = axes[2]
    ax.barh(range(len(keys)), vals.fillna(0).to_numpy(), color=[_Z_COLORS[k] for k in keys])
    ax.set_yticks(range(len(keys)), [_Z_LABELS[k] for k in keys], parse_math=True)
    for y, v in enumerate(vals.to_numpy()):
        if np.isnan(v):
            ax.text(0.02, y, "dropped", va="center", fontsize=style.MIN_FONT)
        else:
            ax.text(
                max(v - 0.02, 0.2),
                y,
                _fmt_risk(v),
                va="center",
                ha="right",
                fontsize=style.MIN_FONT,
                color="white",
            )
    ax.invert_yaxis()
    ax.set(xlim=(0, 1), title=f"item {explanation.item} ({explanation.split})")
    fig.suptitle(textwrap.fill(explanation.reason, 90), fontsize=style.MIN_FONT)
    return fig


def plot_signal_distributions(table: pd.DataFrame) -> plt.Figure:
    """Histograms of the raw signals (first two rows) and of their reference-normalised z's.

    Parameters
    ----------
    table : pandas.DataFrame
        :attr:`judgerisk.risk.scur.ScurResult.table`; reference and evaluation items are
        drawn in separate colours.

    Returns
    -------
    matplotlib.figure.Figure
        One panel per raw component of the table (U, C, then one S per reported
        perturbation family), then z_U, z_C, z_S and SCUR. A component that is absent (all
        NaN) is shown as an empty, labelled panel.
    """
    top = [c for c in COMPONENTS if c in table.columns]  # U, C and the reported families
    bottom = ["z_U", "z_C", "z_S", "scur"]
    if len(top) % 2:  # the z's start on a row of their own
        top.append("")
    nrows, _ = style.grid_shape(len(top) + len(bottom))
    fig, axes = style.subplots(nrows, 2, height=2.25 * nrows)
    for ax, col in zip(axes.ravel(), top + bottom, strict=True):
        if not col:
            ax.set_axis_off()
            continue
        data = table.loc[table[col].notna(), [col, "split"]]
        if data.empty:
            ax.text(0.5, 0.5, f"{col}: absent or dropped", ha="center", va="center")
            ax.set_axis_off()
            continue
        bins: list[float] | int = np.linspace(0, 1, 21).tolist() if col in bottom else 30
        for split in ("reference", "evaluation"):
            color = style.color(split)
            x = data.loc[data["split"] == split, col]
            if len(x):
                ax.hist(
                    x,
                    bins=bins,
                    color=color,
                    alpha=0.55,
                    density=True,
                    label=split,
                    histtype="stepfilled",
                )
        title = _Z_LABELS.get(col, style.label(col))
        ax.set(ylabel="density" if col in ("U", "S_order", "z_U", "z_S") else None)
        ax.set_title(title, parse_math=True)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=2, frameon=False)
    raw_rows = len(top) // 2
    fig.suptitle(
        f"raw signals (rows 1–{raw_rows}) and their reference ECDF values z "
        f"(rows {raw_rows + 1}–{raw_rows + 2})"
    )
    return fig


def plot_risk_reasons(top: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """Grouped bars of z_U, z_C, z_S per item for a Table-2-like list of risky items.

    Parameters
    ----------
    top : pandas.DataFrame
        Output of :func:`judgerisk.risk.explain.riskiest` (indexed by item, with ``z_U, z_C,
        z_S, scur``).
    ax : matplotlib.axes.Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    ax = ax or style.subplots(height=0.45 * len(top) + 1.4)[1]
    keys = ["z_U", "z_C", "z_S"]
    y = np.arange(len(top))
    h = 0.26
    for k, key in enumerate(keys):
        ax.barh(
            y + (k - 1) * h,
            top[key].fillna(0).to_numpy(),
            height=h,
            color=_Z_COLORS[key],
            label=_Z_LABELS[key],
        )
    labels = [f"{i} (SCUR {_fmt_risk(s)})" for i, s in zip(top.index, top["scur"], strict=True)]
    ax.set_yticks(y, labels)
    ax.invert_yaxis()
    ax.axvline(0.9, color="grey", ls=":", lw=1)
    ax.set(xlim=(0, 1), xlabel="z (reference ECDF)", ylabel="item")
    legend = ax.legend(
        loc="lower center",
        bbox_to_anchor=(0.5, 1.0),
        ncols=3,
        fontsize=style.MIN_FONT,
        frameon=False,
    )
    for text in legend.get_texts():  # z^U, z^C, z^S in math (the items are text)
        text.set_parse_math(True)
    return ax


def plot_scur_by_outcome(
    scores: pd.Series, errors: pd.Series, rank: bool = False, ax: Axes | None = None
) -> Axes:
    """Distribution of a risk score for correct and wrong panel verdicts.

    Parameters
    ----------
    scores : pandas.Series
        Risk score by item (e.g. SCUR of the evaluation items).
    errors : pandas.Series
        1 where the panel verdict is wrong, by item (aligned on the index).
    rank : bool, default False
        Plot the score's percentile rank among the given items (ties averaged) instead
        of the score; useful for SCUR, whose values crowd near 1.
    ax : matplotlib.axes.Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    ax = ax or style.subplots(height=3.2, width=5.5)[1]
    err = errors.reindex(scores.index)
    if err.isna().any():
        missing = list(scores.index[err.isna()][:10])
        raise ValueError(f"errors has no value for item(s) {missing}")
    name = scores.name or "risk score"
    if rank:
        scores = scores.rank(pct=True)
        name = f"percentile rank of {name}"
    bins = np.linspace(0, 1, 26)
    for label, color, mask in (
        ("verdict right", style.color("correct"), err.to_numpy() == 0),
        ("verdict wrong", style.color("error"), err.to_numpy() == 1),
    ):
        x = scores.to_numpy()[mask]
        if len(x):
            ax.hist(
                x,
                bins=list(bins),
                density=True,
                alpha=0.6,
                color=color,
                label=f"{label} (n={len(x)})",
                histtype="stepfilled",
            )
    ax.set(xlabel=name, ylabel="density", xlim=(0, 1))
    ax.legend(fontsize=style.MIN_FONT)
    return ax
