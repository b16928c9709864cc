"""Per-judge summaries of a fitted panel: how far each judge's responses sit from the others'.

References
----------
The instance-level panel reliability paper (conflict signal C: cross-entropy of a judge's
probability against the leave-one-judge-out prediction).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["judge_conflict"]


def judge_conflict(predictions: pd.DataFrame, eps: float = 1e-12) -> pd.DataFrame:
    """Mean conflict of each judge with the rest of the panel.

    Parameters
    ----------
    predictions : DataFrame
        :meth:`judgerisk.risk.lmm.LatentMeasurementModel.predict_loo` output (``judge, p,
        p_hat``).
    eps : float
        Clipping of ``p_hat`` away from 0 and 1.

    Returns
    -------
    pandas.DataFrame
        By judge: ``conflict``, the mean cross-entropy

        .. math:: \\bar C_j = -\\frac{1}{|O_j|}\\sum_{(i,c)\\in O_j}
                  \\bigl[p_{ijc}\\log\\hat p_{ijc} + (1 - p_{ijc})\\log(1 - \\hat p_{ijc})\\bigr],

        (the per-judge version of SCUR's C), and ``disagreement``, the share of cells whose
        verdict differs from the leave-one-judge-out prediction's.
    """
    need = {"judge", "p", "p_hat"}
    if not need <= set(predictions.columns):
        raise ValueError(f"predictions need columns {sorted(need)} (predict_loo output)")
    p = predictions["p"].to_numpy(float)
    ph = np.clip(predictions["p_hat"].to_numpy(float), eps, 1 - eps)
    xent = -(p * np.log(ph) + (1 - p) * np.log1p(-ph))
    disagree = (p > 0.5) != (ph > 0.5)
    frame = pd.DataFrame({"conflict": xent, "disagreement": disagree.astype(float)})
    return frame.groupby(predictions["judge"].to_numpy()).mean().rename_axis("judge")
