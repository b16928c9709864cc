"""One table formatter for the book and the reports.

Every table a chapter shows goes through :func:`format_table`: integers print as integers,
other numbers with three decimals and never in scientific notation, the index becomes
ordinary (named) columns unless it is a meaningful label, and a long table is either cut to
its first rows with a note or made scrollable on purpose.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Hashable
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from pandas.io.formats.style import Styler

__all__ = ["format_number", "format_table"]

#: Rows shown before a table is summarised (or made scrollable).
MAX_ROWS = 20


def format_number(value: object, decimals: int = 3) -> str:
    """One cell as text: integers as integers, floats with ``decimals`` fixed decimals.

    A float that holds a whole number of a count column stays a float here (``2.000``); use
    :func:`format_table`, which detects integer-valued columns. Missing values print as "–".
    """
    if value is None or (isinstance(value, float) and np.isnan(value)) or value is pd.NA:
        return "–"
    if isinstance(value, bool | np.bool_):
        return "yes" if value else "no"
    if isinstance(value, numbers.Integral):
        return f"{int(value):,}".replace(",", " ") if abs(int(value)) >= 10_000 else f"{value}"
    if isinstance(value, numbers.Real):
        text = f"{float(value):.{decimals}f}"
        return "0." + "0" * decimals if text.startswith("-0.") and float(text) == 0 else text
    return str(value)


def _integer_valued(col: pd.Series) -> bool:
    """An integer column, or a float column of counts (whole numbers, some of them > 1)."""
    if pd.api.types.is_integer_dtype(col):
        return True
    values = pd.to_numeric(col, errors="coerce").dropna().to_numpy(dtype=float)
    if not len(values) or not np.all(np.isfinite(values)):
        return False
    return bool(np.all(values == np.round(values)) and np.abs(values).max() > 1)


def _as_decimal(value: Any, decimals: int) -> str:
    return format_number(float(value), decimals)


def _whole_or_decimal(value: Any, decimals: int, cellwise: bool) -> str:
    if pd.isna(value):
        return "–"
    v = float(value)
    if not cellwise or (np.isfinite(v) and v == round(v)):
        return format_number(int(round(v)))
    return format_number(v, decimals)


def format_table(
    df: pd.DataFrame | pd.Series,
    decimals: int = 3,
    max_rows: int = MAX_ROWS,
    index: bool | None = None,
    scroll: bool = False,
    caption: str | None = None,
) -> Styler:
    """A table ready to display: fixed decimals, integers as integers, no raw index.

    Parameters
    ----------
    df : pandas.DataFrame or pandas.Series
    decimals : int, default 3
        Decimals of non-integer numbers (never scientific notation).
    max_rows : int, default 20
        A longer table shows its first ``max_rows`` rows and says how many were left out,
        unless ``scroll`` is set.
    index : bool, optional
        Show the index as the row labels. Default: shown when it is named or is not the
        plain ``0..n-1`` range (a raw row number is never shown).
    scroll : bool, default False
        Show every row in a box of bounded height that scrolls (for long tables a reader
        may want to search).
    caption : str, optional
        Shown above the table.

    Returns
    -------
    pandas.io.formats.style.Styler
        Renders as HTML in a notebook and in the book.
    """
    cellwise = isinstance(df, pd.Series)  # one column of mixed quantities (counts and rates)
    frame = df.to_frame() if cellwise else df.copy()
    n_rows = len(frame)
    if index is None:
        plain = isinstance(frame.index, pd.RangeIndex) and frame.index.name is None
        index = not plain
    note = None
    if not scroll and n_rows > max_rows:
        frame = frame.head(max_rows)
        note = f"first {max_rows} of {n_rows} rows"
    formats: dict[Hashable, Callable[[Any], str]] = {}
    numeric = []
    for name, col in frame.items():
        if pd.api.types.is_bool_dtype(col):
            formats[name] = lambda v: format_number(bool(v)) if pd.notna(v) else "–"
        elif pd.api.types.is_numeric_dtype(col) and (cellwise or _integer_valued(col)):
            formats[name] = partial(_whole_or_decimal, decimals=decimals, cellwise=cellwise)
            numeric.append(name)
        elif pd.api.types.is_numeric_dtype(col):
            formats[name] = partial(_as_decimal, decimals=decimals)
            numeric.append(name)
    styler = frame.style.format(formats, na_rep="–")
    if numeric:
        styler = styler.set_properties(
            subset=numeric, **{"text-align": "right", "white-space": "nowrap"}
        )
    styler = styler.format_index(lambda v: format_number(v, decimals), axis=0)
    if not index:
        styler = styler.hide(axis="index")
    styles = [{"selector": "th", "props": "text-align: left;"}]
    styler = styler.set_table_styles(styles)
    parts = [caption] if caption else []
    if note:
        parts.append(f"({note})")
    if parts:
        styler = styler.set_caption(" ".join(parts))
    if scroll and n_rows > max_rows:
        styler = styler.set_table_attributes('class="jr-scroll-table"')
    return styler
