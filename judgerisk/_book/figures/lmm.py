"""Figures for the latent measurement model: convergence, recovery, residual scale, LOJO."""

from __future__ import annotations

from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.lines import Line2D

from judgerisk._plots import style
from judgerisk.risk.lmm import LatentMeasurementModel, align_to_reference

__all__ = [
    "plot_convergence",
    "plot_recovery",
    "plot_residual_scale",
    "plot_loo_item",
    "plot_drift",
]


def plot_convergence(models: dict[str, LatentMeasurementModel], ax: Axes | None = None) -> Axes:
    """Relative change of the criterion per sweep, for every restart of each model.

    Parameters
    ----------
    models : dict of str -> fitted LatentMeasurementModel
        E.g. ``{"plain sweeps": lmm, "Anderson": lmm_fast}``.
    """
    ax = ax or style.subplots(height=3.2, width=6)[1]
    colors = list(style.judge_colors(range(10)).values())
    for k, (name, lmm) in enumerate(models.items()):
        for r, hist in lmm.histories_.items():
            prev = np.concatenate([[np.nan], hist.to_numpy()[:-1]])
            rel = np.abs(hist.to_numpy() - prev) / np.abs(prev)
            ax.plot(
                hist.index,
                rel,
                color=colors[k % len(colors)],
                alpha=0.9 - 0.25 * r,
                lw=1.2,
                label=name if r == 0 else None,
            )
    style.log_scale(ax)
    tol = next(iter(models.values())).tol_obj
    ax.axhline(tol, color="grey", ls=":", lw=1)
    ax.text(ax.get_xlim()[1], tol, " tol_obj", va="center", fontsize=style.MIN_FONT, color="grey")
    ax.set(xlabel="sweep", ylabel="relative change of the criterion")
    ax.legend(fontsize=style.MIN_FONT)
    return ax


def plot_recovery(lmm: LatentMeasurementModel, truth: Any, axes: Any = None) -> Any:
    """Fitted against true q, a and b after aligning the latent scale (three panels: q on top,
    a and b below, so that no more than two panels sit side by side).

    ``truth`` has ``q``, ``a`` and ``b`` Series (e.g. a simulator's ``SimulationTruth``);
    the fitted values are mapped with :func:`judgerisk.risk.lmm.align_to_reference` first.
    """
    if axes is None:
        style.use_style()
        fig = plt.figure(figsize=(style.COLUMN_WIDTH, 6.2), layout="constrained")
        mosaic = fig.subplot_mosaic([["q", "q"], ["a", "b"]])
        axes = [mosaic["q"], mosaic["a"], mosaic["b"]]
    q, a, b = align_to_reference(lmm.q_, lmm.a_, lmm.b_, truth.q)
    pairs = [
        ("q (items)", truth.q.loc[q.index], q),
        ("a (judges)", truth.a.loc[a.index], a),
        ("b (judges)", truth.b.loc[b.index], b),
    ]
    for ax, (name, true, est) in zip(axes, pairs, strict=True):
        ax.scatter(true, est, s=6 if len(true) > 50 else 30, alpha=0.5 if len(true) > 50 else 1)
        lo = float(min(true.min(), est.min()))
        hi = float(max(true.max(), est.max()))
        ax.plot([lo, hi], [lo, hi], color="grey", ls=":", lw=1)
        r = np.corrcoef(true, est)[0, 1]
        ax.set(xlabel=f"true {name}", ylabel="fitted (aligned)", title=f"{name}: r = {r:.3f}")
    return axes


def plot_residual_scale(
    lmm: LatentMeasurementModel, truth_sigma: pd.Series | None = None, ax: Axes | None = None
) -> Axes:
    """Residual scale sigma_j per judge, with the simulator's noise sd when given."""
    ax = ax or style.subplots(height=3, width=5)[1]
    x = np.arange(len(lmm.sigma_))
    ax.bar(
        x - 0.2,
        lmm.sigma_.to_numpy(),
        width=0.4,
        label="fitted residual sd σ",
        color=style.color("pe"),
    )
    if truth_sigma is not None:
        ax.bar(
            x + 0.2,
            truth_sigma.loc[lmm.sigma_.index].to_numpy(),
            width=0.4,
            label="simulator noise sd",
            color=style.color("U"),
        )
    ax.set_xticks(x, lmm.sigma_.index.astype(str))
    ax.set(xlabel="judge", ylabel="logits")
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncols=2, frameon=False)
    return ax


