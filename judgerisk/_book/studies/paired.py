"""Paired comparisons of risk scores on the same items: a bootstrap over items and the rule.

Every seed re-splits the *same* items, so the per-seed AUROC differences of two scores are not
independent, and their spread over seeds is no test of the difference. This module compares
pooled out-of-fold scores (:func:`judgerisk._book.studies.pooled.pooled_scores`) the paired way:

1. **Paired bootstrap over items** (:func:`paired_auroc_difference`). The AUROC of two scores
   for the same error labels, their difference, and a percentile interval from bootstrap
   resamples of the *items* (both scores see the same resample).
2. **The rule** (:data:`BEATS_RULE`, :func:`verdict`): a score beats another when the 95 %
   interval of the AUROC difference lies above 0, trails it when it lies below 0, and ties
   with it otherwise.
3. **Tables** (:func:`compare_scores`, :func:`compare_pairs`, :func:`best_rows`) on all
   items, high-consensus items and matched vote patterns; their text (interval strings and
   sentences) is written by :mod:`judgerisk._book.figures.text`.

References
----------
- B. Efron and R. Tibshirani, *An Introduction to the Bootstrap*, 1993 (paired bootstrap,
  percentile interval).
- "Can We Trust This Evaluation? Instance-Level Reliability of LLM-as-a-Judge", Section 4
  and Appendix D (AUROC on all, high-consensus and matched-vote items).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import numpy.typing as npt
import pandas as pd

from judgerisk.engine.analysis import SUBSET_NAMES
from judgerisk.options import ANALYSIS, check_count
from judgerisk.panel import PanelError
from judgerisk.risk.registry import BASELINES

__all__ = [
    "BEATS_RULE",
    "PAIRED_SUBSETS",
    "SUBSET_NAMES",
    "PairedDifference",
    "auroc_interval",
    "best_rows",
    "compare_pairs",
    "compare_scores",
    "paired_accuracy_difference",
    "paired_auroc_difference",
    "verdict",
    "weighted_auroc",
]

#: What "beats" means in every comparison of the book.
BEATS_RULE = (
    "A score beats another when the 95 % paired bootstrap interval of their AUROC difference "
    "(over items) lies above 0, trails it when the interval lies below 0, and ties otherwise."
)
#: Subsets of the pooled items (``matched`` compares only items with the same vote pattern).
PAIRED_SUBSETS: tuple[str, ...] = ("all", "hc", "prob_hc", "matched")


# --------------------------------------------------------------------------- AUROC, bootstrap
def _pair_kernel(a: np.ndarray, err: np.ndarray) -> np.ndarray:
    """``1[a_i > a_k] + .5 1[a_i = a_k]`` for errors i (rows) and correct items k (columns)."""
    pos, neg = a[err == 1], a[err == 0]
    return (pos[:, None] > neg[None, :]) + 0.5 * (pos[:, None] == neg[None, :])


def _block_kernel(a: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """``1[a_c > a_r] + .5 1[a_c = a_r]`` for correct items r (rows) and errors c (columns)."""
    x, y = a[rows][:, None], a[cols][None, :]
    return ((y > x) + np.float32(0.5) * (y == x)).astype(np.float32)


@lru_cache(maxsize=4)
def _bootstrap_counts(n: int, n_boot: int, random_state: int | None) -> np.ndarray:
    """How often each of n items is drawn in each resample (n x n_boot, float32, read-only).

    Cached, so that every comparison on the same items shares its resamples.
    """
    draws = np.random.default_rng(random_state).integers(0, n, size=(n_boot, n))
    offsets = (draws + np.arange(n_boot)[:, None] * n).ravel()
    counts = np.bincount(offsets, minlength=n_boot * n).reshape(n_boot, n).T
    counts = np.ascontiguousarray(counts, dtype=np.float32)
    counts.flags.writeable = False
    return counts


def _same_group(groups, err: np.ndarray) -> np.ndarray | None:
    if groups is None:
        return None
    g = np.asarray(groups)
    return g[err == 1][:, None] == g[err == 0][None, :]


def _check_inputs(scores, errors, groups) -> tuple[np.ndarray, np.ndarray]:
    s = np.asarray(scores, dtype=float)
    e = np.asarray(errors)
    if s.shape != e.shape or s.ndim != 1:
        raise ValueError(f"scores and errors must be 1-D of one length, got {s.shape}, {e.shape}")
    if not np.isin(e, (0, 1)).all():
        raise ValueError("errors must be 0/1")
    if np.isnan(s).any():
        raise ValueError(f"scores hold NaN at positions {np.flatnonzero(np.isnan(s))[:10]}")
    if groups is not None and len(groups) != len(e):
        raise ValueError(f"groups has {len(groups)} entries for {len(e)} items")
    return s, e.astype(np.int8)


def weighted_auroc(
    scores: npt.ArrayLike,
    errors: npt.ArrayLike,
    weights: npt.ArrayLike | None = None,
    groups: npt.ArrayLike | None = None,
) -> float:
    """AUROC for errors with item weights, optionally only over pairs within the same group.

    Parameters
    ----------
    scores : array-like of float
        Risk scores (higher = riskier).
    errors : array-like of 0/1
    weights : array-like of float, optional
        Item weights (a bootstrap resample's counts); default 1.
    groups : array-like, optional
        Group labels; when given only (error, correct) pairs of one group count (the
        matched-vote AUROC when the groups are vote patterns).

    Returns
    -------
    float
        :math:`\\sum_{i,k} w_i w_k g_{ik} K_{ik} / \\sum_{i,k} w_i w_k g_{ik}` over errors i
        and correct items k, with :math:`K_{ik} = 1[r_i > r_k] + \\tfrac12 1[r_i = r_k]` and
        :math:`g_{ik}` = 1 (same group, or no groups); NaN when no pair counts. With unit
        weights and no groups this is the usual AUROC; with vote-pattern groups it is the
        matched-vote AUROC :math:`\\sum_g n^+_g n^-_g \\mathrm{AUROC}_g / \\sum_g n^+_g n^-_g`.
    """
    s, e = _check_inputs(scores, errors, groups)
    w = np.ones(len(e)) if weights is None else np.asarray(weights, dtype=float)
    k = _pair_kernel(s, e).astype(float)
    g = _same_group(groups, e)
    pair_w = np.outer(w[e == 1], w[e == 0]) * (1.0 if g is None else g)
    total = pair_w.sum()
    return float((pair_w * k).sum() / total) if total > 0 else float("nan")


@dataclass(frozen=True)
class PairedDifference:
    """AUROC of two scores on the same items, their difference and its bootstrap interval."""

    auroc_a: float
    auroc_b: float
    diff: float
    low: float
    high: float
    n_items: int
    n_errors: int
    n_pairs: int
    n_boot: int

    @property
    def verdict(self) -> str:
        """``"beats"``, ``"trails"`` or ``"ties with"`` by :data:`BEATS_RULE`."""
        return verdict(self.low, self.high)


def verdict(low: float, high: float) -> str:
    """The rule of :data:`BEATS_RULE` for an interval of a difference (a - b)."""
    if low > 0:
        return "beats"
    if high < 0:
        return "trails"
    return "ties with"


def paired_auroc_difference(
    score_a: npt.ArrayLike,
    score_b: npt.ArrayLike,
    errors: npt.ArrayLike,
    groups: npt.ArrayLike | None = None,
    *,
    n_boot: int = ANALYSIS.n_boot,
    level: float = ANALYSIS.level,
    random_state: int | None = 0,
) -> PairedDifference:
    """Paired bootstrap of the AUROC difference of two scores over the same items.

    Parameters
    ----------
    score_a, score_b : array-like of float
        Two risk scores of the same items (higher = riskier); no NaN.
    errors : array-like of 0/1
        Error labels (positive class = error).
    groups : array-like, optional
        Vote patterns: compare only (error, correct) pairs within a pattern (matched votes).
    n_boot : int, default ``ANALYSIS.n_boot``
        Bootstrap resamples of the items.
    level : float, default ``ANALYSIS.level``
        Coverage of the percentile interval.
    random_state : int, optional
        Seed of the resamples (the same seed gives the same interval).

    Returns
    -------
    PairedDifference
        ``auroc_a``, ``auroc_b``, ``diff = auroc_a - auroc_b`` on the items, and the
        percentile interval ``[low, high]`` of the difference over the resamples; resamples
        without a usable pair are left out, with a warning, and ``n_boot`` counts those used.

    Notes
    -----
    A resample draws n items with replacement; item i enters with its count :math:`w_i`, and
    both AUROCs (:func:`weighted_auroc`) use the same counts, so the interval accounts for the
    correlation of the two scores over items. The difference of the two AUROCs is the
    bilinear form :math:`\\sum_g w_g^{+\\top} (K^a_g - K^b_g)\\, w_g^-` over
    :math:`\\sum_g (\\mathbf 1^\\top w^+_g)(\\mathbf 1^\\top w^-_g)`, summed over groups g
    (one group when ``groups`` is None), computed for all resamples at once.
    """
    a, e = _check_inputs(score_a, errors, groups)
    b, _ = _check_inputs(score_b, errors, groups)
    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1), got {level}")
    check_count("n_boot", n_boot)
    w = _bootstrap_counts(len(e), n_boot, random_state)  # items x resamples
    labels = _group_labels(groups, len(e))
    num_a, den = _resample_sums(a, e, labels, w)
    num_b, _ = _resample_sums(b, e, labels, w)
    return _difference(
        weighted_auroc(a, e, groups=groups),
        weighted_auroc(b, e, groups=groups),
        num_a - num_b,
        den,
        e,
        groups,
        level,
    )


def paired_accuracy_difference(
    right_a: npt.ArrayLike,
    right_b: npt.ArrayLike,
    *,
    n_boot: int = ANALYSIS.n_boot,
    level: float = ANALYSIS.level,
    random_state: int | None = 0,
) -> tuple[float, float, float]:
    """Accuracy of verdict a minus that of verdict b on the same items, with a paired interval.

    Parameters
    ----------
    right_a, right_b : array-like of float in [0, 1]
        Per item: 1 when the verdict is right, 0 when wrong, 1/2 for a tie (half right, as
        :func:`judgerisk.engine.describe.judge_accuracy` counts it); the same items in order.
    n_boot, level, random_state
        As in :func:`paired_auroc_difference`: the same resamples of the items.

    Returns
    -------
    (diff, low, high)
        :math:`\bar r_a - \bar r_b` and the percentile interval of its resampled values; read
        it with :func:`verdict` (the rule of :data:`BEATS_RULE`).
    """
    a = np.asarray(right_a, dtype=float)
    b = np.asarray(right_b, dtype=float)
    if a.shape != b.shape or a.ndim != 1 or a.size == 0:
        raise ValueError(f"right_a ({a.shape}) and right_b ({b.shape}) must be the same items")
    both = np.r_[a, b]
    if np.isnan(both).any() or (np.abs(both - 0.5) > 0.5).any():
        raise ValueError("right_a and right_b hold 0, 1/2 or 1 per item, no NaN")
    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1), got {level}")
    check_count("n_boot", n_boot)
    w = _bootstrap_counts(a.size, n_boot, random_state)  # items x resamples, each sums to n
    resampled = (a - b) @ w / a.size
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(resampled, [tail, 1.0 - tail])
    return float(a.mean() - b.mean()), float(low), float(high)


def auroc_interval(
    scores: npt.ArrayLike,
    errors: npt.ArrayLike,
    groups: npt.ArrayLike | None = None,
    *,
    n_boot: int = ANALYSIS.n_boot,
    level: float = ANALYSIS.level,
    random_state: int | None = 0,
) -> tuple[float, float, float]:
    """The AUROC of one score and its percentile bootstrap interval over items.

    The resamples are those of :func:`paired_auroc_difference` (same ``n_boot`` and
    ``random_state``: the same item counts), so an interval here and a paired difference there
    are read from the same resamples.

    Parameters
    ----------
    scores, errors
        As in :func:`weighted_auroc`.
    groups : array-like, optional
        Vote patterns: only (error, correct) pairs within a pattern count (the matched-vote
        AUROC of :func:`weighted_auroc` and its interval).
    n_boot, level, random_state
        As in :func:`paired_auroc_difference`.

    Returns
    -------
    (auroc, low, high)
    """
    s, e = _check_inputs(scores, errors, groups)
    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1), got {level}")
    w = _bootstrap_counts(len(e), n_boot, random_state)
    num, den = _resample_sums(s, e, _group_labels(groups, len(e)), w)
    ok = den > 0
    if not ok.any():
        nan = float("nan")
        return nan, nan, nan
    alpha = (1.0 - level) / 2.0
    low, high = np.quantile(num[ok] / den[ok], [alpha, 1.0 - alpha])
    return weighted_auroc(s, e, groups=groups), float(low), float(high)


def _group_labels(groups, n: int) -> np.ndarray:
    return np.zeros(n, np.int64) if groups is None else pd.factorize(np.asarray(groups))[0]


def _resample_sums(score: np.ndarray, e: np.ndarray, labels: np.ndarray, w: np.ndarray):
    """Per resample: weighted count of correctly ordered pairs, and of pairs (within groups)."""
    n_boot = w.shape[1]
    num = np.zeros(n_boot)
    den = np.zeros(n_boot)
    for code in np.unique(labels):
        pos = np.flatnonzero((labels == code) & (e == 1))
        neg = np.flatnonzero((labels == code) & (e == 0))
        if len(pos) == 0 or len(neg) == 0:
            continue
        w_pos, w_neg = w[pos], w[neg]
        num += ((_block_kernel(score, neg, pos) @ w_pos) * w_neg).sum(axis=0, dtype=np.float64)
        den += w_pos.sum(axis=0, dtype=np.float64) * w_neg.sum(axis=0, dtype=np.float64)
    return num, den


def _difference(auroc_a, auroc_b, num_diff, den, e, groups, level) -> PairedDifference:
    """The percentile interval of ``num_diff / den`` over the resamples with a pair."""
    g = _same_group(groups, e)
    n, n_pos = len(e), int(e.sum())
    n_pairs = int(g.sum()) if g is not None else n_pos * (n - n_pos)
    if n_pairs == 0:
        nan = float("nan")
        return PairedDifference(nan, nan, nan, nan, nan, n, n_pos, 0, 0)
    ok = den > 0
    if not ok.all():
        warnings.warn(
            f"{int((~ok).sum())} of {len(den)} bootstrap resamples had no (error, correct) pair "
            "and were left out of the interval",
            stacklevel=3,
        )
    alpha = (1.0 - level) / 2.0
    low, high = np.quantile(num_diff[ok] / den[ok], [alpha, 1.0 - alpha])
    return PairedDifference(
        auroc_a,
        auroc_b,
        auroc_a - auroc_b,
        float(low),
        float(high),
        n,
        n_pos,
        n_pairs,
        int(ok.sum()),
    )


def _subset_rows(pooled: pd.DataFrame, subset: str) -> tuple[pd.DataFrame, np.ndarray | None]:
    if subset == "all":
        return pooled, None
    if subset in ("hc", "prob_hc"):
        return pooled.loc[pooled[subset].to_numpy(bool)], None
    if subset == "matched":
        return pooled, pooled["pattern"].to_numpy()
    raise ValueError(f"unknown subset {subset!r}; choose from {list(PAIRED_SUBSETS)}")


def compare_pairs(
    pooled: pd.DataFrame,
    pairs: Sequence[tuple[str, str]],
    subsets: Sequence[str] = ("all", "hc", "matched"),
    *,
    n_boot: int = ANALYSIS.n_boot,
    level: float = ANALYSIS.level,
    random_state: int | None = 0,
) -> pd.DataFrame:
    """Paired AUROC differences of pairs of pooled scores, per subset.

    Parameters
    ----------
    pooled : pandas.DataFrame
        Output of :func:`judgerisk._book.studies.pooled.pooled_scores`.
    pairs : sequence of (str, str)
        Score columns ``(a, b)``; each row reports AUROC(a) - AUROC(b).
    subsets : sequence of str, default ("all", "hc", "matched")
        Among :data:`PAIRED_SUBSETS`.
    n_boot, level, random_state
        As in :func:`paired_auroc_difference`. Every comparison of a subset uses the same
        resamples, so each score's resampled pair counts are computed once and shared.

    Returns
    -------
    pandas.DataFrame
        Tidy, one row per subset and pair: ``subset, ref, method, auroc_ref, auroc, diff,
        low, high, verdict, n_items, n_errors, n_boot`` (``ref`` = a, ``method`` = b,
        ``diff = auroc_ref - auroc``; ``n_boot``: the resamples that held an (error, correct)
        pair, on which the interval rests). The verdict follows :data:`BEATS_RULE`. Items
        where either score is NaN are left out of that comparison (``n_items`` says how many
        were compared); under matched votes only items in vote patterns with both an error
        and a correct verdict count.
    """
    for col in ("error", "hc", "prob_hc", "pattern"):
        if col not in pooled.columns:
            raise PanelError(f"pooled lacks column {col!r}; pass the output of pooled_scores")
    missing = sorted({c for pair in pairs for c in pair} - set(pooled.columns))
    if missing:
        raise ValueError(f"no column(s) {missing} in pooled; got {list(pooled.columns)}")
    rows = []
    for subset in subsets:
        sub, groups = _subset_rows(pooled, subset)
        cache: dict = {}
        for a, b in pairs:
            ok = sub[[a, b]].notna().all(axis=1).to_numpy()
            err, grp = sub["error"].to_numpy()[ok], None if groups is None else groups[ok]
            usable = np.ones(len(err), bool) if grp is None else _usable(err, grp)
            err, grp = err[usable], None if grp is None else grp[usable]
            key = bool(ok.all())  # the shared item set: reuse each score's resampled sums
            labels = _group_labels(grp, len(err))
            w = _bootstrap_counts(len(err), n_boot, random_state)
            stats = {}
            for col in (a, b):
                if not key or col not in cache:
                    x = sub[col].to_numpy(float)[ok][usable]
                    value = (weighted_auroc(x, err, groups=grp), *_resample_sums(x, err, labels, w))
                    if key:
                        cache[col] = value
                stats[col] = cache[col] if key else value
            with warnings.catch_warnings():  # resamples left out: reported as n_boot below
                warnings.filterwarnings("ignore", ".*bootstrap resamples had no", UserWarning)
                d = _difference(
                    stats[a][0],
                    stats[b][0],
                    stats[a][1] - stats[b][1],
                    stats[a][2],
                    err,
                    grp,
                    level,
                )
            rows.append(
                {
                    "subset": subset,
                    "ref": a,
                    "method": b,
                    "auroc_ref": d.auroc_a,
                    "auroc": d.auroc_b,
                    "diff": d.diff,
                    "low": d.low,
                    "high": d.high,
                    "verdict": d.verdict if d.n_pairs else "undefined",
                    "n_items": d.n_items,
                    "n_errors": d.n_errors,
                    "n_boot": d.n_boot,
                }
            )
    return pd.DataFrame(rows)


def compare_scores(
    pooled: pd.DataFrame,
    reference: str = "scur",
    others: Sequence[str] | None = None,
    subsets: Sequence[str] = ("all", "hc", "matched"),
    *,
    n_boot: int = ANALYSIS.n_boot,
    level: float = ANALYSIS.level,
    random_state: int | None = 0,
) -> pd.DataFrame:
    """Paired AUROC differences of one pooled score against others, per subset.

    Parameters
    ----------
    pooled : pandas.DataFrame
        Output of :func:`judgerisk._book.studies.pooled.pooled_scores`.
    reference : str, default "scur"
        The score compared with the others.
    others : sequence of str, optional
        Default: the baselines among the columns (PE, VE, MSP, DS entropy).
    subsets : sequence of str, default ("all", "hc", "matched")
        Among :data:`PAIRED_SUBSETS`.
    n_boot, level, random_state
        As in :func:`compare_pairs`.

    Returns
    -------
    pandas.DataFrame
        :func:`compare_pairs` without ``ref``: ``subset, method, auroc_ref, auroc, diff, low,
        high, verdict, n_items, n_errors, n_boot``.
    """
    if others is None:
        others = [m for m in BASELINES if m in pooled.columns]
    table = compare_pairs(
        pooled,
        [(reference, m) for m in others],
        subsets,
        n_boot=n_boot,
        level=level,
        random_state=random_state,
    )
    return table.drop(columns="ref")


def _usable(err: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Items in groups (vote patterns) that hold both an error and a correct verdict."""
    g = pd.Series(err).groupby(np.asarray(groups)).transform(lambda x: x.nunique() == 2)
    return g.to_numpy(bool)


# --------------------------------------------------------------------------- tables


def best_rows(table: pd.DataFrame) -> pd.DataFrame:
    """Per subset, the row of the strongest other score (highest AUROC) of a comparison."""
    idx = table.dropna(subset=["auroc"]).groupby("subset", sort=False)["auroc"].idxmax()
    return table.loc[idx].set_index("subset")
