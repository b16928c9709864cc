"""The single-judge data contract: one row per item, ``item, logit_fwd, logit_rev, gold``.

A judge queried in both answer orders gives, per item, the canonical log-odds that the
original answer A wins with A shown first (``logit_fwd``) and after the order swap
(``logit_rev``). This is what BPE and SCOPE need (chapters "Bidirectional Preference Entropy"
and "SCOPE's guarantee"); ``gold`` is needed only to calibrate and to evaluate.
:func:`load_single_judge` reads and checks such a file; :func:`validate_single_judge` checks
a table already in memory. Errors name the file, the column, and the offending rows.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from judgerisk.panel import LOGIT_CLIP, PanelError, read_table
from judgerisk.validation import offending_rows

__all__ = ["SINGLE_JUDGE_COLUMNS", "load_single_judge", "validate_single_judge"]

#: Required columns (``gold`` is optional).
SINGLE_JUDGE_COLUMNS = ("item", "logit_fwd", "logit_rev")


def validate_single_judge(
    df: pd.DataFrame, require_gold: bool = False, source: str = "the table"
) -> pd.DataFrame:
    """Check a single-judge table and return a normalised copy.

    Parameters
    ----------
    df : pandas.DataFrame
        Columns ``item, logit_fwd, logit_rev`` and optionally ``gold`` ("A"/"B").
    require_gold : bool, default False
        Demand a ``gold`` label on every row (calibration and evaluation need it).
    source : str
        Named in error messages (e.g. the file path).

    Returns
    -------
    pandas.DataFrame
        ``item`` (as given), ``logit_fwd`` and ``logit_rev`` as float64 clipped to
        :math:`[-20, 20]`, ``gold`` when present; a fresh RangeIndex; no row is dropped.

    Raises
    ------
    judgerisk.panel.PanelError
        Missing column, empty table, duplicate or missing items, non-numeric or non-finite
        logits, gold other than "A"/"B" (or missing when required).
    """
    missing = [c for c in SINGLE_JUDGE_COLUMNS if c not in df.columns]
    if missing:
        raise PanelError(
            f"{source}: missing column(s) {missing}; a single-judge file needs "
            f"{list(SINGLE_JUDGE_COLUMNS)} and optionally 'gold' (found {list(df.columns)})"
        )
    if df.empty:
        raise PanelError(f"{source}: the table has no rows")
    out = df.reset_index(drop=True).copy()
    bad = out["item"].isna()
    if bad.any():
        raise PanelError(
            f"{source}: column 'item' has missing ids; {offending_rows(out, bad, ['item'])}"
        )
    dup = out["item"].duplicated(keep=False)
    if dup.any():
        raise PanelError(
            f"{source}: column 'item' must be unique (one row per item); "
            f"{offending_rows(out, dup, ['item'])}"
        )
    for col in ("logit_fwd", "logit_rev"):
        values = pd.to_numeric(out[col], errors="coerce")
        bad = ~np.isfinite(values.to_numpy(dtype=float))
        if bad.any():
            raise PanelError(
                f"{source}: column {col!r} must hold finite numbers; "
                f"{offending_rows(out, bad, ['item', col])}"
            )
        out[col] = np.clip(values.to_numpy(dtype=np.float64), -LOGIT_CLIP, LOGIT_CLIP)
    if "gold" in out.columns:
        gold = out["gold"].astype("string").str.strip().str.upper()
        bad = ~gold.isin(["A", "B"]).fillna(False).to_numpy(bool)
        if not require_gold:
            bad &= gold.notna().to_numpy(bool)
        if bad.any():
            raise PanelError(
                f"{source}: column 'gold' must be 'A' or 'B'; {offending_rows(out, bad, ['item', 'gold'])}"
            )
        out["gold"] = gold.astype(object).where(gold.notna(), None)
    elif require_gold:
        raise PanelError(f"{source}: a 'gold' column ('A'/'B') is required here")
    return out


def load_single_judge(path: str | Path, require_gold: bool = False) -> pd.DataFrame:
    """Read a single-judge file (csv, parquet or jsonl, by extension) and check it.

    Parameters
    ----------
    path : str or pathlib.Path
    require_gold : bool, default False

    Returns
    -------
    pandas.DataFrame
        As :func:`validate_single_judge`.

    Examples
    --------
    >>> from judgerisk.simulate import simulate_pairs
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "judge.csv"
    >>> simulate_pairs(50, seed=0).to_csv(path, index=False)
    >>> load_single_judge(path).columns.tolist()
    ['item', 'logit_fwd', 'logit_rev', 'gold']
    """
    return validate_single_judge(read_table(path), require_gold=require_gold, source=str(path))
