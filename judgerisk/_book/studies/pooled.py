"""Pooled out-of-fold risk scores: one score per item over the seeds in which it was evaluated.

For each seed every score is turned into its percentile rank (so seeds are comparable), and
each item gets the mean of its ranks over the seeds in which it was an evaluation item. The
same per-seed pass gives the signal ablation (:data:`ABLATION`: SCUR from U, C, S alone, each
pair, and all three) and the reconstructed options of SCUR (:data:`OPTIONS`), with one
latent-measurement-model fit per seed reused by all of them. The pooled table is what
:mod:`judgerisk._book.studies.paired` compares.

References
----------
.. [1] "Can We Trust This Evaluation? Instance-Level Reliability of LLM-as-a-Judge", Sections 3-4
   (signals, SCUR, cross-fitting over random splits).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from itertools import combinations

import numpy as np
import pandas as pd

from judgerisk._splits import DEFAULT_REPEATS, cross_fit_splits
from judgerisk.engine.analysis import RiskContext, risk_context
from judgerisk.options import ANALYSIS, DEFAULT_FOLDS, DEFAULT_PROTOCOL
from judgerisk.panel import validate_panel
from judgerisk.risk.metrics import vote_patterns
from judgerisk.risk.registry import BASELINES, risk_score_table
from judgerisk.risk.scur import scur_scores
from judgerisk.risk.signals import combine_scur

__all__ = ["ABLATION", "OPTIONS", "pool_tables", "pooled_scores", "repetition_tables"]

#: The signal ablation: SCUR from every non-empty subset of U, C, S (column name -> z columns).
ABLATION: dict[str, tuple[str, ...]] = {
    "+".join(c[2:] for c in combo): combo
    for k in (1, 2, 3)
    for combo in combinations(("z_U", "z_C", "z_S"), k)
}
#: The reconstructed options of SCUR, each one switch away from the default.
OPTIONS: dict[str, dict] = {
    "C residual": {"c_kind": "residual"},
    "S log-odds": {"s_kind": "logit"},
    "S debiased (log-odds)": {"s_kind": "debiased"},
    "U all conditions": {"u_conditions": "all"},
    "z_S raw max": {"s_norm": "max"},
}


def _family_columns(scored: pd.DataFrame) -> list[str]:
    """The per-family z's of a scored table: ``z_S_order``, ``z_S_rubric``, then the others."""
    return [c for c in scored.columns if c.startswith("z_S_")]


# --------------------------------------------------------------------------- pooled scores
def _seed_table(
    ctx: RiskContext,
    seed: int,
    split: pd.Series,
    baselines: Sequence[str],
    options: Mapping[str, dict],
    ablation: bool,
) -> pd.DataFrame:
    """One split's percentile ranks of every score, for its evaluation items.

    SCUR and its variants are ranked among the items the split scored (reference and
    evaluation); the baselines among all items, so that a score which does not depend on the
    split (PE, VE, MSP) gets the same rank in every split.
    """
    eval_idx = split.index[split.to_numpy() == "evaluation"]
    fit_idx = split.index[split.to_numpy() == "fit"]
    res = scur_scores(ctx.panel, seed, split=split, check_input=False, **ctx.scur_options)
    scored = res.scores()
    cols = {"scur": scored["scur"]}
    for c in _family_columns(scored):
        cols[c] = scored[c]
    if ablation:
        for name, zs in ABLATION.items():
            cols[name] = combine_scur(scored[list(zs)])
    reuse = {k: v for k, v in ctx.scur_options.items() if k not in ("lmm", "lmm_params")}
    for name, opts in options.items():
        alt = scur_scores(
            ctx.panel, seed, split=split, lmm=res.lmm, check_input=False, **{**reuse, **opts}
        )
        alt_scored = alt.scores()
        cols[name] = alt_scored["scur"]
        for c in _family_columns(alt_scored):
            cols[f"{name}: {c}"] = alt_scored[c]
    table = pd.DataFrame(cols).reindex(ctx.items).rank(pct=True)
    if baselines:
        b = risk_score_table(
            ctx.probs, ctx.votes, fit_idx, ctx.items, list(baselines), panel=ctx.panel
        )
        table = table.join(pd.DataFrame(b, index=ctx.items).rank(pct=True))
    return table.loc[eval_idx]


