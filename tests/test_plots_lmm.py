"""The latent measurement model's figures: readable labels, legends clear of the data."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from judgerisk._book.figures.lmm import plot_loo_item  # noqa: E402


def _one_item(n_judges: int = 5, n_conditions: int = 6) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    rows = [
        {"judge": f"J{j}", "condition": f"c{c}", "p": rng.uniform(), "p_hat": rng.uniform()}
        for j in range(1, n_judges + 1)
        for c in range(n_conditions)
    ]
    return pd.DataFrame(rows)


def test_loo_item_labels_each_judge_once_and_keeps_the_legend_off_the_axes():
    pred = _one_item()
    ax = plot_loo_item(pred)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == ["J1", "J2", "J3", "J4", "J5"]  # not 30 judge · condition labels
    assert ax.get_legend() is None
    (legend,) = ax.figure.legends
    texts = {t.get_text() for t in legend.get_texts()}
    assert {"observed p", "LOJO p̂"} | {f"c{c}" for c in range(6)} == texts
    ax.figure.canvas.draw()
    renderer = ax.figure.canvas.get_renderer()  # type: ignore[attr-defined]
    box = legend.get_window_extent(renderer)
    assert box.y1 <= ax.get_window_extent(renderer).y0  # below the axes, not on the data
    plt.close(ax.figure)
