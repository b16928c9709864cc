"""Metrics for ranking panel errors by a risk score (Methods reference §6).

Every function here is pure: it takes per-item scores, error labels and (for the consensus masks
and the matched-vote analysis) the wide item x judge matrices of :func:`judgerisk.panel.verdicts`
/ :func:`judgerisk.panel.to_wide`, and returns numbers, masks or small tables. Gold labels enter
only through the ``errors`` argument (``1`` = the aggregated verdict disagrees with gold).

References
----------
- "Can We Trust This Evaluation? Instance-Level Reliability of LLM-as-a-Judge", Section 4 and
  Appendix D (high consensus, probability-based high consensus, matched vote patterns).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import pandas as pd

from judgerisk.options import ANALYSIS
from judgerisk.panel._cell_table import CellTable
from judgerisk.validation import tie_blocks

__all__ = [
    "auroc",
    "auroc_table",
    "matched_vote_groups",
    "matched_vote_auroc",
    "matched_vote_mask",
    "vote_patterns",
    "high_consensus",
    "consensus_share",
    "probability_high_consensus",
    "retention_table",
    "RETENTION_FRACTIONS",
    "align_scores",
    "keep_count",
]

#: Retention levels of Methods reference §6: keep the lowest-risk ceil(rho * n) items.
RETENTION_FRACTIONS: tuple[float, ...] = (1.0, 0.9, 0.8, 0.7, 0.6, 0.5)

_EPS = 1e-9  # guards ">= threshold" and ceil(rho * n) against binary rounding of 0.8, 0.7, ...


def _as_errors(errors, name: str = "errors") -> pd.Series:
    """Return ``errors`` as an int8 Series of 0/1, raising on anything else."""
    s = errors if isinstance(errors, pd.Series) else pd.Series(np.asarray(errors))
    if s.isna().any():
        bad = s.index[s.isna()][:10].tolist()
        raise ValueError(f"{name} has missing values at items {bad}")
    values = s.to_numpy()
    if values.dtype == bool:
        return s.astype(np.int8)
    try:
        numeric = values.astype(float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be 0/1 or boolean, got dtype {s.dtype}") from exc
    bad_mask = ~np.isin(numeric, (0.0, 1.0))
    if bad_mask.any():
        bad = s.index[bad_mask][:10].tolist()
        raise ValueError(f"{name} must be 0/1; items {bad} have {np.unique(values[bad_mask])[:10]}")
    return pd.Series(numeric.astype(np.int8), index=s.index, name=s.name)


def align_scores(scores: npt.ArrayLike, errors: npt.ArrayLike) -> tuple[pd.Series, pd.Series]:
    """Align ``scores`` to the index of ``errors``; raise on missing items or non-finite scores."""
    err = _as_errors(errors)
    if isinstance(scores, pd.Series) and isinstance(errors, pd.Series):
        missing = err.index.difference(scores.index)
        if len(missing):
            raise ValueError(
                f"scores lack {len(missing)} items of errors, e.g. {missing[:10].tolist()}"
            )
        sc = scores.reindex(err.index)
    else:
        arr = np.asarray(scores, dtype=float)
        if arr.shape != (len(err),):
            raise ValueError(f"scores has shape {arr.shape}, errors has length {len(err)}")
        sc = pd.Series(arr, index=err.index)
    sc = sc.astype(float)
    bad = ~np.isfinite(sc.to_numpy())
    if bad.any():
        raise ValueError(f"scores are not finite at items {sc.index[bad][:10].tolist()}")
    return sc, err


def auroc(scores: npt.ArrayLike, errors: npt.ArrayLike) -> float:
    """AUROC of a risk score for panel errors (positive class = error).

    Parameters
    ----------
    scores : pandas.Series or array-like
        Risk score per item (higher = riskier). A Series is aligned to ``errors`` by index.
    errors : pandas.Series or array-like of {0, 1} or bool
        ``1`` where the aggregated verdict differs from gold.

    Returns
    -------
    float
        :func:`sklearn.metrics.roc_auc_score`; ``nan`` when ``errors`` holds a single class (or no
        items), since AUROC is then undefined.

    Notes
    -----
    AUROC = P(score of a random error > score of a random non-error) + ½ P(tie), i.e. ties count ½
    (the Mann–Whitney statistic divided by n⁺ n⁻).
    """
    sc, err = align_scores(scores, errors)
    n_pos = int(err.sum())
    if n_pos == 0 or n_pos == len(err):
        return float("nan")
    from sklearn.metrics import roc_auc_score  # scikit-learn loads slowly: only when used

    return float(roc_auc_score(err.to_numpy(), sc.to_numpy()))


def auroc_table(scores: pd.DataFrame, errors: npt.ArrayLike) -> pd.Series:
    """AUROC for errors of several risk scores at once (one per column of ``scores``).

    Parameters
    ----------
    scores : pandas.DataFrame
        Item x method risk scores; aligned to ``errors`` by index.
    errors : pandas.Series of {0, 1} or bool
        Error labels by item.

    Returns
    -------
    pandas.Series
        AUROC by column, equal to :func:`auroc` of each column (ties ½; nan when ``errors`` holds a
        single class).

    Notes
    -----
    One call of :func:`sklearn.metrics.roc_auc_score` on the multilabel indicator formed by
    repeating ``errors`` for every column (``average=None``), which shares scikit-learn's input
    checks between the columns.
    """
    if not isinstance(scores, pd.DataFrame):
        raise ValueError(f"scores must be a DataFrame (item x method), got {type(scores).__name__}")
    err = _as_errors(errors)
    missing = err.index.difference(scores.index)
    if len(missing):
        raise ValueError(
            f"scores lack {len(missing)} items of errors, e.g. {missing[:10].tolist()}"
        )
    arr = scores.reindex(err.index).to_numpy(dtype=float)
    bad = ~np.isfinite(arr)
    if bad.any():
        rows = err.index[bad.any(axis=1)][:10].tolist()
        cols = scores.columns[bad.any(axis=0)].tolist()
        raise ValueError(f"scores are not finite in columns {cols} at items {rows}")
    n_pos = int(err.sum())
    if n_pos == 0 or n_pos == len(err) or arr.shape[1] == 0:
        return pd.Series(np.nan, index=scores.columns, name="auroc", dtype=float)
    from sklearn.metrics import roc_auc_score

    y = np.repeat(err.to_numpy()[:, None], arr.shape[1], axis=1)
    values = roc_auc_score(y, arr, average=None)
    return pd.Series(np.asarray(values, dtype=float), index=scores.columns, name="auroc")


def _pattern_codes(votes: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Integer group id per row for the exact vote vector (NaN = not seen is its own value)."""
    arr = votes.to_numpy(dtype=float)
    bad = ~(np.isnan(arr) | (arr == 0.0) | (arr == 1.0) | (arr == 0.5))
    if bad.any():
        rows = votes.index[bad.any(axis=1)][:10].tolist()
        raise ValueError(f"votes must be 1.0/0.5/0.0/NaN; items {rows} have other values")
    # a tie (0.5) is its own vote value: the pattern keeps it apart from A and B
    codes = np.where(np.isnan(arr), -1, np.where(arr == 0.5, 2, arr)).astype(np.int8)
    uniq, inverse = np.unique(codes, axis=0, return_inverse=True)
    return uniq, inverse.reshape(-1)


