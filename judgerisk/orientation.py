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


def check_orientation(panel: pd.DataFrame) -> list[str]:
    """Warn, naming each judge whose canonical verdicts flip under an order swap on > 1/2 its items.

    The share must exceed one half by more than chance: the one-sided binomial test of
    "disagrees with probability at most 1/2" rejects at :data:`ORIENTATION_LEVEL`.

    Returns the warning messages (also issued as ``UserWarning``).
    """
    messages = []
    for r in order_disagreement(panel).itertuples():
        if not r.n_items or r.disagree <= 0.5:
            continue
        k = int(round(r.disagree * r.n_items))
        if binomtest(k, r.n_items, 0.5, alternative="greater").pvalue < ORIENTATION_LEVEL:
            msg = (
                f"judge {r.judge!r}: its verdicts in '{r.swapped}' disagree with '{r.shown}' on "
                f"{r.disagree:.0%} of {r.n_items} items; the likely cause is that the swapped "
                "verdicts were not mapped back to the original order (in a swapped prompt the "
                "judge's 'A' is the original B: the canonical p is P('B')); if they were, the "
                "judge mostly picks one position whatever the answers (a position bias)"
            )
            warnings.warn(msg, UserWarning, stacklevel=2)
            messages.append(msg)
    return messages
