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
from scipy.stats import binom

from judgerisk.families import FAMILIES

__all__ = [
    "NAMED_JUDGES",
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
        per = differ.groupby(both["judge"], sort=True).agg(["size", "mean"])
        rows.append(
            pd.DataFrame(
                {
                    "judge": per.index,
                    "swapped": swapped,
                    "shown": shown,
                    "n_items": per["size"].to_numpy(),
                    "disagree": per["mean"].to_numpy(np.float64),
                }
            )
        )
    columns = ["judge", "swapped", "shown", "n_items", "disagree"]
    return pd.concat(rows, ignore_index=True) if rows else pd.DataFrame(columns=columns)


#: Flagged judges of one order pair named one by one; more get one note for them all.
NAMED_JUDGES = 3


def check_orientation(panel: pd.DataFrame) -> list[str]:
    """Warn, naming each judge whose canonical verdicts flip under an order swap on > 1/2 its items.

    The share must exceed one half by more than chance: the one-sided binomial test of
    "disagrees with probability at most 1/2" rejects at :data:`ORIENTATION_LEVEL`. Up to
    :data:`NAMED_JUDGES` such judges of an order pair get a warning each; more (a crowd of
    judges seen on a few items each) get one note for them all, with their count, their pooled
    share and the first few names.

    Returns the warning messages (also issued as ``UserWarning``).
    """
    messages = []
    table = order_disagreement(panel)
    cause = (
        "the likely cause is that the swapped verdicts were not mapped back to the original "
        "order (in a swapped prompt the judge's 'A' is the original B: the canonical p is "
        "P('B')); if they were, the judge mostly picks one position whatever the answers (a "
        "position bias)"
    )
    for (swapped, shown), rows in table.groupby(["swapped", "shown"], sort=False):
        n = rows["n_items"].to_numpy(int)
        k = np.rint(rows["disagree"].to_numpy(float) * n)
        # P(X >= k) for X ~ Binomial(n, 1/2): binomtest(k, n, 0.5, "greater").pvalue
        significant = binom.sf(k - 1, n, 0.5) < ORIENTATION_LEVEL
        flagged = rows[(n > 0) & (rows["disagree"].to_numpy(float) > 0.5) & significant]
        if len(flagged) <= NAMED_JUDGES:
            texts = [
                f"judge {r.judge!r}: its verdicts in '{swapped}' disagree with '{shown}' on "
                f"{r.disagree:.0%} of {r.n_items} items; {cause}"
                for r in flagged.itertuples()
            ]
        else:
            n_pairs = int(flagged["n_items"].sum())
            pooled = float((flagged["disagree"] * flagged["n_items"]).sum() / n_pairs)
            first = ", ".join(
                f"{r.judge!r} ({r.disagree:.0%} of {r.n_items})"
                for r in flagged.head(NAMED_JUDGES).itertuples()
            )
            texts = [
                f"{len(flagged)} of {len(rows)} judges seen in both '{swapped}' and '{shown}': "
                f"their verdicts in '{swapped}' disagree with '{shown}' on more than half of "
                f"their items (together on {pooled:.0%} of {n_pairs} items; first: {first}), "
                "each by more than chance (a one-sided binomial test at level "
                f"{ORIENTATION_LEVEL:g}); {cause} (judgerisk.orientation.order_disagreement "
                "lists every judge)"
            ]
        for msg in texts:
            warnings.warn(msg, UserWarning, stacklevel=2)
            messages.append(msg)
    return messages
