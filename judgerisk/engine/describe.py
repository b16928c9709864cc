"""Descriptive summaries of a panel: judge accuracy, consensus and perturbation flips.

These are the realised figures a reader checks first on any panel, simulated or real
(Methods reference §1, §6).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from judgerisk.aggregators.aggregate import majority_vote
from judgerisk.families import family_pairs
from judgerisk.panel import ORIGINAL, gold_labels, to_wide, verdicts, wide_table
from judgerisk.panel._cell_table import CellTable
from judgerisk.risk.metrics import consensus_share, high_consensus

__all__ = [
    "MECHANISMS",
    "tie_effect",
    "consensus",
    "error_mechanisms",
    "flip_rates",
    "judge_accuracy",
    "judge_parameters",
    "panel_overview",
]


def judge_accuracy(panel: pd.DataFrame, condition: str = ORIGINAL) -> pd.Series:
    """Share of labelled items each judge gets right in one condition (verdict == gold).

    Only items with gold count, and missing cells are left out of that judge's denominator
    (the count of items each judge saw is in :func:`panel_overview`). A tie is half a vote
    for each answer (the data contract), so it counts half right.
    """
    votes = _votes(panel, condition)
    gold = gold_labels(panel).reindex(votes.index)
    if isinstance(votes, CellTable):  # a crowd: by its cells
        g = gold.to_numpy(np.float64)[votes.row]
        labelled = ~np.isnan(g)
        correct = 1.0 - np.abs(votes.values - g)[labelled]  # 1 right, 0 wrong, 1/2 a tie
        col = votes.col[labelled]
        n = np.bincount(col, minlength=len(votes.columns))
        with np.errstate(invalid="ignore", divide="ignore"):
            share = np.bincount(col, weights=correct, minlength=len(votes.columns)) / n
        return pd.Series(np.where(n > 0, share, np.nan), index=votes.columns, name="accuracy")
    correct = 1.0 - votes.sub(gold, axis=0).abs()  # 1 right, 0 wrong, 1/2 a tie
    return correct.where(votes.notna() & gold.notna().to_numpy()[:, None]).mean().rename("accuracy")


def _votes(panel: pd.DataFrame, condition: str) -> pd.DataFrame | CellTable:
    """:func:`judgerisk.panel.verdicts`, held by its cells for a crowd (:mod:`judgerisk.panel._cell_table`)."""
    table = wide_table(panel, "verdict", condition)
    return table.astype(np.float64) if isinstance(table, pd.DataFrame) else table


def consensus(panel: pd.DataFrame, condition: str = ORIGINAL) -> pd.DataFrame:
    """Per item: vote share for A, majority share, high-consensus flag and majority verdict.

    Returns
    -------
    pandas.DataFrame
        By item: ``n_judges``, ``share_a`` (mean of the 0/1 verdicts), ``consensus``
        (:func:`judgerisk.risk.metrics.consensus_share`), ``high_consensus``
        (:func:`judgerisk.risk.metrics.high_consensus`, at least 80 % agree, Methods reference §6)
        and ``majority`` (:func:`judgerisk.aggregators.aggregate.majority_vote`, ties broken by the
        mean probability, then B).
    """
    votes = _votes(panel, condition)
    probs = wide_table(panel, "p", condition)
    if isinstance(votes, CellTable):
        n_judges, share_a = votes.row_count(), votes.row_mean()
    else:
        n_judges, share_a = votes.notna().sum(axis=1), votes.mean(axis=1)
    return pd.DataFrame(
        {
            "n_judges": n_judges,
            "share_a": share_a,
            "consensus": consensus_share(votes),
            "high_consensus": high_consensus(votes),
            "majority": majority_vote(votes, probs)["verdict"],
        },
        index=votes.index,
    )


def flip_rates(panel: pd.DataFrame) -> pd.DataFrame:
    r"""How often each judge's verdict flips between the two conditions of a family pair.

    Every perturbation family with a pair present is reported (order, rubric, label, format,
    verbosity and any registered plug-in family; :mod:`judgerisk.families`).

    A flip is :math:`|v_c - v_{c'}|` with the contract's verdicts :math:`v \in \{1, \tfrac12,
    0\}` (A, tie, B): A against B is one flip, a tie against A or B half a flip (the tie policy
    of every vote-based quantity: half a vote for each answer), a tie against a tie none.

    Returns
    -------
    pandas.DataFrame
        Rows ``family, pair, judge, n_pairs, flip_rate``: the mean flip over the items seen in
        both conditions ``c`` and ``c'`` (the share of items whose verdict changes, when
        there is no tie). Families with no pair present are absent.
    """
    wide = panel.pivot_table(index=["item", "judge"], columns="condition", values="verdict")
    rows = []
    for family, pairs in family_pairs(wide.columns).items():
        for c, c_prime in pairs:
            both = wide[[c, c_prime]].dropna()
            flip = (both[c] - both[c_prime]).abs()  # a tie: half a flip against A or B
            flips = flip.groupby(level="judge").agg(["size", "mean"])
            for judge, (n, rate) in flips.iterrows():
                rows.append((family, f"{c} vs {c_prime}", judge, int(n), float(rate)))
    return pd.DataFrame(rows, columns=["family", "pair", "judge", "n_pairs", "flip_rate"])


def panel_overview(panel: pd.DataFrame) -> pd.Series:
    """Headline figures of a panel: sizes, missing cells, majority accuracy, consensus.

    Accuracy figures use the labelled items only (gold is optional per item).
    """
    cons = consensus(panel)
    n_items = panel["item"].nunique()
    n_judges = panel["judge"].nunique()
    n_conditions = panel["condition"].nunique()
    out = {
        "items": n_items,
        "judges": n_judges,
        "conditions": n_conditions,
        "cells": len(panel),
        "missing cells": n_items * n_judges * n_conditions - len(panel),
        "high-consensus share": float(cons["high_consensus"].mean()),
    }
    if "gold" in panel.columns:
        gold = gold_labels(panel).reindex(cons.index).map({1: "A", 0: "B"})
        labelled = gold.notna()
        cons, gold = cons[labelled], gold[labelled]
        wrong = cons["majority"] != gold
        out["labelled items"] = int(labelled.sum())
        out["majority accuracy"] = float(1 - wrong.mean())
        out["high-consensus errors"] = int((wrong & cons["high_consensus"]).sum())
        out["error rate at high consensus"] = float(wrong[cons["high_consensus"]].mean())
    return pd.Series(out, name="value")


#: The simulator's item mechanisms (columns of ``SimulationTruth.items``); a panel simulated
#: with another perturbation family also has ``<family>_sensitive``.
MECHANISMS = ("ambiguous", "consensus_wrong", "order_sensitive", "rubric_sensitive")


def error_mechanisms(panel: pd.DataFrame, truth: Any) -> pd.DataFrame:
    """Which planted mechanism lies behind the majority vote's errors (simulated panels only).

    Parameters
    ----------
    panel : pandas.DataFrame
        A simulated panel (:func:`judgerisk.simulate.simulate_panel` ``.data``).
    truth : judgerisk.simulate.SimulationTruth
        Its ground truth (``items`` with ``gold`` and the mechanism flags).

    Returns
    -------
    pandas.DataFrame
        One row per mechanism (:data:`MECHANISMS`, then each ``<family>_sensitive`` flag of
        the truth): ``share of items`` carrying it, the ``majority error rate`` on
        those items, and its ``share of high-consensus errors`` (among items whose majority
        verdict is wrong although at least 80 % of the judges agree). A mechanism far more
        common among high-consensus errors than among items drives the errors a majority
        vote cannot see.
    """
    cons = consensus(panel)
    items = truth.items.reindex(cons.index)
    wrong = cons["majority"].ne(items["gold"])
    more = [c for c in items.columns if c.endswith("_sensitive") and c not in MECHANISMS]
    flags = items[[*MECHANISMS, *more]].astype(bool)
    hidden = wrong & cons["high_consensus"]
    return pd.DataFrame(
        {
            "share of items": flags.mean(),
            "majority error rate": flags.apply(lambda f: wrong[f].mean()),
            "share of high-consensus errors": flags[hidden].mean(),
        }
    ).rename_axis("mechanism")


def judge_parameters(panel: pd.DataFrame, truth: Any) -> pd.DataFrame:
    """Each judge's accuracy next to its simulated discrimination ``a`` and noise ``sigma``."""
    acc = judge_accuracy(panel).to_frame()
    return acc.join(truth.a.rename("a")).join(truth.sigma.rename("sigma")).rename_axis("judge")


def tie_effect(panel: pd.DataFrame) -> dict[str, int]:
    """What counting ties as half a vote changes on a panel's original condition.

    Compares the contract's votes (a tie is 0.5) with the former rule (a tie counts as B).

    Returns
    -------
    dict
        ``ties`` (tie cells), ``cells``, ``tie_items`` (items with a tie cell), ``items``,
        ``ve_changed`` (items whose vote entropy changes), ``majority_changed`` (items whose
        majority verdict changes, ties broken by the mean probability either way) and
        ``no_preference`` (items whose vote share and mean probability are both exactly 1/2:
        B by the majority's rule, flagged in its ``tie`` column).
    """
    from judgerisk.panel import validate_panel
    from judgerisk.risk.baselines import binary_entropy

    panel = validate_panel(panel, conditions=None)
    votes = verdicts(panel, ORIGINAL)
    former = (to_wide(panel, "logit", ORIGINAL) > 0).astype(float).where(votes.notna())
    probs = to_wide(panel, "p", ORIGINAL)
    now, before = majority_vote(votes, probs), majority_vote(former, probs)
    tie = votes.eq(0.5)
    share = votes.mean(axis=1)
    return {
        "ties": int(tie.sum().sum()),
        "cells": int(votes.notna().sum().sum()),
        "tie_items": int(tie.any(axis=1).sum()),
        "items": len(votes),
        "ve_changed": int((binary_entropy(share) != binary_entropy(former.mean(axis=1))).sum()),
        "majority_changed": int((now["verdict"] != before["verdict"]).sum()),
        "no_preference": int((now["tie"] & (probs.mean(axis=1).round(12) == 0.5)).sum()),
    }
