"""One table formatter for the book and the reports.

Every table a chapter shows goes through :func:`format_table`: integers print as integers,
other numbers with three decimals and never in scientific notation, the index becomes
ordinary (named) columns unless it is a meaningful label, and a long table is either cut to
its first rows with a note or made scrollable on purpose.
"""

from __future__ import annotations

import numbers
import re
from collections.abc import Callable, Hashable
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from judgerisk._plots.escape import NO_MATH, html_text

if TYPE_CHECKING:
    from pandas.io.formats.style import Styler

__all__ = ["HEADERS", "format_number", "format_table", "readable_header"]

#: Rows shown before a table is summarised (or made scrollable).
MAX_ROWS = 20

#: Words for the code names that result tables carry as column or index names; any other
#: ``snake_case`` name is shown with spaces (``n_items`` -> ``n items``).
HEADERS: dict[str, str] = {
    "alpha": "α",
    "coverage_mean": "accepted share",
    "coverage_std": "accepted share sd",
    "risk_mean": "mean test FDP",
    "risk_std": "test FDP sd",
    "risk_se": "s.e. of the mean",
    "pooled_risk": "pooled error rate",
    "abstain_all": "splits accepting nothing",
    "n_splits": "splits",
    "n_items": "items",
    "n_errors": "errors",
    "n_iter": "sweeps",
    "n_boot": "bootstrap resamples",
    "n_seeds": "splits scored",
    "auroc": "AUROC",
    "auprc": "AUPRC",
    "ece": "ECE",
    "auroc_ref": "AUROC of the reference",
    "p_hat": "p̂",
    "logit_hat": "predicted logit",
    "q_loo": "q (other judges)",
    "max_abs_dp_hat": "largest |Δp̂|",
    "z_U": "z of U",
    "z_C": "z of C",
    "z_S": "z of S",
    "dataset": "data set",
    "a_j": "discrimination a",
    "b_j": "bias b",
    "rho": "kept share ρ",
}
_SNAKE = re.compile(r"^[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+$")


def readable_header(name: Any) -> Any:
    """A table header in words: :data:`HEADERS`, else ``snake_case`` with spaces.

    >>> readable_header("coverage_mean"), readable_header("n_items"), readable_header("SCUR")
    ('accepted share', 'items', 'SCUR')
    """
    if not isinstance(name, str):
        return name
    if name in HEADERS:
        return HEADERS[name]
    return name.replace("_", " ") if _SNAKE.match(name) else name


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
    # headers in words, never code names (book/_authoring.md, "Tables")
    frame = frame.rename(columns=readable_header)
    frame.columns = frame.columns.set_names([readable_header(n) for n in frame.columns.names])
    frame.index = frame.index.set_names([readable_header(n) for n in frame.index.names])
    n_rows = len(frame)
    if index is None:
        plain = isinstance(frame.index, pd.RangeIndex) and frame.index.name is None
        index = not plain
    note = None
    if not scroll and n_rows > max_rows:
        frame = frame.head(max_rows)
        note = f"first {max_rows} of {n_rows} rows"
    # user data (judge names, item ids) is text, never markup (judgerisk._plots.escape):
    # every cell, label, header name and the caption is HTML-escaped
    frame.columns = frame.columns.set_names([_name(n) for n in frame.columns.names])
    frame.index = frame.index.set_names([_name(n) for n in frame.index.names])
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
        else:
            formats[name] = _text
    styler = frame.style.format(formats, na_rep="–")
    if numeric:
        styler = styler.set_properties(
            subset=numeric, **{"text-align": "right", "white-space": "nowrap"}
        )
    styler = styler.format_index(lambda v: html_text(format_number(v, decimals)), axis=0)
    styler = styler.format_index(lambda v: html_text(format_number(v, decimals)), axis=1)
    if not index:
        styler = styler.hide(axis="index")
    styles = [{"selector": "th", "props": "text-align: left;"}]
    styler = styler.set_table_styles(styles)
    parts = [caption] if caption else []
    if note:
        parts.append(f"({note})")
    if parts:
        styler = styler.set_caption(html_text(" ".join(parts)))
    classes = [NO_MATH]  # MathJax leaves the cells alone (a "$" in a name is text)
    if scroll and n_rows > max_rows:
        classes.append("jr-scroll-table")
    return styler.set_table_attributes(f'class="{" ".join(classes)}"')


def _text(value: Any) -> str:
    """A text cell: :func:`format_number`'s text, HTML-escaped."""
    return html_text(format_number(value))


def _name(name: Any) -> Any:
    """A header name (of the index or the columns), HTML-escaped when it is text."""
    return html_text(name) if isinstance(name, str) else name
