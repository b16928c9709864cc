"""SCOPE and the selective baselines: calibrate on labelled items, then accept or abstain.

* :class:`Scope` — SCOPE's linear expectation constraint on an *uncertainty* score
  (:func:`scope_threshold`);
* :class:`Naive` — the largest threshold whose empirical calibration FDR is <= alpha;
* :class:`Heuristic` — accept iff confidence >= 1 − alpha (no calibration);
* :class:`Vanilla` — accept everything;
* :class:`TrustOrEscalate` — Clopper–Pearson upper bounds with fixed-sequence testing on a
  confidence grid.

Each selector has ``calibrate(values, errors) -> self`` (``fit`` is an alias) and
``accept(values) -> bool array``. ``values`` is the uncertainty score for Scope / Naive and the
confidence for Heuristic / Trust-or-Escalate. The feasibility rules live in small shared helpers
so that :mod:`judgerisk.selective.protocol` applies exactly the same arithmetic across many splits.

References
----------
Methods reference §7; "SCOPE: Selective Conformal Optimized Pairwise LLM Judging" (§2.3, Eqs. 5–6,
Appendix D.2); Jung et al. (2025), "Trust or Escalate: LLM Judges with Provable Guarantees for
Human Agreement"; Clopper & Pearson (1934); Bauer (1991) (fixed-sequence testing).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np
import numpy.typing as npt

from judgerisk.options import DEFAULT_ALPHA, DEFAULT_DELTA
from judgerisk.validation import as_bool, as_float, check_alpha, tie_blocks

__all__ = [
    "toe_max_errors",
    "FEASIBILITY_EPS",
    "scope_threshold",
    "naive_threshold",
    "clopper_pearson_upper",
    "scope_feasible",
    "naive_feasible",
    "toe_certified",
    "toe_grid",
    "toe_threshold",
    "Scope",
    "Naive",
    "Heuristic",
    "Vanilla",
    "TrustOrEscalate",
]

#: Slack in the feasibility comparisons, so that decimal alphas behave as in exact arithmetic
#: (``0.1 * 30`` is ``3.0000000000000004`` in floating point).
FEASIBILITY_EPS = 1e-9


def _scores_errors(scores, errors, name: str = "scores") -> tuple[np.ndarray, np.ndarray]:
    s = as_float(scores, name)
    e = as_bool(errors, "errors")
    if s.shape != e.shape:
        raise ValueError(f"{name} has {s.size} entries but errors has {e.size}")
    return s, e


def scope_feasible(n_err: np.ndarray | int, n_acc: np.ndarray | int, alpha: float) -> Any:
    """SCOPE's constraint :math:`\\sum S (E - \\alpha) = n_{err} - \\alpha n_{acc} \\le -1`."""
    return n_err + 1 <= alpha * n_acc + FEASIBILITY_EPS


def naive_feasible(n_err: np.ndarray | int, n_acc: np.ndarray | int, alpha: float) -> Any:
    """Empirical FDR :math:`n_{err} / n_{acc} \\le \\alpha` with at least one accepted item."""
    return (n_acc > 0) & (n_err <= alpha * n_acc + FEASIBILITY_EPS)


def _block_threshold(scores, errors, alpha: float, rule) -> float:
    s, e = _scores_errors(scores, errors)
    if s.size == 0:
        return -np.inf
    order = np.argsort(s, kind="stable")
    ss, ee = s[order], e[order]
    ends = tie_blocks(ss)[1] - 1  # last index of each tie block
    n_acc = ends + 1
    n_err = np.cumsum(ee)[ends]
    ok = rule(n_err, n_acc, alpha)
    return float(ss[ends[np.flatnonzero(ok)[-1]]]) if ok.any() else -np.inf


