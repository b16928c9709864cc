"""Does a certificate's assumption hold? A permutation test of the labelled slice's scores.

SCOPE's guarantee (and every interval of :mod:`judgerisk.estimate.ppi` but the active one)
needs the labelled items to be exchangeable with the unlabelled items they speak for; the
SCOPE paper names distribution shift as its first limitation. A labelled slice picked by hand
(the easy items, one source, one day) breaks it. :func:`exchangeability_test` checks the one
thing that can be checked without more labels: whether the labelled items' **risk scores**
look like a random draw from all the items' scores.

The statistic is the two-sample Kolmogorov–Smirnov distance between the labelled and the
unlabelled items' score distributions, :math:`T = \\max_t |\\hat F_{lab}(t) - \\hat F_{unl}(t)|`,
which depends on the scores through their ranks only. Under exchangeability every assignment
of the ``n`` labels to the ``n + N`` items is equally likely, so the permutation p-value
:math:`p = (1 + \\#\\{b : T_b \\ge T\\})/(1 + B)` over ``B`` random reassignments (seeded) is
valid in finite samples: :math:`P(p \\le \\alpha) \\le \\alpha` on a random slice. The test
rejects at ``level`` (default 0.05).

Even when the slice is exchangeable, no distribution-free selector can certify a false
discovery rate α on every item when the base error rate μ exceeds α: it must abstain on at
least :math:`(\\mu - \\alpha)/(1 - \\alpha)` of them (:func:`abstention_floor`): accepting a
share ``a`` of the items with all the errors it can avoid left out still leaves at least
:math:`\\mu - (1 - a)` errors among the ``a`` accepted, and :math:`(\\mu - 1 + a)/a \\le \\alpha`
iff :math:`a \\le (1 - \\mu)/(1 - \\alpha)`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from judgerisk.options import EXCHANGEABILITY as _X
from judgerisk.options import OptionError, check_alpha, check_count

__all__ = [
    "ExchangeabilityTest",
    "abstention_floor",
    "check_certificate",
    "exchangeability_test",
    "floor_sentence",
]


@dataclass(frozen=True)
class ExchangeabilityTest:
    """The result of :func:`exchangeability_test`.

    Attributes
    ----------
    statistic : float
        The KS distance :math:`T` between the labelled and unlabelled scores.
    p_value : float
        The permutation p-value.
    level : float
        The test's level; ``rejects`` is ``p_value <= level``.
    n_permutations, seed : int
    labelled_percentile, unlabelled_percentile : float
        The median percentile (0–100) of each group's scores among all items' scores: which
        way the slice leans (a lower labelled percentile: the labelled items are the safer ones).
    """

    statistic: float
    p_value: float
    level: float
    n_permutations: int
    seed: int
    labelled_percentile: float
    unlabelled_percentile: float

    @property
    def rejects(self) -> bool:
        return self.p_value <= self.level

    def reason(self, score: str = "risk score") -> str:
        """One sentence saying what the test found, for the command line and the report."""
        lean = "safer" if self.labelled_percentile < self.unlabelled_percentile else "riskier"
        found = (
            f"the labelled items' {score} is not exchangeable with the unlabelled items'"
            if self.rejects
            else f"no evidence that the labelled items' {score} differs from the unlabelled items'"
        )
        return (
            f"{found} (permutation Kolmogorov-Smirnov test on the ranks, "
            f"{self.n_permutations} permutations, seed {self.seed}: T = {self.statistic:.3f}, "
            f"{_p_value_text(self.p_value, self.n_permutations)}, "
            f"{'at most' if self.rejects else 'above'} the level {self.level:g}; median "
            f"percentile {self.labelled_percentile:.0f} labelled vs "
            f"{self.unlabelled_percentile:.0f} unlabelled"
            + (f", the labelled items are the {lean} ones)" if self.rejects else ")")
        )

    def as_dict(self) -> dict:
        """The result as the plain values a provenance record holds."""
        return {
            "test": "permutation Kolmogorov-Smirnov on the ranks",
            "statistic": self.statistic,
            "p_value": self.p_value,
            "level": self.level,
            "n_permutations": self.n_permutations,
            "seed": self.seed,
            "rejects": self.rejects,
            "labelled_percentile": self.labelled_percentile,
            "unlabelled_percentile": self.unlabelled_percentile,
        }


def _p_value_text(p_value: float, n_permutations: int) -> str:
    """A permutation p-value as people report it: ``"p = 0.283"``, ``"p < 0.001"``.

    :math:`p = (1 + \\#\\{T_b \\ge T\\})/(1 + B)` is never below :math:`1/(1 + B)`; at
    that floor no reassignment reached :math:`T`, and the text says so (the true p-value
    may be far smaller). Below 0.001 it reads "p < 0.001", never a 6-digit fraction.

    >>> _p_value_text(0.2827, 1000)
    'p = 0.283'
    >>> _p_value_text(1 / 1001, 1000)
    'reached by none of the 1000 permutations: p < 0.001'
    >>> _p_value_text(1 / 200, 199)
    'reached by none of the 199 permutations: p = 0.005, the smallest they can give'
    """
    text = "p < 0.001" if p_value < 0.001 else f"p = {p_value:.3g}"
    if p_value * (1 + n_permutations) > 1.5:  # some permutation reached T
        return text
    smallest = "" if p_value < 0.001 else ", the smallest they can give"
    return f"reached by none of the {n_permutations} permutations: {text}{smallest}"


def _ks_of_masks(order_masks: np.ndarray, last_of_tie: np.ndarray) -> np.ndarray:
    """KS distances of boolean label masks given in the scores' sorted order (rows)."""
    n = order_masks.sum(axis=1, keepdims=True)
    m = order_masks.shape[1] - n
    cum = np.cumsum(order_masks, axis=1)
    gap = cum / n - (np.arange(1, order_masks.shape[1] + 1) - cum) / m
    return np.abs(gap[:, last_of_tie]).max(axis=1)


