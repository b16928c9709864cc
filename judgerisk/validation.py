"""Shared input checks: one home for the conversions and validations used across the package.

Label encoding ("A"/"B" ↔ 1/0), floats and booleans with named bad rows, the risk level α, item
subsets, tie blocks of sorted scores, item x judge tables of verdicts and probabilities, and the
check that new judgements hold only fitted judges. Every module imports these public functions;
none imports another module's private helpers (a test enforces it).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from judgerisk.options import (
    ACCELERATIONS,
    DEFAULT_ACCELERATE,
    InputError,
    OptionError,
    check_accelerate,
    check_alpha,
)
from judgerisk.panel._cell_table import CellTable

__all__ = [
    "ACCELERATIONS",
    "DEFAULT_ACCELERATE",
    "InputError",
    "LABELS",
    "OptionError",
    "check_accelerate",
    "align_judges",
    "as_binary",
    "as_bool",
    "as_float",
    "bad_rows",
    "binary_indicators",
    "check_alpha",
    "check_item_subset",
    "check_probs",
    "check_votes",
    "error_labels",
    "offending_rows",
    "tie_blocks",
    "to_labels",
]


#: The two verdict labels: index 1 ("A") for the original answer A, index 0 ("B").
LABELS: tuple[str, str] = ("B", "A")


def bad_rows(values: np.ndarray, mask: np.ndarray) -> str:
    """Describe up to ten offending positions of ``values`` (``"rows 3: 'x', 7: 2.0 (+5 more)"``)."""
    rows = np.flatnonzero(mask)
    shown = ", ".join(f"{r}: {values[r]!r}" for r in rows[:10])
    more = f" (+{rows.size - 10} more)" if rows.size > 10 else ""
    return f"rows {shown}{more}"


def offending_rows(
    df: pd.DataFrame,
    mask: npt.ArrayLike,
    columns: list[str],
    max_shown: int = 10,
) -> str:
    """Describe up to ``max_shown`` offending rows of a table (by row label, relevant columns).

    Examples
    --------
    >>> df = pd.DataFrame({"item": ["a", "b"], "p": [0.5, 2.0]})
    >>> print(offending_rows(df, df["p"] > 1, ["item", "p"]))
    1 offending row(s):
      row 1: item='b', p=2.0
    """
    mask = np.asarray(mask, dtype=bool)
    n_bad = int(mask.sum())
    shown = df.loc[mask, [c for c in columns if c in df.columns]].head(max_shown)
    lines = [
        f"  row {idx}: " + ", ".join(f"{c}={v!r}" for c, v in row.items())
        for idx, row in shown.iterrows()
    ]
    more = f"\n  ... and {n_bad - len(shown)} more" if n_bad > len(shown) else ""
    return f"{n_bad} offending row(s):\n" + "\n".join(lines) + more


# ----------------------------------------------------------------------------- labels
def as_binary(values: npt.ArrayLike, name: str = "labels") -> np.ndarray:
    """Coerce labels to an ``int8`` array with 1 = answer A, 0 = answer B.

    Parameters
    ----------
    values : array-like
        ``"A"`` / ``"B"`` strings, booleans, or the integers 0 / 1.
    name : str
        Name used in error messages.

    Returns
    -------
    numpy.ndarray of int8

    Raises
    ------
    ValueError
        Naming up to ten offending positions when a value is none of the above.

    Examples
    --------
    >>> as_binary(["A", "B", "A"]).tolist()
    [1, 0, 1]
    """
    arr = np.asarray(values.to_numpy() if isinstance(values, pd.Series) else values)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    if arr.dtype.kind in "biuf":
        num = arr.astype(np.float64)
        bad = ~((num == 0) | (num == 1))
        out = np.where(bad, -1, num).astype(np.int8)
    else:
        out = np.where(arr == "A", 1, np.where(arr == "B", 0, -1)).astype(np.int8)
        bad = out < 0
    if bad.any():
        raise ValueError(f"{name} must be 'A'/'B' or 0/1; bad values at {bad_rows(arr, bad)}")
    return out


def error_labels(verdict: npt.ArrayLike, gold: npt.ArrayLike) -> pd.Series:
    """Error labels :math:`E_i = 1[\\hat y_i \\ne y^*_i]` of verdicts against gold.

    The one definition of an error, used by the risk analyses, the retention study and the
    certified decisions. Both sides may be ``"A"``/``"B"``, booleans or 1/0 (1 = A).

    Parameters
    ----------
    verdict, gold : pandas.Series or array-like
        By item; a Series ``gold`` is aligned to ``verdict``'s index (arrays by position).

    Returns
    -------
    pandas.Series of int8
        Named ``"error"``, on ``verdict``'s index.

    Examples
    --------
    >>> error_labels(["A", "B", "A"], [1, 1, 1]).tolist()
    [0, 1, 0]
    """
    v = verdict if isinstance(verdict, pd.Series) else pd.Series(np.asarray(verdict))
    if isinstance(gold, pd.Series) and isinstance(verdict, pd.Series):
        g = gold.reindex(v.index)
    else:
        g = pd.Series(np.asarray(gold), index=v.index)
    if g.isna().any():
        raise InputError(f"gold is missing for items {list(g.index[g.isna()][:10])}")
    try:
        err = as_binary(v, "verdict") != as_binary(g, "gold")
    except ValueError as exc:
        raise InputError(str(exc)) from None
    return pd.Series(err.astype(np.int8), index=v.index, name="error")


def to_labels(wins_a: npt.ArrayLike) -> np.ndarray:
    """Map booleans or 1/0 (1 = A wins) to the labels ``"A"``/``"B"``.

    Examples
    --------
    >>> to_labels([True, False]).tolist()
    ['A', 'B']
    """
    return np.where(np.asarray(wins_a, dtype=bool), "A", "B")


def binary_indicators(arr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Vote matrices (for A, for B) of a {0, 0.5, 1, NaN} array, as float64 (a tie: 1/2 each)."""
    seen = ~np.isnan(arr)
    return np.where(seen, arr, 0.0), np.where(seen, 1.0 - arr, 0.0)