def _pattern_label(row: np.ndarray) -> str:
    return "".join({1: "A", 0: "B", 2: "T", -1: "."}[int(v)] for v in row)


def vote_patterns(votes: pd.DataFrame) -> pd.Series:
    """Each item's original-condition vote vector as a label, one character per judge.

    Parameters
    ----------
    votes : pandas.DataFrame
        Item x judge verdicts (1.0 = A, 0.0 = B, 0.5 = a tie, NaN = missing).

    Returns
    -------
    pandas.Series of str
        By item, e.g. ``"AABA."``: judge by judge in column order, ``A`` / ``B`` for the candidate
        voted for, ``T`` for a tie and ``.`` for a missing vote. Items with the same label form one matched-vote
        group.
    """
    uniq, group = _pattern_codes(votes)
    labels = np.array([_pattern_label(r) for r in uniq], dtype=object)
    return pd.Series(labels[group], index=votes.index, name="pattern")


def matched_vote_groups(
    votes: pd.DataFrame, errors: npt.ArrayLike, scores: npt.ArrayLike | None = None
) -> pd.DataFrame:
    """Group items by their exact original-condition vote vector (judge by judge).

    Parameters
    ----------
    votes : pandas.DataFrame
        Item x judge matrix of original-condition verdicts (1.0 = A, 0.0 = B, NaN = missing), e.g.
        :func:`judgerisk.panel.verdicts`. Rows are taken for the items of ``errors``.
    errors : pandas.Series of {0, 1}
        Error labels by item.
    scores : pandas.Series, optional
        A risk score by item; adds the within-group AUROC.

    Returns
    -------
    pandas.DataFrame
        One row per vote pattern: ``pattern`` (one character per judge in column order: ``A``,
        ``B``, ``.`` for missing), ``n_items``, ``n_errors``, ``n_correct``, ``weight`` = n⁺ n⁻,
        ``usable`` (both classes present), and ``auroc`` (nan when not usable) if ``scores`` is
        given. Sorted by decreasing ``n_items``.
    """
    err = _as_errors(errors)
    missing = err.index.difference(votes.index)
    if len(missing):
        raise ValueError(f"votes lack {len(missing)} items of errors, e.g. {missing[:10].tolist()}")
    v = votes.reindex(err.index)
    uniq, group = _pattern_codes(v)
    n_groups = len(uniq)
    n_items = np.bincount(group, minlength=n_groups)
    n_err = np.bincount(group, weights=err.to_numpy(), minlength=n_groups).astype(np.int64)
    n_cor = n_items - n_err
    table = pd.DataFrame(
        {
            "pattern": [_pattern_label(r) for r in uniq],
            "n_items": n_items,
            "n_errors": n_err,
            "n_correct": n_cor,
            "weight": n_err * n_cor,
            "usable": (n_err > 0) & (n_cor > 0),
        }
    )
    if scores is not None:
        u_stat = _group_u_statistics(scores, err, group, n_groups)
        with np.errstate(invalid="ignore", divide="ignore"):
            table["auroc"] = np.where(table["usable"], u_stat / table["weight"], np.nan)
    return table.sort_values(["n_items", "pattern"], ascending=[False, True], ignore_index=True)


