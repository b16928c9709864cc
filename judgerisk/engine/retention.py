"""Retention curves: accuracy of the lowest-risk share of panel verdicts, per aggregator.

Paper 1 (Figure 5) keeps the lowest-risk fraction :math:`\\rho` of the panel's decisions and shows
that the accuracy of what is kept rises as :math:`\\rho` falls, whatever rule made the decisions
(majority vote, Dawid–Skene, MACE, GLAD, CARE): on real data, +4.6 points at 80 % and +12.2
points at 50 % on average. This module computes those curves for every aggregator and every risk
score (SCUR and the baselines), over seeds.

References
----------
"Can We Trust This Evaluation? Instance-Level Reliability of LLM-as-a-Judge", Section 4,
Figure 5 (retention across aggregation rules); Methods reference §6 ("Retention").
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt
import pandas as pd

from judgerisk._splits import split_items
from judgerisk._util.progress import progress_bar
from judgerisk.aggregators._base import BaseAggregator, aggregator_name
from judgerisk.aggregators.aggregate import AGGREGATORS
from judgerisk.engine.analysis import METHODS, aggregate_errors, risk_table, score_names
from judgerisk.options import ANALYSIS
from judgerisk.panel import validate_panel
from judgerisk.risk.metrics import RETENTION_FRACTIONS, retention_table
from judgerisk.risk.registry import RiskScore

__all__ = [
    "RHOS",
    "retention_curve",
    "retention_analysis",
    "summarize_retention",
    "gains_at",
]

#: Kept fractions :math:`\\rho` reported by default (Methods reference §6).
RHOS: tuple[float, ...] = RETENTION_FRACTIONS
_COLUMNS = ["seed", "aggregator", "method", "rho", "n_kept", "accuracy", "gain"]


def retention_curve(
    risk: npt.ArrayLike, correct: npt.ArrayLike, rhos: Sequence[float] = RHOS, ties: str = "average"
) -> pd.DataFrame:
    r"""Accuracy of the lowest-risk :math:`\lceil \rho n \rceil` items and its gain over ρ = 1.

    Parameters
    ----------
    risk : pandas.Series or array-like
        Risk score per item (higher = riskier). A Series is aligned on ``correct``'s index.
    correct : pandas.Series or array-like of {0, 1} / bool
        1 where the aggregated verdict equals gold.
    rhos : sequence of float in (0, 1], default (1, .9, .8, .7, .6, .5)
        Kept fractions.
    ties : {"average", "stable"}, default "average"
        How tied items straddling the cut are chosen: the expected accuracy over random orders
        of the tie (``"average"``) or the order of ``correct`` (``"stable"``); see
        :func:`judgerisk.risk.metrics.retention_table`, which computes the curve.

    Returns
    -------
    pandas.DataFrame
        Columns ``rho``, ``n_kept``, ``accuracy``, ``gain`` (accuracy minus the accuracy of all
        items, in proportion units; multiply by 100 for points).

    Notes
    -----
    :math:`n_\rho = \lceil \rho n \rceil` (with a 1e-9 guard so that .8 x 10 keeps 8 items);
    :math:`\mathrm{acc}(\rho) = n_\rho^{-1} \sum_{i \in K_\rho} \mathrm{correct}_i` over the
    kept set :math:`K_\rho` of the :math:`n_\rho` lowest-risk items;
    :math:`\mathrm{gain}(\rho) = \mathrm{acc}(\rho) - \mathrm{acc}(1)`.
    """
    correct_s = correct if isinstance(correct, pd.Series) else pd.Series(np.asarray(correct))
    if correct_s.dtype == bool:
        correct_s = correct_s.astype(np.int8)
    if correct_s.isna().any():
        raise ValueError(f"correct has missing values at {correct_s.index[correct_s.isna()][:10]}")
    errors = 1 - correct_s.astype(float)
    return retention_table(risk, errors, rhos, ties=ties).rename(columns={"fraction": "rho"})


def retention_analysis(
    panel: pd.DataFrame,
    seeds: Iterable[int] = range(5),
    aggregators: Sequence[str | BaseAggregator] = AGGREGATORS,
    methods: Sequence[str | RiskScore] = METHODS,
    rhos: Sequence[float] = RHOS,
    *,
    ties: str = "average",
    fractions: Sequence[float] = ANALYSIS.fractions,
    aggregator_fit: str = "fit",
    scur_options: dict | None = None,
    progress: bool = False,
) -> pd.DataFrame:
    r"""Retention curves of every risk score for every aggregator's verdicts, over seeds.

    Parameters
    ----------
    panel : pandas.DataFrame
        A panel with ``gold``.
    seeds : iterable of int, default range(5)
        One fit / reference / evaluation split per seed (:func:`judgerisk._splits.split_items`).
    aggregators : sequence of str, default every registered aggregator
        Names of :data:`judgerisk.aggregators.aggregate.AGGREGATORS`.
    methods : sequence of str, default SCUR and every registered baseline
        Risk scores (:data:`judgerisk.engine.analysis.METHODS`).
    rhos : sequence of float
        Kept fractions.
    ties : {"average", "stable"}
        Tie handling at the cut (:func:`retention_curve`).
    fractions : three floats
        Fit / reference / evaluation shares.
    aggregator_fit : {"fit", "all"}, default "fit"
        Aggregators with parameters are fitted on the seed's fit split and frozen for the
        evaluation items (``"fit"``), or fitted once on every item (``"all"``, label-free).
    scur_options : dict, optional
        Extra arguments of :func:`judgerisk.risk.scur.scur_scores`.
    progress : bool, default False
        tqdm bar over seeds.

    Returns
    -------
    pandas.DataFrame
        Tidy: ``seed, aggregator, method, rho, n_kept, accuracy, gain`` on each seed's
        evaluation items.

    Notes
    -----
    Per seed the risk scores are computed once (:func:`judgerisk.engine.analysis.risk_table`: SCUR
    cross-fitted on the split, DS entropy fitted on the fit items, PE/VE/MSP direct); each
    aggregator then gives its own verdicts and error labels
    :math:`e_i = 1[\hat y_i \ne y^*_i]` (gold read only here), and each score ranks the
    evaluation items for that aggregator's retention curve.
    """
    panel = validate_panel(panel, conditions=None)
    unknown = [a for a in aggregators if isinstance(a, str) and a not in AGGREGATORS]
    if unknown:
        raise ValueError(f"unknown aggregator(s) {unknown}; choose from {list(AGGREGATORS)}")
    if aggregator_fit not in ("fit", "all"):
        raise ValueError(f"aggregator_fit must be 'fit' or 'all', got {aggregator_fit!r}")
    seeds = [int(s) for s in seeds]
    if not seeds:
        raise ValueError("seeds is empty")
    methods = list(methods)
    items = panel["item"].drop_duplicates().sort_values()
    fixed = {}
    if aggregator_fit == "all":
        fixed = {
            aggregator_name(a): aggregate_errors(panel, a, random_state=0, check_input=False)
            for a in aggregators
        }
    iterator = progress_bar(seeds, enabled=progress, desc="seeds")
    frames = []
    for seed in iterator:
        scores = risk_table(
            panel,
            seed,
            methods,
            aggregator="majority",
            fractions=fractions,
            scur_options=scur_options,
        )
        split = split_items(items, seed, fractions)
        fit_idx = split.index[split.to_numpy() == "fit"]
        for method in aggregators:
            agg = aggregator_name(method)
            if agg in fixed:
                errors = fixed[agg]
            elif agg == "majority":
                errors = scores["error"]
            else:
                errors = aggregate_errors(
                    panel, method, fit_items=fit_idx, random_state=seed, check_input=False
                )
            correct = 1 - errors.reindex(scores.index)
            for method in score_names(methods):
                curve = retention_curve(scores[method], correct, rhos, ties=ties)
                curve.insert(0, "method", method)
                curve.insert(0, "aggregator", agg)
                curve.insert(0, "seed", seed)
                frames.append(curve)
    return pd.concat(frames, ignore_index=True)[_COLUMNS]


def summarize_retention(table: pd.DataFrame) -> pd.DataFrame:
    """Mean and spread over seeds of a :func:`retention_analysis` table.

    Returns
    -------
    pandas.DataFrame
        One row per (aggregator, method, rho): ``accuracy_mean, accuracy_sd, gain_mean,
        gain_sd, gain_min, gain_max, n_seeds`` (sd with ddof=1; NaN for one seed).
    """
    g = table.groupby(["aggregator", "method", "rho"], sort=False)
    out = g.agg(
        accuracy_mean=("accuracy", "mean"),
        accuracy_sd=("accuracy", "std"),
        gain_mean=("gain", "mean"),
        gain_sd=("gain", "std"),
        gain_min=("gain", "min"),
        gain_max=("gain", "max"),
        n_seeds=("seed", "nunique"),
    )
    return out.reset_index()


def gains_at(
    table: pd.DataFrame, rhos: Sequence[float] = (0.8, 0.5), method: str = "scur"
) -> pd.DataFrame:
    """Mean gain (in points) over seeds at the given ρ, per aggregator, for one risk score.

    Returns
    -------
    pandas.DataFrame
        Index aggregator (in :data:`AGGREGATORS` order), columns ``"gain@80%"``-style labels
        plus ``"mean"`` as the last row: the average over aggregators (the paper's summary).
    """
    sub = table[table["method"].eq(method)]
    if sub.empty:
        raise ValueError(f"no rows for method {method!r}")
    cols = {}
    for rho in rhos:
        at = sub[np.isclose(sub["rho"], rho)]
        if at.empty:
            raise ValueError(f"no rows at rho={rho}")
        cols[f"gain@{round(100 * rho)}%"] = 100 * at.groupby("aggregator")["gain"].mean()
    out = pd.DataFrame(cols)
    order = [a for a in AGGREGATORS if a in out.index]
    out = out.loc[order]
    out.loc["mean"] = out.mean()
    return out