# ----------------------------------------------------------------------------- numbers
def as_float(
    values: npt.ArrayLike, name: str, lo: float | None = None, hi: float | None = None
) -> np.ndarray:
    """A one-dimensional finite float64 array, optionally within ``[lo, hi]``; errors name the rows."""
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    bad = ~np.isfinite(arr)
    if lo is not None:
        bad |= arr < lo
    if hi is not None:
        bad |= arr > hi
    if bad.any():
        rng = "" if lo is None else f" in [{lo}, {hi}]"
        raise ValueError(f"{name} must be finite{rng}; bad values at {bad_rows(arr, bad)}")
    return arr


def as_bool(values: npt.ArrayLike, name: str) -> np.ndarray:
    """A boolean array from booleans or 0/1; errors name the rows."""
    arr = np.asarray(values)
    if arr.dtype == bool:
        return arr
    num = np.asarray(arr, dtype=np.float64)
    bad = ~((num == 0) | (num == 1))
    if bad.any():
        raise ValueError(f"{name} must be boolean or 0/1; bad values at {bad_rows(num, bad)}")
    return num.astype(bool)


# ----------------------------------------------------------------------------- items
def check_item_subset(
    items: pd.Index, subset: Iterable | None, name: str = "fit_items"
) -> pd.Index:
    """The items of ``items`` that are in ``subset``, in ``items``' order (all when ``None``).

    Raises
    ------
    ValueError
        When ``subset`` has duplicates, names items not in ``items``, or is empty.
    """
    if subset is None:
        return items
    sub = pd.Index(subset)
    if sub.has_duplicates:
        raise ValueError(f"{name} has duplicates: {sub[sub.duplicated()][:10].tolist()}")
    unknown = sub.difference(items)
    if len(unknown):
        raise ValueError(f"{name} not in the panel: {unknown[:10].tolist()}")
    if len(sub) == 0:
        raise ValueError(f"{name} is empty")
    return items[items.isin(sub)]


