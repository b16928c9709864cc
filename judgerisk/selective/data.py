"""Reading one judge in both orders: a panel (the contract) or a side-by-side pair table.

The one-judge data contract is the panel (:mod:`judgerisk.panel`): conditions ``original`` and
``swap`` of one judge. BPE and SCOPE (chapters "Bidirectional Preference Entropy" and "SCOPE's
guarantee") read its side-by-side view, one row per item ``item, logit_fwd, logit_rev[, gold]``
(:func:`judgerisk.panel.order_pairs`). :func:`load_single_judge` reads a file that is either a
panel or such a pair table (converted by the one converter,
:func:`judgerisk.panel.pairs_to_panel`) and returns the view; :func:`validate_single_judge`
does the same for a table in memory. Errors name the file, the column, and the offending rows.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from judgerisk.panel import PAIR_COLUMNS, PanelError, order_pairs, pairs_to_panel, read_table

__all__ = ["SINGLE_JUDGE_COLUMNS", "load_single_judge", "validate_single_judge"]

#: Required columns of a pair table (``gold`` is optional).
SINGLE_JUDGE_COLUMNS = PAIR_COLUMNS


def validate_single_judge(
    df: pd.DataFrame, require_gold: bool = False, source: str = "the table"
) -> pd.DataFrame:
    """One judge in both orders, one row per item, from a panel or a pair table.

    Parameters
    ----------
    df : pandas.DataFrame
        A panel of one judge with the conditions ``original`` and ``swap`` (the contract), or
        a pair table with columns ``item, logit_fwd, logit_rev`` and optionally ``gold``.
    require_gold : bool, default False
        Demand a ``gold`` label on every item (calibration and evaluation need it).
    source : str
        Named in error messages (e.g. the file path).

    Returns
    -------
    pandas.DataFrame
        ``item``, ``logit_fwd`` and ``logit_rev`` as float64 clipped to :math:`[-20, 20]`,
        ``gold`` when present; a fresh RangeIndex. A pair table's rows are all kept (in item
        order); a panel's items seen in one order only are left out, with an error saying so.

    Raises
    ------
    judgerisk.panel.PanelError
        Missing column, empty table, duplicate or missing items, non-numeric or non-finite
        logits, gold other than "A"/"B" (or missing when required), a panel of several judges
        or with items in one order only.
    """
    if "condition" in df.columns:
        panel = df
    else:
        panel = pairs_to_panel(df, source=source)
    try:
        pairs = order_pairs(panel)
    except (ValueError, PanelError) as exc:
        raise PanelError(f"{source}: {exc}") from None
    if pairs.attrs.get("n_incomplete"):
        raise PanelError(
            f"{source}: {pairs.attrs['n_incomplete']} item(s) seen in one order only; one judge "
            "in both orders needs each item in 'original' and 'swap'"
        )
    out = pairs.reset_index()
    if require_gold and ("gold" not in out.columns or out["gold"].isna().any()):
        missing = "no 'gold' column" if "gold" not in out.columns else "items without gold"
        raise PanelError(
            f"{source}: a 'gold' label ('A'/'B') is required on every item ({missing})"
        )
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
