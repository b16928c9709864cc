"""A reader's rows -> the panel's cells: repeated cells resolved, dropped cells counted.

A cell is one ``(item, judge, condition)``. Tools append reruns to the same file (FastChat's
``gen_judgment.py``; its own loader keeps the last record); a repeated cell within one file is
then resolved by the duplicates policy:

- ``"error"`` (default): refused, naming the file and line of both records and the cause;
- ``"first"`` / ``"last"``: the first / last record read is kept (records in file order) and
  the others are counted.

A cell that two files hold (two copies of a run, two runs, two alpaca_eval annotator folders
writing one annotator name) is refused under every policy, naming both records and the
format's cause: two runs are never merged into one judge. The source of a row is the file its
``WHERE`` names (``"<file>, line 4"``).

The policy is applied before dropped cells (errors, nulls) are left out, so a rerun whose game
errored replaces the earlier verdict by nothing, as the tool's own loader would.
"""

from __future__ import annotations

import re
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


#: A reader's ``WHERE``: ``"<file>, line 4"`` (or ``record 3``, ``row 5``): the file is its source.
_SOURCE = re.compile(r"^(?P<file>.+), (?:line|record|row) \d+$")
#: Why one file holds a cell twice, per format (default: ``None``'s).
_IN_ONE_FILE = {
    "fastchat": "a rerun appended to the file: FastChat's gen_judgment.py appends, and its own "
    "loader keeps the last record",
    None: "a rerun appended to the file",
}
#: Why two files hold the same judge's cell, per format (``{judge}``: its name).
_IN_TWO_FILES = {
    "alpaca_eval": "two annotator folders write the same annotator name {judge!r} (alpaca_eval "
    "names a judge by each record's 'annotator' field, not by its folder)",
    "fastchat": "two files of judge {judge!r}: two copies of a run, or two runs",
    "lm_eval": "two samples files of one task for judge {judge!r}: two runs of the task (the "
    "harness names each run's file by its time)",
    "crowdkit": "two tables hold worker {judge!r}'s label of the same task",
    None: "two files give judge {judge!r} the same cell: two copies of a run, or two runs",
}


def _files(rows: pd.DataFrame) -> pd.Series:
    """The file each row was read from (``None`` where its ``WHERE`` does not say)."""
    if WHERE not in rows.columns:
        return pd.Series([None] * len(rows), index=rows.index, dtype=object)
    return rows[WHERE].astype(str).str.extract(_SOURCE)["file"]


def _refuse_two_sources(rows: pd.DataFrame, repeated, fmt: str | None) -> None:
    """Refuse a cell that two files hold: two runs (or copies) are never merged into one judge."""
    files = _files(rows)
    where = rows.loc[repeated].assign(_file=files[repeated])
    n_files = where.groupby(_CELL, sort=False)["_file"].nunique()
    across = n_files[n_files > 1]
    if across.empty:
        return
    cell = across.index[0]
    same = (rows[_CELL] == pd.Series(cell, index=_CELL)).all(axis=1).to_numpy()
    ks = same.nonzero()[0]
    first = int(ks[0])
    second = int(next(k for k in ks if files.iloc[k] != files.iloc[first]))
    cause = _IN_TWO_FILES.get(fmt, _IN_TWO_FILES[None]).format(judge=cell[1])
    raise PanelError(
        f"{_where(rows, first)} and {_where(rows, second)}: the same cell (item {cell[0]!r}, "
        f"judge {cell[1]!r}, condition {cell[2]!r}) in two files, {len(across)} such cell(s): "
        f"{cause}; two runs are never merged into one judge (--duplicates first/last resolve a "
        "cell repeated within one file): pass the files of one run only, or give each run its "
        "own judge name"
    )


def _duplicates(rows: pd.DataFrame, policy: str, dropped: Counter, fmt: str | None) -> pd.DataFrame:
    if policy not in DUPLICATES:
        raise PanelError(f"duplicates must be one of {list(DUPLICATES)}, got {policy!r}")
    repeated = rows.duplicated(_CELL, keep=False).to_numpy()
    if not repeated.any():
        return rows
    _refuse_two_sources(rows, repeated, fmt)
    if policy == "error":
        first = int(repeated.nonzero()[0][0])
        cell = tuple(rows.iloc[first][c] for c in _CELL)
        same = (rows[_CELL] == pd.Series(cell, index=_CELL)).all(axis=1).to_numpy()
        second = int(same.nonzero()[0][1])
        extra = int(rows.duplicated(_CELL, keep="first").sum())
        cause = _IN_ONE_FILE.get(fmt, _IN_ONE_FILE[None])
        raise PanelError(
            f"{_where(rows, first)} and {_where(rows, second)}: the same cell (item "
            f"{cell[0]!r}, judge {cell[1]!r}, condition {cell[2]!r}) twice, {extra} repeated "
            f"cell(s) in all ({cause}); keep one record of each with --duplicates last or "
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
    rows: pd.DataFrame, dropped: Counter, duplicates: str = "error", fmt: str | None = None
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
    fmt : str, optional
        The format that read the rows: the refusal names its cause of a repeated cell.

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
    rows = _duplicates(rows.reset_index(drop=True), duplicates, dropped, fmt)
    rows = _orphans(_marked(rows, dropped), dropped)
    rows = rows.drop(columns=[WHERE, DROP], errors="ignore").reset_index(drop=True)
    return rows, dropped
