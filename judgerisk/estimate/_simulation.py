"""A simulation study of the estimators with a known truth (the tests and the benchmark).

Each repetition draws ``n_items`` items of a super-population: a risk score
:math:`s_i \\sim U(0, 1)`, the probability that the verdict is right
:math:`p_i = 1 - 0.5\\, s_i` (so :math:`\\theta = E[Y] = 0.75`, and the riskier an item the
more uncertain its label: :math:`Var(Y_i) = p_i(1 - p_i)` grows with :math:`s_i`), the label
:math:`Y_i \\sim \\mathrm{Bernoulli}(p_i)`, and a judge's prediction that is informative but
biased, :math:`f_i = \\mathrm{clip}(p_i + 0.1 + \\varepsilon_i, 0.01, 0.99)`,
:math:`\\varepsilon_i \\sim N(0, 0.1^2)` (the plug-in :math:`\\bar f` is off by about 0.1),
plus a second judge's prediction with its own noise (for the multi-judge estimate). It labels
``n_labelled`` items at random (the classical, PPI++, stratified and cross-fitted
estimates) and, separately, about as many by the SCUR-driven plan
(:func:`judgerisk.estimate.sampling.inclusion_probabilities` on :math:`s`, Poisson sampling;
the labelled-only IPW and active PPI++ estimates), and records whether each interval covers
:math:`\\theta` and its width. ``useless=True`` makes the predictions independent of the labels
(a corner case for power tuning: :math:`\\hat\\lambda` should go to 0).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from judgerisk.estimate.exchangeability import exchangeability_test
from judgerisk.estimate.ppi import (
    LEVEL,
    Estimate,
    active_ppi_mean,
    classical_mean,
    cross_ppi_mean,
    crossfit_predictions,
    ppi_mean,
    quantile_strata,
    stratified_ppi_mean,
)
from judgerisk.estimate.sampling import draw_plan, inclusion_probabilities
from judgerisk.options import EXCHANGEABILITY

__all__ = ["TRUTH", "exchangeability_study", "interval_study", "summarize_intervals"]

#: :math:`\\theta = E[1 - 0.5 s]` for :math:`s \\sim U(0, 1)`.
TRUTH = 0.75


def _items(rng: np.random.Generator, n_items: int, useless: bool):
    s = rng.random(n_items)
    p = 1.0 - 0.5 * s
    y = (rng.random(n_items) < p).astype(np.float64)
    base = rng.random(n_items) if useless else p
    f = np.clip(base + 0.1 + rng.normal(0.0, 0.1, n_items), 0.01, 0.99)
    f2 = np.clip(base + rng.normal(0.0, 0.15, n_items), 0.01, 0.99)
    return s, y, f, f2


def interval_study(
    n_reps: int = 500,
    n_items: int = 1000,
    n_labelled: int = 100,
    level: float = LEVEL,
    seed: int = 0,
    useless: bool = False,
    multi: bool = True,
) -> pd.DataFrame:
    """One row per repetition and method: ``rep, method, estimate, width, covers``."""
    rng = np.random.default_rng(seed)
    rows = []
    for rep in range(n_reps):
        s, y, f, f2 = _items(rng, n_items, useless)
        lab = np.zeros(n_items, dtype=bool)
        lab[rng.choice(n_items, n_labelled, replace=False)] = True
        est: dict[str, Estimate] = {
            "labelled": classical_mean(y[lab], level),
            "ppi": ppi_mean(y[lab], f[lab], f[~lab], level),
        }
        strata = quantile_strata(s, lab)
        est["ppi_stratified"] = stratified_ppi_mean(
            y[lab], f[lab], f[~lab], strata[lab], strata[~lab], level
        )
        if multi:
            x = np.column_stack([f, f2])
            pred, pred_unl = crossfit_predictions(y[lab], x[lab], x[~lab], seed=rep)
            est["ppi_multi"] = cross_ppi_mean(y[lab], pred, pred_unl, level)
        pi = inclusion_probabilities(s, n_labelled)
        xi = draw_plan(pi, seed=int(rng.integers(2**32)))
        y_seen = np.where(xi, y, np.nan)
        est["labelled_ipw"] = active_ppi_mean(y_seen, f, xi, pi, level, lam=0.0)
        est["ppi_active"] = active_ppi_mean(y_seen, f, xi, pi, level)
        rows += [
            {
                "rep": rep,
                "method": m,
                "estimate": e.estimate,
                "width": e.width,
                "covers": e.lower <= TRUTH <= e.upper,
            }
            for m, e in est.items()
        ]
    return pd.DataFrame(rows)


def summarize_intervals(study: pd.DataFrame) -> pd.DataFrame:
    """By method: ``coverage``, ``mean_width``, ``width_vs_ppi`` (mean width over PPI++'s),
    ``width_vs_labelled`` and ``bias`` (mean estimate minus :data:`TRUTH`)."""
    g = study.groupby("method", sort=False)
    out = pd.DataFrame(
        {
            "coverage": g["covers"].mean(),
            "mean_width": g["width"].mean(),
            "bias": g["estimate"].mean() - TRUTH,
        }
    )
    out["width_vs_ppi"] = out["mean_width"] / out.loc["ppi", "mean_width"]
    out["width_vs_labelled"] = out["mean_width"] / out.loc["labelled", "mean_width"]
    return out


def exchangeability_study(
    n_reps: int = 500,
    n_items: int = 200,
    n_labelled: int = 40,
    level: float = EXCHANGEABILITY.level,
    n_permutations: int = 199,
    seed: int = 0,
    easy: bool = False,
) -> np.ndarray:
    """The test's rejections over repetitions: random slices, or (``easy``) slices drawn from
    the safer half of the items only."""
    rng = np.random.default_rng(seed)
    out = np.empty(n_reps, dtype=bool)
    for rep in range(n_reps):
        s = rng.random(n_items)
        pool = np.flatnonzero(s < np.median(s)) if easy else np.arange(n_items)
        lab = np.zeros(n_items, dtype=bool)
        lab[rng.choice(pool, n_labelled, replace=False)] = True
        out[rep] = exchangeability_test(s, lab, level, n_permutations, seed=rep).rejects
    return out
