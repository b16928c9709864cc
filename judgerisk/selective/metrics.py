"""Metrics for single-judge uncertainty and selective judging (Methods reference §7).

Two families:

* **uncertainty quality** of a confidence score for the judge's own verdict — accuracy,
  expected calibration error (ECE, equal-width bins), AUROC and AUPRC of the confidence for
  *correctness* (the positive class is "the verdict is right");
* **selection quality** of an accept / abstain decision — coverage and the false-discovery
  proportion (FDP, the error rate among accepted verdicts; 0 when nothing is accepted).

References
----------
Methods reference §7; "SCOPE: Selective Conformal Optimized Pairwise LLM Judging" (Appendix B.2);
Naeini, Cooper & Hauskrecht (2015), "Obtaining well calibrated probabilities using Bayesian
binning" (ECE).
"""

from __future__ import annotations

import warnings
from functools import partial

import numpy as np
import numpy.typing as npt
import pandas as pd

from judgerisk.options import ANALYSIS, check_count
from judgerisk.validation import as_binary, as_bool, as_float

__all__ = [
    "as_binary",
    "errors_of",
    "accuracy",
    "ece",
    "reliability_table",
    "auroc_correct",
    "auprc_correct",
    "coverage",
    "fdp",
    "uncertainty_metrics",
    "paired_metric_difference",
]


def errors_of(preds: npt.ArrayLike, gold: npt.ArrayLike) -> np.ndarray:
    """Error indicators :math:`E_i = 1[\\hat y_i \\ne y^*_i]` as a boolean array.

    Parameters
    ----------
    preds, gold : array-like
        Predictions and gold labels, each ``"A"``/``"B"`` or 1/0 (1 = A).

    Returns
    -------
    numpy.ndarray of bool
    """
    p, g = as_binary(preds, "preds"), as_binary(gold, "gold")
    if p.shape != g.shape:
        raise ValueError(f"preds has {p.size} entries but gold has {g.size}")
    return p != g


def _pair(confidence, correct) -> tuple[np.ndarray, np.ndarray]:
    c = as_float(confidence, "confidence", 0.0, 1.0)
    y = as_bool(correct, "correct")
    if c.shape != y.shape:
        raise ValueError(f"confidence has {c.size} entries but correct has {y.size}")
    if c.size == 0:
        raise ValueError("confidence is empty")
    return c, y


def accuracy(preds: npt.ArrayLike, gold: npt.ArrayLike) -> float:
    """Share of verdicts equal to the gold label, :math:`\\frac1N\\sum_i 1[\\hat y_i = y^*_i]`."""
    return float(1.0 - errors_of(preds, gold).mean())


def _bin_index(c: np.ndarray, n_bins: int) -> np.ndarray:
    # bins ((m-1)/M, m/M], with confidence 0 in the first bin
    return np.clip(np.ceil(c * n_bins).astype(np.intp) - 1, 0, n_bins - 1)


