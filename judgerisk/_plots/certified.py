"""Figures for certified panel decisions and the panel report."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.lines import Line2D

from judgerisk._plots import style
from judgerisk._plots.tables import HEADERS

__all__ = [
    "plot_certified_summary",
    "plot_fdp_spread",
    "plot_score_distribution",
    "CERTIFIED_HEADERS",
    "certified_table",
    "validity_cells",
]

#: Line styles of the selectors in :func:`plot_certified_summary` (SCOPE solid).
_LINESTYLES: tuple[Any, ...] = ("-", ":", "-.", (0, (5, 1)))

#: Readable headers of :func:`judgerisk.engine.certified.summarize_certified` columns.
CERTIFIED_HEADERS = {
    **{k: HEADERS[k] for k in ("coverage_mean", "risk_mean", "risk_se")},
    "bound": "α + 4 s.e.",
    **{k: HEADERS[k] for k in ("pooled_risk", "abstain_all")},
    "valid": "guarantee met",
}


def _reported_methods(summary: pd.DataFrame, method: str | Sequence[str] | None) -> list[str]:
    """The selectors to show: ``method`` (one name or several), or by default those of
    :data:`judgerisk.selective.registry.REPORTED_SELECTORS` that ``summary`` holds (SCOPE and
    every selector registered beyond the built-ins)."""
    from judgerisk.selective.registry import REPORTED_SELECTORS

    present = set(summary.index.get_level_values("method"))
    if method is None:
        return [m for m in REPORTED_SELECTORS if m in present]
    return [method] if isinstance(method, str) else list(method)


def plot_certified_summary(
    summary: pd.DataFrame, method: str | Sequence[str] | None = None
) -> plt.Figure:
    """Coverage and mean test FDP against alpha, one line per score and selector.

    Parameters
    ----------
    summary : pandas.DataFrame
        :func:`judgerisk.engine.certified.summarize_certified` output (index score, method, alpha).
    method : str, sequence of str or None, default None
        Selectors shown; ``None``: SCOPE and every selector registered beyond the built-ins
        (:data:`judgerisk.selective.registry.REPORTED_SELECTORS`). A score keeps its colour;
        each selector after the first is drawn with its own line style and named in the legend.

    Returns
    -------
    matplotlib.figure.Figure
        Left: coverage (share of test items accepted). Right: mean FDP with ±2 Monte-Carlo
        standard errors and the diagonal FDP = alpha (the certified level).
    """
    methods = _reported_methods(summary, method)
    data = summary.reset_index()
    data = data[data["method"].isin(methods)]
    if data.empty:
        raise ValueError(f"no rows for method(s) {methods!r} in the summary")
    fig, (ax_c, ax_r) = style.subplots(1, 2, height=3.6)
    styles = {m: _LINESTYLES[k % len(_LINESTYLES)] for k, m in enumerate(methods)}
    for (m, name), sub in data.groupby(["method", "score"], sort=False):
        line = dict(color=style.color(name), linestyle=styles[m])
        ax_c.plot(sub["alpha"], sub["coverage_mean"], marker="o", **line)
        ax_r.errorbar(
            sub["alpha"], sub["risk_mean"], yerr=2 * sub["risk_se"], marker="o", capsize=3, **line
        )
    lim = [0, float(data["alpha"].max()) * 1.1]
    ax_r.plot(lim, lim, color="black", linestyle="--", linewidth=1)
    ax_c.set(xlabel="α (target FDR)", ylabel="coverage", title="Accepted share")
    ax_r.set(xlabel="α (target FDR)", ylabel="mean test FDP", title="Error rate among accepted")
    ax_c.set_ylim(0, 1.02)
    ax_r.set_ylim(bottom=0)
    # the legend: a colour per score, then (with several selectors) a line style per selector
    handles = [
        Line2D([], [], color=style.color(name), marker="o", label=name)
        for name in pd.unique(data["score"])
    ]
    if len(methods) > 1:
        handles += [
            Line2D([], [], color="0.3", linestyle=styles[m], label=style.label(m)) for m in methods
        ]
    handles += [Line2D([], [], color="black", linestyle="--", linewidth=1, label="FDP = α")]
    ncols = len(handles) if len(handles) <= 4 else (len(handles) + 1) // 2
    fig.legend(handles=handles, loc="outside lower center", ncols=ncols, frameon=False)
    return fig


def plot_fdp_spread(table: pd.DataFrame, method: str = "scope") -> plt.Figure:
    """Distribution of the per-split test FDP (box plots per alpha and score).

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`judgerisk.engine.certified.certify_panel` output (one row per split).
    method : str, default "scope"

    Returns
    -------
    matplotlib.figure.Figure
        The guarantee is on the *mean* (black diamonds); single splits may exceed alpha.
    """
    data = table[table["method"] == method].copy()
    if data.empty:
        raise ValueError(f"no rows for method {method!r}")
    data["alpha"] = data["alpha"].round(3).astype(str)
    fig, ax = style.subplots(height=4)
    hues = list(pd.unique(data["score"]))
    sns.boxplot(
        data=data,
        x="alpha",
        y="risk",
        hue="score",
        hue_order=hues,
        palette={h: style.color(h) for h in hues},
        ax=ax,
        fliersize=1,
        linewidth=0.8,
    )
    means = data.groupby(["alpha", "score"], sort=False)["risk"].mean().reset_index()
    sns.pointplot(
        data=means,
        x="alpha",
        y="risk",
        hue="score",
        hue_order=hues,
        ax=ax,
        dodge=0.53,
        linestyle="none",
        markers="D",
        palette=["black"] * means["score"].nunique(),
        legend=False,
    )
    for k, a in enumerate(sorted(data["alpha"].unique(), key=float)):
        ax.hlines(float(a), k - 0.45, k + 0.45, color="black", linestyle="--", linewidth=1)
    ax.set(xlabel="α", ylabel="test FDP per split", title="FDP over calibration / test splits")
    handles, names = ax.get_legend_handles_labels()
    ax.get_legend().remove()
    fig.legend(
        handles[: len(hues)],
        names[: len(hues)],
        loc="outside lower center",
        ncols=len(hues),
        frameon=False,
    )
    return fig


#: Colour of the items without a gold label in :func:`plot_score_distribution`.
NO_GOLD_COLOR = "#9e9e9e"


def plot_score_distribution(
    scores: pd.DataFrame, column: str = "scur", error: pd.Series | None = None
) -> plt.Figure:
    """Histogram of a per-item risk score, split by error when labels are known.

    Parameters
    ----------
    scores : pandas.DataFrame
        :func:`judgerisk.engine.certified.score_panel` output (indexed by item).
    column : str, default "scur"
    error : pandas.Series of bool, optional
        By item; colours the histogram (panel verdict wrong / right). Items it does not
        hold (no gold label) are their own group, "no gold", never counted as right or wrong.

    Returns
    -------
    matplotlib.figure.Figure
    """
    values = pd.to_numeric(scores[column], errors="coerce")
    frame = pd.DataFrame({column: values})
    fig, ax = style.subplots(height=3.4)
    bins = np.linspace(np.nanmin(values), np.nanmax(values) + 1e-12, 31)
    if error is not None:
        known = pd.to_numeric(error.reindex(frame.index), errors="coerce")  # bool or 0/1
        frame["verdict"] = np.where(
            known.isna(), "no gold", np.where(known.fillna(0) > 0, "wrong", "right")
        )
        palette = {"right": style.color("correct"), "wrong": style.color("error")}
        palette["no gold"] = NO_GOLD_COLOR
        order = [v for v in ("right", "wrong", "no gold") if (frame["verdict"] == v).any()]
        sns.histplot(
            data=frame,
            x=column,
            hue="verdict",
            hue_order=order,
            bins=bins,
            stat="density",
            common_norm=False,
            element="step",
            palette={v: palette[v] for v in order},
            ax=ax,
        )
    else:
        sns.histplot(data=frame, x=column, bins=bins, ax=ax)
    ax.set(xlabel=style.label(column), title=f"Distribution of {style.label(column)} over items")
    return fig


def certified_table(
    summary: pd.DataFrame, method: str | Sequence[str] | None = None
) -> pd.DataFrame:
    """The certified selectors' rows of a summary, the evidence of ``valid`` beside them.

    Adds the bound ``α + 4 s.e.`` (:func:`judgerisk.selective.protocol.within_guarantee`)
    that ``valid`` compares the mean FDP with, and prints the standard error with four
    significant digits (it is far below the table's usual three decimals).

    Parameters
    ----------
    summary : pandas.DataFrame
        :func:`judgerisk.engine.certified.summarize_certified` output (with a ``method`` level).
    method : str, sequence of str or None, default None
        Selectors shown; ``None``: SCOPE and every selector registered beyond the built-ins
        (:data:`judgerisk.selective.registry.REPORTED_SELECTORS`). With one selector the table
        has no selector level (SCOPE's rows); with several, a ``selector`` level names each by
        its display name (``guarantee met`` is ``–`` for a selector that certifies nothing).
    """
    from judgerisk.selective.protocol import VALID_SE

    methods = _reported_methods(summary, method)
    if len(methods) == 1:
        scope = summary.xs(methods[0], level="method").copy()
    else:
        scope = summary[summary.index.get_level_values("method").isin(methods)].copy()
        # each score's (data set's, verdict's) rows together, its selectors in ``methods`` order
        rest = scope.index.droplevel([n for n in ("method", "alpha") if n in scope.index.names])
        group = pd.factorize(rest)[0]
        rank = scope.index.get_level_values("method").map({m: k for k, m in enumerate(methods)})
        scope = scope.iloc[np.lexsort((np.arange(len(scope)), np.asarray(rank), group))]
        scope = scope.rename(index={m: style.label(m) for m in methods}, level="method")
    alpha = scope.index.get_level_values("alpha").to_numpy(float)
    scope["bound"] = alpha + VALID_SE * scope["risk_se"].fillna(0.0)
    # fixed decimals in the column (4: one more than the bound's, whose 4 s.e. it sets)
    scope["risk_se"] = scope["risk_se"].map(lambda v: f"{v:.4f}" if pd.notna(v) else "–")
    table = scope[list(CERTIFIED_HEADERS)].rename(columns=CERTIFIED_HEADERS)
    table.index = table.index.set_names(
        [
            {"alpha": "α", "score": "score", "dataset": "data set", "method": "selector"}.get(n, n)
            for n in table.index.names
        ]
    )
    return table


def validity_cells(summary: pd.DataFrame) -> pd.DataFrame:
    """One cell per α: ``"0.062 ≤ 0.104"``, the mean test FDP against its bound ``α + 4 s.e.``.

    Rows are the other index levels of :func:`certified_table` (data set, verdict, score), so a
    60-cell check fits in a table of a dozen rows that shows every cell's evidence.
    """
    table = certified_table(summary)
    fdp, bound = table["mean test FDP"], table["α + 4 s.e."]
    sign = np.where(fdp <= bound, "≤", ">")
    cells = pd.Series(
        [f"{f:.3f} {s} {b:.3f}" for f, s, b in zip(fdp, sign, bound, strict=True)],
        index=table.index,
    )
    cells = cells.unstack("α")
    cells.columns = [f"{a:.3f}" for a in cells.columns]  # as format_table prints an α header
    cells.columns.name = "α"
    return cells