def scope_threshold(scores: npt.ArrayLike, errors: npt.ArrayLike, alpha: float) -> float:
    """SCOPE's calibrated threshold :math:`\\hat\\lambda` (``-inf`` when infeasible).

    Parameters
    ----------
    scores : array-like of float
        Uncertainty scores :math:`s(x_i)` of the calibration items (larger = less sure).
    errors : array-like of bool
        :math:`E_i = 1[\\hat y_i \\ne y^*_i]`.
    alpha : float in (0, 1)
        Target risk level.

    Returns
    -------
    float
        :math:`\\hat\\lambda`; accept a test item iff :math:`s(x) \\le \\hat\\lambda`.
        ``-inf`` (abstain on everything) when no threshold is feasible.

    Notes
    -----
    .. math::
        \\hat\\lambda = \\sup\\Bigl\\{\\lambda : \\sum_{i=1}^n 1[s(x_i) \\le \\lambda]
        (E_i - \\alpha) \\le -1\\Bigr\\}

    The sum changes only at calibration scores, so it is evaluated at the end of each tie
    block of the sorted scores (all tied items enter together). Feasibility is not monotone
    in :math:`\\lambda`; the largest feasible block end is taken. The threshold is therefore a
    calibration score: when every block is feasible, test items scoring above the largest
    calibration score are still rejected.

    References
    ----------
    SCOPE paper, §2.3 (Eqs. 5–6); Methods reference §7.
    """
    return _block_threshold(scores, errors, check_alpha(alpha), scope_feasible)


def naive_threshold(scores: npt.ArrayLike, errors: npt.ArrayLike, alpha: float) -> float:
    """The naive selector's threshold: largest block end with empirical FDR <= alpha.

    Same tie handling as :func:`scope_threshold`, without the finite-sample ``-1``:
    :math:`\\sum S E / \\sum S \\le \\alpha`. ``-inf`` when no threshold qualifies.
    """
    return _block_threshold(scores, errors, check_alpha(alpha), naive_feasible)