def plot_loo_item(pred: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """Observed p against the held-out prediction p_hat for the cells of one item.

    One row per cell, grouped by judge (one axis label per judge, not per cell); the
    condition is shown by colour, the observed p by a dot and p_hat by a cross, joined by a
    grey line. The legend sits below the axes, clear of the data.

    Parameters
    ----------
    pred : pandas.DataFrame
        The part of :meth:`LatentMeasurementModel.predict_loo`'s output for one item
        (columns ``judge``, ``condition``, ``p``, ``p_hat``).
    ax : matplotlib.axes.Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    pred = pred.sort_values(["judge", "condition"], kind="stable")
    judges = list(dict.fromkeys(pred["judge"].astype(str)))
    conditions = sorted(pred["condition"].astype(str).unique())
    cond_color = dict(zip(conditions, style.judge_colors(conditions).values(), strict=True))
    gap = 0.8  # blank space between two judges' groups of rows
    y, ticks, pos = [], [], 0.0
    for judge in judges:
        n = int((pred["judge"].astype(str) == judge).sum())
        y += [pos + k for k in range(n)]
        ticks.append(pos + (n - 1) / 2)
        pos += n + gap
    height = 0.11 * pos + 1.6
    ax = ax or style.subplots(height=height)[1]
    ys = np.asarray(y)
    for yy, p, ph in zip(ys, pred["p"], pred["p_hat"], strict=True):
        ax.plot([p, ph], [yy, yy], color="grey", lw=0.8, zorder=1)
    colors = [cond_color[c] for c in pred["condition"].astype(str)]
    ax.scatter(pred["p"], ys, c=colors, marker="o", s=22, zorder=2)
    ax.scatter(pred["p_hat"], ys, c=colors, marker="x", s=26, zorder=2)
    ax.axvline(0.5, color="grey", ls=":", lw=1)
    ax.set_yticks(ticks, judges)
    ax.invert_yaxis()
    ax.set(xlim=(-0.02, 1.02), xlabel="P(original answer A wins)", ylabel="judge")
    handles = [
        Line2D([], [], color="black", marker="o", ls="", label="observed p"),
        Line2D([], [], color="black", marker="x", ls="", label="LOJO p̂"),
    ] + [Line2D([], [], color=cond_color[c], marker="s", ls="", label=c) for c in conditions]
    ax.figure.legend(
        handles=handles,
        loc="outside lower center",
        ncols=4,
        fontsize=style.MIN_FONT,
        frameon=False,
    )
    return ax


def plot_drift(drifts: dict[str, Any], tol_obj: float = 1e-7, axes: Any = None) -> Any:
    """Where the paper's plain sweeps sit along the drift, and what the stopping rule sees.

    Left: ``|offset|``, the distance along ``q -> q + t, b -> b - a t`` from the sweep
    map's fixed point, per sweep. Right: the relative change of the criterion per sweep
    (one of the rule's three quantities) with its tolerance.

    Parameters
    ----------
    drifts : dict of str -> judgerisk._book.studies.drift.SweepDrift
        E.g. one per share of missing cells.
    tol_obj : float, default 1e-7
        The rule's tolerance on the relative criterion change (dotted line).
    """
    if axes is None:
        axes = style.subplots(1, 2, height=3.4)[1]
    for name, drift in drifts.items():
        tr = drift.trace
        axes[0].plot(tr.index, tr["offset"].abs(), lw=1.3, label=name)
        axes[1].plot(tr.index, tr["rel_criterion"], lw=1.0, label=name)
    for ax in axes[:2]:
        style.log_scale(ax)
    axes[0].set(xlabel="plain sweep", ylabel="|mean q − mean q*| (drift offset t)")
    axes[1].axhline(tol_obj, color="grey", ls=":", lw=1)
    axes[1].text(axes[1].get_xlim()[1], tol_obj, " tol_obj", va="center", fontsize=style.MIN_FONT)
    axes[1].set(xlabel="plain sweep", ylabel="relative change of the criterion")
    axes[0].legend(fontsize=style.MIN_FONT, title="missing cells", title_fontsize=style.MIN_FONT)
    return axes