def _group_u_statistics(scores, err: pd.Series, group: np.ndarray, n_groups: int) -> np.ndarray:
    """Mann–Whitney U (errors above non-errors, ties ½) per group, vectorised by midranks."""
    sc, _ = align_scores(scores, err)
    ranks = sc.groupby(group).rank(method="average").to_numpy()
    e = err.to_numpy().astype(float)
    rank_sum = np.bincount(group, weights=ranks * e, minlength=n_groups)
    n_pos = np.bincount(group, weights=e, minlength=n_groups)
    return rank_sum - n_pos * (n_pos + 1.0) / 2.0


def matched_vote_auroc(scores: npt.ArrayLike, errors: npt.ArrayLike, votes: pd.DataFrame) -> float:
    """Matched-vote AUROC: within-pattern AUROC, weighted by error/non-error pairs.

    Parameters
    ----------
    scores : pandas.Series
        Risk score by item.
    errors : pandas.Series of {0, 1}
        Error labels by item; defines the items analysed.
    votes : pandas.DataFrame
        Item x judge original-condition verdicts (1.0/0.0/NaN).

    Returns
    -------
    float
        nan when no group holds both an error and a non-error.

    Notes
    -----
    .. math::

        \\mathrm{AUROC}_{mv}
        = \\frac{\\sum_g n^+_g n^-_g\\,\\mathrm{AUROC}_g}{\\sum_g n^+_g n^-_g}
        = \\frac{\\sum_g U_g}{\\sum_g n^+_g n^-_g},

    over groups g of identical vote vectors that contain both classes; U_g is the Mann–Whitney
    count of (error, non-error) pairs ordered correctly, ties ½. A score constant within every
    group (vote entropy, Dawid–Skene entropy) has U_g = n⁺_g n⁻_g / 2 exactly, hence AUROC
    exactly 0.5.

    References
    ----------
    - Instance-Level Reliability of LLM-as-a-Judge, Appendix D ("matched vote patterns").
    """
    err = _as_errors(errors)
    missing = err.index.difference(votes.index)
    if len(missing):
        raise ValueError(f"votes lack {len(missing)} items of errors, e.g. {missing[:10].tolist()}")
    uniq, group = _pattern_codes(votes.reindex(err.index))
    n_groups = len(uniq)
    e = err.to_numpy().astype(float)
    n_pos = np.bincount(group, weights=e, minlength=n_groups)
    n_neg = np.bincount(group, minlength=n_groups) - n_pos
    weight = n_pos * n_neg
    total = float(weight.sum())
    if total == 0:
        return float("nan")
    u_stat = _group_u_statistics(scores, err, group, n_groups)
    return float(u_stat[weight > 0].sum()) / total


