r"""Two silent conventions made loud: tie cells and order swaps left in the shown order.

**Ties.** A cell with margin :math:`m = 0` (:math:`p = 1/2`) is a *tie*: the judge prefers
neither answer. Every vote-based quantity counts it as half a vote for A and half for B
(:func:`judgerisk.panel.verdicts` gives 0.5): the majority's vote share, the vote entropy, the
matched votes and the aggregators' hard-vote inputs. :func:`count_ties` counts them; ``score`` and
``report`` print the count (book page "Importing your judges").

**Orientation.** The contract's probabilities are canonical: after an order swap the judge's
"A" is the original B, so the swapped verdict must be mapped back. A judge whose canonical
verdicts disagree between the two orders on more than half of its items almost surely was not
mapped back (a judge at chance disagrees on about half); the share is taken over the items with
a strict verdict in both orders (a tie on either side is no evidence either way, and counted as
an agreement it would hide a mis-orientation). :func:`check_orientation` names it
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
from scipy.special import bdtrc

from judgerisk.families import FAMILIES

__all__ = [
    "NAMED_JUDGES",
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
    """Per judge and order pair, the share of its strict pairs whose canonical verdicts differ.

    A *strict pair* is an item the judge gave a strict verdict (:math:`m \\ne 0`) in both
    orders; a pair with a tie on either side says nothing about the orientation (a tie is the
    same verdict read either way), so it is left out of the denominator as well as the
    numerator. Counting it as an agreement would dilute a mis-orientation below one half: an
    Arena-Hard panel whose swapped games were not mapped back, 37 of its 176 cells ties,
    disagrees on 79 % of its strict pairs but on under half of all its pairs.

    Returns
    -------
    pandas.DataFrame
        Columns ``judge, swapped, shown, n_items, disagree``: the number of the judge's strict
        pairs and the share of them whose verdicts differ (a judge with none is left out).
    """
    return _order_disagreement(_by_condition(panel))


def _by_condition(panel: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """``{condition: its rows' item, judge and logit}``, the panel split in one pass.

    One grouping instead of a string comparison of the whole condition column per condition
    and per use (a 600,000-row panel: 0.05 s against about 1.5 s).
    """
    cells = panel[["item", "judge", "logit"]]
    # observed: a categorical condition gives its used values only
    groups = cells.groupby(panel["condition"], sort=False, observed=True)
    return {str(c): rows for c, rows in groups}


def _order_disagreement(parts: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """:func:`order_disagreement` of a panel split by :func:`_by_condition`."""
    rows = [
        _pair_disagreement(parts[swapped], parts[shown], swapped, shown)
        for swapped, shown in FAMILIES["order"].pairs(list(parts))
    ]
    columns = ["judge", "swapped", "shown", "n_items", "disagree"]
    return pd.concat(rows, ignore_index=True) if rows else pd.DataFrame(columns=columns)


def _pair_disagreement(a: pd.DataFrame, b: pd.DataFrame, swapped: str, shown: str) -> pd.DataFrame:
    """One order pair's rows of :func:`order_disagreement` (judges sorted by name).

    The cells of the two orders are matched by integer (item, judge) keys (a validated panel
    has one cell per item, judge and condition) instead of a merge on the ids (0.15 s a pair
    on a 600,000-row panel); each count is exact, so the shares equal a groupby mean's.
    """
    item, _ = pd.factorize(pd.concat([a["item"], b["item"]], ignore_index=True))
    judge, judges = pd.factorize(pd.concat([a["judge"], b["judge"]], ignore_index=True), sort=True)
    key = item.astype(np.int64) * len(judges) + judge
    n = len(a)
    _, at_a, at_b = np.intersect1d(key[:n], key[n:], assume_unique=True, return_indices=True)
    m_s = a["logit"].to_numpy(np.float64)[at_a]
    m_o = b["logit"].to_numpy(np.float64)[at_b]
    strict = (m_s != 0) & (m_o != 0) & ~np.isnan(m_s) & ~np.isnan(m_o)
    who = judge[:n][at_a][strict]
    differ = np.sign(m_s[strict]) * np.sign(m_o[strict]) < 0
    size = np.bincount(who, minlength=len(judges))
    hits = np.bincount(who, weights=differ, minlength=len(judges))
    seen = size > 0
    names = judges[seen]
    if not isinstance(names, pd.CategoricalIndex):  # the dtype a groupby gives its keys
        names = pd.Index(names.to_numpy(dtype=object))
    return pd.DataFrame(
        {
            "judge": names,
            "swapped": swapped,
            "shown": shown,
            "n_items": size[seen].astype(np.int64),
            "disagree": hits[seen] / size[seen],
        }
    )


#: Flagged judges of one order pair named one by one; more get one note for them all.
NAMED_JUDGES = 3


#: Reading of :func:`orientation_evidence` for a judge that flips on more than half its items.
POSITION_BIAS = "position bias"
NOT_MAPPED = "swapped verdicts not mapped back"


def _first_shown_share(sub: pd.DataFrame, first: float) -> pd.Series:
    """Per judge: share of its strict verdicts in ``sub`` (one condition) whose sign is ``first``."""
    logit = sub["logit"].to_numpy(dtype=np.float64)
    strict = np.isfinite(logit) & (logit != 0)
    # by judge codes: a groupby on a 100,000-label index of names costs ~40x more (each hit
    # is 0 or 1, so the sums are exact and the means equal the groupby's)
    code, judges = pd.factorize(sub["judge"].to_numpy()[strict])
    hits = np.bincount(code, weights=np.sign(logit[strict]) == first, minlength=len(judges))
    counts = np.bincount(code, minlength=len(judges))
    return pd.Series(hits / counts, index=pd.Index(judges, dtype=object))


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
        :data:`ORIENTATION_LEVEL`), :data:`POSITION_BIAS` when it picks the same position in
        both orders (both shares above 1/2, or both below) and :data:`NOT_MAPPED` otherwise;
        empty else.
    """
    parts = _by_condition(panel)
    table = _order_disagreement(parts)
    columns = [*table.columns, "first_shown", "first_swapped", "reading"]
    out = []
    for (swapped, shown), rows in table.groupby(["swapped", "shown"], sort=False):
        rows = rows.copy()
        judges = rows["judge"]
        rows["first_shown"] = judges.map(_first_shown_share(parts[shown], 1.0)).astype(float)
        rows["first_swapped"] = judges.map(_first_shown_share(parts[swapped], -1.0)).astype(float)
        n = rows["n_items"].to_numpy(int)
        share = rows["disagree"].to_numpy(float)
        k = np.rint(share * n)
        # P(X >= k) for X ~ Binomial(n, 1/2): binomtest(k, n, 0.5, "greater").pvalue, as the
        # binomial's upper tail bdtrc(k - 1, n, 1/2) (scipy.special: no scipy.stats import)
        flips = (n > 0) & (share > 0.5) & (bdtrc(k - 1, n, 0.5) < ORIENTATION_LEVEL)
        a, b = rows["first_shown"].to_numpy(), rows["first_swapped"].to_numpy()
        same_side = ((a > 0.5) & (b > 0.5)) | ((a < 0.5) & (b < 0.5))
        rows["reading"] = np.where(flips, np.where(same_side, POSITION_BIAS, NOT_MAPPED), "")
        out.append(rows)
    return pd.concat(out, ignore_index=True) if out else pd.DataFrame(columns=columns)


def _cause(reading: str) -> str:
    if reading == POSITION_BIAS:
        return (
            "the same position in both orders: a position bias of the judge, not a mapping "
            "error (a judge whose swapped verdicts were not mapped back would pick by content, "
            "near the share of items whose better answer came first)"
        )
    return (
        "no position is preferred in both orders, so the likely cause is that the swapped "
        "verdicts were not mapped back to the original order (in a swapped prompt the judge's "
        "'A' is the original B: the canonical p is P('B'))"
    )


def check_orientation(panel: pd.DataFrame) -> list[str]:
    """Warn, naming each judge whose canonical verdicts flip under an order swap on > 1/2 its items.

    The share must exceed one half by more than chance: the one-sided binomial test of
    "disagrees with probability at most 1/2" rejects at :data:`ORIENTATION_LEVEL`. The
    message gives the evidence that tells a swap left unmapped from a position bias (the
    judge's share of first-shown picks in each order, :func:`orientation_evidence`) and its
    reading. Up to :data:`NAMED_JUDGES` such judges of an order pair get a warning each; more
    (a crowd of judges seen on a few items each) get one note for them all, with their count,
    their pooled share, the first few names and how many of them read as a position bias.

    Returns the warning messages (also issued as ``UserWarning``).
    """
    messages = []
    table = orientation_evidence(panel)
    for (swapped, shown), rows in table.groupby(["swapped", "shown"], sort=False):
        flagged = rows[rows["reading"] != ""]
        if len(flagged) <= NAMED_JUDGES:
            texts = [
                f"judge {r.judge!r}: its verdicts in '{swapped}' disagree with '{shown}' on "
                f"{r.disagree:.0%} of {r.n_items} items with a strict verdict in both (ties left "
                f"out); it picks the answer shown first on "
                f"{r.first_shown:.0%} of its verdicts in '{shown}' and on {r.first_swapped:.0%} "
                f"in '{swapped}' (read as mapped back): {_cause(r.reading)}"
                for r in flagged.itertuples()
            ]
        else:
            n_pairs = int(flagged["n_items"].sum())
            pooled = float((flagged["disagree"] * flagged["n_items"]).sum() / n_pairs)
            first = ", ".join(
                f"{r.judge!r} ({r.disagree:.0%} of {r.n_items})"
                for r in flagged.head(NAMED_JUDGES).itertuples()
            )
            biased = int((flagged["reading"] == POSITION_BIAS).sum())
            texts = [
                f"{len(flagged)} of {len(rows)} judges seen in both '{swapped}' and '{shown}': "
                f"their verdicts in '{swapped}' disagree with '{shown}' on more than half of "
                f"their items (together on {pooled:.0%} of {n_pairs} items; first: {first}), "
                "each by more than chance (a one-sided binomial test at level "
                f"{ORIENTATION_LEVEL:g}); {biased} of them pick the same position in both "
                "orders (a position bias), the others prefer no position in both, so their "
                "swapped verdicts were likely not mapped back to the original order "
                "(judgerisk._orientation.orientation_evidence lists every judge and its reading)"
            ]
        for msg in texts:
            warnings.warn(msg, UserWarning, stacklevel=2)
            messages.append(msg)
    return messages
