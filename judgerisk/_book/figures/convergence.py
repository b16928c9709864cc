"""Plot of :func:`judgerisk._book.studies.convergence.margin_curve`: the margin against the repetitions."""

from __future__ import annotations

from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from judgerisk._plots import style

__all__ = ["plot_margin_curve"]

_PROTOCOL_LABELS = {
    "kfold": "repeated 5-fold cross-fitting",
    "paper": "the paper's random splits",
}


def plot_margin_curve(curves: dict[str, pd.DataFrame], axes: Any = None) -> plt.Figure:
    """SCUR's margin over the strongest baseline with its 95 % interval, against R.

    Parameters
    ----------
    curves : dict of str -> pandas.DataFrame
        Panel name -> :func:`judgerisk._book.studies.convergence.margin_curve` output; one column of
        panels per entry.
    axes : sequence of matplotlib Axes, optional

    Returns
    -------
    matplotlib.figure.Figure
        One panel per dataset: per protocol, the margin (marker) and its interval (bar) at
        each number of repetitions R (K-fold: R evaluations per item; the paper's protocol: R
        random splits); the dashed line is no difference.
    """
    if axes is None:
        fig, axes = style.subplots(len(curves), 1, height=2.9 * len(curves), squeeze=False)
        axes = axes.ravel()
    else:
        axes = np.atleast_1d(axes)
        fig = axes[0].figure
    colors = {"kfold": "C0", "paper": "C1"}
    for ax, (name, curve) in zip(axes, curves.items(), strict=True):
        for k, (protocol, g) in enumerate(curve.groupby("protocol", sort=False)):
            x = g["n_repeats"].to_numpy() * (1 + 0.03 * (k - 0.5))  # side by side
            y = g["diff"].to_numpy()
            err = np.vstack([y - g["low"].to_numpy(), g["high"].to_numpy() - y])
            ax.errorbar(
                x,
                y,
                yerr=err,
                fmt="o-",
                color=colors[protocol],
                capsize=2,
                label=_PROTOCOL_LABELS.get(protocol, protocol),
            )
        ax.axhline(0.0, color="0.4", linestyle="--", linewidth=0.8)
        ax.set_xscale("log")
        ticks = sorted(curve["n_repeats"].unique())
        ax.set_xticks(ticks, [str(t) for t in ticks])
        ax.minorticks_off()
        ax.set_xlabel("repetitions R (K-fold: evaluations per item) / random splits (paper)")
        base = style.label(str(curve["baseline"].iloc[0]))
        ax.set_ylabel(f"AUROC(SCUR) - AUROC({base})")
        ax.set_title(name)
        ax.legend(fontsize="small")
    return fig