def matched_vote_mask(votes: pd.DataFrame, errors: npt.ArrayLike) -> pd.Series:
    """Boolean mask by item: the item's vote pattern holds both errors and non-errors."""
    err = _as_errors(errors)
    _, group = _pattern_codes(votes.reindex(err.index))
    e = err.to_numpy()
    n_pos = np.bincount(group, weights=e)
    n_all = np.bincount(group)
    usable = (n_pos > 0) & (n_pos < n_all)
    return pd.Series(usable[group], index=err.index, name="matched")


def consensus_share(votes: pd.DataFrame) -> pd.Series:
    """Share of an item's judges that give its majority original-condition verdict.

    Parameters
    ----------
    votes : pandas.DataFrame
        Item x judge verdicts (1.0/0.0/NaN).

    Returns
    -------
    pandas.Series
        max(n_A, n_B) / (n_A + n_B) by item, in [0.5, 1].
    """
    if isinstance(votes, CellTable):  # a sparse panel's table, by its cells
        n, n_a = votes.row_count(), votes.row_sum()
    else:
        arr = votes.to_numpy(dtype=float)
        n, n_a = np.sum(~np.isnan(arr), axis=1), np.nansum(arr, axis=1)
    if (n == 0).any():
        raise ValueError(f"items {votes.index[n == 0][:10].tolist()} have no verdict")
    return pd.Series(np.maximum(n_a, n - n_a) / n, index=votes.index, name="consensus_share")


def high_consensus(votes: pd.DataFrame, threshold: float = ANALYSIS.hc_threshold) -> pd.Series:
    """High-consensus mask: at least ``threshold`` of the judges give the same original verdict.

    Parameters
    ----------
    votes : pandas.DataFrame
        Item x judge original-condition verdicts (1.0/0.0/NaN), e.g.
        :func:`judgerisk.panel.verdicts`.
    threshold : float, default ``ANALYSIS.hc_threshold``
        Minimum share of the majority verdict (4 of 5 judges pass at 0.8).

    Returns
    -------
    pandas.Series of bool
        By item.

    Notes
    -----
    HC_i = 1[max(n_A, n_B) / J_i ≥ threshold], counted over the judges that saw the item; the
    comparison allows 1e-9 of rounding so that e.g. 4/5 passes at 0.8.
    """
    share = consensus_share(votes)
    return (share >= threshold - _EPS).rename("high_consensus")


def probability_high_consensus(
    probs: pd.DataFrame, threshold: float = ANALYSIS.prob_threshold
) -> pd.Series:
    """Probability-based high consensus: max(p̄, 1 − p̄) of the panel mean is at least ``threshold``.

    Parameters
    ----------
    probs : pandas.DataFrame or pandas.Series
        Item x judge original-condition probabilities p_ij0 (``to_wide(panel, "p")``), whose row
        means over the available judges are p̄^llm; or a Series that already holds p̄^llm by item.
    threshold : float, default ``ANALYSIS.hc_threshold``

    Returns
    -------
    pandas.Series of bool
        By item.

    Notes
    -----
    max(p̄^llm_i, 1 − p̄^llm_i) ≥ threshold, equivalently PE_i ≤ H₂(threshold).
    """
    pbar = probs.mean(axis=1, skipna=True) if isinstance(probs, pd.DataFrame) else probs
    pbar = pbar.astype(float)
    bad = pbar.isna() | (pbar < 0) | (pbar > 1)
    if bad.any():
        raise ValueError(f"mean probabilities missing or outside [0, 1] at {pbar.index[bad][:10]}")
    conf = np.maximum(pbar, 1.0 - pbar)
    return (conf >= threshold - _EPS).rename("prob_high_consensus")


