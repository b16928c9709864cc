"""Seeds x splits x risk scores x subsets: the error-ranking analyses of Methods reference §6.

For each seed the items are split 50 / 30 / 20 into fit / reference / evaluation
(:func:`judgerisk._splits.split_items`); SCUR comes from :func:`judgerisk.risk.scur.scur_scores` on
that split, DS entropy from a Dawid–Skene model fitted on the fit items, and PE, VE, MSP need no
fitting.
Every score is then judged on the **evaluation** items against the error labels of one aggregator
(``error_i = 1[verdict_i != gold_i]``), on four subsets:

* ``all``: every evaluation item;
* ``hc``: high consensus, at least 80 % of judges give the same original verdict;
* ``prob_hc``: probability-based high consensus, max(p̄^llm, 1 − p̄^llm) ≥ .8;
* ``matched``: matched vote patterns, AUROC within groups of identical original vote vectors,
  weighted by n⁺ n⁻ (:func:`judgerisk.risk.metrics.matched_vote_auroc`).

Gold labels are read only to form the error labels, after every score is computed.

References
----------
- "Can We Trust This Evaluation? Instance-Level Reliability of LLM-as-a-Judge", Section 4
  (Figure 4, high consensus) and Appendix D (matched votes, probability-based high consensus).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from judgerisk._splits import split_items
from judgerisk._util.progress import progress_bar
from judgerisk.aggregators._base import BaseAggregator, get_aggregator
from judgerisk.aggregators.aggregate import aggregate
from judgerisk.options import ANALYSIS
from judgerisk.panel import (
    ORIGINAL,
    PanelError,
    gold_labels,
    to_wide,
    validate_panel,
    verdicts,
)
from judgerisk.risk.baselines import mean_probability_table
from judgerisk.risk.metrics import (
    auroc_table,
    high_consensus,
    matched_vote_auroc,
    matched_vote_mask,
    probability_high_consensus,
)
from judgerisk.risk.registry import COMPARED, RiskScore, get_risk_score, risk_score_table
from judgerisk.risk.scur import scur_scores
from judgerisk.validation import error_labels

__all__ = [
    "METHODS",
    "SUBSETS",
    "SUBSET_NAMES",
    "score_names",
    "RiskContext",
    "risk_context",
    "aggregate_errors",
    "risk_table",
    "evaluate_risk",
    "summarize_risk",
]

#: Risk scores compared (SCUR first, then the baselines of Methods reference §5).
#: A live view of :data:`judgerisk.risk.registry.COMPARED`: a newly registered score appears.
METHODS: Sequence[str] = COMPARED
#: Item subsets of the evaluation split (Methods reference §6).
SUBSETS: tuple[str, ...] = ("all", "hc", "prob_hc", "matched")
#: The one display name of each subset, in sentences, tables and figures alike.
SUBSET_NAMES: dict[str, str] = {
    "all": "all evaluation items",
    "hc": "high vote consensus",
    "prob_hc": "high probability consensus",
    "matched": "matched vote patterns",
}
_RESULT_COLUMNS = ["seed", "method", "subset", "auroc", "n_errors", "n_items"]


def aggregate_errors(
    panel: pd.DataFrame,
    aggregator: str | BaseAggregator = "majority",
    fit_items: Iterable | None = None,
    random_state: int | None = None,
    *,
    check_input: bool = True,
    **options: Any,
) -> pd.Series:
    """Error labels of an aggregator's panel verdicts: ``1[verdict_i != gold_i]``.

    Parameters
    ----------
    panel : pandas.DataFrame
        A panel with a ``gold`` column.
    aggregator : str, default "majority"
        A name of :data:`judgerisk.aggregators.aggregate.AGGREGATORS`.
    fit_items : array-like, optional
        Items that fit the aggregator's parameters (all items by default; ignored by majority).
    random_state : int, optional
        Seed of aggregators with random restarts (MACE).
    check_input : bool, default True
        Validate the panel; ``False`` for a panel validated where it entered
        (:func:`judgerisk.aggregators.aggregate.aggregate`).
    **options
        Passed to :func:`judgerisk.aggregators.aggregate.aggregate`.

    Returns
    -------
    pandas.Series
        int8 by item (name ``"error"``).
    """
    if "gold" not in panel.columns:
        raise PanelError("evaluating risk needs a 'gold' column in the panel (error labels)")
    agg = aggregate(
        panel,
        aggregator,
        fit_items=fit_items,
        random_state=random_state,
        check_input=check_input,
        **options,
    )
    verdict = agg.set_index("item")["verdict"].astype(str)
    bad = ~verdict.isin(["A", "B"])
    if bad.any():
        raise ValueError(
            f"aggregator {aggregator!r} gave verdicts other than A/B: {verdict[bad][:10]}"
        )
    gold = gold_labels(panel)
    missing = gold.index.difference(verdict.index)
    if len(missing):
        raise ValueError(
            f"aggregator {aggregator!r} gave no verdict for items {missing[:10].tolist()}"
        )
    return error_labels(verdict.reindex(gold.index), gold)


@dataclass(frozen=True)
class RiskContext:
    """Everything that does not depend on the seed, computed once per :func:`evaluate_risk`."""

    panel: pd.DataFrame
    items: pd.Index
    votes: pd.DataFrame
    probs: pd.DataFrame
    errors: pd.Series | None  # None: the aggregator is refitted on each seed's fit split
    aggregator: str
    aggregator_options: dict
    hc: pd.Series
    prob_hc: pd.Series
    fractions: tuple[float, ...]
    hc_threshold: float
    prob_threshold: float
    scur_options: dict


def risk_context(
    panel: pd.DataFrame,
    aggregator: str,
    aggregator_options: dict | None,
    aggregator_fit: str,
    fractions: Sequence[float],
    hc_threshold: float,
    prob_threshold: float,
    scur_options: dict | None,
) -> RiskContext:
    """Validate the panel and compute the seed-independent state of :func:`evaluate_risk`.

    The arguments are those of :func:`evaluate_risk` (positional here); the benchmarks time the
    stages of the analysis from this context.
    """
    if aggregator_fit not in ("fit", "all"):
        raise ValueError(f"aggregator_fit must be 'fit' or 'all', got {aggregator_fit!r}")
    panel = validate_panel(panel, conditions=None)
    options = dict(aggregator_options or {})
    # a rule without parameters gives the same verdicts whatever it is fitted on
    per_seed = aggregator_fit == "fit" and get_aggregator(aggregator).has_parameters
    errors = None if per_seed else aggregate_errors(panel, aggregator, check_input=False, **options)
    votes = verdicts(panel, ORIGINAL)
    probs = to_wide(panel, "p", ORIGINAL)
    return RiskContext(
        panel=panel,
        items=votes.index,
        votes=votes,
        probs=probs,
        errors=errors,
        aggregator=aggregator,
        aggregator_options=options,
        hc=high_consensus(votes, hc_threshold),
        prob_hc=probability_high_consensus(mean_probability_table(probs), prob_threshold),
        fractions=tuple(fractions),
        hc_threshold=hc_threshold,
        prob_threshold=prob_threshold,
        scur_options=dict(scur_options or {}),
    )


def score_names(methods: Sequence[str | RiskScore]) -> list[str]:
    """Column names of ``methods``: registered names, or the names of :class:`RiskScore` objects
    (a score need not be registered to be evaluated)."""
    return [m.name if isinstance(m, RiskScore) else m for m in methods]


def _check_names(methods: Sequence[str | RiskScore], subsets: Sequence[str]) -> None:
    bad_m = [m for m in methods if not isinstance(m, RiskScore) and m not in METHODS]
    if bad_m:
        raise ValueError(f"unknown method(s) {bad_m}; choose from {list(METHODS)}")
    bad_s = [s for s in subsets if s not in SUBSETS]
    if bad_s:
        raise ValueError(f"unknown subset(s) {bad_s}; choose from {list(SUBSETS)}")


def _seed_scores(ctx: RiskContext, seed: int, methods: Sequence[str | RiskScore]) -> pd.DataFrame:
    """Per evaluation item: split-dependent scores, error label and subset masks for one seed."""
    split = split_items(ctx.items, seed, ctx.fractions)
    eval_idx = split.index[split.to_numpy() == "evaluation"]
    fit_idx = split.index[split.to_numpy() == "fit"]
    table = pd.DataFrame(index=eval_idx)
    if "scur" in methods:
        result = scur_scores(
            ctx.panel, seed, splits=ctx.fractions, check_input=False, **ctx.scur_options
        )
        if not result.split.reindex(split.index).equals(split):
            raise RuntimeError(
                f"scur_scores split the items differently from split_items (seed {seed})"
            )
        table["scur"] = result.scores("evaluation")["scur"].reindex(eval_idx).to_numpy(float)
    base = [get_risk_score(m) for m in methods if get_risk_score(m).compute is not None]
    if base:
        b = risk_score_table(ctx.probs, ctx.votes, fit_idx, eval_idx, base, panel=ctx.panel)
        for score in base:
            table[score.name] = b[score.name].to_numpy()
    table = table[score_names(methods)]
    errors = ctx.errors
    if errors is None:
        errors = aggregate_errors(
            ctx.panel,
            ctx.aggregator,
            fit_items=fit_idx,
            random_state=seed,
            check_input=False,
            **ctx.aggregator_options,
        )
    table.insert(0, "error", errors.reindex(eval_idx).to_numpy())
    table.insert(1, "hc", ctx.hc.reindex(eval_idx).to_numpy())
    table.insert(2, "prob_hc", ctx.prob_hc.reindex(eval_idx).to_numpy())
    table.insert(
        3, "matched", matched_vote_mask(ctx.votes.loc[eval_idx], table["error"]).to_numpy()
    )
    table.index.name = "item"
    return table


def _seed_rows(
    ctx: RiskContext, seed: int, methods: Sequence[str | RiskScore], subsets: Sequence[str]
) -> list[dict]:
    table = _seed_scores(ctx, seed, methods)
    names = score_names(methods)
    rows = []
    for subset in subsets:
        mask = np.ones(len(table), bool) if subset == "all" else table[subset].to_numpy(bool)
        sub = table.loc[mask]
        n_err = int(sub["error"].sum())
        if subset == "matched":
            sub_votes = ctx.votes.loc[sub.index]
            values = {m: matched_vote_auroc(sub[m], sub["error"], sub_votes) for m in names}
        else:
            values = auroc_table(sub[names], sub["error"]).to_dict()
        for m in names:
            value = values[m]
            rows.append(
                {
                    "seed": seed,
                    "method": m,
                    "subset": subset,
                    "auroc": value,
                    "n_errors": n_err,
                    "n_items": len(sub),
                }
            )
    return rows


def _chunk_rows(
    ctx: RiskContext,
    seeds: Sequence[int],
    methods: Sequence[str | RiskScore],
    subsets: Sequence[str],
) -> list[list[dict]]:
    """Rows of several seeds: one parallel task, so the context is sent once per chunk."""
    return [_seed_rows(ctx, s, methods, subsets) for s in seeds]


def risk_table(
    panel: pd.DataFrame,
    seed: int = 0,
    methods: Sequence[str | RiskScore] = METHODS,
    aggregator: str = "majority",
    *,
    fractions: Sequence[float] = ANALYSIS.fractions,
    hc_threshold: float = ANALYSIS.hc_threshold,
    prob_threshold: float = ANALYSIS.prob_threshold,
    scur_options: dict | None = None,
    aggregator_options: dict | None = None,
    aggregator_fit: str = "fit",
) -> pd.DataFrame:
    """Risk scores, error label and subset membership of one seed's evaluation items.

    Parameters
    ----------
    panel : pandas.DataFrame
        A panel with ``gold``.
    seed : int
        Seed of the fit / reference / evaluation split.
    methods : sequence of str
        Scores among :data:`METHODS`.
    aggregator : str
        Aggregator whose verdicts define the errors (:func:`judgerisk.aggregators.aggregate.aggregate`).
    fractions : three floats
        Fit / reference / evaluation shares.
    hc_threshold, prob_threshold : float
        Thresholds of the vote-based and probability-based high-consensus subsets.
    scur_options, aggregator_options : dict, optional
        Extra keyword arguments of :func:`judgerisk.risk.scur.scur_scores` and of the aggregator.
    aggregator_fit : {"fit", "all"}, default "fit"
        Aggregators with parameters (Dawid–Skene, MACE, GLAD, CARE) are fitted on the seed's fit
        split and frozen for the other items (``"fit"``, like the DS-entropy baseline), or fitted
        once on all items (``"all"``; label-free, so no leakage of gold). Majority vote has no
        parameters.

    Returns
    -------
    pandas.DataFrame
        Indexed by evaluation item: ``error`` (0/1), ``hc``, ``prob_hc``, ``matched`` (bool: the
        item's vote pattern holds both errors and non-errors), then one column per method.
    """
    _check_names(methods, ())
    ctx = risk_context(
        panel,
        aggregator,
        aggregator_options,
        aggregator_fit,
        fractions,
        hc_threshold,
        prob_threshold,
        scur_options,
    )
    return _seed_scores(ctx, seed, methods)


def evaluate_risk(
    panel: pd.DataFrame,
    seeds: Iterable[int] = range(20),
    methods: Sequence[str | RiskScore] = METHODS,
    subsets: Sequence[str] = SUBSETS,
    aggregator: str = "majority",
    n_jobs: int = 1,
    progress: bool = False,
    *,
    fractions: Sequence[float] = ANALYSIS.fractions,
    hc_threshold: float = ANALYSIS.hc_threshold,
    prob_threshold: float = ANALYSIS.prob_threshold,
    scur_options: dict | None = None,
    aggregator_options: dict | None = None,
    aggregator_fit: str = "fit",
) -> pd.DataFrame:
    """AUROC of each risk score for panel errors, per seed and evaluation subset.

    Parameters
    ----------
    panel : pandas.DataFrame
        A panel with ``gold`` (see :func:`judgerisk.panel.validate_panel`).
    seeds : iterable of int, default range(20)
        One random fit / reference / evaluation split per seed.
    methods : sequence of str, default METHODS
        Among ``"scur"``, ``"pe"``, ``"ve"``, ``"msp"``, ``"ds_entropy"``.
    subsets : sequence of str, default SUBSETS
        Among ``"all"``, ``"hc"``, ``"prob_hc"``, ``"matched"``.
    aggregator : str, default "majority"
        Whose verdicts define the errors, :math:`e_i = 1[\\hat y_i \\ne y^*_i]`.
    n_jobs : int, default 1
        Seeds run in parallel with joblib when > 1 (``-1`` = all cores; capped at the number of
        seeds). Each seed is deterministic, so the result does not depend on ``n_jobs``. The
        backend is joblib's default (loky, fresh worker processes) unless chosen with
        ``joblib.parallel_config(backend=...)``.
    progress : bool, default False
        Show a tqdm bar over seeds.
    fractions, hc_threshold, prob_threshold, scur_options, aggregator_options, aggregator_fit
        As in :func:`risk_table`.

    Returns
    -------
    pandas.DataFrame
        Tidy: ``seed, method, subset, auroc, n_errors, n_items``, one row per combination, in the
        order seeds x subsets x methods. ``n_items`` / ``n_errors`` count the evaluation items of
        the subset (for ``matched``, the items in vote patterns that hold both classes). ``auroc``
        is nan when the subset has no error or no correct item.

    Notes
    -----
    AUROC uses positive = error and counts ties ½; the matched-vote AUROC is
    :math:`\\sum_g n^+_g n^-_g \\mathrm{AUROC}_g / \\sum_g n^+_g n^-_g` over vote patterns g, under
    which VE and DS entropy (constant within a pattern) give exactly .5.

    References
    ----------
    - Instance-Level Reliability of LLM-as-a-Judge, Figure 4 and Appendix D.
    """
    methods, subsets, seeds = tuple(methods), tuple(subsets), [int(s) for s in seeds]
    _check_names(methods, subsets)
    if not seeds:
        raise ValueError("seeds is empty")
    ctx = risk_context(
        panel,
        aggregator,
        aggregator_options,
        aggregator_fit,
        fractions,
        hc_threshold,
        prob_threshold,
        scur_options,
    )
    from joblib import effective_n_jobs

    n_workers = min(effective_n_jobs(n_jobs), len(seeds))
    if n_workers == 1:
        chunks = [[s] for s in seeds]
        results = ([_seed_rows(ctx, s, methods, subsets)] for s in seeds)
    else:
        from joblib import Parallel, delayed

        # a few seeds per task: the context (the whole panel) is pickled once per task
        n_chunks = min(len(seeds), 2 * n_workers)
        chunks = [list(c) for c in np.array_split(np.asarray(seeds), n_chunks)]
        results = Parallel(n_jobs=n_workers, return_as="generator" if progress else "list")(
            delayed(_chunk_rows)(ctx, [int(s) for s in c], methods, subsets) for c in chunks
        )
    if progress:
        results = progress_bar(results, total=len(chunks), desc=f"seeds ({len(seeds)})")
    out = pd.DataFrame(
        [r for chunk in results for rows in chunk for r in rows], columns=_RESULT_COLUMNS
    )
    return out.astype({"seed": np.int64, "auroc": float, "n_errors": np.int64, "n_items": np.int64})


def summarize_risk(result: pd.DataFrame) -> pd.DataFrame:
    """Mean and spread over seeds of an :func:`evaluate_risk` table.

    Parameters
    ----------
    result : pandas.DataFrame
        Output of :func:`evaluate_risk` (extra grouping columns, e.g. ``aggregator``, are kept).

    Returns
    -------
    pandas.DataFrame
        One row per (extra columns,) subset, method: ``mean``, ``std`` (ddof 1), ``n_seeds``
        (seeds with a defined AUROC), ``mean_n_errors``, ``mean_n_items``; subsets and methods keep
        their order of appearance.
    """
    missing = [c for c in _RESULT_COLUMNS if c not in result.columns]
    if missing:
        raise ValueError(f"result lacks columns {missing}; pass the output of evaluate_risk")
    extra = [c for c in result.columns if c not in _RESULT_COLUMNS]
    keys = [*extra, "subset", "method"]
    summary = result.groupby(keys, sort=False).agg(
        mean=("auroc", "mean"),
        std=("auroc", "std"),
        n_seeds=("auroc", "count"),
        mean_n_errors=("n_errors", "mean"),
        mean_n_items=("n_items", "mean"),
    )
    return summary.reset_index()
