"""Why an item is risky: its SCUR, its signals and its judges' responses, in words.

:func:`explain` describes one item of a :class:`~judgerisk.risk.scur.ScurResult` (the paper's
Table 2); :func:`riskiest` lists the riskiest items with the signals that raised them.

References
----------
"Can We Trust This Evaluation? Instance-Level Reliability of LLM-as-a-Judge", Table 2.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from judgerisk.options import ANALYSIS
from judgerisk.panel import ORIGINAL, PanelError
from judgerisk.risk.scur import ScurResult
from judgerisk.risk.signals import SIGNAL_NAMES, Z_COLUMNS

__all__ = ["ItemExplanation", "explain", "riskiest"]


def _reason_text(zrow: pd.Series, threshold: float) -> str:
    """Name the signals at or above ``threshold``, strongest first."""
    zs = {c: float(zrow[c]) for c in Z_COLUMNS if c in zrow.index and not pd.isna(zrow[c])}
    high = sorted(((v, c) for c, v in zs.items() if v >= threshold), reverse=True)
    if high:
        return "; ".join(f"{SIGNAL_NAMES[c]} (z={v:.2f})" for v, c in high)
    if float(zrow.get("scur", 0.0)) >= threshold:
        return "several moderately elevated signals"
    return "no elevated signal"


@dataclass(frozen=True)
class ItemExplanation:
    """Why one item got its SCUR: its scores and the judges' responses (the paper's Table 2).

    Attributes
    ----------
    item : hashable
    split : str
        ``"reference"`` or ``"evaluation"``.
    scores : pandas.Series
        ``U, C, S_order, S_rubric[, S_<family> ...], S, z_U, z_C, z_S_order, z_S_rubric[,
        z_S_<family> ...], z_S, scur``.
    reason : str
        The signals with z at or above the threshold, strongest first.
    responses : pandas.DataFrame
        Observed canonical probability P(original A wins), judge x condition.
    predicted : pandas.DataFrame
        Leave-one-judge-out predictions :math:`\\hat p_{ijc}`, judge x condition.
    """

    item: Any
    split: str
    scores: pd.Series
    reason: str
    responses: pd.DataFrame
    predicted: pd.DataFrame


def _judge_by_condition(rows: pd.DataFrame, value: str) -> pd.DataFrame:
    wide = rows.pivot(index="judge", columns="condition", values=value)
    order = list(pd.unique(rows["condition"]))
    return wide.reindex(columns=order).rename_axis(index="judge", columns="condition")


def explain(
    result: ScurResult,
    item: Any,
    panel: pd.DataFrame | None = None,
    threshold: float = ANALYSIS.elevated_z,
) -> ItemExplanation:
    """The scores of one reference or evaluation item and the responses behind them.

    Parameters
    ----------
    result : ScurResult
        Output of :func:`scur_scores`.
    item : hashable
        A reference or evaluation item of ``result``.
    panel : pandas.DataFrame, optional
        Panel to read the judges' responses from; default ``result.predictions`` (which
        holds every observed cell of the scored items).
    threshold : float, default ``ANALYSIS.elevated_z``
        A signal counts as elevated in ``reason`` when its z is at least this.

    Returns
    -------
    ItemExplanation

    References
    ----------
    The paper's Table 2 (z^U, z^C, z^S and SCUR of single items, with their reasons).
    """
    scores = result.scores()
    if item not in scores.index:
        where = result.split.get(item, None) if item in result.split.index else None
        if where == "fit":
            raise ValueError(
                f"item {item!r} is a fit item; only reference and evaluation items are scored"
            )
        raise ValueError(f"item {item!r} is not in this result")
    row = scores.loc[item]
    src = result.predictions if panel is None else panel
    rows = src.loc[src["item"] == item]
    if rows.empty:
        raise ValueError(f"item {item!r} has no rows in the given panel")
    preds = result.predictions.loc[result.predictions["item"] == item]
    return ItemExplanation(
        item=item,
        split=str(row["split"]),
        scores=row.drop("split").astype(np.float64),
        reason=_reason_text(row, threshold),
        responses=_judge_by_condition(rows, "p"),
        predicted=_judge_by_condition(preds, "p_hat"),
    )


def riskiest(
    result: ScurResult,
    n: int = 10,
    split: str = "evaluation",
    threshold: float = ANALYSIS.elevated_z,
) -> pd.DataFrame:
    """The ``n`` highest-SCUR items with their z's, vote split and reasons (Table-2-like).

    Parameters
    ----------
    result : ScurResult
    n : int, default 10
    split : {"evaluation", "reference"}, default "evaluation"
    threshold : float, default ``ANALYSIS.elevated_z``
        z at or above which a signal is named as a reason.

    Returns
    -------
    pandas.DataFrame
        Indexed by item, sorted by decreasing SCUR (ties by item): ``z_U, z_C, z_S,
        scur, votes_A`` (votes for A / judges, original condition; a tie is half a vote),
        ``p_bar`` (mean observed original-condition probability) and ``reason``.
    """
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 0:
        raise PanelError(f"n must be a non-negative integer, got {n!r}")
    t = result.scores(split).sort_values("scur", ascending=False, kind="stable").head(n)
    pr = result.predictions
    orig = pr.loc[(pr["condition"] == ORIGINAL) & pr["item"].isin(t.index)]
    g = orig.assign(vote=orig["verdict"]).groupby("item")  # a tie is half a vote
    votes = g["vote"].sum().map("{:g}".format).astype(str) + "/" + g["vote"].size().astype(str)
    out = t[["z_U", "z_C", "z_S", "scur"]].copy()
    out["votes_A"] = votes.reindex(out.index)
    out["p_bar"] = g["p"].mean().reindex(out.index)
    out["reason"] = [_reason_text(r, threshold) for _, r in out.iterrows()]
    return out
