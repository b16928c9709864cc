"""What a labelled slice buys: corrected estimates of a panel's accuracies and win rate.

A panel's ``gold`` marks the labelled slice (items with gold), the rest are unlabelled.
:func:`estimate_panel` estimates, for each quantity,

- ``accuracy:<aggregator>`` — the share of items whose aggregated verdict is right (for each
  aggregator; the label is 1 for a right verdict, 0 for a wrong one), predicted by the
  aggregator's own posterior: :math:`f_i = q_i v_i + (1 - q_i)(1 - v_i)` with :math:`q_i` its
  P(A) and :math:`v_i` its verdict (1 = A);
- ``accuracy:<judge>`` — each judge's share of right verdicts on the items it saw (a tie
  counts half right, as everywhere in judgerisk), predicted the same way from the ``proxy``
  aggregator's P(A) (default Dawid–Skene);
- ``win_rate:A`` — the share of items whose gold answer is A, predicted by the proxy's P(A),

with the methods ``judge`` (the judge-only plug-in :math:`\\bar f` over every item, no valid
interval: it is as biased as the judges), ``labelled`` (the labelled items alone),
``ppi`` (PPI++), ``ppi_stratified`` (PPI++ within SCUR strata) and ``ppi_multi``
(cross-prediction-powered inference from every judge's probability of the same verdict, a
cross-fitted logistic regression) — :mod:`judgerisk.estimate.ppi` has the formulas and the
papers. Given the inclusion probabilities of a labelling plan (:func:`plan_labels`) the slice
is not random, and the methods are ``judge``, ``labelled_ipw`` and ``ppi_active``
(inverse-probability-weighted, Zrnic & Candès 2024).

Nothing here reads gold to score: SCUR and the aggregators come from
:func:`judgerisk.engine.certified.score_panel`, which never does.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from judgerisk.aggregators._base import aggregator_name, reported_aggregators
from judgerisk.engine.certified import score_panel
from judgerisk.estimate.ppi import (
    Estimate,
    active_ppi_mean,
    classical_mean,
    cross_ppi_mean,
    crossfit_predictions,
    effective_labels,
    ppi_mean,
    quantile_strata,
    stratified_ppi_mean,
)
from judgerisk.estimate.sampling import (
    draw_plan,
    expected_variances,
    inclusion_probabilities,
)
from judgerisk.options import EstimateSettings, OptionError
from judgerisk.panel import ORIGINAL, PanelError, to_wide, validate_panel

__all__ = [
    "COLUMNS",
    "METHODS",
    "estimate_panel",
    "estimate_quantity",
    "one_judge_quantity",
    "plan_labels",
    "quantities",
    "slice_study",
    "summarize_slices",
]

_DEFAULT = EstimateSettings()

#: The columns of an :func:`estimate_panel` table, in order.
COLUMNS = (
    "quantity",
    "method",
    "estimate",
    "lower",
    "upper",
    "level",
    "n_labelled",
    "n_unlabelled",
    "width",
    "width_ratio",
    "effective_labels",
    "lam",
)

#: Methods of a random labelled slice, and of a slice drawn by a plan.
METHODS = {
    "random": ("judge", "labelled", "ppi", "ppi_stratified", "ppi_multi"),
    "plan": ("judge", "labelled_ipw", "ppi_active"),
}


def _agreement(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """:math:`q v + (1 - q)(1 - v)`: the probability P(A) = q gives the verdict v (1 A, 0 B)."""
    return q * v + (1.0 - q) * (1.0 - v)


def quantities(
    panel: pd.DataFrame,
    scores: pd.DataFrame,
    proxy: str = _DEFAULT.proxy,
    aggregators: Sequence[str] | None = None,
) -> dict[str, pd.DataFrame]:
    """Per quantity, its items' label ``y`` (NaN unlabelled), prediction ``f`` and proxies.

    Returns
    -------
    dict of str to pandas.DataFrame
        ``quantity -> frame`` indexed by item with ``y``, ``f``, ``scur`` and one column
        ``x:<judge>`` per judge: that judge's probability of the same verdict (its P(A) for the
        win rate), 1/2 where it did not judge the item.
    """
    if proxy not in scores.columns or f"{proxy}_posterior" not in scores.columns:
        raise OptionError(
            f"proxy aggregator {proxy!r} is not among the scored aggregators; name one of "
            f"{[c[: -len('_posterior')] for c in scores.columns if c.endswith('_posterior')]}"
        )
    items = scores.index
    gold = (
        scores["gold"].map({"A": 1.0, "B": 0.0})
        if "gold" in scores.columns
        else pd.Series(np.nan, index=items)
    ).to_numpy(np.float64)
    probs = to_wide(panel, "p", ORIGINAL).reindex(items)
    votes = to_wide(panel, "verdict", ORIGINAL).reindex(items).astype(np.float64)
    p_all = probs.to_numpy(np.float64)
    q_ref = scores[f"{proxy}_posterior"].to_numpy(np.float64)
    scur = scores["scur"].to_numpy(np.float64)
    judges = [str(j) for j in probs.columns]

    def frame(y, f, x, keep) -> pd.DataFrame:
        out = pd.DataFrame({"y": y, "f": f, "scur": scur}, index=items)
        feats = pd.DataFrame(
            np.nan_to_num(x, nan=0.5), index=items, columns=[f"x:{j}" for j in judges]
        )
        return pd.concat([out, feats], axis=1).loc[keep]

    out: dict[str, pd.DataFrame] = {}
    everywhere = np.ones(len(items), dtype=bool)
    for name in aggregators if aggregators is not None else []:
        v = (scores[name] == "A").to_numpy(np.float64)
        q = scores[f"{name}_posterior"].to_numpy(np.float64)
        y = 1.0 - np.abs(v - gold)
        x = _agreement(p_all, v[:, None])
        out[f"accuracy:{name}"] = frame(y, _agreement(q, v), x, everywhere)
    for j, judge in enumerate(judges):
        v = votes.iloc[:, j].to_numpy()
        seen = ~np.isnan(v)
        y = 1.0 - np.abs(v - gold)
        x = _agreement(p_all, np.nan_to_num(v)[:, None])
        out[f"accuracy:{judge}"] = frame(y, _agreement(q_ref, np.nan_to_num(v)), x, seen)
    out["win_rate:A"] = frame(gold, q_ref, p_all, everywhere)
    return out


def _row(quantity, method, est: Estimate | None, level, n, big_n, plug_in=np.nan) -> dict:
    if est is None:
        return {
            "quantity": quantity,
            "method": method,
            "estimate": plug_in,
            "lower": np.nan,
            "upper": np.nan,
            "level": level,
            "n_labelled": n,
            "n_unlabelled": big_n,
            "width": np.nan,
            "lam": np.nan,
        }
    return {
        "quantity": quantity,
        "method": method,
        "estimate": est.estimate,
        "lower": est.lower,
        "upper": est.upper,
        "level": level,
        "n_labelled": n,
        "n_unlabelled": big_n,
        "width": est.width,
        "lam": est.lam,
    }


def estimate_quantity(
    quantity: str,
    data: pd.DataFrame,
    settings: EstimateSettings | None = None,
    inclusion: pd.Series | None = None,
) -> pd.DataFrame:
    """The rows of one quantity (columns :data:`COLUMNS`) from its items' table.

    ``data`` is indexed by item with ``y`` (the label, NaN where unlabelled), ``f`` (its
    prediction), ``scur`` (the risk score the strata are cut on: any risk score, e.g. BPE for
    one judge) and any ``x:<name>`` proxy columns of the multi-judge estimate (as
    :func:`quantities` builds them); ``inclusion`` as in :func:`estimate_panel`.
    """
    s = settings or _DEFAULT
    out = pd.DataFrame(_estimates(quantity, data, s, inclusion))
    ref = _labelled_width(data, s.level, inclusion)
    out["width_ratio"] = out["width"] / ref
    out["effective_labels"] = [
        effective_labels(n, ref, w) if np.isfinite(w) and np.isfinite(ref) else np.nan
        for n, w in zip(out["n_labelled"], out["width"], strict=True)
    ]
    return out[list(COLUMNS)]


def _estimates(
    quantity: str, data: pd.DataFrame, s: EstimateSettings, inclusion: pd.Series | None
) -> list[dict]:
    lab = data["y"].notna().to_numpy()
    n, big_n = int(lab.sum()), int((~lab).sum())
    y, f = data["y"].to_numpy(), data["f"].to_numpy()
    rows = [_row(quantity, "judge", None, s.level, n, big_n, float(f.mean()))]
    if n < 2 or big_n < 2:
        return rows
    if inclusion is not None:
        pi = inclusion.reindex(data.index).to_numpy(np.float64)
        ipw = active_ppi_mean(y, f, lab, pi, s.level, lam=0.0)
        act = active_ppi_mean(y, f, lab, pi, s.level)
        rows += [
            _row(quantity, "labelled_ipw", ipw, s.level, n, big_n),
            _row(quantity, "ppi_active", act, s.level, n, big_n),
        ]
        return rows
    classical = classical_mean(y[lab], s.level)
    rows.append(_row(quantity, "labelled", classical, s.level, n, big_n))
    rows.append(
        _row(quantity, "ppi", ppi_mean(y[lab], f[lab], f[~lab], s.level), s.level, n, big_n)
    )
    strata = quantile_strata(data["scur"].to_numpy(), lab, s.n_strata)
    strat = stratified_ppi_mean(y[lab], f[lab], f[~lab], strata[lab], strata[~lab], s.level)
    rows.append(_row(quantity, "ppi_stratified", strat, s.level, n, big_n))
    x = data[["f", *[c for c in data.columns if c.startswith("x:")]]].to_numpy()
    pred, pred_unl = crossfit_predictions(y[lab], x[lab], x[~lab], s.n_folds, s.seed)
    rows.append(
        _row(
            quantity,
            "ppi_multi",
            cross_ppi_mean(y[lab], pred, pred_unl, s.level),
            s.level,
            n,
            big_n,
        )
    )
    return rows


def _labelled_width(data: pd.DataFrame, level: float, inclusion: pd.Series | None) -> float:
    """The classical interval's width on as many labels drawn at random: :math:`2 z s/\\sqrt n`.

    :math:`s^2` is the labels' variance among the labelled items (``ddof=0``), weighted by
    :math:`1/\\pi_i` when a plan drew them (so that it estimates the population's variance).
    """
    from scipy.stats import norm

    lab = data["y"].notna().to_numpy()
    if lab.sum() < 2:
        return float("nan")
    y = data["y"].to_numpy()[lab]
    w = (
        np.ones(y.size)
        if inclusion is None
        else 1.0 / inclusion.reindex(data.index[lab]).to_numpy()
    )
    mean = np.average(y, weights=w)
    var = np.average((y - mean) ** 2, weights=w)
    return float(2.0 * norm.ppf(0.5 + level / 2) * np.sqrt(var / y.size))


def _scored(panel: pd.DataFrame, s: EstimateSettings) -> pd.DataFrame:
    return score_panel(panel, n_seeds=s.n_seeds, seed=s.seed, aggregators=s.aggregators)


def estimate_panel(
    panel: pd.DataFrame,
    settings: EstimateSettings | None = None,
    *,
    inclusion: pd.Series | None = None,
    scores: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Judge-only, labelled-only and prediction-powered estimates of a panel's quantities.

    Parameters
    ----------
    panel : pandas.DataFrame
        A panel with a ``gold`` column: the items with gold are the labelled slice (at least
        2, and at least 2 without), a random sample of the items unless ``inclusion`` says
        how they were drawn.
    settings : EstimateSettings, optional
        Level, strata, folds, proxy aggregator, seed (defaults: :class:`EstimateSettings`).
    inclusion : pandas.Series, optional
        Inclusion probability by item of the labelled items, from the plan that drew them
        (:func:`plan_labels`): then the estimates are the inverse-probability-weighted ones.
    scores : pandas.DataFrame, optional
        The panel's :func:`~judgerisk.engine.certified.score_panel` table, when already
        computed (else it is computed with the settings' seed and repetitions).

    Returns
    -------
    pandas.DataFrame
        One row per quantity and method, columns :data:`COLUMNS`: ``width`` is
        ``upper - lower``, ``width_ratio`` the width over :math:`w_{labelled} = 2 z s /
        \\sqrt n`, the classical interval's width on ``n`` labels drawn at random (``s``: the
        labels' standard deviation, weighted by :math:`1/\\pi` under a plan; for a random
        slice it is the ``labelled`` row's width), ``effective_labels``
        :math:`n\\,(w_{labelled}/w)^2` (the random labels the classical interval would need to
        be as narrow), ``lam`` the power-tuning weight.

    Raises
    ------
    PanelError
        For a panel without gold, or without 2 labelled and 2 unlabelled items, or an
        ``inclusion`` that misses a labelled item or is not in (0, 1].
    """
    s = settings or _DEFAULT
    panel = validate_panel(panel)
    if "gold" not in panel.columns:
        raise PanelError("the panel has no 'gold' column: nothing is labelled to estimate from")
    if scores is None:
        scores = _scored(panel, s)
    lab = scores["gold"].notna() if "gold" in scores.columns else None
    if lab is None or lab.sum() < 2 or (~lab).sum() < 2:
        n = 0 if lab is None else int(lab.sum())
        raise PanelError(
            f"the panel has {n} labelled item(s) of {len(scores)}: the estimates need at least "
            "2 items with gold and 2 without"
        )
    if inclusion is not None:
        inclusion = _check_inclusion(inclusion, scores.index[lab])
    aggs = [aggregator_name(a) for a in reported_aggregators(s.aggregators)]
    tables = [
        estimate_quantity(quantity, data, s, inclusion)
        for quantity, data in quantities(panel, scores, s.proxy, aggs).items()
    ]
    out = pd.concat(tables, ignore_index=True)
    out.attrs.update(
        n_items=len(scores),
        n_labelled=int(lab.sum()),
        design="random" if inclusion is None else "plan",
    )
    return out


def _check_inclusion(inclusion: pd.Series, labelled: pd.Index) -> pd.Series:
    pi = pd.to_numeric(inclusion, errors="coerce")
    pi.index = pi.index.astype(str) if labelled.dtype == object else pi.index
    missing = labelled.difference(pi.index)
    if len(missing):
        raise PanelError(
            f"{len(missing)} labelled item(s) are not in the plan (its inclusion "
            f"probabilities): {list(missing[:10])}; the weighted estimate needs the probability "
            "every labelled item was drawn with"
        )
    bad = pi.reindex(labelled)
    bad = bad[~((bad > 0) & (bad <= 1))]
    if len(bad):
        raise PanelError(
            f"inclusion_probability must be in (0, 1]: item {bad.index[0]!r} has {bad.iloc[0]!r}"
        )
    return pi


def plan_labels(
    panel: pd.DataFrame,
    n: int,
    settings: EstimateSettings | None = None,
    *,
    scores: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Which items to label next: drawn with probabilities growing with SCUR, with a floor.

    Parameters
    ----------
    panel : pandas.DataFrame
        The panel (its gold, if any, is not read: every item is a candidate).
    n : int
        Expected number of items to label (Poisson sampling draws about ``n``).
    settings : EstimateSettings, optional
        ``floor`` (the rule of :func:`judgerisk.estimate.sampling.inclusion_probabilities`),
        ``seed`` (the scores and the draw), ``proxy`` (the prediction of the expected widths).
    scores : pandas.DataFrame, optional
        The panel's :func:`~judgerisk.engine.certified.score_panel` table.

    Returns
    -------
    pandas.DataFrame
        The drawn items: ``item``, ``inclusion_probability``. ``attrs`` holds ``expected_n``,
        ``drawn``, the expected half-widths at the settings' level of the accuracy of the
        ``proxy`` aggregator under the plan and under as many random labels
        (``half_width_plan``, ``half_width_random``) and ``equivalent_random_labels`` (the
        random labels that would give the plan's expected width).
    """
    from scipy.stats import norm

    s = settings or _DEFAULT
    panel = validate_panel(panel)
    if scores is None:
        scores = _scored(panel, s)
    big_m = len(scores)
    if not 1 <= n <= big_m:
        raise OptionError(f"--plan must be between 1 and the {big_m} items, got {n}")
    pi = inclusion_probabilities(scores["scur"].to_numpy(), n, s.floor)
    drawn = draw_plan(pi, s.seed)
    data = quantities(panel, scores, s.proxy, [s.proxy])[f"accuracy:{s.proxy}"]
    var_plan, var_random = expected_variances(data["f"].to_numpy(), pi, n)
    z = norm.ppf(0.5 + s.level / 2)
    v = np.clip(data["f"].to_numpy(), 0, 1)
    v = v * (1 - v)
    ratio = (v * (1 / pi - 1)).sum() / max(v.sum(), 1e-300)
    out = pd.DataFrame({"item": scores.index[drawn], "inclusion_probability": pi[drawn]})
    out.attrs.update(
        expected_n=int(n),
        drawn=int(drawn.sum()),
        floor=s.floor,
        half_width_plan=float(z * np.sqrt(var_plan)),
        half_width_random=float(z * np.sqrt(var_random)),
        equivalent_random_labels=float(big_m / (1.0 + ratio)),
        quantity=f"accuracy:{s.proxy}",
    )
    return out


def one_judge_quantity(table: pd.DataFrame) -> pd.DataFrame:
    """The accuracy of one judge in both orders as :func:`estimate_quantity`'s items' table.

    ``table`` is :func:`judgerisk.selective.one_judge.bpe_table`'s for one judge (with
    ``gold``, NaN where unlabelled). The label is 1 for a right verdict and 0 for a wrong one
    or a tie (the one-judge report's rule); the prediction is the judge's own probability of
    its verdict, :math:`\\max(\\bar p, 1 - \\bar p)`; the strata are cut on BPE, and the
    multi-proxy estimate reads the probability of the verdict in each order
    (:math:`\\sigma(\\ell_{fwd})`, :math:`\\sigma(\\ell_{rev})`).
    """
    t = table.set_index("item")
    v = (t["verdict"] == "A").to_numpy(np.float64)
    gold = t["gold"].map({"A": 1.0, "B": 0.0}).to_numpy(np.float64) if "gold" in t else np.nan
    right = np.where(t["verdict"].to_numpy() == "tie", 0.0, 1.0 - np.abs(v - gold))
    p_bar = t["p_bar"].to_numpy(np.float64)
    out = pd.DataFrame(
        {
            "y": np.where(np.isnan(gold), np.nan, right),
            "f": np.maximum(p_bar, 1.0 - p_bar),
            "scur": t["bpe"].to_numpy(np.float64),
        },
        index=t.index,
    )
    for name in ("fwd", "rev"):
        q = 1.0 / (1.0 + np.exp(-t[f"logit_{name}"].to_numpy(np.float64)))
        out[f"x:{name}"] = _agreement(q, v)
    return out


def slice_study(
    data: pd.DataFrame,
    n_labelled: int,
    n_draws: int = 200,
    settings: EstimateSettings | None = None,
) -> pd.DataFrame:
    """Pretend only ``n_labelled`` items are labelled, many times, and score the estimates.

    ``data`` is one quantity's items' table with **every** label known (from
    :func:`quantities` on a panel whose items all carry gold, or :func:`one_judge_quantity`);
    its mean label is the truth. Each draw labels ``n_labelled`` items at random (the methods
    of a random slice) and, separately, about as many by the SCUR plan (the weighted ones).

    Returns
    -------
    pandas.DataFrame
        One row per draw and method: ``draw``, ``method``, ``estimate``, ``width``,
        ``covers`` (the interval holds the truth), ``error`` (estimate minus truth);
        ``attrs["truth"]`` holds the truth.
    """
    s = settings or _DEFAULT
    if data["y"].isna().any():
        raise PanelError("the slice study needs every item labelled (the truth)")
    truth = float(data["y"].mean())
    rng = np.random.default_rng(s.seed)
    pi = pd.Series(
        inclusion_probabilities(data["scur"].to_numpy(), n_labelled, s.floor), index=data.index
    )
    rows = []
    for draw in range(n_draws):
        keep = np.zeros(len(data), dtype=bool)
        keep[rng.choice(len(data), n_labelled, replace=False)] = True
        planned = draw_plan(pi.to_numpy(), seed=int(rng.integers(2**32)))
        for mask, inclusion in ((keep, None), (planned, pi)):
            masked = data.assign(y=data["y"].where(mask))
            table = estimate_quantity("q", masked, s, inclusion)
            for r in table.itertuples():
                covers = bool(r.lower <= truth <= r.upper) if np.isfinite(r.width) else False
                rows.append(
                    {
                        "draw": draw,
                        "method": r.method,
                        "estimate": r.estimate,
                        "width": r.width,
                        "covers": covers,
                        "error": r.estimate - truth,
                    }
                )
    out = pd.DataFrame(rows)
    out = out[~((out["method"] == "judge") & out.duplicated(["draw", "method"]))]
    out.attrs["truth"] = truth
    return out.reset_index(drop=True)


def summarize_slices(study: pd.DataFrame) -> pd.DataFrame:
    """By method of a :func:`slice_study`: ``coverage``, ``mean_width``, ``rmse``, ``bias``."""
    g = study.groupby("method", sort=False)
    return pd.DataFrame(
        {
            "coverage": g["covers"].mean(),
            "mean_width": g["width"].mean(),
            "rmse": g["error"].apply(lambda e: float(np.sqrt(np.mean(e**2)))),
            "bias": g["error"].mean(),
        }
    )
