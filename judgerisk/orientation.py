r"""Two silent conventions made loud: tie cells and order swaps left in the shown order.

**Ties.** A cell with margin :math:`m = 0` (:math:`p = 1/2`) is a *tie*: the judge prefers
neither answer. Every vote-based quantity counts it as half a vote for A and half for B
(:func:`judgerisk.panel.verdicts` gives 0.5): the majority's vote share, the vote entropy, the
matched votes and the aggregators' hard-vote inputs. :func:`count_ties` counts them; ``score`` and
``report`` print the count (book page "Importing your judges").

**Orientation.** The contract's probabilities are canonical: after an order swap the judge's
"A" is the original B, so the swapped verdict must be mapped back. A judge whose canonical
verdicts disagree between the two orders on more than half of its items almost surely was not
mapped back (a judge at chance disagrees on about half); :func:`check_orientation` names it
when the excess over one half is more than chance explains: a one-sided binomial test of
"disagrees on at most half" at level :data:`ORIENTATION_LEVEL` (one item, or three of four,
never suffices; four of four does).

The same symptom has a second cause: a judge with a strong **position bias** that picks the
answer shown first (or second) whatever the answers disagrees with itself on every item whose
order was swapped, even when the data were mapped back correctly. The original order tells the
two apart, since it is never mapped: a position-biased judge picks the answer *shown first* on
most items in both orders (read with the data's mapping), while a judge whose swapped verdicts
were left in the shown order picks by content, so its share of first-shown picks in each order
sits near the share of items whose better answer came first.
:func:`orientation_evidence` computes both shares and the reading.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from scipy.stats import binomtest

from judgerisk.families import FAMILIES

__all__ = [
    "ORIENTATION_LEVEL",
    "count_ties",
    "check_orientation",
    "order_disagreement",
    "orientation_evidence",
    "tie_message",
]

#: Level of the binomial test behind :func:`check_orientation`'s warning.
ORIENTATION_LEVEL = 0.1


def count_ties(panel: pd.DataFrame) -> dict[str, int]:
    """Number of tie cells (``logit == 0``) in a validated panel, overall and per condition."""
    tie = panel["logit"].to_numpy(dtype=np.float64) == 0.0
    per = panel.loc[tie, "condition"].value_counts()
    return {
        "total": int(tie.sum()),
        "cells": len(panel),
        **{str(k): int(v) for k, v in per.items()},
    }


def tie_message(panel: pd.DataFrame) -> str | None:
    """A sentence counting the tie cells and the tie policy, or ``None`` when there is none."""
    ties = count_ties(panel)
    if not ties["total"]:
        return None
    return (
        f"{ties['total']} of {ties['cells']} cells are ties (p = 1/2): each counts half a vote "
        "for A and half for B in the majority, the vote entropy, the matched votes and the "
        "aggregators' votes (book page 'Importing your judges')"
    )


def order_disagreement(panel: pd.DataFrame) -> pd.DataFrame:
    """Per judge and order pair, the share of items whose canonical verdicts differ.

    Returns
    -------
    pandas.DataFrame
        Columns ``judge, swapped, shown, n_items, disagree`` (share of the judge's items seen in
        both conditions whose strict verdicts differ; ties never count as a disagreement).
    """
    rows = []
    for swapped, shown in FAMILIES["order"].pairs(pd.unique(panel["condition"])):
        a = panel.loc[panel["condition"] == swapped, ["item", "judge", "logit"]]
        b = panel.loc[panel["condition"] == shown, ["item", "judge", "logit"]]
        both = a.merge(b, on=["item", "judge"], suffixes=("_s", "_o"))
        differ = np.sign(both["logit_s"]) * np.sign(both["logit_o"]) < 0
        for judge, d in differ.groupby(both["judge"], sort=True):
            rows.append(
                {
                    "judge": judge,
                    "swapped": swapped,
                    "shown": shown,
                    "n_items": len(d),
                    "disagree": float(d.mean()),
                }
            )
    return pd.DataFrame(rows, columns=["judge", "swapped", "shown", "n_items", "disagree"])


#: Reading of :func:`orientation_evidence` for a judge that flips on more than half its items.
POSITION_BIAS = "position bias"
NOT_MAPPED = "swapped verdicts not mapped back"


def orientation_evidence(panel: pd.DataFrame) -> pd.DataFrame:
    """Per judge and order pair: how often it picks the answer shown first, in each order.

    In the original order the answer shown first is A; in the swapped order it is the
    original B, so a canonical verdict for B there is a pick of the first-shown answer.

    Returns
    -------
    pandas.DataFrame
        Columns ``judge, swapped, shown, n_items, disagree, first_shown, first_swapped``
        (shares of strict verdicts for the answer shown first, in the shown order and in the
        swapped order) and ``reading``: for a judge that disagrees with itself on more than
        half its items, by more than chance explains (one-sided binomial test at
        :data:`ORIENTATION_LEVEL`), :data:`POSITION_BIAS` when it picks the same position in both orders
        (both shares above 1/2, or both below) and :data:`NOT_MAPPED` otherwise; empty else.
    """
    rows = []
    for r in order_disagreement(panel).itertuples():
        share = {}
        for cond, first in ((r.shown, 1.0), (r.swapped, -1.0)):
            logit = panel.loc[
                (panel["condition"] == cond) & (panel["judge"] == r.judge), "logit"
            ].to_numpy(dtype=np.float64)
            strict = logit[np.isfinite(logit) & (logit != 0)]
            share[cond] = float(np.mean(np.sign(strict) == first)) if strict.size else np.nan
        a, b = share[r.shown], share[r.swapped]
        reading = ""
        k = int(round(r.disagree * r.n_items))
        if (
            r.n_items
            and r.disagree > 0.5
            and binomtest(k, r.n_items, 0.5, alternative="greater").pvalue < ORIENTATION_LEVEL
        ):
            same_side = (a > 0.5 and b > 0.5) or (a < 0.5 and b < 0.5)
            reading = POSITION_BIAS if same_side else NOT_MAPPED
        rows.append({**r._asdict(), "first_shown": a, "first_swapped": b, "reading": reading})
    columns = ["judge", "swapped", "shown", "n_items", "disagree", "first_shown"]
    return pd.DataFrame(rows, columns=[*columns, "first_swapped", "reading"]).drop(
        columns="Index", errors="ignore"
    )


def check_orientation(panel: pd.DataFrame) -> list[str]:
    """Warn, naming each judge whose canonical verdicts flip under an order swap on > 1/2 its items.

    The share must exceed one half by more than chance: the one-sided binomial test of
    "disagrees with probability at most 1/2" rejects at :data:`ORIENTATION_LEVEL`. The
    message gives the evidence that tells a swap left unmapped from a position bias (the
    judge's share of first-shown picks in each order, :func:`orientation_evidence`) and its
    reading. Returns the warning messages (also issued as ``UserWarning``).
    """
    messages = []
    for r in orientation_evidence(panel).itertuples():
        if not r.reading:
            continue
        evidence = (
            f"it picks the answer shown first on {r.first_shown:.0%} of its verdicts in "
            f"'{r.shown}' and on {r.first_swapped:.0%} in '{r.swapped}' (read as mapped back)"
        )
        if r.reading == POSITION_BIAS:
            cause = (
                "the same position in both orders: a position bias of the judge, not a "
                "mapping error (a judge whose swapped verdicts were not mapped back would "
                "pick by content, near the share of items whose better answer came first)"
            )
        else:
            cause = (
                "no position is preferred in both orders, so the likely cause is that the "
                "swapped verdicts were not mapped back to the original order (in a swapped "
                "prompt the judge's 'A' is the original B: the canonical p is P('B'))"
            )
        msg = (
            f"judge {r.judge!r}: its verdicts in '{r.swapped}' disagree with '{r.shown}' on "
            f"{r.disagree:.0%} of {r.n_items} items; {evidence}: {cause}"
        )
        warnings.warn(msg, UserWarning, stacklevel=2)
        messages.append(msg)
    return messages
