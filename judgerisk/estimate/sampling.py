"""Which items to label: inclusion probabilities that grow with a risk score, with a floor.

The rule (:func:`inclusion_probabilities`): an item's weight grows linearly with the rank of
its risk score, from ``floor`` for the safest item to 1 for the riskiest,
:math:`w_i = \\tau + (1 - \\tau)\\, u_i` with :math:`u_i = (r_i - 1/2)/M` its mid-rank
percentile among the ``M`` candidates and :math:`\\tau` the floor (default 0.2: the safest item
is drawn at least a fifth as often as the riskiest, so every item can be drawn and the inverse
weights stay bounded); then :math:`\\pi_i = \\min(1, c\\, w_i)` with :math:`c` such that
:math:`\\sum_i \\pi_i = n` (the labelling budget). Items are drawn independently
(Poisson sampling, :func:`draw_plan`): the number drawn is ``n`` on average, and the
inverse-probability-weighted estimate of :func:`judgerisk.estimate.ppi.active_ppi_mean` is
unbiased under exactly that design (Zrnic & Candès 2024, "Active statistical inference", ICML:
sampling the items whose prediction is uncertain more often shrinks the interval).

:func:`expected_variances` compares the design with random labelling before any label is
bought, from the predictions alone: with :math:`v_i = f_i (1 - f_i)` (the conditional variance
of a label whose prediction is calibrated), the design variance of the estimate is
:math:`M^{-2} \\sum_i v_i (1/\\pi_i - 1)`, and :math:`M^{-2} \\sum_i v_i (M/n - 1)` for ``n``
items labelled at random.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from judgerisk.options import EstimateSettings, OptionError

#: The plan's default floor, from :class:`judgerisk.options.EstimateSettings`.
FLOOR = EstimateSettings().floor

__all__ = ["draw_plan", "expected_variances", "inclusion_probabilities"]


def inclusion_probabilities(risk: npt.ArrayLike, n: float, floor: float = FLOOR) -> np.ndarray:
    """:math:`\\pi_i = \\min(1, c\\,(\\tau + (1-\\tau) u_i))`, summing to ``n`` (module docstring).

    Parameters
    ----------
    risk : array-like of shape (M,)
        A risk score (larger = riskier), finite.
    n : float
        Expected number of items to label, in (0, M].
    floor : float in (0, 1], default 0.2
        :math:`\\tau`, the safest item's weight relative to the riskiest's (1: uniform).

    Examples
    --------
    >>> p = inclusion_probabilities([0.1, 0.5, 0.9, 0.3], n=2)
    >>> round(float(p.sum()), 6), bool(p[2] > p[1] > p[3] > p[0])
    (2.0, True)
    """
    r = np.asarray(risk, dtype=np.float64).ravel()
    if r.size == 0 or not np.all(np.isfinite(r)):
        raise ValueError("risk must hold a finite score for every item")
    if not 0 < n <= r.size:
        raise OptionError(f"the plan's size must be in (0, {r.size}] (the items), got {n!r}")
    if not 0.0 < floor <= 1.0:
        raise OptionError(f"floor must be in (0, 1], got {floor!r}")
    from scipy.stats import rankdata

    u = (rankdata(r) - 0.5) / r.size
    w = floor + (1.0 - floor) * u
    lo, hi = 0.0, float(r.size) / w.min()  # sum(min(1, c w)) is increasing in c
    for _ in range(200):
        c = (lo + hi) / 2
        if np.minimum(1.0, c * w).sum() < n:
            lo = c
        else:
            hi = c
    return np.minimum(1.0, hi * w)


def draw_plan(inclusion: npt.ArrayLike, seed: int = 0) -> np.ndarray:
    """Poisson sampling: item *i* is drawn with probability :math:`\\pi_i`, independently.

    Returns the boolean mask of the drawn items (``numpy.random.default_rng(seed)``).
    """
    pi = np.asarray(inclusion, dtype=np.float64).ravel()
    return np.random.default_rng(seed).random(pi.size) < pi


def expected_variances(f: npt.ArrayLike, inclusion: npt.ArrayLike, n: float) -> tuple[float, float]:
    """Design variances of the estimate under the plan and under ``n`` random labels.

    :math:`V_{plan} = M^{-2}\\sum_i v_i(1/\\pi_i - 1)`,
    :math:`V_{random} = M^{-2}\\sum_i v_i (M/n - 1)`, :math:`v_i = f_i(1 - f_i)`.
    """
    f = np.clip(np.asarray(f, dtype=np.float64).ravel(), 0.0, 1.0)
    pi = np.asarray(inclusion, dtype=np.float64).ravel()
    v, m = f * (1.0 - f), f.size
    return float((v * (1.0 / pi - 1.0)).sum() / m**2), float(v.sum() * (m / n - 1.0) / m**2)