def reliability_table(
    confidence: npt.ArrayLike, correct: npt.ArrayLike, n_bins: int = 10
) -> pd.DataFrame:
    """Per-bin mean confidence and accuracy for a reliability diagram.

    Parameters
    ----------
    confidence : array-like of float in [0, 1]
        Confidence in the judge's own verdict.
    correct : array-like of bool
        Whether each verdict is right.
    n_bins : int, default 10
        Number of equal-width bins on [0, 1]; bin *m* is :math:`((m-1)/M, m/M]` (confidence 0
        falls into the first bin).

    Returns
    -------
    pandas.DataFrame
        One row per bin: ``bin, lower, upper, n, confidence, accuracy, gap`` (NaN for empty bins).
    """
    check_count("n_bins", n_bins)
    c, y = _pair(confidence, correct)
    idx = _bin_index(c, int(n_bins))
    n = np.bincount(idx, minlength=n_bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        conf = np.bincount(idx, weights=c, minlength=n_bins) / n
        acc = np.bincount(idx, weights=y.astype(float), minlength=n_bins) / n
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    return pd.DataFrame(
        {
            "bin": np.arange(n_bins),
            "lower": edges[:-1],
            "upper": edges[1:],
            "n": n,
            "confidence": conf,
            "accuracy": acc,
            "gap": acc - conf,
        }
    )


def ece(confidence: npt.ArrayLike, correct: npt.ArrayLike, n_bins: int = 10) -> float:
    """Expected calibration error with equal-width bins.

    Parameters
    ----------
    confidence : array-like of float in [0, 1]
    correct : array-like of bool
    n_bins : int, default 10
        10 bins by default (Methods reference §7); 15 is the other common choice.

    Returns
    -------
    float

    Notes
    -----
    .. math:: \\mathrm{ECE} = \\sum_{m=1}^{M} \\frac{|B_m|}{N}\\,
              \\bigl|\\mathrm{acc}(B_m) - \\mathrm{conf}(B_m)\\bigr|

    with bins :math:`B_m = \\{i : (m-1)/M < c_i \\le m/M\\}`.
    """
    tab = reliability_table(confidence, correct, n_bins)
    used = tab["n"].to_numpy() > 0
    w = tab["n"].to_numpy()[used] / tab["n"].sum()
    return float(np.sum(w * np.abs(tab["gap"].to_numpy()[used])))


def _one_class(y: np.ndarray, what: str) -> bool:
    if y.all() or not y.any():
        warnings.warn(
            f"{what} is undefined when every verdict is right or every verdict is "
            "wrong; returning NaN",
            RuntimeWarning,
            stacklevel=3,
        )
        return True
    return False


def auroc_correct(confidence: npt.ArrayLike, correct: npt.ArrayLike) -> float:
    """AUROC of the confidence for correctness (``sklearn.metrics.roc_auc_score``).

    Returns NaN with a warning when only one class is present.
    """
    c, y = _pair(confidence, correct)
    from sklearn.metrics import roc_auc_score  # scikit-learn loads slowly: only when used

    return float("nan") if _one_class(y, "AUROC") else float(roc_auc_score(y, c))


def auprc_correct(confidence: npt.ArrayLike, correct: npt.ArrayLike) -> float:
    """AUPRC (average precision) of the confidence for correctness.

    Uses ``sklearn.metrics.average_precision_score`` with "verdict right" as the positive class.
    Returns NaN with a warning when only one class is present.
    """
    c, y = _pair(confidence, correct)
    from sklearn.metrics import average_precision_score

    return float("nan") if _one_class(y, "AUPRC") else float(average_precision_score(y, c))


def coverage(accepted: npt.ArrayLike) -> float:
    """Share of items accepted, :math:`\\frac1n\\sum_i S_i`."""
    a = as_bool(accepted, "accepted")
    if a.size == 0:
        raise ValueError("accepted is empty")
    return float(a.mean())


def fdp(accepted: npt.ArrayLike, errors: npt.ArrayLike) -> float:
    """False-discovery proportion of a selection (0 when nothing is accepted).

    Notes
    -----
    .. math:: \\mathrm{FDP} = \\frac{\\sum_i S_i E_i}{\\max(1, \\sum_i S_i)}
    """
    a, e = as_bool(accepted, "accepted"), as_bool(errors, "errors")
    if a.shape != e.shape:
        raise ValueError(f"accepted has {a.size} entries but errors has {e.size}")
    return float((a & e).sum() / max(1, int(a.sum())))


def uncertainty_metrics(
    preds: npt.ArrayLike, gold: npt.ArrayLike, confidence: npt.ArrayLike, n_bins: int = 10
) -> dict[str, float]:
    """Accuracy, ECE, AUROC and AUPRC of one confidence signal (a Table-1 row).

    Parameters
    ----------
    preds, gold : array-like
        Verdicts and gold labels (``"A"``/``"B"`` or 1/0).
    confidence : array-like of float in [0, 1]
        Confidence in each verdict.
    n_bins : int, default 10
        ECE bins.

    Returns
    -------
    dict with keys ``accuracy, ece, auroc, auprc``.
    """
    correct = ~errors_of(preds, gold)
    return {
        "accuracy": float(correct.mean()),
        "ece": ece(confidence, correct, n_bins),
        "auroc": auroc_correct(confidence, correct),
        "auprc": auprc_correct(confidence, correct),
    }


def _auroc_by_ranks(confidence: np.ndarray, correct: np.ndarray) -> float:
    """:func:`auroc_correct` from mid-ranks (Mann-Whitney U), ties counted as half: the same
    number as scikit-learn's, in a tenth of its time on a bootstrap resample."""
    from scipy.stats import rankdata

    n_pos = int(correct.sum())
    n_neg = correct.size - n_pos
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    ranks = rankdata(confidence)
    return float((ranks[correct].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


#: The metrics :func:`paired_metric_difference` compares, by name.
_METRICS = {"ece": ece, "auroc": _auroc_by_ranks, "auprc": auprc_correct}


def paired_metric_difference(
    confidence_a: npt.ArrayLike,
    correct_a: npt.ArrayLike,
    confidence_b: npt.ArrayLike,
    correct_b: npt.ArrayLike,
    metric: str,
    *,
    n_bins: int = 10,
    n_boot: int = ANALYSIS.n_boot,
    level: float = ANALYSIS.level,
    seed: int = 0,
) -> tuple[float, float, float]:
    r"""``metric(a) - metric(b)`` of two confidence signals on the same items, with a paired
    percentile bootstrap interval.

    Each resample draws the items with replacement once and scores both signals on it, so the
    interval accounts for their correlation over items (the two confidences of one judge's
    verdicts are close to each other; an interval per signal would be far too wide for their
    difference).

    Parameters
    ----------
    confidence_a, correct_a, confidence_b, correct_b : array-like
        Each signal's confidence in its verdict and whether the verdict is right, item by
        item (the same items in the same order).
    metric : {"ece", "auroc", "auprc"}
        :func:`ece` (lower is better), :func:`auroc_correct` or :func:`auprc_correct`.
    n_bins : int, default 10
        ECE bins.
    n_boot : int, default ``ANALYSIS.n_boot``
        Bootstrap resamples (:data:`judgerisk.options.ANALYSIS`, the book's analyses' one default).
    level : float, default ``ANALYSIS.level``
        Coverage of the percentile interval.
    seed : int, default 0
        Seed of the resamples.

    Returns
    -------
    (difference, low, high)
        On the items, and the interval's ends over the resamples (resamples where a metric is
        undefined, one class only, are left out).

    Notes
    -----
    .. math:: \Delta = m(c^a, y^a) - m(c^b, y^b), \qquad
              [\Delta^*_{(1-\ell)/2}, \Delta^*_{(1+\ell)/2}]

    with :math:`\Delta^*` the difference on a resample of the n items (Efron and Tibshirani,
    *An Introduction to the Bootstrap*, 1993, ch. 13).
    """
    if metric not in _METRICS:
        raise ValueError(f"metric must be one of {sorted(_METRICS)}, got {metric!r}")
    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1), got {level}")
    check_count("n_boot", n_boot)
    ca, ya = _pair(confidence_a, correct_a)
    cb, yb = _pair(confidence_b, correct_b)
    if ca.size != cb.size:
        raise ValueError(f"signal a has {ca.size} items but signal b has {cb.size}")
    score = partial(ece, n_bins=n_bins) if metric == "ece" else _METRICS[metric]

    def diff(idx: np.ndarray | slice) -> float:
        return float(score(ca[idx], ya[idx]) - score(cb[idx], yb[idx]))

    rng = np.random.default_rng(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a resample of one class: left out below
        draws = np.array([diff(rng.integers(0, ca.size, ca.size)) for _ in range(n_boot)])
    draws = draws[np.isfinite(draws)]
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(draws, [tail, 100 - tail]) if draws.size else (np.nan, np.nan)
    return float(diff(slice(None))), float(low), float(high)