def pooled_scores(
    panel: pd.DataFrame,
    seeds: Iterable[int] | None = None,
    baselines: Sequence[str] = BASELINES,
    *,
    protocol: str = DEFAULT_PROTOCOL,
    n_folds: int = DEFAULT_FOLDS,
    options: Mapping[str, dict] | None = None,
    ablation: bool = False,
    fractions: Sequence[float] = ANALYSIS.fractions,
    hc_threshold: float = ANALYSIS.hc_threshold,
    prob_threshold: float = ANALYSIS.prob_threshold,
    scur_options: dict | None = None,
    aggregator: str = "majority",
    aggregator_options: dict | None = None,
) -> pd.DataFrame:
    """Each item's out-of-fold scores, pooled over the seeds in which it was evaluated.

    Parameters
    ----------
    panel : pandas.DataFrame
        A panel with ``gold`` (only read for the error labels, after every score is computed).
    seeds : iterable of int, optional
        Seeds of the repetitions (consecutive; default ``range(DEFAULT_REPEATS)``,
        :data:`judgerisk._splits.DEFAULT_REPEATS`). Under ``"kfold"`` each repetition is a new
        partition into ``n_folds`` folds, each fold evaluated once; under ``"paper"`` each seed
        is one random fit / reference / evaluation split (as in
        :func:`judgerisk.engine.analysis.evaluate_risk`).
    protocol : {"kfold", "paper"}, default "kfold"
        Repeated K-fold cross-fitting or the paper's independent random splits
        (:func:`judgerisk._splits.cross_fit_splits`).
    n_folds : int, default 5
        K of ``"kfold"`` (60 / 20 / 20).
    baselines : sequence of str, default all of PE, VE, MSP, DS entropy
    options : mapping, optional
        Name -> keyword arguments of :func:`judgerisk.risk.scur.scur_scores` (e.g.
        :data:`OPTIONS`); each gives a SCUR column under that name (and its per-family
        ``"<name>: z_S_order"``, ``"<name>: z_S_rubric"``, and one per other family present),
        computed with the seed's fitted
        model, so the latent measurement model is fitted once per split (fold).
    ablation : bool, default False
        Add one column per entry of :data:`ABLATION` (SCUR from a subset of the signals,
        recombined from the same z's: no extra fit).
    fractions, hc_threshold, prob_threshold, scur_options
        As in :func:`judgerisk.engine.analysis.evaluate_risk`.
    aggregator : str, default "majority"
        Whose verdicts define the errors. The comparison needs one error label per item, so an
        aggregator with parameters is fitted once on all items (label-free).
    aggregator_options : dict, optional

    Returns
    -------
    pandas.DataFrame
        Indexed by item (items evaluated in at least one seed, sorted): ``error`` (0/1),
        ``hc``, ``prob_hc`` (bool), ``pattern`` (original-condition vote vector),
        ``n_seeds`` (seeds in which the item was evaluated), then one column per score: the
        mean over those seeds of the score's percentile rank in that seed (ties share their
        average rank). SCUR and its variants are ranked among the items the seed scored
        (reference and evaluation items); the baselines among all items.

    Notes
    -----
    With :math:`E_s` the evaluation items of seed :math:`s`, :math:`T_s` the items whose score
    the seed computes and :math:`R_s(r_i) = |T_s|^{-1}\\,\\mathrm{rank}_{T_s}(r_i)`,

    .. math:: \\bar r_i = \\frac{1}{|\\{s: i \\in E_s\\}|} \\sum_{s: i \\in E_s} R_s(r_i).

    Ranks, not raw scores, are averaged because a score's scale can change from seed to seed
    (each seed fits its own model and reference distributions). A score that does not depend
    on the split (PE, VE, MSP) is ranked among all items, so its pooled value is a monotone
    function of the score itself: VE stays constant within a vote pattern, and its
    matched-vote AUROC stays exactly .5. A fitted score (SCUR, DS entropy) is averaged over
    different fits, so two items of one vote pattern can differ through the seeds that
    evaluated them.
    """
    seeds = list(range(DEFAULT_REPEATS)) if seeds is None else [int(s) for s in seeds]
    if not seeds:
        raise ValueError("seeds is empty")
    bad = [m for m in baselines if m not in BASELINES]
    if bad:
        raise ValueError(f"unknown baseline(s) {bad}; choose from {list(BASELINES)}")
    ctx = risk_context(
        panel,
        aggregator,
        aggregator_options,
        "all",
        fractions,
        hc_threshold,
        prob_threshold,
        scur_options,
    )
    assert ctx.errors is not None  # fitted on all items: one error label per item
    tables = repetition_tables(
        ctx, seeds, protocol, n_folds, baselines, options=options, ablation=ablation
    )
    return pool_tables(ctx, [t for rep in tables for t in rep])


def repetition_tables(
    ctx: RiskContext,
    seeds: Sequence[int],
    protocol: str = DEFAULT_PROTOCOL,
    n_folds: int = DEFAULT_FOLDS,
    baselines: Sequence[str] = BASELINES,
    *,
    options: Mapping[str, dict] | None = None,
    ablation: bool = False,
) -> list[list[pd.DataFrame]]:
    """Per repetition (seed), the per-split rank tables of :func:`pooled_scores`.

    Returns one list per seed holding its splits' tables (``n_folds`` under ``"kfold"``, one
    under ``"paper"``), so that a study can pool the first R repetitions for every R without
    refitting (:func:`pool_tables`).
    """
    # checked once here with scur_scores' own rules; its folds then skip the checks
    validate_panel(ctx.panel)
    out = []
    for seed in seeds:
        splits = cross_fit_splits(ctx.items, 1, int(seed), protocol, n_folds, ctx.fractions)
        out.append(
            [
                _seed_table(ctx, s, split, tuple(baselines), dict(options or {}), ablation)
                for s, _, split in splits
            ]
        )
    return out


def pool_tables(ctx: RiskContext, tables: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """Average per-split rank tables by item and add the error labels and subsets."""
    stacked = pd.concat(tables)
    grouped = stacked.groupby(level=0, sort=True)
    # rounded, so that equal ranks averaged over the same number of seeds stay bit-identical
    scores = grouped.mean().round(12)
    items = scores.index
    assert ctx.errors is not None
    front = pd.DataFrame(
        {
            "error": ctx.errors.reindex(items).to_numpy(np.int8),
            "hc": ctx.hc.reindex(items).to_numpy(bool),
            "prob_hc": ctx.prob_hc.reindex(items).to_numpy(bool),
            "pattern": vote_patterns(ctx.votes).reindex(items).to_numpy(),
            "n_seeds": grouped.size().to_numpy(np.int64),
        },
        index=items,
    )
    out = pd.concat([front, scores], axis=1)
    out.index.name = "item"
    return out