def tie_blocks(sorted_values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Blocks of equal values in an already sorted array: ``(starts, stops)``, stops exclusive.

    Tied items enter or leave a selection together, so the selective methods (SCOPE, the naive
    selector, retention) evaluate their rules at block boundaries only.

    Examples
    --------
    >>> starts, stops = tie_blocks(np.array([0.1, 0.1, 0.3, 0.5, 0.5]))
    >>> starts.tolist(), stops.tolist()
    ([0, 2, 3], [2, 3, 5])
    """
    v = np.asarray(sorted_values)
    if v.size == 0:
        return np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.intp)
    change = v[1:] != v[:-1]
    starts = np.flatnonzero(np.concatenate([[True], change]))
    stops = np.flatnonzero(np.concatenate([change, [True]])) + 1
    return starts, stops


# ----------------------------------------------------------------------------- judges
def check_votes(votes: pd.DataFrame, name: str = "votes") -> np.ndarray:
    """Validate an item x judge table of binary verdicts and return it as a float array.

    Parameters
    ----------
    votes : pandas.DataFrame
        Rows are items, columns judges; 1.0 = "A" wins, 0.0 = "B" wins, 0.5 = a tie (half a
        vote each), NaN = missing.
        Boolean and integer dtypes are accepted.
    name : str
        Name used in error messages.

    Returns
    -------
    numpy.ndarray
        float64 array of shape (n_items, n_judges) with values in {0, 1, NaN}.

    Raises
    ------
    ValueError
        If ``votes`` is not a DataFrame, has duplicated items or judges, or holds values other
        than 0, 0.5, 1 or NaN (the message names up to 10 offending (item, judge) cells).
    """
    if isinstance(votes, CellTable):  # a sparse table: its cells are checked
        _check_cell_values(
            votes, name, lambda v: (v == 0.0) | (v == 1.0) | (v == 0.5), "votes", empty_ok=True
        )
        return votes  # type: ignore[return-value]
    if not isinstance(votes, pd.DataFrame):
        raise ValueError(f"{name} must be a pandas DataFrame (item x judge), got {type(votes)!r}")
    if votes.index.has_duplicates:
        dup = votes.index[votes.index.duplicated()].unique()[:10].tolist()
        raise ValueError(f"{name}: duplicated items in the index: {dup}")
    if votes.columns.has_duplicates:
        dup = votes.columns[votes.columns.duplicated()].unique()[:10].tolist()
        raise ValueError(f"{name}: duplicated judges in the columns: {dup}")
    try:
        arr = votes.to_numpy(dtype=np.float64, na_value=np.nan)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{name}: votes must be numeric 1.0 (A) / 0.0 (B) / NaN: {err}") from err
    bad = ~(np.isnan(arr) | (arr == 0.0) | (arr == 1.0) | (arr == 0.5))
    if bad.any():
        rows, cols = np.nonzero(bad)
        cells = [
            (votes.index[r], votes.columns[c], float(arr[r, c]))
            for r, c in zip(rows[:10], cols[:10], strict=True)
        ]
        raise ValueError(
            f"{name}: {int(bad.sum())} cells are not 1.0 (A), 0.0 (B) or NaN; "
            f"first (item, judge, value): {cells}"
        )
    return arr


def check_probs(probs: pd.DataFrame, name: str = "probs") -> np.ndarray:
    """Validate an item x judge table of probabilities P(A) in [0, 1] (NaN = missing).

    Raises
    ------
    ValueError
        If ``probs`` is not a DataFrame, holds values outside [0, 1] (naming up to ten
        (item, judge) cells) or has items with no probability.
    """
    if isinstance(probs, CellTable):  # a sparse table: its cells are checked
        _check_cell_values(probs, name, lambda v: (v >= 0.0) & (v <= 1.0), "probabilities")
        return probs  # type: ignore[return-value]
    if not isinstance(probs, pd.DataFrame):
        raise ValueError(f"{name} must be a DataFrame (item x judge), got {type(probs)!r}")
    arr = probs.to_numpy(dtype=np.float64, na_value=np.nan)
    bad = ~np.isnan(arr) & ((arr < 0) | (arr > 1))
    if bad.any():
        r, c = np.nonzero(bad)
        cells = [(probs.index[i], probs.columns[j]) for i, j in zip(r, c, strict=True)][:10]
        raise ValueError(f"probabilities outside [0, 1] at (item, judge): {cells}")
    empty = np.isnan(arr).all(axis=1)
    if empty.any():
        raise ValueError(f"items with no probability: {probs.index[empty][:10].tolist()}")
    return arr


def _check_cell_values(table: CellTable, name: str, ok, what: str, empty_ok: bool = False) -> None:
    """Refuse a :class:`~judgerisk.panel._cell_table.CellTable` with bad cells or an item with no cell."""
    bad = ~ok(table.values)
    if bad.any():
        at = np.flatnonzero(bad)[:10]
        cells = [
            (table.index[table.row[k]], table.columns[table.col[k]], float(table.values[k]))
            for k in at
        ]
        raise ValueError(f"{name}: {int(bad.sum())} cells are not valid {what}; first: {cells}")
    empty = table.row_count() == 0
    if not empty_ok and empty.any():
        raise ValueError(f"{name}: items with no cell: {table.index[empty][:10].tolist()}")


def align_judges(table: Any, judges: pd.Index, name: str = "votes") -> Any:
    """Reorder ``table``'s judge columns to the fitted ``judges`` (absent judges become NaN).

    A :class:`~judgerisk.panel._cell_table.CellTable` is aligned by its cells (nothing is filled in).

    Raises
    ------
    ValueError
        When ``table`` has judges that were not seen in fit.
    """
    if isinstance(table, CellTable):
        return table.align_columns(judges, name)
    unknown = pd.Index(table.columns).difference(judges)
    if len(unknown):
        raise ValueError(
            f"{name} has judges not seen in fit: {unknown[:10].tolist()} "
            f"(fitted judges: {list(judges)[:20]})"
        )
    return table.reindex(columns=judges)