def clopper_pearson_upper(k: npt.ArrayLike, n: npt.ArrayLike, delta: float = DEFAULT_DELTA) -> Any:
    """One-sided Clopper–Pearson upper confidence bound at level :math:`1 - \\delta`.

    .. math:: U(k, n) = \\mathrm{Beta}^{-1}(1 - \\delta;\\ k + 1,\\ n - k),\\quad U(n, n) = 1.

    :math:`U(k, n) \\le \\alpha` is equivalent to the exact binomial test of
    :math:`H_0: r \\ge \\alpha` rejecting, :math:`P(\\mathrm{Bin}(n, \\alpha) \\le k) \\le \\delta`;
    Trust-or-Escalate uses that form (:func:`toe_certified`).
    """
    from scipy.stats import beta  # scipy.stats loads slowly: only when a bound is asked

    k, n = np.asarray(k, dtype=np.float64), np.asarray(n, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        u = beta.ppf(1.0 - delta, k + 1.0, np.maximum(n - k, 1e-300))
    return np.where(k >= n, 1.0, u)


def toe_certified(n_err: npt.ArrayLike, n_acc: npt.ArrayLike, alpha: float, delta: float) -> Any:
    """Whether a threshold is certified: :math:`P(\\mathrm{Bin}(n_{acc}, \\alpha) \\le n_{err})
    \\le \\delta` (equivalently :math:`U_{CP}(n_{err}, n_{acc}) \\le \\alpha`)."""
    from scipy.stats import binom

    return binom.cdf(n_err, n_acc, alpha) <= delta


@lru_cache(maxsize=64)
def toe_max_errors(n_max: int, alpha: float, delta: float) -> np.ndarray:
    """For n = 0..n_max, the largest error count that is still certified (-1 if none).

    Starts from the normal approximation of the binomial ``delta``-quantile and walks each
    entry down to a certified count, then up while the next count is certified, so every entry
    is decided by :func:`toe_certified` itself (two ``binom.cdf`` passes instead of a
    ``binom.ppf``, which is much slower for large ``n_max``).
    """
    from scipy.stats import norm

    n = np.arange(n_max + 1)
    sd = np.sqrt(n * alpha * (1.0 - alpha))
    guess = np.floor(n * alpha + norm.ppf(delta) * sd)
    kmax = np.clip(guess, -1, n).astype(np.int64)
    todo = np.flatnonzero(kmax >= 0)
    while todo.size:  # down to a certified count
        down = ~toe_certified(kmax[todo], n[todo], alpha, delta)
        todo = todo[down]
        kmax[todo] -= 1
        todo = todo[kmax[todo] >= 0]
    todo = np.flatnonzero(kmax < n)
    while todo.size:  # up while the next count is certified
        up = toe_certified(kmax[todo] + 1, n[todo], alpha, delta)
        todo = todo[up]
        kmax[todo] += 1
        todo = todo[kmax[todo] < n[todo]]
    kmax.setflags(write=False)
    return kmax


def toe_grid(n_grid: int = 5000) -> np.ndarray:
    """Trust-or-Escalate's threshold grid: ``n_grid`` equally spaced points on [0, 1]."""
    if int(n_grid) < 2:
        raise ValueError(f"n_grid must be >= 2, got {n_grid}")
    return np.linspace(0.0, 1.0, int(n_grid))


def toe_threshold(
    confidence: npt.ArrayLike,
    errors: npt.ArrayLike,
    alpha: float,
    delta: float = DEFAULT_DELTA,
    n_grid: int = 5000,
    min_accepted: int = 30,
) -> float:
    """Trust-or-Escalate's threshold on the confidence (``inf`` = abstain on everything).

    Parameters
    ----------
    confidence : array-like of float in [0, 1]
        Calibration confidences.
    errors : array-like of bool
        Calibration error indicators.
    alpha : float in (0, 1)
        Target risk level.
    delta : float, default 0.1
        Error probability of each Clopper–Pearson bound.
    n_grid : int, default 5000
        Grid of thresholds :math:`\\lambda_j` on [0, 1].
    min_accepted : int, default 30
        Thresholds accepting fewer calibration items are dropped.

    Returns
    -------
    float
        :math:`\\hat\\lambda`; accept iff confidence :math:`\\ge \\hat\\lambda`.

    Notes
    -----
    Starting from the most confident kept threshold and moving down the grid, each threshold
    is certified iff :math:`U_{CP}(n_{err}(\\lambda), n_{acc}(\\lambda)) \\le \\alpha`; testing
    stops at the first failure (fixed-sequence testing) and :math:`\\hat\\lambda` is the last
    certified threshold. If the first kept threshold fails, or none is kept, the selector
    abstains on everything.

    References
    ----------
    Jung et al. (2025); SCOPE paper Appendix D.2; Methods reference §7.
    """
    c, e = _scores_errors(confidence, errors, "confidence")
    alpha = check_alpha(alpha)
    grid = toe_grid(n_grid)
    # number of grid points <= c: an item is accepted at grid index j iff j < g
    g = np.searchsorted(grid, c, side="right")
    n_acc = np.cumsum(np.bincount(g, minlength=grid.size + 1)[::-1])[::-1][1:]
    n_err = np.cumsum(np.bincount(g, weights=e, minlength=grid.size + 1)[::-1])[::-1][1:]
    kept = n_acc >= min_accepted
    kmax = toe_max_errors(int(c.size), alpha, float(delta))
    fail = kept & (n_err > kmax[n_acc])
    top = np.flatnonzero(kept)
    if top.size == 0:
        return np.inf
    j_top = top[-1]
    failures = np.flatnonzero(fail)
    j_fail = failures[-1] if failures.size else -1
    return np.inf if j_fail == j_top else float(grid[j_fail + 1])


class _Selector:
    """Shared ``fit`` alias and ``accept`` on a fitted threshold."""

    #: "uncertainty" (accept iff value <= threshold) or "confidence" (accept iff >= threshold).
    input_kind = "uncertainty"

    def __init__(self, alpha: float = DEFAULT_ALPHA):
        self.alpha = alpha

    def fit(self, values, errors):
        """Alias of :meth:`calibrate`."""
        return self.calibrate(values, errors)

    def accept(self, values) -> np.ndarray:
        """Boolean acceptance mask for new items (``values`` of the selector's input kind)."""
        if not hasattr(self, "threshold_"):
            raise RuntimeError(f"{type(self).__name__} is not calibrated; call calibrate() first")
        v = as_float(values, self.input_kind)
        if self.input_kind == "uncertainty":
            return v <= self.threshold_
        return v >= self.threshold_


class Scope(_Selector):
    """SCOPE selector: certified mean false discovery proportion over calibration draws.

    Parameters
    ----------
    alpha : float in (0, 1), default 0.1
        Target risk level.

    Attributes
    ----------
    threshold_ : float
        :math:`\\hat\\lambda` from :func:`scope_threshold` (``-inf`` = abstain on all).
    feasible_ : bool
        Whether some threshold satisfied the constraint.
    n_calibration_ : int

    Notes
    -----
    Under exchangeability of calibration and test items, SCOPE bounds the *expected* error rate
    among accepted verdicts: :math:`E[E \\cdot S] / E[S] \\le \\alpha` — an average over
    calibration draws, not a promise for any one calibration set.

    Examples
    --------
    >>> sel = Scope(alpha=0.1).calibrate([0.1, 0.2, 0.3] * 20, [0, 0, 1] * 20)
    >>> bool(sel.feasible_)
    True
    """

    def calibrate(self, scores: npt.ArrayLike, errors: npt.ArrayLike) -> Scope:
        """Fit :math:`\\hat\\lambda` on labelled calibration items (uncertainty scores)."""
        s, e = _scores_errors(scores, errors)
        self.threshold_ = scope_threshold(s, e, self.alpha)
        self.feasible_ = bool(np.isfinite(self.threshold_))
        self.n_calibration_ = int(s.size)
        return self


class Naive(_Selector):
    """Largest threshold whose empirical calibration FDR is <= alpha (no finite-sample term)."""

    def calibrate(self, scores: npt.ArrayLike, errors: npt.ArrayLike) -> Naive:
        """Fit the threshold on calibration uncertainty scores and errors."""
        s, e = _scores_errors(scores, errors)
        self.threshold_ = naive_threshold(s, e, self.alpha)
        self.feasible_ = bool(np.isfinite(self.threshold_))
        self.n_calibration_ = int(s.size)
        return self


class Heuristic(_Selector):
    """Accept iff confidence >= 1 − alpha; ``calibrate`` only records the threshold."""

    input_kind = "confidence"

    def calibrate(
        self, confidence: npt.ArrayLike | None = None, errors: npt.ArrayLike | None = None
    ) -> Heuristic:
        """No calibration: ``threshold_ = 1 - alpha``."""
        self.threshold_ = 1.0 - check_alpha(self.alpha)
        return self


class Vanilla(_Selector):
    """Accept every verdict (no abstention)."""

    input_kind = "confidence"

    def calibrate(
        self, values: npt.ArrayLike | None = None, errors: npt.ArrayLike | None = None
    ) -> Vanilla:
        """No calibration: ``threshold_ = -inf``."""
        self.threshold_ = -np.inf
        return self


class TrustOrEscalate(_Selector):
    """Trust-or-Escalate on one judge's confidence.

    Parameters
    ----------
    alpha : float in (0, 1), default 0.1
    delta : float, default 0.1
        Error probability of each Clopper–Pearson bound.
    n_grid : int, default 5000
    min_accepted : int, default 30

    Attributes
    ----------
    threshold_ : float
        From :func:`toe_threshold` (``inf`` = abstain on all).

    Notes
    -----
    Per threshold, :math:`P(r(\\lambda) > \\alpha) \\le \\delta`; with fixed-sequence testing
    the accepted set's error rate is <= alpha with probability >= 1 − delta (a high-probability
    bound, stronger and more conservative than SCOPE's bound in expectation).
    """

    input_kind = "confidence"

    def __init__(
        self,
        alpha: float = DEFAULT_ALPHA,
        delta: float = DEFAULT_DELTA,
        n_grid: int = 5000,
        min_accepted: int = 30,
    ) -> None:
        self.alpha = alpha
        self.delta = delta
        self.n_grid = n_grid
        self.min_accepted = min_accepted

    def calibrate(self, confidence: npt.ArrayLike, errors: npt.ArrayLike) -> TrustOrEscalate:
        """Fit the threshold on calibration confidences and errors."""
        self.threshold_ = toe_threshold(
            confidence, errors, self.alpha, self.delta, self.n_grid, self.min_accepted
        )
        self.feasible_ = bool(np.isfinite(self.threshold_))
        return self