def keep_count(fraction: float, n: int) -> int:
    """Number of items kept at fraction ρ: ⌈ρ n⌉ (with a 1e-9 guard, so .8 x 10 keeps 8)."""
    if not 0.0 < fraction <= 1.0:
        raise ValueError(f"keep fraction must be in (0, 1], got {fraction}")
    return min(n, max(0, math.ceil(fraction * n - _EPS)))


def retention_table(
    risk: npt.ArrayLike,
    errors: npt.ArrayLike,
    fractions: Sequence[float] = RETENTION_FRACTIONS,
    *,
    ties: str = "average",
) -> pd.DataFrame:
    r"""Accuracy when keeping the lowest-risk share ρ of items, for each ρ, and its gain over ρ = 1.

    The one implementation of retention: :func:`judgerisk.engine.retention.retention_curve`, the
    retention study, the certified-decision figures and the chapters all call it.

    Parameters
    ----------
    risk : pandas.Series or array-like
        Risk score by item (higher = riskier). A Series is aligned on ``errors``' index.
    errors : pandas.Series or array-like of {0, 1}
        Error labels of the aggregated verdicts.
    fractions : sequence of float in (0, 1], default (1, .9, .8, .7, .6, .5)
        Kept shares ρ.
    ties : {"average", "stable"}, default "average"
        How items with equal risk straddling the cut are chosen. ``"average"``: the expected
        accuracy when tied items are kept in a uniformly random order, computed exactly (the
        boundary block contributes its error rate times the number of its items kept), so the
        result does not depend on item order — it matters for scores with few distinct values
        such as vote entropy. ``"stable"``: keep tied items in the order of ``errors`` (a stable
        sort).

    Returns
    -------
    pandas.DataFrame
        Columns ``fraction``, ``n_kept``, ``accuracy``, ``gain`` (accuracy minus the accuracy of
        all items, in proportion units).

    Notes
    -----
    :math:`n_\rho = \lceil \rho n \rceil` (with a 1e-9 guard so that .8 x 10 keeps 8 items);
    :math:`\mathrm{acc}(\rho) = 1 - n_\rho^{-1} \sum_{i \in K_\rho} \mathrm{err}_i` over the
    kept set :math:`K_\rho` of the :math:`n_\rho` lowest-risk items;
    :math:`\mathrm{gain}(\rho) = \mathrm{acc}(\rho) - \mathrm{acc}(1)` (Methods reference §6).

    Examples
    --------
    >>> risk, err = [0, 0, 0, 0, 1], [1, 0, 0, 0, 0]
    >>> retention_table(risk, err, (0.6,))["accuracy"].round(3).tolist()
    [0.75]
    >>> retention_table(risk, err, (0.6,), ties="stable")["accuracy"].round(3).tolist()
    [0.667]
    """
    if ties not in ("average", "stable"):
        raise ValueError(f"ties must be 'average' or 'stable', got {ties!r}")
    sc, err = align_scores(risk, errors)
    n = len(err)
    if n == 0:
        raise ValueError("no items")
    order = np.argsort(sc.to_numpy(), kind="stable")
    e_sorted = err.to_numpy()[order].astype(float)
    cum = np.concatenate([[0.0], np.cumsum(e_sorted)])
    n_kept = np.array([keep_count(f, n) for f in fractions], dtype=np.intp)
    if ties == "stable":
        kept_err = cum[n_kept]
    else:  # the boundary tie block contributes its mean error per kept item
        starts, ends = tie_blocks(sc.to_numpy()[order])
        blk = np.searchsorted(starts, n_kept - 1, side="right") - 1  # block of the last kept item
        s, t = starts[blk], ends[blk]
        kept_err = cum[s] + (n_kept - s) * (cum[t] - cum[s]) / (t - s)
    acc = 1.0 - kept_err / n_kept
    base = 1.0 - cum[n] / n
    return pd.DataFrame(
        {
            "fraction": np.asarray(fractions, float),
            "n_kept": n_kept,
            "accuracy": acc,
            "gain": acc - base,
        }
    )
