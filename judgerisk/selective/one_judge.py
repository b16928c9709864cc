"""One judge in both orders: BPE of every (item, judge) of a panel, and SCOPE's selection.

The per-item table of one judge in both orders: what ``judgerisk bpe`` writes and the one-judge
report shows (:func:`bpe_table`), from :func:`judgerisk.selective.confidence.bpe` and
:func:`judgerisk.selective.scope.scope_threshold`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from judgerisk.options import DEFAULT_ALPHA
from judgerisk.panel import PanelError, both_orders
from judgerisk.selective.confidence import bpe
from judgerisk.selective.scope import scope_threshold
from judgerisk.validation import check_alpha

__all__ = ["bpe_table"]


def bpe_table(
    panel: pd.DataFrame, calibration: pd.DataFrame | None = None, alpha: float = DEFAULT_ALPHA
) -> pd.DataFrame:
    r"""BPE of every (item, judge) seen in both orders and, with labels, SCOPE's selection.

    Parameters
    ----------
    panel : pandas.DataFrame
        A panel with ``original`` and ``swap`` conditions (one judge or several, each alone).
    calibration : pandas.DataFrame, optional
        ``item, gold`` ("A"/"B") of labelled items; they calibrate SCOPE's threshold
        :math:`\hat\lambda` (:func:`judgerisk.selective.scope_threshold`) per judge, and the
        other items are accepted iff :math:`s(x) \le \hat\lambda`.
    alpha : float, default 0.1
        SCOPE's target α of the mean false discovery proportion among accepted verdicts.

    Returns
    -------
    pandas.DataFrame
        ``item, judge, logit_fwd, logit_rev, bpe, p_bar, verdict`` ("A", "B", or "tie" when
        :math:`\bar p = 1/2`) and, with ``calibration``, ``role``, ``gold``, ``error``,
        ``threshold``, ``accepted``.

    References
    ----------
    SCOPE paper §2.2 (BPE) and §2.3 (the threshold); book chapter on one judge.
    """
    try:
        both = both_orders(panel)  # the one-judge contract's view (judgerisk.panel)
    except PanelError as exc:
        raise PanelError(f"BPE needs each item in both orders: {exc}") from None
    if both.empty:
        raise PanelError("no (item, judge) was judged in both the 'original' and 'swap' orders")
    fwd, rev = both["logit_fwd"].to_numpy(), both["logit_rev"].to_numpy()
    sig = bpe(fwd, rev)
    p_bar = np.where(sig.pred == 1, sig.confidence, 1.0 - sig.confidence)
    # p_bar = 1/2 iff logit_fwd = -logit_rev: a tie, never silently A. Hard verdicts make the
    # two logits opposite only up to rounding (logit(0.95) != -logit(0.05) in floating point)
    tie = np.isclose(fwd, -rev, rtol=1e-9, atol=1e-12)
    out = pd.DataFrame(
        {
            "logit_fwd": fwd,
            "logit_rev": rev,
            "bpe": np.where(tie, np.log(2.0), sig.score),
            "p_bar": np.where(tie, 0.5, p_bar),
            "verdict": np.where(tie, "tie", np.where(sig.pred == 1, "A", "B")),
        },
        index=both.index,
    ).reset_index()
    if calibration is None:
        return out
    alpha = check_alpha(alpha)
    missing = [c for c in ("item", "gold") if c not in calibration.columns]
    if missing:
        raise PanelError(f"--calibration: missing column(s) {missing}")
    gold = calibration.drop_duplicates("item").set_index("item")["gold"].astype(str)
    bad = ~gold.isin(["A", "B"])
    if bad.any():
        raise PanelError(f"--calibration: gold must be A or B; got {gold[bad].head(5).tolist()}")
    out["gold"] = out["item"].map(gold)
    out["role"] = np.where(out["gold"].notna(), "calibration", "test")
    out["error"] = np.where(out["gold"].notna(), out["verdict"] != out["gold"], np.nan)
    lam = {}
    for judge, d in out[out["role"] == "calibration"].groupby("judge"):
        lam[judge] = scope_threshold(d["bpe"].to_numpy(), d["error"].astype(bool).to_numpy(), alpha)
    out["threshold"] = out["judge"].map(lam).astype(float).fillna(-np.inf)
    out["accepted"] = (out["role"] == "test") & (out["bpe"] <= out["threshold"])
    return out
