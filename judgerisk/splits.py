"""Random fit / reference / evaluation splits of items (cross-fitting, Methods reference §3).

For each seed the items are split at random 50 / 30 / 20 into

* **fit** items, which alone estimate the latent measurement model's judge and
  condition parameters;
* **reference** items, whose risk signals define the frozen ECDFs;
* **evaluation** items, which are scored against those frozen ECDFs.

References
----------
Methods reference §3; "Can We Trust This Evaluation? Instance-Level Reliability of
LLM-as-a-Judge" (cross-fitting: "items are randomly partitioned into fit, reference,
and evaluation splits in a 50/30/20 ratio").
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

__all__ = ["SPLIT_NAMES", "split_counts", "split_items"]

#: Split labels, in the order of the ``fractions`` argument.
SPLIT_NAMES: tuple[str, str, str] = ("fit", "reference", "evaluation")


def split_counts(n: int, fractions: Sequence[float] = (0.5, 0.3, 0.2)) -> tuple[int, int, int]:
    """Exact split sizes for ``n`` items by the largest-remainder rule.

    Parameters
    ----------
    n : int
        Number of items (>= 0).
    fractions : sequence of three floats, default (0.5, 0.3, 0.2)
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
    items: Iterable, seed: int | None, fractions: Sequence[float] = (0.5, 0.3, 0.2)
) -> pd.Series:
    """Assign each item at random to the fit, reference or evaluation split.

    Parameters
    ----------
    items : iterable of hashable
        Unique item ids (a list, array, Index or Series of ids; order is irrelevant).
    seed : int or None
        Seed of :func:`numpy.random.default_rng`; the same seed and item set always give
        the same split. ``None`` draws fresh entropy (not reproducible).
    fractions : sequence of three floats, default (0.5, 0.3, 0.2)
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
