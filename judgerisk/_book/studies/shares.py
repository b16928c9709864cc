"""Shares with exact intervals, and which side of a reference value an interval lies on.

The early chapters read counts off one panel: how often a judge names the answer it read
first, how common a planted mechanism is among the errors a majority cannot see. A sentence
that calls such a share "above one half" or "over-represented" reads it from the exact
(Clopper–Pearson) interval printed beside it, never from the point value alone.

References
----------
- C. J. Clopper and E. S. Pearson, "The use of confidence or fiducial limits illustrated in
  the case of the binomial", *Biometrika* 26(4), 1934.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from judgerisk.options import ANALYSIS

__all__ = ["mechanism_intervals", "share_interval", "side"]


def share_interval(k: int, n: int, level: float = ANALYSIS.level) -> tuple[float, float]:
    """The exact two-sided interval of a binomial share ``k / n``.

    Parameters
    ----------
    k, n : int
        Successes and trials, ``0 <= k <= n`` and ``n >= 1``.
    level : float, default 0.95

    Returns
    -------
    (low, high)
        Clopper–Pearson bounds: the ``(1 - level) / 2`` quantile of Beta(k, n - k + 1) and
        the ``(1 + level) / 2`` quantile of Beta(k + 1, n - k); 0 when ``k = 0`` and 1 when
        ``k = n``.

    Examples
    --------
    >>> low, high = share_interval(5, 10)
    >>> round(low, 3), round(high, 3)
    (0.187, 0.813)
    >>> share_interval(0, 4)[0], share_interval(4, 4)[1]
    (0.0, 1.0)
    """
    from scipy.stats import beta

    if not 0 <= k <= n or n < 1:
        raise ValueError(f"need 0 <= k <= n and n >= 1, got k={k}, n={n}")
    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1), got {level}")
    tail = (1.0 - level) / 2.0
    low = 0.0 if k == 0 else float(beta.ppf(tail, k, n - k + 1))
    high = 1.0 if k == n else float(beta.ppf(1.0 - tail, k + 1, n - k))
    return low, high


def side(low: float, high: float, reference: float) -> str:
    """``"above"``, ``"below"`` or ``"covers"``: where an interval lies against a reference.

    Examples
    --------
    >>> side(0.6, 0.8, 0.5), side(0.1, 0.3, 0.5), side(0.4, 0.6, 0.5)
    ('above', 'below', 'covers')
    """
    if low > reference:
        return "above"
    if high < reference:
        return "below"
    return "covers"


def mechanism_intervals(
    mechanisms: pd.DataFrame, n_hidden: int, level: float = ANALYSIS.level
) -> pd.DataFrame:
    """Each mechanism's share of the high-consensus errors with its exact interval.

    Parameters
    ----------
    mechanisms : pandas.DataFrame
        :func:`judgerisk.engine.describe.error_mechanisms`: ``share of items`` and ``share of
        high-consensus errors`` per mechanism.
    n_hidden : int
        The number of high-consensus errors the shares are taken over.
    level : float, default 0.95

    Returns
    -------
    pandas.DataFrame
        ``low`` and ``high`` (the interval of the share among the high-consensus errors, NaN
        when there are none) and ``side``: ``"above"`` when the whole interval lies above the
        mechanism's share of items (over-represented among the errors a majority cannot see),
        ``"below"`` when it lies below, ``"covers"`` otherwise (and with no such error).
    """
    rows = {}
    for name, row in mechanisms.iterrows():
        if n_hidden < 1:
            rows[name] = (np.nan, np.nan, "covers")
            continue
        k = int(round(row["share of high-consensus errors"] * n_hidden))
        low, high = share_interval(k, n_hidden, level)
        rows[name] = (low, high, side(low, high, float(row["share of items"])))
    return pd.DataFrame.from_dict(rows, orient="index", columns=["low", "high", "side"])
