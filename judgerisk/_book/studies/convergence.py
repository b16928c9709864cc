"""Does a conclusion hang on the number of cross-fitting repetitions? The margin curve.

:func:`margin_curve` pools the first R repetitions of a cross-fitting run for R = 1, 2, ...
(:func:`judgerisk._book.studies.pooled.pool_tables`, no refit per R) and compares SCUR with the
strongest baseline by the paired bootstrap (:mod:`judgerisk._book.studies.paired`), under both
protocols of :func:`judgerisk._splits.cross_fit_splits`. :func:`settled_at` reads off the
number of repetitions from which the verdict and the margin stop moving.

References
----------
"Can We Trust This Evaluation? Instance-Level Reliability of LLM-as-a-Judge" (SCUR against
the baselines, Section 4); B. Efron and R. Tibshirani, *An Introduction to the Bootstrap*
(paired bootstrap).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from judgerisk._book.studies.paired import compare_scores
from judgerisk._book.studies.pooled import pool_tables, repetition_tables
from judgerisk._splits import PROTOCOLS
from judgerisk.engine.analysis import risk_context
from judgerisk.options import ANALYSIS, DEFAULT_FOLDS
from judgerisk.risk.registry import BASELINES

__all__ = ["CURVE_COLUMNS", "SETTLE_TOLERANCE", "margin_curve", "settled_at"]

#: Columns of a :func:`margin_curve` table.
CURVE_COLUMNS = (
    "protocol",
    "n_repeats",
    "evaluations",
    "n_items",
    "baseline",
    "auroc_scur",
    "auroc_baseline",
    "diff",
    "low",
    "high",
    "verdict",
)
#: A margin within this of its value at the largest R counts as settled (AUROC units).
SETTLE_TOLERANCE = 0.01


def margin_curve(
    panel: pd.DataFrame,
    repeats: Sequence[int] = (1, 2, 3, 5, 10),
    protocols: Sequence[str] = PROTOCOLS,
    *,
    seed: int = 0,
    subset: str = "all",
    baseline: str | None = None,
    n_folds: int = DEFAULT_FOLDS,
    n_boot: int = ANALYSIS.n_boot,
    scur_options: dict | None = None,
    aggregator: str = "majority",
) -> pd.DataFrame:
    """SCUR's paired AUROC margin over the strongest baseline against the repetitions R.

    Parameters
    ----------
    panel : pandas.DataFrame
        A panel with ``gold`` (read only for the error labels).
    repeats : sequence of int, default (1, 2, 3, 5, 10)
        Numbers of repetitions R (seeds ``seed .. seed + R - 1``); the largest is run, the
        others pool its first R repetitions.
    protocols : sequence of str, default ("kfold", "paper")
        Protocols of :func:`judgerisk._splits.cross_fit_splits`.
    seed : int, default 0
    subset : str, default "all"
        Item subset of :data:`judgerisk._book.studies.paired.PAIRED_SUBSETS`.
    baseline : str, optional
        The baseline to compare with; default the baseline with the highest pooled AUROC at
        the largest R of the first protocol (one baseline for the whole curve).
    n_folds, n_boot, scur_options, aggregator
        As in :func:`judgerisk._book.studies.pooled.pooled_scores` and
        :func:`judgerisk._book.studies.paired.compare_scores`.

    Returns
    -------
    pandas.DataFrame
        One row per protocol and R, columns :data:`CURVE_COLUMNS`: ``evaluations`` is the mean
        number of out-of-fold evaluations per evaluated item, ``n_items`` the items evaluated
        at least once, ``diff`` = AUROC(SCUR) - AUROC(baseline) with its 95 % paired bootstrap
        interval ``[low, high]`` and the verdict of :data:`judgerisk._book.studies.paired.BEATS_RULE`.
    """
    repeats = sorted({int(r) for r in repeats})
    if not repeats or repeats[0] < 1:
        raise ValueError(f"repeats must be positive integers, got {repeats!r}")
    ctx = risk_context(
        panel,
        aggregator,
        None,
        "all",
        ANALYSIS.fractions,
        ANALYSIS.hc_threshold,
        ANALYSIS.prob_threshold,
        scur_options,
    )
    seeds = range(seed, seed + repeats[-1])
    pooled = {
        protocol: [pool_tables(ctx, [t for rep in tables[:r] for t in rep]) for r in repeats]
        for protocol in protocols
        for tables in [repetition_tables(ctx, seeds, protocol, n_folds, BASELINES)]
    }
    if baseline is None:
        last = pooled[protocols[0]][-1]
        aurocs = compare_scores(last, "scur", list(BASELINES), (subset,), n_boot=1)
        baseline = str(aurocs.loc[aurocs["auroc"].idxmax(), "method"])
    rows = []
    for protocol, tables in pooled.items():
        for r, p in zip(repeats, tables, strict=True):
            c = compare_scores(p, "scur", [baseline], (subset,), n_boot=n_boot).iloc[0]
            rows.append(
                {
                    "protocol": protocol,
                    "n_repeats": r,
                    "evaluations": float(p["n_seeds"].mean()),
                    "n_items": len(p),
                    "baseline": baseline,
                    "auroc_scur": c["auroc_ref"],
                    "auroc_baseline": c["auroc"],
                    "diff": c["diff"],
                    "low": c["low"],
                    "high": c["high"],
                    "verdict": c["verdict"],
                }
            )
    return pd.DataFrame(rows, columns=list(CURVE_COLUMNS))


def settled_at(curve: pd.DataFrame, tolerance: float = SETTLE_TOLERANCE) -> pd.Series:
    """Per protocol, the smallest R from which the conclusion no longer moves.

    Parameters
    ----------
    curve : pandas.DataFrame
        Output of :func:`margin_curve`.
    tolerance : float, default :data:`SETTLE_TOLERANCE`

    Returns
    -------
    pandas.Series
        By protocol: the smallest R such that for it and every larger R of the curve the
        verdict equals the verdict at the largest R and the margin lies within ``tolerance``
        of the margin there; NaN when only the largest R qualifies and it is the only one
        (nothing to compare).
    """
    out = {}
    for protocol, g in curve.groupby("protocol", sort=False):
        g = g.sort_values("n_repeats")
        final = g.iloc[-1]
        ok = (g["verdict"] == final["verdict"]) & ((g["diff"] - final["diff"]).abs() <= tolerance)
        # the first R after the last R that does not agree
        bad = np.flatnonzero(~ok.to_numpy())
        first = 0 if not len(bad) else bad[-1] + 1
        out[protocol] = int(g["n_repeats"].iloc[first]) if len(g) > 1 else float("nan")
    return pd.Series(out, name="settled_at", dtype=object)
