"""One judge in both answer orders: the two canonical logits of an item side by side.

The one-judge contract (what BPE and SCOPE read): a panel whose judge saw each item in the
conditions ``original`` and :data:`~judgerisk.options.SWAP`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from judgerisk.options import ORIGINAL, SWAP
from judgerisk.panel._contract import LOGIT_CLIP, PanelError, validate_panel
from judgerisk.validation import offending_rows

__all__ = [
    "PAIR_COLUMNS",
    "both_orders",
    "order_pairs",
    "pairs_to_panel",
]

# ------------------------------------------------------------------ one judge, both orders
# The one-judge contract: a panel whose judge saw each item in both answer orders (conditions
# ``original`` and ``swap``), what BPE and SCOPE read. ``both_orders`` / ``order_pairs`` are
# the one view (the two canonical logits side by side), ``pairs_to_panel`` the one converter
# from a side-by-side table ``item, logit_fwd, logit_rev[, gold]``.

#: Required columns of a side-by-side pair table (``gold`` is optional).
PAIR_COLUMNS = ("item", "logit_fwd", "logit_rev")


def both_orders(panel: pd.DataFrame, forward: str = ORIGINAL, reverse: str = SWAP) -> pd.DataFrame:
    """Every (item, judge) seen in both orders, its two canonical logits side by side.

    Parameters
    ----------
    panel : pandas.DataFrame
        A panel (one judge or several).
    forward, reverse : str, default "original", "swap"
        The two conditions.

    Returns
    -------
    pandas.DataFrame
        Indexed by (item, judge): ``logit_fwd`` (condition ``forward``), ``logit_rev``
        (``reverse``) and ``gold`` when the panel has it; cells missing either order are left
        out and counted in ``attrs["n_incomplete"]``.

    Raises
    ------
    judgerisk.panel.PanelError
        When the panel lacks one of the two conditions.
    """
    panel = validate_panel(panel, conditions=None)
    missing = [c for c in (forward, reverse) if c not in set(panel["condition"])]
    if missing:
        raise PanelError(
            f"one judge in both orders needs the conditions {forward!r} and {reverse!r}; the "
            f"panel has no {missing}"
        )
    wide = panel.pivot_table(index=["item", "judge"], columns="condition", values="logit")
    out = wide[[forward, reverse]].rename(columns={forward: "logit_fwd", reverse: "logit_rev"})
    n_all = len(out)
    out = out.dropna()
    if "gold" in panel.columns:
        gold = panel.drop_duplicates("item").set_index("item")["gold"]
        out["gold"] = gold.reindex(out.index.get_level_values("item")).to_numpy()
    out.columns.name = None
    out.attrs["n_incomplete"] = n_all - len(out)
    return out


def order_pairs(
    panel: pd.DataFrame, forward: str = ORIGINAL, reverse: str = SWAP, judge: str | None = None
) -> pd.DataFrame:
    """One judge's canonical logits in the two answer orders, one row per item.

    :func:`both_orders` of one judge (``judge``, or the panel's only one).

    Returns
    -------
    pandas.DataFrame
        Indexed by item: ``logit_fwd``, ``logit_rev`` and ``gold`` when present; items missing
        either order are left out and counted in ``attrs["n_incomplete"]``.
    """
    if judge is not None:
        panel = panel[panel["judge"] == judge]
    if panel["judge"].nunique() != 1:
        raise ValueError(f"need one judge, got {sorted(panel['judge'].unique())}; pass judge=")
    pairs = both_orders(panel, forward, reverse)
    out = pairs.droplevel("judge")
    out.attrs = dict(pairs.attrs)
    return out


def pairs_to_panel(
    pairs: pd.DataFrame, judge: str = "judge", source: str = "the table"
) -> pd.DataFrame:
    """The panel of a side-by-side pair table ``item, logit_fwd, logit_rev[, gold]``.

    Parameters
    ----------
    pairs : pandas.DataFrame
        One row per item: canonical log-odds that the original answer A wins with A shown
        first (``logit_fwd``) and after the order swap (``logit_rev``); optionally ``gold``
        ("A"/"B", empty for unlabelled items).
    judge : str, default "judge"
        The judge's name in the panel.
    source : str
        Named in error messages (e.g. the file path).

    Returns
    -------
    pandas.DataFrame
        A validated panel: two rows per item (conditions ``original`` and ``swap``), logits
        clipped to :math:`[-20, 20]`, ``gold`` when given; no item is dropped.

    Raises
    ------
    judgerisk.panel.PanelError
        Missing column, empty table, duplicate or missing items, non-numeric or non-finite
        logits, gold other than "A"/"B", each naming ``source``, the rows and the column.
    """
    missing = [c for c in PAIR_COLUMNS if c not in pairs.columns]
    if missing:
        raise PanelError(
            f"{source}: missing column(s) {missing}; a one-judge pair table needs "
            f"{list(PAIR_COLUMNS)} and optionally 'gold' (found {list(pairs.columns)})"
        )
    if pairs.empty:
        raise PanelError(f"{source}: the table has no rows")
    out = pairs.reset_index(drop=True).copy()
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
    keep = ["item"]
    if "gold" in out.columns:
        gold = out["gold"].astype("string").str.strip().str.upper()
        bad = ~gold.isin(["A", "B"]).fillna(False).to_numpy(bool) & gold.notna().to_numpy(bool)
        if bad.any():
            raise PanelError(
                f"{source}: column 'gold' must be 'A' or 'B'; "
                f"{offending_rows(out, bad, ['item', 'gold'])}"
            )
        out["gold"] = gold.astype(object).where(gold.notna(), None)
        keep.append("gold")
    long = pd.concat(
        [
            out[keep].assign(condition=cond, logit=out[col])
            for cond, col in ((ORIGINAL, "logit_fwd"), (SWAP, "logit_rev"))
        ],
        ignore_index=True,
    ).assign(judge=judge)
    return validate_panel(long, conditions=None)
