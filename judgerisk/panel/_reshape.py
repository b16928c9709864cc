"""Reshaping a validated panel: item x judge tables, votes, gold labels and integer codes.

Every function here takes a panel that was validated where it entered
(:func:`judgerisk.panel._contract.validate_panel`) and checks it no further.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from judgerisk.families import condition_order
from judgerisk.options import ORIGINAL
from judgerisk.panel._cell_table import CellTable, is_sparse
from judgerisk.panel._contract import PanelError

__all__ = [
    "PanelArrays",
    "to_wide",
    "cell_table",
    "wide_table",
    "to_long",
    "verdicts",
    "gold_labels",
    "encode_panel",
]


@dataclass(frozen=True)
class PanelArrays:
    """Integer-coded view of a validated panel, for vectorised model code.

    Attributes
    ----------
    items, judges : pandas.Index
        Sorted unique item ids and judge names; ``item_idx`` / ``judge_idx`` index them.
    conditions : tuple of str
        The conditions present, in canonical order (``"original"`` first).
    item_idx, judge_idx, cond_idx : numpy.ndarray of intp
        Codes aligned with the panel's rows.
    logit, p : numpy.ndarray of float64
        Canonical log-odds (clipped) and probabilities aligned with the rows.
    """

    items: pd.Index
    judges: pd.Index
    conditions: tuple[str, ...]
    item_idx: np.ndarray
    judge_idx: np.ndarray
    cond_idx: np.ndarray
    logit: np.ndarray
    p: np.ndarray

    @property
    def n_items(self) -> int:
        return len(self.items)

    @property
    def n_judges(self) -> int:
        return len(self.judges)

    @property
    def n_conditions(self) -> int:
        return len(self.conditions)


def to_wide(panel: pd.DataFrame, value: str = "logit", condition: str = ORIGINAL) -> pd.DataFrame:
    """Pivot one condition of a panel to an item x judge table (NaN where a cell is missing)."""
    return _pivot(_condition_rows(panel, value, condition), value)


def cell_table(panel: pd.DataFrame, value: str = "logit", condition: str = ORIGINAL) -> CellTable:
    """:func:`judgerisk.panel.to_wide` held by its cells: items and judges sorted alike."""
    return _cells(_condition_rows(panel, value, condition), value)


def wide_table(
    panel: pd.DataFrame, value: str = "logit", condition: str = ORIGINAL
) -> pd.DataFrame | CellTable:
    """The item x judge table of one condition: dense when its cells fill it, else by cells."""
    sub = _condition_rows(panel, value, condition)
    if is_sparse(len(sub), sub["item"].nunique() * sub["judge"].nunique()):
        return _cells(sub, value)
    return _pivot(sub, value)


def _condition_rows(panel: pd.DataFrame, value: str, condition: str) -> pd.DataFrame:
    """The ``item``, ``judge`` and ``value`` columns of the rows of ``condition`` (one pass, and
    only the three columns a table reads are copied)."""
    sub = panel.loc[(panel["condition"] == condition).to_numpy(), ["item", "judge", value]]
    if sub.empty:
        raise PanelError(f"no rows with condition {condition!r} in the panel")
    return sub


def _pivot(sub: pd.DataFrame, value: str) -> pd.DataFrame:
    wide = sub.pivot(index="item", columns="judge", values=value)
    wide.columns.name = "judge"
    return wide.sort_index()


def _cells(sub: pd.DataFrame, value: str) -> CellTable:
    row, items = pd.factorize(sub["item"], sort=True)
    col, judges = pd.factorize(sub["judge"], sort=True)
    index = pd.Index(items, name="item")
    columns = pd.Index(judges, name="judge")
    return CellTable.from_cells(index, columns, row, col, sub[value].to_numpy(np.float64))


def to_long(wide: pd.DataFrame, value: str = "logit", condition: str = ORIGINAL) -> pd.DataFrame:
    """Melt an item x judge table back to the long panel shape (missing cells are skipped).

    Returns the *unvalidated* long rows ``item, judge, condition, <value>``; pass them
    through :func:`validate_panel` (after adding ``gold`` if needed).
    """
    # stack() keeps NaN cells in pandas 3 and drops them in pandas 2: dropped here, in both
    long = wide.rename_axis(index="item", columns="judge").stack().dropna()
    long = long.rename(value).reset_index()
    long.insert(2, "condition", condition)
    return long


def verdicts(panel: pd.DataFrame, condition: str = ORIGINAL) -> pd.DataFrame:
    """Votes (1.0 = A wins, 0.0 = B, 0.5 = a tie) as an item x judge table, NaN where missing."""
    return to_wide(panel, value="verdict", condition=condition).astype(np.float64)


def gold_labels(panel: pd.DataFrame) -> pd.Series:
    """Gold labels by item: 1 if ``"A"`` else 0 (int8); unlabelled items are left out.

    Raises if the panel has no gold column.
    """
    if "gold" not in panel.columns:
        raise PanelError("the panel has no 'gold' column")
    gold = panel.drop_duplicates("item").set_index("item")["gold"].dropna().sort_index()
    return (gold == "A").astype(np.int8).rename("gold")


def encode_panel(panel: pd.DataFrame) -> PanelArrays:
    """Integer codes for items, judges and conditions of a validated panel.

    ``cond_idx == 0`` is ``"original"`` (validation guarantees it is present).
    """
    item_idx, items = pd.factorize(panel["item"], sort=True)
    judge_idx, judges = pd.factorize(panel["judge"], sort=True)
    cond_codes, present = pd.factorize(panel["condition"])
    conditions = tuple(condition_order(present))
    cond_idx = pd.Index(conditions).get_indexer(present)[cond_codes]
    items, judges = pd.Index(items, name="item"), pd.Index(judges, name="judge")
    return PanelArrays(
        items=items,
        judges=judges,
        conditions=conditions,
        item_idx=item_idx.astype(np.intp),
        judge_idx=judge_idx.astype(np.intp),
        cond_idx=cond_idx.astype(np.intp),
        logit=panel["logit"].to_numpy(dtype=np.float64),
        p=panel["p"].to_numpy(dtype=np.float64),
    )