def exchangeability_test(
    scores: npt.ArrayLike,
    labelled: npt.ArrayLike,
    level: float = _X.level,
    n_permutations: int = _X.n_permutations,
    seed: int = _X.seed,
) -> ExchangeabilityTest:
    """Permutation test of the labelled items' scores against the unlabelled items'.

    Parameters
    ----------
    scores : array-like of shape (M,)
        A risk score of every item (finite; ties are allowed).
    labelled : array-like of bool, shape (M,)
        Which items are labelled (at least one of each kind).
    level : float in (0, 1), default 0.05
        The test's level.
    n_permutations : int, default 1000
        B, the random reassignments of the labels (``numpy.random.default_rng(seed)``).
    seed : int, default 0

    Returns
    -------
    ExchangeabilityTest
        :math:`T`, :math:`p = (1 + \\#\\{T_b \\ge T\\})/(1 + B)`, and which way the slice leans.

    Examples
    --------
    >>> s = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0] * 5
    >>> exchangeability_test(s, [x < 0.35 for x in s]).rejects
    True
    """
    s = np.asarray(scores, dtype=np.float64).ravel()
    lab = np.asarray(labelled, dtype=bool).ravel()
    if s.size != lab.size:
        raise ValueError(f"scores and labelled differ in length: {s.size} and {lab.size}")
    if not np.all(np.isfinite(s)):
        raise ValueError(f"{int((~np.isfinite(s)).sum())} item(s) have no finite score")
    if not 0 < lab.sum() < lab.size:
        raise OptionError("the exchangeability test needs labelled and unlabelled items")
    level = check_alpha(level)
    b = check_count("n_permutations", n_permutations)
    seed = check_count("seed", seed, 0)
    order = np.argsort(s, kind="stable")
    sorted_s = s[order]
    last_of_tie = np.flatnonzero(np.r_[sorted_s[1:] != sorted_s[:-1], True])
    observed = float(_ks_of_masks(lab[order][None, :], last_of_tie)[0])
    rng = np.random.default_rng(seed)
    exceed, chunk = 0, max(1, 2_000_000 // s.size)
    for start in range(0, b, chunk):
        rows = min(chunk, b - start)
        masks = np.argsort(rng.random((rows, s.size)), axis=1) < lab.sum()
        exceed += int((_ks_of_masks(masks, last_of_tie) >= observed - 1e-12).sum())
    from scipy.stats import rankdata

    pct = 100.0 * (rankdata(s) - 0.5) / s.size
    return ExchangeabilityTest(
        statistic=observed,
        p_value=(1 + exceed) / (1 + b),
        level=level,
        n_permutations=b,
        seed=seed,
        labelled_percentile=float(np.median(pct[lab])),
        unlabelled_percentile=float(np.median(pct[~lab])),
    )


def abstention_floor(error_rate: float, alpha: float) -> float:
    """:math:`\\max(0, (\\mu - \\alpha)/(1 - \\alpha))`: the least share of items any selector
    certifying a false discovery rate α must abstain on, at base error rate μ.

    Examples
    --------
    >>> round(abstention_floor(0.3, 0.1), 4)
    0.2222
    >>> abstention_floor(0.05, 0.1)
    0.0
    """
    alpha = check_alpha(alpha)
    mu = float(error_rate)
    return max(0.0, (mu - alpha) / (1.0 - alpha))


def check_certificate(
    scores: npt.ArrayLike,
    labelled: npt.ArrayLike,
    errors: npt.ArrayLike,
    alpha: float,
    score: str = "risk score",
    level: float = _X.level,
    n_permutations: int = _X.n_permutations,
    seed: int = _X.seed,
) -> dict:
    """What a certificate's reader must know before trusting it, as a record's plain values.

    Parameters
    ----------
    scores : array-like of shape (M,)
        The risk score the certificate thresholds, for every item (labelled and not); items
        without a finite score are left out of the test.
    labelled : array-like of bool, shape (M,)
        The calibration (labelled) items.
    errors : array-like of shape (M,)
        1 where the certified verdict of a labelled item is wrong (read where labelled).
    alpha : float
        The certificate's target α of the mean false discovery proportion.
    score : str
        The score's name, for the sentences.
    level, n_permutations, seed
        Of :func:`exchangeability_test`.

    Returns
    -------
    dict
        ``applies`` (False when the test rejects), ``reason`` (one sentence), ``exchangeability``
        (:meth:`ExchangeabilityTest.as_dict`, or None when there are no items of one kind),
        ``error_rate`` μ of the labelled verdicts and ``abstention_floor``
        :math:`(\\mu - \\alpha)/(1 - \\alpha)` (floored at 0).
    """
    s = np.asarray(scores, dtype=np.float64).ravel()
    lab = np.asarray(labelled, dtype=bool).ravel()
    err = np.asarray(errors, dtype=np.float64).ravel()
    mu = float(np.nanmean(err[lab])) if lab.any() else float("nan")
    floor = abstention_floor(mu, alpha) if np.isfinite(mu) else float("nan")
    ok = np.isfinite(s)
    if not (0 < (lab & ok).sum() < ok.sum()):
        return {
            "applies": True,
            "reason": "no exchangeability test: the items are not split "
            "into labelled and unlabelled ones",
            "exchangeability": None,
            "error_rate": mu,
            "abstention_floor": floor,
        }
    test = exchangeability_test(s[ok], lab[ok], level, n_permutations, seed)
    reason = test.reason(score)
    if test.rejects:
        reason = f"the certificate does not apply: {reason}"
    return {
        "applies": not test.rejects,
        "reason": reason,
        "exchangeability": test.as_dict(),
        "error_rate": mu,
        "abstention_floor": floor,
    }


def floor_sentence(check: dict, alpha: float) -> str:
    """The abstention floor as a sentence: "labelled error rate 0.250 at alpha 0.1: ..."."""
    mu, floor = check["error_rate"], check["abstention_floor"]
    if not np.isfinite(mu):
        return "no labelled item: the abstention floor is unknown"
    return (
        f"labelled error rate {mu:.3f} at alpha {alpha:g}: any selector certifying this rate "
        f"must abstain on at least {floor:.1%} of the items ((mu - alpha)/(1 - alpha))"
    )
