"""Item x judge tables held by their observed cells: crowd panels cost what their cells cost.

A crowdsourced panel (thousands of judges, a few labels per item) fills a tiny share of its item
x judge table; a dense table of it grows with items x judges (100,000 items x 5,000 judges is
half a billion cells, 4 GB per float table). :class:`CellTable` holds such a table by its
observed cells, with the few operations the label-free scores and aggregators need (row sums,
counts and means, a sparse matrix, row subsets, judge alignment).
:func:`judgerisk.panel.wide_table` gives the dense :func:`judgerisk.panel.to_wide` table of a
panel whose cells fill at least :data:`SPARSE_BELOW` of it, and a :class:`CellTable`
otherwise, so dense panels keep their dense arithmetic (and their numbers, bit for bit).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from scipy.sparse import csr_array

__all__ = ["SPARSE_BELOW", "CellTable", "is_sparse", "as_dense"]

#: A table whose observed cells fill less than this share of it is held by its cells.
SPARSE_BELOW = 0.5


def is_sparse(n_observed: int, n_dense: int) -> bool:
    """Whether ``n_observed`` cells fill less than :data:`SPARSE_BELOW` of ``n_dense`` cells.

    >>> is_sparse(10, 100), is_sparse(60, 100)
    (True, False)
    """
    return n_observed < SPARSE_BELOW * n_dense


class _Rows:
    """``table.loc[items]`` of a :class:`CellTable` (the rows of ``items``, in their order)."""

    def __init__(self, table: CellTable) -> None:
        self._table = table

    def __getitem__(self, items: Iterable) -> CellTable:
        return self._table.take_rows(items)


@dataclass(frozen=True, eq=False)
class CellTable:
    """An item x judge table stored by its observed cells (coordinate form).

    Attributes
    ----------
    index : pandas.Index
        The items (rows), in table order.
    columns : pandas.Index
        The judges (columns).
    row, col : numpy.ndarray of int64
        Row and column position of every observed cell, sorted by row, then column.
    values : numpy.ndarray of float64
        The cells' values (never NaN: a missing cell is simply absent).
    """

    index: pd.Index
    columns: pd.Index
    row: np.ndarray
    col: np.ndarray
    values: np.ndarray

    @classmethod
    def from_cells(
        cls, index: pd.Index, columns: pd.Index, row: np.ndarray, col: np.ndarray, values
    ) -> CellTable:
        """A table from unsorted cells (at most one per row and column)."""
        row, col = np.asarray(row, dtype=np.int64), np.asarray(col, dtype=np.int64)
        order = np.lexsort((col, row))
        return cls(index, columns, row[order], col[order], np.asarray(values, np.float64)[order])

    @classmethod
    def from_frame(cls, frame: pd.DataFrame) -> CellTable:
        """The non-missing cells of a dense item x judge DataFrame."""
        arr = frame.to_numpy(dtype=np.float64, na_value=np.nan)
        row, col = np.nonzero(~np.isnan(arr))
        return cls(frame.index.copy(), frame.columns.copy(), row, col, arr[row, col])

    @property
    def shape(self) -> tuple[int, int]:
        return len(self.index), len(self.columns)

    @property
    def loc(self) -> _Rows:
        """``table.loc[items]``: the rows of ``items`` (as :attr:`pandas.DataFrame.loc`)."""
        return _Rows(self)

    def row_count(self) -> np.ndarray:
        """Observed cells per row."""
        return np.bincount(self.row, minlength=len(self.index))

    def row_sum(self, values: np.ndarray | None = None) -> np.ndarray:
        """Sum of the cells (or of ``values``, one per cell) per row, in column order."""
        v = self.values if values is None else values
        return np.bincount(self.row, weights=v, minlength=len(self.index))

    def row_mean(self, values: np.ndarray | None = None) -> np.ndarray:
        """Mean of the observed cells (or of ``values``) per row; NaN for an empty row."""
        count = self.row_count()
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(count > 0, self.row_sum(values) / np.maximum(count, 1), np.nan)

    def matrix(self, values: np.ndarray | None = None) -> csr_array:
        """A :class:`scipy.sparse.csr_array` of the cells (or of ``values``); zeros dropped."""
        from scipy import sparse

        v = self.values if values is None else np.asarray(values, dtype=np.float64)
        keep = v != 0
        out = sparse.csr_array((v[keep], (self.row[keep], self.col[keep])), shape=self.shape)
        out.sort_indices()
        return out

    def take_rows(self, items: Iterable) -> CellTable:
        """The rows of ``items`` in their order (each must be a row of the table)."""
        idx = pd.Index(items if hasattr(items, "__len__") else list(items))
        pos = self.index.get_indexer(idx)
        if (pos < 0).any():
            raise KeyError(f"items not in the table: {idx[pos < 0][:10].tolist()}")
        new_of_old = np.full(len(self.index), -1, dtype=np.int64)
        new_of_old[pos] = np.arange(len(pos))
        keep = new_of_old[self.row] >= 0
        out_index = self.index[pos]
        return CellTable.from_cells(
            out_index, self.columns, new_of_old[self.row[keep]], self.col[keep], self.values[keep]
        )

    def reindex(self, index: Iterable) -> CellTable:
        """The same table with rows in the order of ``index`` (every row must be there)."""
        return self.take_rows(index)

    def align_columns(self, judges: pd.Index, name: str = "votes") -> CellTable:
        """The table with ``judges`` as columns (its own judges must all be among them)."""
        pos = pd.Index(judges).get_indexer(self.columns)
        if (pos < 0).any():
            unknown = self.columns[pos < 0]
            raise ValueError(
                f"{name} has judges not seen in fit: {unknown[:10].tolist()} "
                f"(fitted judges: {list(judges)[:20]})"
            )
        return CellTable.from_cells(
            self.index, pd.Index(judges), self.row, pos[self.col], self.values
        )

    def on(self, other: CellTable) -> CellTable:
        """The cells of this table that ``other`` (same rows and columns) also observes."""
        n = len(self.columns)
        keep = np.isin(self.row * n + self.col, other.row * n + other.col)
        return CellTable(
            self.index, self.columns, self.row[keep], self.col[keep], self.values[keep]
        )

    def to_frame(self) -> pd.DataFrame:
        """The dense item x judge DataFrame (NaN where a cell is missing)."""
        arr = np.full(self.shape, np.nan)
        arr[self.row, self.col] = self.values
        # built transposed, so that its memory layout (and the float sums of the rules that read
        # it) is that of judgerisk.panel.to_wide's pivot
        return pd.DataFrame(arr.T, index=self.columns.copy(), columns=self.index.copy()).T


def as_dense(table: pd.DataFrame | CellTable) -> pd.DataFrame:
    """A dense DataFrame of either kind of table (for code that reads item x judge frames)."""
    return table.to_frame() if isinstance(table, CellTable) else table
