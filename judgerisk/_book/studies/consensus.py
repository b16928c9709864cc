"""Where the panel's errors sit: high-consensus subsets and matched vote patterns.

Small tables behind the chapters "High consensus" and "Matched votes": how many items and
errors each high-consensus subset holds, the within-pattern AUROC of several risk scores in
one long table, and how many distinct values a score takes inside one vote pattern.

References
----------
.. [1] "Can We Trust This Evaluation? Instance-Level Reliability of LLM-as-a-Judge", Section 4
   (Figure 4, high consensus) and Appendix D (probability-based high consensus, matched votes).
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from judgerisk.engine.analysis import aggregate_errors
from judgerisk.options import ANALYSIS
from judgerisk.panel import verdicts
from judgerisk.risk.baselines import mean_probability
from judgerisk.risk.metrics import (
    high_consensus,
    matched_vote_groups,
    probability_high_consensus,
    vote_patterns,
)

__all__ = ["consensus_overview", "matched_groups_by_method", "distinct_within_pattern"]


def consensus_overview(
    panel: pd.DataFrame, aggregator: str = "majority", threshold: float = ANALYSIS.hc_threshold
) -> pd.DataFrame:
    """Items, errors and error rate of all items and of the two high-consensus subsets.

    An error is :math:`e_i = 1[\\hat y_i \\ne y^*_i]` for the aggregator's verdict. The
    vote-based subset is :math:`\\mathrm{HC}_i = 1[\\max(k_i, J_i - k_i)/J_i \\ge 0.8]` with
    :math:`k_i = \\sum_j y_{ij0}`; the probability-based one is
    :math:`\\max(\\bar p_i, 1 - \\bar p_i) \\ge 0.8` for the panel-mean probability
    :math:`\\bar p_i` [1]_.

    Parameters
    ----------
    panel : pandas.DataFrame
        A panel with a ``gold`` column (see :func:`judgerisk.panel.validate_panel`).
    aggregator : str, default "majority"
        Aggregator whose verdicts define the errors
        (:func:`judgerisk.engine.analysis.aggregate_errors`).
    threshold : float, default ``ANALYSIS.hc_threshold``
        Consensus level of both definitions.

    Returns
    -------
    pandas.DataFrame
        Index ``all items``, ``high consensus (votes)``, ``high consensus (probability)``;
        columns ``items`` and ``errors`` (integers) and ``error rate``.
    """
    errors = aggregate_errors(panel, aggregator)
    masks = {
        "all items": pd.Series(True, index=errors.index),
        "high consensus (votes)": high_consensus(verdicts(panel), threshold),
        "high consensus (probability)": probability_high_consensus(
            mean_probability(panel), threshold
        ),
    }
    rows = {}
    for name, mask in masks.items():
        keep = mask.reindex(errors.index, fill_value=False).astype(bool)
        rows[name] = {"items": int(keep.sum()), "errors": int(errors[keep].sum())}
    table = pd.DataFrame.from_dict(rows, orient="index")
    table["error rate"] = table["errors"] / table["items"].where(table["items"] > 0)
    return table


def matched_groups_by_method(
    votes: pd.DataFrame,
    errors: pd.Series,
    scores: pd.DataFrame,
    methods: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Within-pattern AUROC of several risk scores, as one long table.

    For each score column, :func:`judgerisk.risk.metrics.matched_vote_groups` groups the items
    by their exact vote vector and computes the AUROC for errors inside every group; the
    weighted mean over groups, with weights :math:`n^+_g n^-_g`, is the matched-vote AUROC [1]_.

    Parameters
    ----------
    votes : pandas.DataFrame
        Item x judge matrix of original-condition verdicts (:func:`judgerisk.panel.verdicts`).
    errors : pandas.Series of {0, 1}
        Error labels by item.
    scores : pandas.DataFrame
        One risk score per column, indexed by item.
    methods : sequence of str, optional
        Columns of ``scores`` to use, in order; default all.

    Returns
    -------
    pandas.DataFrame
        The columns of :func:`~judgerisk.risk.metrics.matched_vote_groups` (with ``auroc``)
        plus ``method``; one row per pattern and method.
    """
    methods = list(methods) if methods is not None else list(scores.columns)
    missing = [m for m in methods if m not in scores.columns]
    if missing:
        raise ValueError(f"scores has no column(s) {missing}; it has {list(scores.columns)}")
    parts = [matched_vote_groups(votes, errors, scores=scores[m]).assign(method=m) for m in methods]
    return pd.concat(parts, ignore_index=True)


def distinct_within_pattern(scores: pd.DataFrame, votes: pd.DataFrame) -> pd.Series:
    """Largest number of distinct values a score takes inside one vote pattern.

    A score that is a function of the vote vector alone (vote entropy, Dawid–Skene entropy
    under frozen parameters) takes one value per pattern, so every within-pattern pair is a
    tie and its matched-vote AUROC is exactly 0.5 [1]_.

    Parameters
    ----------
    scores : pandas.DataFrame
        One risk score per column, indexed by item.
    votes : pandas.DataFrame
        Item x judge matrix of original-condition verdicts, with a row for every item of
        ``scores``.

    Returns
    -------
    pandas.Series
        By score column (name ``"distinct values"``).
    """
    missing = scores.index.difference(votes.index)
    if len(missing):
        raise ValueError(f"votes lack {len(missing)} items of scores, e.g. {missing[:10].tolist()}")
    patterns = vote_patterns(votes.loc[scores.index])
    return scores.groupby(patterns).nunique().max().rename("distinct values")
