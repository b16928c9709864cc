"""Panel aggregators: one interface over majority vote, Dawid–Skene, MACE, GLAD and CARE.

Each aggregator turns the panel's original-condition judgements into one verdict per item (its
own verdict, hence its own error labels; book chapter "Aggregators and retention"). Majority, Dawid–Skene, MACE and GLAD use the
binary verdicts; CARE uses the judges' probabilities (:mod:`judgerisk.aggregators._care`).

MACE and GLAD (:mod:`~judgerisk.aggregators._mace`, :mod:`~judgerisk.aggregators._glad`) are
implemented in vectorised numpy rather than wrapped from crowd-kit 1.4.2,
for three measured reasons (``benchmarks/aggregators.py``, ``tests/test_aggregate.py``):

* crowd-kit's GLAD took 31 s for 2,000 items x 5 judges (its M-step runs pandas group-bys inside
  every conjugate-gradient call); the numpy version takes well under a second;
* crowd-kit's MACE seeds every restart with the same ``random_state``, so its ``n_restarts`` random
  restarts are ten copies of one run (Hovy et al. restart from different random points); and its
  M-step returns the judge and label matrices in *sorted* order while its E-step reads them in
  order of *first appearance* in the rows, so its answer changes with the row order whenever the
  two differ (0.04 in posterior on a 150-item test panel whose first item lacks one judge);
* neither scores items outside the data it was fitted on, which ``fit_items`` needs (parameters
  fitted on the fit split, posteriors for every item).

The tests check both against crowd-kit on the same votes (MACE: identical initialisation and rows
in sorted order, equal posteriors to 1e-8; GLAD: same model, priors and optimiser, posteriors within
0.02 and equal hard labels away from 1/2).

Every rule is a :class:`~judgerisk.aggregators._base.BaseAggregator` registered by name
(:func:`~judgerisk.aggregators._base.register_aggregator`); :func:`aggregate` dispatches through the
registry, so a new rule needs only its module and its registration.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from judgerisk.aggregators._base import (
    AGGREGATORS,
    BaseAggregator,
    aggregator_name,
    make_aggregator,
)

# Re-exports; the built-ins and their order are listed where the registry is defined
# (judgerisk.aggregators._base), so removing one of these lines unregisters nothing.
from judgerisk.aggregators._care import CARE
from judgerisk.aggregators._glad import GLAD
from judgerisk.aggregators._mace import MACE
from judgerisk.aggregators._majority import MajorityVote, majority_vote
from judgerisk.aggregators.dawid_skene import DawidSkene
from judgerisk.panel import ORIGINAL, validate_panel, wide_table
from judgerisk.validation import check_item_subset

__all__ = [
    "AGGREGATORS",
    "CARE",
    "GLAD",
    "MACE",
    "DawidSkene",
    "MajorityVote",
    "aggregate",
    "compare_aggregators",
    "disagreement",
    "majority_vote",
]


def aggregate(
    panel: pd.DataFrame,
    method: str | BaseAggregator,
    fit_items: Iterable | None = None,
    random_state: int | None = None,
    *,
    check_input: bool = True,
    **options: Any,
) -> pd.DataFrame:
    r"""Aggregate a panel's original-condition judgements into one verdict per item.

    Parameters
    ----------
    panel : pandas.DataFrame
        A panel (``judgerisk.panel`` contract); only the ``original`` condition is used.
    method : str or BaseAggregator
        A registered aggregation rule (see :data:`AGGREGATORS`): built in ``"majority"``,
        ``"dawid_skene"``, ``"mace"``, ``"glad"`` and ``"care"``; or an aggregator instance
        (registered or not), fitted as a copy.
    fit_items : array-like, optional
        Items whose judgements fit the aggregator's parameters (default: all items). Posteriors
        and verdicts are reported for every item of the panel, the others scored with the
        parameters frozen. Makes no difference to ``"majority"`` (no parameters).
    random_state : int, optional
        Seed for aggregators with random restarts (MACE); the others are deterministic.
    check_input : bool, default True
        Validate the panel (:func:`judgerisk.panel.validate_panel`). ``False`` is for callers
        that pass a panel they validated where it entered (the engine's repetitions): the
        checks are skipped, so anything else gives undefined results.
    **options
        Passed to the registered class: :class:`MajorityVote` (none),
        :class:`~judgerisk.aggregators.dawid_skene.DawidSkene`, :class:`MACE`, :class:`GLAD` or
        :class:`~judgerisk.aggregators._care.CARE`.

    Returns
    -------
    pandas.DataFrame
        One row per item (sorted), columns ``item``, ``verdict`` ("A"/"B") and ``posterior``
        (the aggregator's P(A): vote share for majority, posterior for DS/MACE/GLAD, weighted
        mean probability for CARE).

    Notes
    -----
    Verdict = A iff posterior > 1/2 (exactly 1/2 counts as B, like a zero margin), except for
    majority ties, broken by the mean probability (:func:`~judgerisk.aggregators._majority.majority_tie_rule`):
    the verdicts are the aggregator's :attr:`~BaseAggregator.labels_` for the fit items and
    :meth:`~BaseAggregator.predict` for the others, given the same probabilities.
    """
    est = make_aggregator(method, random_state=random_state, **options)
    if check_input:
        panel = validate_panel(panel, conditions=None)
    # a crowd's tables are held by their cells (judgerisk.panel._cell_table): memory grows with its cells
    probs = wide_table(panel, value="p", condition=ORIGINAL)
    table = probs if est.uses == "p" else wide_table(panel, value="verdict", condition=ORIGINAL)
    if isinstance(table, pd.DataFrame):
        table = table.astype(np.float64)
    items = table.index
    fit_idx = check_item_subset(items, fit_items)
    est.fit(table.loc[fit_idx], probs.loc[fit_idx])
    post, verdict = est.posterior_, est.labels_
    if len(fit_idx) < len(items):
        rest = items[~items.isin(fit_idx)]
        post = pd.concat([post, est.posterior(table.loc[rest])]).reindex(items)
        verdict = pd.concat([verdict, est.predict(table.loc[rest], probs.loc[rest])]).reindex(items)
    return pd.DataFrame(
        {
            "item": items,
            "verdict": verdict.to_numpy(),
            "posterior": post.to_numpy(dtype=np.float64),
        }
    ).reset_index(drop=True)


def compare_aggregators(
    panel: pd.DataFrame,
    aggregators: Sequence[str | BaseAggregator] = AGGREGATORS,
    fit_items: Iterable | None = None,
    random_state: int | None = None,
) -> pd.DataFrame:
    """Every aggregator's verdict side by side.

    Parameters
    ----------
    panel : pandas.DataFrame
        A panel.
    aggregators : sequence of str or BaseAggregator, default every registered rule
        Names among :data:`AGGREGATORS`, or aggregator instances (column: their name).
    fit_items, random_state
        As in :func:`aggregate`.

    Returns
    -------
    pandas.DataFrame
        Index item; one column of verdicts ("A"/"B") per aggregator, then ``n_distinct`` (1 when
        they all agree) and, when the panel has gold labels, ``gold``.
    """
    panel = validate_panel(panel, conditions=None)
    cols = {}
    for method in aggregators:
        res = aggregate(panel, method, fit_items=fit_items, random_state=random_state)
        cols[aggregator_name(method)] = res.set_index("item")["verdict"]
    out = pd.DataFrame(cols)
    out["n_distinct"] = out[list(cols)].nunique(axis=1)
    if "gold" in panel.columns:
        out["gold"] = panel.drop_duplicates("item").set_index("item")["gold"].reindex(out.index)
    out.index.name = "item"
    return out


def disagreement(verdicts: pd.DataFrame, aggregators: Sequence[str] | None = None) -> pd.DataFrame:
    """Share of items on which two aggregators give different verdicts (symmetric matrix).

    Parameters
    ----------
    verdicts : pandas.DataFrame
        Output of :func:`compare_aggregators` (or any item x aggregator table of verdicts).
    aggregators : sequence of str, optional
        Columns to compare; default the :data:`AGGREGATORS` columns present.
    """
    names = (
        [a for a in AGGREGATORS if a in verdicts.columns]
        if aggregators is None
        else list(aggregators)
    )
    v = verdicts[names].to_numpy()
    mat = (v[:, :, None] != v[:, None, :]).mean(axis=0)
    return pd.DataFrame(mat, index=pd.Index(names), columns=pd.Index(names))
