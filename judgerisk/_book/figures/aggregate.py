"""Figures of the aggregation analyses: retention curves per aggregator, gains, disagreement."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.axes import Axes

from judgerisk._plots import style
from judgerisk.aggregators.aggregate import AGGREGATORS
from judgerisk.risk.registry import COMPARED

__all__ = [
    "plot_retention_curves",
    "plot_retention_by_method",
    "plot_disagreement",
]


def _present(values: pd.Series, preferred: Sequence[str]) -> list[str]:
    have = set(values)
    return [v for v in preferred if v in have] + sorted(have - set(preferred))


def plot_retention_curves(
    table: pd.DataFrame,
    method: str = "scur",
    ax: Axes | None = None,
    band: bool = True,
    *,
    by: str = "aggregator",
    aggregator: str = "majority",
) -> plt.Figure:
    """Figure-5-like plot: accuracy of the kept decisions against the kept share.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`judgerisk.engine.retention.retention_analysis` output (one row per seed, aggregator,
        method, rho).
    method : str, default "scur"
        With ``by="aggregator"``: the risk score that orders the items.
    ax : matplotlib Axes, optional
        Where to draw; a new figure otherwise.
    band : bool, default True
        Shade mean ± one standard deviation over seeds.
    by : {"aggregator", "method"}, default "aggregator"
        One line per aggregation rule (items ordered by ``method``), or one line per risk score
        (verdicts of ``aggregator``).
    aggregator : str, default "majority"
        With ``by="method"``: the rule whose verdicts are kept.

    Returns
    -------
    matplotlib.figure.Figure
    """
    if by not in ("aggregator", "method"):
        raise ValueError(f"by must be 'aggregator' or 'method', got {by!r}")
    fixed, value = ("method", method) if by == "aggregator" else ("aggregator", aggregator)
    sub = table[table[fixed].eq(value)]
    if sub.empty:
        raise ValueError(f"no rows for {fixed} {value!r}")
    if ax is None:
        fig, ax = style.subplots(height=4.0, width=6.8)
    else:
        fig = ax.figure  # type: ignore[assignment]  # a Figure here, not a SubFigure
    for line in _present(sub[by], AGGREGATORS if by == "aggregator" else COMPARED):
        g = sub[sub[by].eq(line)].groupby("rho")["accuracy"]
        mean, sd = g.mean(), g.std().fillna(0.0)
        x = 100 * mean.index.to_numpy()
        color = style.color(line)
        ax.plot(x, 100 * mean.to_numpy(), marker="o", label=style.label(line), color=color)
        if band:
            ax.fill_between(
                x,
                100 * (mean - sd).to_numpy(),
                100 * (mean + sd).to_numpy(),
                alpha=0.15,
                color=color,
                linewidth=0,
            )
    ax.invert_xaxis()
    ax.set_xlabel("kept decisions, lowest risk first (%)")
    ax.set_ylabel("accuracy of kept decisions (%)")
    lines = "aggregation rule" if by == "aggregator" else "risk score"
    ax.set_title(f"Retention by {style.label(value)}, per {lines}")
    ax.grid(alpha=0.3)
    # right of the axes, so that it never covers a curve or its band
    ax.legend(frameon=False, fontsize=style.MIN_FONT, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return fig


def plot_retention_by_method(
    table: pd.DataFrame, rhos: Sequence[float] = (0.8, 0.5), methods: Sequence[str] | None = None
) -> plt.Figure:
    """Mean gain (points) at the given kept shares, per risk score and aggregator.

    One panel per ρ; bars grouped by aggregator, one bar per risk score, error bars = standard
    deviation over seeds.
    """
    methods = list(methods) if methods is not None else _present(table["method"], COMPARED)
    nrows, ncols = style.grid_shape(len(rhos))
    fig, axes = style.subplots(nrows, ncols, height=3.2 * nrows + 0.9, sharey=True, squeeze=False)
    axes = axes.ravel()
    for ax in axes[len(rhos) :]:
        ax.set_axis_off()
    for ax, rho in zip(axes, rhos, strict=True):
        sub = table[np.isclose(table["rho"], rho) & table["method"].isin(methods)].copy()
        if sub.empty:
            raise ValueError(f"no rows at rho={rho}")
        sub["gain (points)"] = 100 * sub["gain"]
        sub["score"] = sub["method"].map(style.label)
        sub["rule"] = sub["aggregator"].map(lambda a: style.label(a))
        order = [style.label(a) for a in _present(sub["aggregator"], AGGREGATORS)]
        sns.barplot(
            data=sub,
            x="rule",
            y="gain (points)",
            hue="score",
            palette=style.palette(methods),
            order=order,
            hue_order=[style.label(m) for m in methods],
            errorbar="sd",
            ax=ax,
        )
        ax.set_title(f"keep the lowest-risk {round(100 * rho)} %")
        ax.set_xlabel("")
        ax.tick_params(axis="x", labelrotation=20)
        ax.axhline(0, color="black", linewidth=0.8)
        ax.grid(axis="y", alpha=0.3)
        ax.get_legend().remove()
    handles, names = axes[0].get_legend_handles_labels()
    fig.legend(handles, names, loc="outside lower center", ncols=min(len(names), 5), frameon=False)
    return fig


def plot_disagreement(matrix: pd.DataFrame, ax: Axes | None = None) -> plt.Figure:
    """Heat map of the share of items on which two aggregators disagree (in %).

    Parameters
    ----------
    matrix : pandas.DataFrame
        :func:`judgerisk.aggregators.aggregate.disagreement` output.
    """
    if ax is None:
        fig, ax = style.subplots(height=4.0, width=4.8)
    else:
        fig = ax.figure  # type: ignore[assignment]  # a Figure here, not a SubFigure
    labels = [style.label(a) for a in matrix.index]
    sns.heatmap(
        100 * matrix.to_numpy(),
        annot=True,
        fmt=".1f",
        cmap="Blues",
        square=True,
        xticklabels=labels,
        yticklabels=labels,
        cbar_kws={"label": "% items"},
        ax=ax,
    )
    ax.set_title("Verdict disagreement between aggregators")
    return fig
