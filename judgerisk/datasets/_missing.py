"""Missing cells of a loaded data set: counted, reported with a warning, never dropped silently."""

from __future__ import annotations

import warnings

import pandas as pd


def report_missing_cells(missing_rows: pd.DataFrame, by: list[str], message: str) -> dict:
    """Count missing cells per key and warn once with the counts.

    Parameters
    ----------
    missing_rows : pandas.DataFrame
        The rows that become missing cells.
    by : list of str
        Columns that key the counts; a key is their values joined by ``/``.
    message : str
        Warning text with the placeholders ``{n}`` (total) and ``{detail}``
        (``"key: count"`` pairs).

    Returns
    -------
    dict
        Count by key (empty when nothing is missing; no warning then); loaders store it in
        ``panel.attrs["missing_cells"]``.
    """
    if missing_rows.empty:
        return {}
    sizes = missing_rows.groupby(by).size()
    counts = {
        "/".join(str(k) for k in (key if isinstance(key, tuple) else (key,))): int(n)
        for key, n in sizes.items()
    }
    detail = ", ".join(f"{key}: {n}" for key, n in counts.items())
    warnings.warn(message.format(n=int(sizes.sum()), detail=detail), UserWarning, stacklevel=3)
    return counts
