"""A reader's rows -> the panel's cells: repeated cells resolved, dropped cells counted.

A cell is one ``(item, judge, condition)``. Tools append reruns to the same file (FastChat's
``gen_judgment.py``; its own loader keeps the last record), and a folder can hold two copies of
a run; a repeated cell is then resolved by the duplicates policy:

- ``"error"`` (default): refused, naming the file and line of both records;
- ``"first"`` / ``"last"``: the first / last record read is kept (files in the order given, a
  folder's files sorted by path, records in file order) and the others are counted.

The policy is applied before dropped cells (errors, nulls) are left out, so a rerun whose game
errored replaces the earlier verdict by nothing, as the tool's own loader would.
"""

from __future__ import annotations

from collections import Counter

import pandas as pd

from judgerisk.importers.base import DROP, WHERE
from judgerisk.options import ORIGINAL
from judgerisk.panel import PanelError

__all__ = ["DUPLICATES", "resolve_cells"]

#: The duplicates policies: refuse, keep the first record read, keep the last.
DUPLICATES = ("error", "first", "last")
_CELL = ["item", "judge", "condition"]


def _where(rows: pd.DataFrame, k: int) -> str:
    if WHERE in rows.columns and isinstance(rows[WHERE].iloc[k], str):
        return str(rows[WHERE].iloc[k])
    return f"row {k} of the reader's output"


def _duplicates(rows: pd.DataFrame, policy: str, dropped: Counter) -> pd.DataFrame:
    if policy not in DUPLICATES:
        raise PanelError(f"duplicates must be one of {list(DUPLICATES)}, got {policy!r}")
    repeated = rows.duplicated(_CELL, keep=False).to_numpy()
    if not repeated.any():
        return rows
    if policy == "error":
        first = int(repeated.nonzero()[0][0])
        cell = tuple(rows.iloc[first][c] for c in _CELL)
        same = (rows[_CELL] == pd.Series(cell, index=_CELL)).all(axis=1).to_numpy()
        second = int(same.nonzero()[0][1])
        extra = int(rows.duplicated(_CELL, keep="first").sum())
        raise PanelError(
            f"{_where(rows, first)} and {_where(rows, second)}: the same cell (item "
            f"{cell[0]!r}, judge {cell[1]!r}, condition {cell[2]!r}) twice, {extra} repeated "
            "cell(s) in all (a rerun appended to the file, or two copies of a run); keep one "
            "record of each with --duplicates last (FastChat's own loader keeps the last) or "
            "--duplicates first"
        )
    gone = rows.duplicated(_CELL, keep="last" if policy == "last" else "first").to_numpy()
    dropped[f"repeated cells (kept the {policy} record read)"] += int(gone.sum())
    return rows.loc[~gone]


def _marked(rows: pd.DataFrame, dropped: Counter) -> pd.DataFrame:
    if DROP not in rows.columns:
        return rows
    reason = rows[DROP]
    gone = reason.notna().to_numpy()
    for why in reason[gone]:
        dropped[str(why)] += 1
    return rows.loc[~gone]


def _orphans(rows: pd.DataFrame, dropped: Counter) -> pd.DataFrame:
    """Drop (and count) the rows of items left with no original-order verdict by any judge."""
    has = set(rows.loc[rows["condition"] == ORIGINAL, "item"])
    orphan = ~rows["item"].isin(has).to_numpy()
    if orphan.any():
        dropped["verdicts of items with no original-order verdict left"] += int(orphan.sum())
    return rows.loc[~orphan]


def resolve_cells(
    rows: pd.DataFrame, dropped: Counter, duplicates: str = "error"
) -> tuple[pd.DataFrame, Counter]:
    """Apply the duplicates policy, leave out the dropped cells and the orphans, count each.

    Parameters
    ----------
    rows : pandas.DataFrame
        A reader's rows (:class:`judgerisk.importers.Imported`), with the optional bookkeeping
        columns ``WHERE`` and ``DROP`` of :mod:`judgerisk.importers.base`.
    dropped : collections.Counter
        The reader's own counts (reason -> number of judgements left out); not changed.
    duplicates : {"error", "first", "last"}, default "error"
        The duplicates policy (module docstring).

    Returns
    -------
    rows : pandas.DataFrame
        The cells kept, without the bookkeeping columns, with a fresh index.
    dropped : collections.Counter
        Reason -> count, the reader's and these steps'.
    """
    dropped = Counter(dropped)
    if rows.empty:
        return rows.drop(columns=[WHERE, DROP], errors="ignore"), dropped
    rows = _duplicates(rows.reset_index(drop=True), duplicates, dropped)
    rows = _orphans(_marked(rows, dropped), dropped)
    rows = rows.drop(columns=[WHERE, DROP], errors="ignore").reset_index(drop=True)
    return rows, dropped
