"""A name column of a panel (judge, condition, gold) as integer codes and its distinct values.

Validation reads each name column once: :func:`coded` factorizes it (pandas' hash table, or
Arrow's own on an Arrow string column), and every later check (missing, blank or unknown
names, the rows' sort order, one gold label per item) looks at the few distinct values and
indexes the codes instead of comparing the rows' strings (on a 600,000-row panel this halves
the validation's time). The column handed on holds one Python object per distinct value,
shared by all its rows: converting an Arrow string column row by row makes one ``str`` per
row (55 bytes each: a million-row panel's judge, condition and gold columns took 160 MB).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["Coded", "coded"]


@dataclass(frozen=True)
class Coded:
    """A column as ``codes`` (one per row, ``-1`` where the value is missing) and ``values``
    (its distinct values, an object array in the order they first appear)."""

    codes: np.ndarray
    values: np.ndarray

    def rows(self, of_values: np.ndarray) -> np.ndarray:
        """A per-value boolean array ``of_values`` as the rows' (False where missing)."""
        return np.append(of_values, False)[self.codes]

    def column(self, index: pd.Index, name: str, missing: Any = np.nan) -> pd.Series:
        """The rows' values as an object column (``missing`` where the value is missing)."""
        values = np.append(self.values, np.array([missing], dtype=object))
        return pd.Series(values[self.codes], index=index, name=name, dtype=object)

    def counts(self) -> np.ndarray:
        """The rows holding each value."""
        present = self.codes[self.codes >= 0]
        return np.bincount(present, minlength=len(self.values))


def coded(col: pd.Series, as_text: bool) -> Coded:
    """``col`` as a :class:`Coded`; ``as_text``: its values as text (``str(value)``).

    Missing values (None, NaN, NA) get the code ``-1``, as :func:`pandas.isna` finds them.
    """
    codes, uniques = pd.factorize(col, use_na_sentinel=True)
    distinct = pd.Series(uniques, dtype=col.dtype)
    if as_text and not (
        distinct.dtype == object and pd.api.types.infer_dtype(distinct, skipna=False) == "string"
    ):
        distinct = distinct.astype(str)
    values = np.asarray(distinct.astype(object), dtype=object)
    return Coded(np.asarray(codes, dtype=np.intp), values)
