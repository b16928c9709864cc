"""Figures for selective judging: reliability diagrams and risk / coverage curves over alpha."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from judgerisk._plots import style
from judgerisk.selective.metrics import reliability_table

__all__ = ["reliability_diagrams", "risk_coverage_curves"]


def reliability_diagrams(
    signals: dict, correct: npt.ArrayLike, n_bins: int = 10, title: str | None = None
) -> Figure:
    """One reliability diagram per confidence signal.

    Parameters
    ----------
    signals : dict of name -> confidence array (or an object with a ``confidence`` attribute)
    correct : array-like of bool
        Whether each verdict is right (per signal: a dict of arrays, or one shared array).
    n_bins : int, default 10
    title : str, optional

    Returns
    -------
    matplotlib.figure.Figure
        Bars = accuracy per bin, dots = mean confidence, dashed diagonal = perfect calibration;
        bar labels give the bin counts.
    """
    names = list(signals)
    nrows, ncols = style.grid_shape(len(names))
    fig, grid = style.subplots(nrows, ncols, height=3.1 * nrows + 0.4, squeeze=False, sharey=True)
    for ax in grid.ravel()[len(names) :]:
        ax.set_axis_off()
    axes = grid.ravel()[: len(names)]
    for ax, name in zip(axes, names, strict=True):
        conf = getattr(signals[name], "confidence", signals[name])
        corr = correct[name] if isinstance(correct, dict) else correct
        tab = reliability_table(conf, corr, n_bins)
        used = tab[tab["n"] > 0]
        width = 1.0 / n_bins
        bars = ax.bar(
            used["lower"] + width / 2,
            used["accuracy"],
            width=width * 0.9,
            color=style.color(name),
            alpha=0.7,
            label="accuracy",
        )
        ax.bar_label(bars, labels=used["n"].astype(str).tolist(), fontsize=style.MIN_FONT)
        ax.plot(
            used["confidence"],
            used["confidence"],
            "o",
            color="black",
            ms=4,
            label="mean confidence",
        )
        ax.plot([0, 1], [0, 1], "--", color="grey", lw=1)
        ax.set(xlim=(0, 1), ylim=(0, 1.12), xlabel="confidence", title=style.label(name))
        ax.set_ylabel("accuracy in bin")
    # Each panel's bars have its signal's colour: the legend's swatch is neutral, so that it
    # matches every panel, and it goes into the empty grid cell when there is one.
    handles = [
        Patch(facecolor="lightgrey", edgecolor="grey", label="accuracy in bin (bar)"),
        Line2D([], [], ls="", marker="o", color="black", ms=4, label="mean confidence"),
        Line2D([], [], ls="--", color="grey", lw=1, label="perfect calibration"),
    ]
    spare = grid.ravel()[len(names) :]
    if len(spare):
        spare[0].legend(handles=handles, loc="center", frameon=False)
    else:
        fig.legend(handles=handles, loc="outside lower center", ncols=3, frameon=False)
    if title:
        fig.suptitle(title)
    return fig


def _coincides(a: pd.Series, b: pd.Series) -> bool:
    """Whether two curves over the same alphas are drawn on top of each other."""
    a, b = a.align(b, join="outer")
    return bool(np.allclose(a.to_numpy(float), b.to_numpy(float), atol=1e-3, equal_nan=True))


def risk_coverage_curves(
    summary: pd.DataFrame, methods: Sequence[str] | None = None, title: str | None = None
) -> Figure:
    """Mean risk (FDP) and coverage against alpha with ±1 standard deviation bands.

    Parameters
    ----------
    summary : pandas.DataFrame
        Output of :func:`judgerisk.selective.protocol.summarize_protocol` (index: method, alpha).
    methods : sequence of str, optional
        Methods to draw (default: all in ``summary``).
    title : str, optional

    Returns
    -------
    matplotlib.figure.Figure
        Left: risk vs alpha with the target line risk = alpha; right: coverage vs alpha.
    """
    methods = list(methods or summary.index.get_level_values("method").unique())
    fig, (ax_r, ax_c) = style.subplots(1, 2, height=3.6)
    alphas = np.unique(summary.index.get_level_values("alpha"))
    drawn: list[str] = []
    for m in methods:
        s = summary.loc[m]
        # a method whose curves lie under an earlier one's is drawn dashed and says so,
        # instead of a legend entry for a line the reader cannot see
        under = next(
            (
                o
                for o in drawn
                if all(
                    _coincides(s[f"{c}_mean"], summary.loc[o][f"{c}_mean"])
                    for c in ("risk", "coverage")
                )
            ),
            None,
        )
        name = style.label(m) + (f" (same as {style.label(under)})" if under else "")
        drawn.append(m)
        for ax, col in ((ax_r, "risk"), (ax_c, "coverage")):
            mean, sd = s[f"{col}_mean"], s[f"{col}_std"].fillna(0.0)
            (line,) = ax.plot(
                s.index,
                mean,
                marker="o",
                ms=3,
                ls="--" if under else "-",
                label=name,
                color=style.color(m),
            )
            lo = np.clip(mean - sd, 0.0, 1.0)  # rates: the band is clipped to [0, 1]
            hi = np.clip(mean + sd, 0.0, 1.0)
            ax.fill_between(s.index, lo, hi, color=line.get_color(), alpha=0.15)
    ax_r.plot(alphas, alphas, "k--", lw=1, label="target α")
    ax_r.set(xlabel="α", ylabel="test risk (FDP), mean ± 1 sd")
    ax_r.set_ylim(bottom=0)
    ax_c.set(xlabel="α", ylabel="coverage, mean ± 1 sd", ylim=(-0.02, 1.02))
    handles, labels = ax_r.get_legend_handles_labels()
    fig.legend(
        handles, labels, loc="outside lower center", ncols=min(len(labels), 4), frameon=False
    )
    if title:
        fig.suptitle(title)
    return fig
