"""Fit / reference / evaluation splits of items (cross-fitting, Methods reference §3).

Every split labels each item as one of

* **fit** items, which alone estimate the latent measurement model's judge and
  condition parameters;
* **reference** items, whose risk signals define the frozen ECDFs;
* **evaluation** items, which are scored against those frozen ECDFs.

Two protocols draw the splits (:func:`cross_fit_splits`):

* ``"kfold"`` (the default): repeated K-fold cross-fitting. The items are partitioned into K
  folds (:func:`fold_labels`); each fold is once the evaluation set, the next fold the
  reference set and the rest the fit set (:func:`fold_split`; K = 5 gives 60 / 20 / 20), so
  every item is evaluated exactly once per repetition.
* ``"paper"``: the paper's independent random 50 / 30 / 20 splits (:func:`split_items`), under
  which an item may be evaluated in none of the splits.

References
----------
Methods reference §3; "Can We Trust This Evaluation? Instance-Level Reliability of
LLM-as-a-Judge" (cross-fitting: "items are randomly partitioned into fit, reference,
and evaluation splits in a 50/30/20 ratio"); V. Chernozhukov et al. (2018), "Double/debiased
machine learning", *The Econometrics Journal* 21, C1-C68 (repeated K-fold cross-fitting).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from judgerisk.options import (
    ANALYSIS,
    DEFAULT_FOLDS,
    DEFAULT_PROTOCOL,
    DEFAULT_REPEATS,
    PROTOCOLS,
    check_count,
)

__all__ = [
    "DEFAULT_REPEATS",
    "PROTOCOLS",
    "SPLIT_NAMES",
    "cross_fit_splits",
    "fold_labels",
    "fold_split",
    "split_counts",
    "split_items",
]

#: Split labels, in the order of the ``fractions`` argument.
SPLIT_NAMES: tuple[str, str, str] = ("fit", "reference", "evaluation")


def split_counts(n: int, fractions: Sequence[float] = ANALYSIS.fractions) -> tuple[int, int, int]:
    """Exact split sizes for ``n`` items by the largest-remainder rule.

    Parameters
    ----------
    n : int
        Number of items (>= 0).
    fractions : sequence of three floats, default ``ANALYSIS.fractions``
        Non-negative shares of fit, reference and evaluation items, summing to 1
        (within 1e-9).

    Returns
    -------
    tuple of int
        ``(n_fit, n_reference, n_evaluation)``, summing to ``n``.

    Notes
    -----
    Each split first gets :math:`\\lfloor f_k n \\rfloor` items; the
    :math:`n - \\sum_k \\lfloor f_k n \\rfloor` items left over go one each to the splits
    with the largest fractional parts :math:`f_k n - \\lfloor f_k n \\rfloor`, ties broken
    in the order fit, reference, evaluation. So 2,000 items give (1000, 600, 400),
    10 give (5, 3, 2), 7 give (4, 2, 1) and 3 give (1, 1, 1).
    """
    if int(n) != n or n < 0:
        raise ValueError(f"n must be a non-negative integer, got {n!r}")
    f = np.asarray(fractions, dtype=np.float64)
    if f.shape != (3,):
        raise ValueError(
            f"fractions must be three numbers (fit, reference, evaluation), got {fractions!r}"
        )
    if not np.all(np.isfinite(f)) or np.any(f < 0) or abs(f.sum() - 1.0) > 1e-9:
        raise ValueError(f"fractions must be non-negative and sum to 1, got {fractions!r}")
    exact = f * n
    counts = np.floor(exact + 1e-9).astype(np.int64)
    left = int(n - counts.sum())
    if left > 0:
        # largest fractional part first; stable sort keeps fit < reference < evaluation on ties
        order = np.argsort(-(exact - counts), kind="stable")
        counts[order[:left]] += 1
    return int(counts[0]), int(counts[1]), int(counts[2])


def split_items(
    items: Iterable, seed: int | None, fractions: Sequence[float] = ANALYSIS.fractions
) -> pd.Series:
    """Assign each item at random to the fit, reference or evaluation split.

    Parameters
    ----------
    items : iterable of hashable
        Unique item ids (a list, array, Index or Series of ids; order is irrelevant).
    seed : int or None
        Seed of :func:`numpy.random.default_rng`; the same seed and item set always give
        the same split. ``None`` draws fresh entropy (not reproducible).
    fractions : sequence of three floats, default ``ANALYSIS.fractions``
        Shares of fit, reference and evaluation items; sizes follow
        :func:`split_counts` exactly.

    Returns
    -------
    pandas.Series
        Indexed by item (sorted, index name ``"item"``), named ``"split"``, with values
        ``"fit"``, ``"reference"`` or ``"evaluation"``.

    Raises
    ------
    ValueError
        On duplicate or missing item ids, or invalid fractions.

    Notes
    -----
    The items are sorted, then permuted by ``default_rng(seed).permutation``; the first
    ``n_fit`` of the permutation are fit items, the next ``n_reference`` reference items
    and the rest evaluation items. The split depends only on the set of items and the
    seed, not on the order in which the items are given.

    References
    ----------
    Methods reference §3.
    """
    index = pd.Index(items if hasattr(items, "__len__") else list(items))
    if index.hasnans:
        raise ValueError("items contain missing ids (NaN/None)")
    if index.has_duplicates:
        dups = list(index[index.duplicated()].unique()[:10])
        raise ValueError(f"items must be unique; duplicated ids: {dups}")
    counts = split_counts(len(index), fractions)
    index = index.sort_values()
    index.name = "item"
    labels = np.repeat(np.array(SPLIT_NAMES, dtype=object), counts)
    perm = np.random.default_rng(seed).permutation(len(index))
    out = np.empty(len(index), dtype=object)
    out[perm] = labels
    return pd.Series(out, index=index, name="split", dtype=object)


def fold_labels(items: Iterable, seed: int | None, n_folds: int = DEFAULT_FOLDS) -> pd.Series:
    """Partition the items at random into ``n_folds`` folds of (almost) equal size.

    Parameters
    ----------
    items : iterable of hashable
        Unique item ids.
    seed : int or None
        Seed of :func:`numpy.random.default_rng` (one partition per seed).
    n_folds : int, default 5
        Number of folds K (>= 3: one evaluation, one reference, at least one fit fold).

    Returns
    -------
    pandas.Series
        Fold number 0 .. K-1 by item (sorted, index name ``"item"``), named ``"fold"``. Fold
        sizes differ by at most one.
    """
    n_folds = check_count("n_folds", n_folds)
    index = split_items(items, seed, (1.0, 0.0, 0.0)).index
    perm = np.random.default_rng(seed).permutation(len(index))
    folds = np.empty(len(index), dtype=np.int64)
    folds[perm] = np.arange(len(index)) % n_folds
    return pd.Series(folds, index=index, name="fold")


def fold_split(folds: pd.Series, k: int) -> pd.Series:
    """The fit / reference / evaluation split in which fold ``k`` is evaluated.

    Fold ``k`` is the evaluation set, fold ``(k + 1) mod K`` the reference set and the other
    K - 2 folds the fit set; with K = 5 the proportions are 60 / 20 / 20.

    Returns
    -------
    pandas.Series
        Like :func:`split_items`: ``"fit"``, ``"reference"`` or ``"evaluation"`` by item.
    """
    n_folds = int(folds.max()) + 1
    f = folds.to_numpy()
    out = np.full(len(f), "fit", dtype=object)
    out[f == (k + 1) % n_folds] = "reference"
    out[f == k] = "evaluation"
    return pd.Series(out, index=folds.index, name="split", dtype=object)


def cross_fit_splits(
    items: Iterable,
    n_repeats: int,
    seed: int = 0,
    protocol: str = DEFAULT_PROTOCOL,
    n_folds: int = DEFAULT_FOLDS,
    fractions: Sequence[float] = ANALYSIS.fractions,
) -> list[tuple[int, int, pd.Series]]:
    """Every fit / reference / evaluation split of a cross-fitting run, in order.

    Parameters
    ----------
    items : iterable of hashable
        Unique item ids.
    n_repeats : int
        ``"kfold"``: repetitions R, each a new random partition into ``n_folds`` folds, every
        fold evaluated once, so every item is evaluated exactly R times. ``"paper"``: the
        number of independent random splits (an item is evaluated in about
        ``fractions[2] * n_repeats`` of them, possibly none).
    seed : int, default 0
        Repetition r uses seed ``seed + r``.
    protocol : {"kfold", "paper"}, default "kfold"
        Repeated K-fold cross-fitting, or the paper's independent random splits
        (:func:`split_items` with ``fractions``).
    n_folds : int, default 5
        K of ``"kfold"`` (K = 5: 60 / 20 / 20).
    fractions : three floats, default ``ANALYSIS.fractions``
        Fit / reference / evaluation shares of ``"paper"``.

    Returns
    -------
    list of (int, int, pandas.Series)
        ``(seed of the repetition, fold, split)``; ``fold`` is 0 under ``"paper"``.

    Notes
    -----
    Under ``"kfold"`` the evaluation sets of one repetition partition the items, so averages
    over repetitions give every item the same number of out-of-fold evaluations; under
    ``"paper"`` an item is never evaluated with probability :math:`(1 - f_e)^{R}` (about 11 %
    for :math:`f_e = .2, R = 10`).

    References
    ----------
    V. Chernozhukov et al., "Double/debiased machine learning for treatment and structural
    parameters", *The Econometrics Journal* 21 (2018), C1-C68 (repeated K-fold cross-fitting);
    Methods reference §3 and the SCUR paper's cross-fitting appendix (random splits).
    """
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol must be one of {PROTOCOLS}, got {protocol!r}")
    check_count("n_repeats", n_repeats)
    items = list(items) if not hasattr(items, "__len__") else items
    out = []
    for s in range(seed, seed + int(n_repeats)):
        if protocol == "paper":
            out.append((s, 0, split_items(items, s, fractions)))
            continue
        folds = fold_labels(items, s, n_folds)
        out.extend((s, k, fold_split(folds, k)) for k in range(int(n_folds)))
    return out
