"""Certified panel decisions: SCOPE calibration on a panel risk score (Methods reference §8).

No paper does this: the panel's own risk score (SCUR, or the predictive entropy PE for comparison)
replaces the single-judge BPE as the uncertainty score of SCOPE, so a *panel* verdict is accepted
only when the expected error rate among accepted verdicts is certified :math:`\\le \\alpha`.

Three steps, each a public function:

1. :func:`score_panel` — label-free, cross-fitted per-item scores for **every** item: SCUR and its
   z's, PE / VE / MSP / DS entropy, and the aggregators' verdicts.
2. :func:`select_items` — SCOPE's threshold on a labelled calibration subset, accept / abstain for
   the other items (what ``judgerisk select`` runs).
3. :func:`certify_panel` — the validity and coverage study: many random calibration / test splits
   (:func:`judgerisk.selective.protocol.split_protocol`, vectorised), SCUR and PE on the panel against BPE on
   the best single judge, at equal :math:`\\alpha`.

Why the scores do not leak, and why they are exchangeable
---------------------------------------------------------
SCOPE's guarantee needs calibration and test items to be exchangeable *with their scores*: the
score function must not treat labelled and unlabelled items differently. :func:`score_panel` never
reads gold (the column is removed before scoring and only passed through to the output), and it
scores every item the same way: for each of ``n_seeds`` random fit / reference / evaluation splits
(Methods reference §3) SCUR is computed for that seed's reference and evaluation items, and an item's score
is the mean over the seeds that scored it. The splits are drawn independently of which items are
labelled, so permuting the items permutes the scores in distribution, and a random labelled subset
is exchangeable with the rest. The per-seed table alone would not do: within one seed the
reference items define the ECDFs that normalise the signals and so sit inside their own
normalisation (:math:`z \\ge 1/n_{ref}` for them, not for evaluation items) — using one seed's
reference and evaluation items as calibration and test would mix two score distributions. Using
only one seed's evaluation items would be valid but keeps 20 % of the items.

The aggregators (Dawid–Skene etc.) are fitted on all items' verdicts, again without gold, which is
symmetric in the items. PE, VE and MSP are per-item functions.

The guarantee, named exactly
----------------------------
For exchangeable items SCOPE bounds the **marginal** false discovery rate
:math:`E[\\sum_{test} E S] / E[\\sum_{test} S] \\le \\alpha` up to its finite-sample slack — an
average over calibration draws, not a promise for one calibration set. :func:`certify_panel`
reports both the mean test FDP over splits and the pooled ratio (``pooled_risk``).

References
----------
Methods reference §3–4, §7–8; "SCOPE: Selective Conformal Optimized Pairwise LLM Judging" (§2.3);
"Can We Trust This Evaluation? Instance-Level Reliability of LLM-as-a-Judge" (SCUR).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from judgerisk._progress import progress_bar
from judgerisk._registry import NameView
from judgerisk.aggregators.aggregate import aggregate
from judgerisk.describe import judge_accuracy
from judgerisk.panel import (
    CONDITIONS,
    ORIGINAL,
    PanelError,
    check_scorable,
    gold_labels,
    to_wide,
    validate_panel,
)
from judgerisk.plots import style
from judgerisk.risk.baselines import BASELINES, baseline_scores
from judgerisk.risk.registry import COMPONENTS
from judgerisk.risk.signals import scur_scores
from judgerisk.selective.confidence import bpe
from judgerisk.selective.protocol import (
    ALPHAS,
    split_protocol,
    summarize_protocol,
    within_guarantee,
)
from judgerisk.selective.scope import Scope
from judgerisk.validation import to_labels

__all__ = [
    "SCORE_COLUMNS",
    "RISK_SCORES",
    "score_panel",
    "accelerate_options",
    "panel_errors",
    "select_items",
    "best_single_judge",
    "judge_bpe",
    "certify_panel",
    "summarize_certified",
    "certify_panels",
]

#: Risk scores of a :func:`score_panel` table (larger = riskier): what ``select`` may threshold.
#: SCUR, its z-scored and raw components (and their mean ``S``), then every registered
#: baseline-kind score: a live view, so a score registered later is selectable too.
RISK_SCORES: Sequence[str] = NameView(
    lambda: (
        "scur",
        *(f"z_{c}" for c in (*COMPONENTS, "S")),
        *COMPONENTS,
        "S",
        *BASELINES,
    )
)

#: SCUR columns averaged over the seeds in :func:`score_panel`.
SCORE_COLUMNS: tuple[str, ...] = (
    *COMPONENTS,
    "S",
    *(f"z_{c}" for c in COMPONENTS),
    "z_S",
    "scur",
)


def score_panel(
    panel: pd.DataFrame,
    n_seeds: int = 5,
    seed: int = 0,
    aggregators: Sequence[str] = ("majority", "dawid_skene"),
    baselines: Sequence[str] = BASELINES,
    max_seeds: int | None = None,
    scur_options: dict | None = None,
    progress: bool = False,
) -> pd.DataFrame:
    """Cross-fitted, label-free risk scores and verdicts for every item of a panel.

    Parameters
    ----------
    panel : pandas.DataFrame
        A panel (``judgerisk.panel`` contract). ``gold``, if present, is never used; it is copied
        to the output for convenience.
    n_seeds : int, default 5
        Number of fit / reference / evaluation splits (seeds ``seed, seed + 1, ...``).
    seed : int, default 0
        First seed.
    aggregators : sequence of str, default ("majority", "dawid_skene")
        Aggregators (:func:`judgerisk.aggregators.aggregate.aggregate`) whose verdicts ("A"/"B") and
        posteriors are added as columns ``<name>`` and ``<name>_posterior``.
    baselines : sequence of str, default all of :data:`judgerisk.risk.baselines.BASELINES`
        PE, VE, MSP, DS entropy (Dawid–Skene fitted on all items, label-free).
    max_seeds : int, optional
        After ``n_seeds`` seeds, more seeds are run while some item has not been scored (each
        seed scores the ~50 % of items outside its fit split), up to ``max_seeds`` in all
        (default ``max(4 * n_seeds, 20)``). Items still unscored get NaN SCUR, with a warning.
    scur_options : dict, optional
        Keyword arguments of :func:`judgerisk.risk.signals.scur_scores` (``c_kind``, ``s_kind``, ...).
    progress : bool, default False
        Show a progress bar over seeds.

    Returns
    -------
    pandas.DataFrame
        Indexed by item (sorted): ``n_scored`` (seeds that scored the item), the columns of
        :data:`SCORE_COLUMNS` (means over those seeds), ``scur_sd`` (spread over seeds), the
        baselines, the aggregator columns, and ``gold`` when the panel has it (NaN for
        unlabelled items). ``attrs["seeds"]`` lists the seeds run: ``n_seeds`` of them, plus
        the top-up seeds ``max_seeds`` allowed (the progress bar shows them as such).

    Raises
    ------
    PanelError
        For a panel that breaks the contract (unknown condition names included), fewer than
        two judges (:func:`judgerisk.panel.check_scorable`), or ``n_seeds`` / ``seed`` /
        ``max_seeds`` that are not integers of the right range.

    Notes
    -----
    :math:`\\mathrm{SCUR}_i = K_i^{-1} \\sum_{s: i \\notin \\mathrm{fit}_s} \\mathrm{SCUR}^{(s)}_i`,
    with :math:`\\mathrm{SCUR}^{(s)}` from :func:`judgerisk.risk.signals.scur_scores` on seed *s*.
    See the module docstring for why this average keeps labelled and unlabelled items
    exchangeable.
    """
    _check_count("n_seeds", n_seeds)
    _check_count("seed", seed, minimum=0)
    if max_seeds is not None:
        _check_count("max_seeds", max_seeds)
    panel = validate_panel(panel, conditions=CONDITIONS)
    check_scorable(panel)
    unlabelled = panel.drop(columns=[c for c in ("gold",) if c in panel.columns])
    items = pd.Index(pd.unique(unlabelled["item"]), name="item").sort_values()
    max_seeds = max(4 * n_seeds, 20) if max_seeds is None else max(max_seeds, n_seeds)
    tables = []
    scored = pd.Series(0, index=items)
    bar = progress_bar(total=n_seeds, enabled=progress, desc="SCUR seeds", unit="seed")
    s = seed
    while s - seed < n_seeds or ((scored == 0).any() and s - seed < max_seeds):
        if s - seed >= bar.total:  # a top-up seed: the bar says so instead of overrunning
            bar.total = s - seed + 1
            bar.set_description("SCUR seeds (top-up: unscored items)")
            bar.refresh()
        res = scur_scores(unlabelled, seed=s, **(scur_options or {}))
        tables.append(res.table.assign(seed=s))
        scored = scored.add(res.table.groupby("item").size(), fill_value=0)
        s += 1
        bar.update(1)
    bar.close()
    long = pd.concat(tables, ignore_index=True)
    grouped = long.groupby("item")
    out = pd.DataFrame(index=items)
    out["n_scored"] = grouped.size().reindex(items).fillna(0).astype(np.int64)
    means = grouped[list(SCORE_COLUMNS)].mean()
    out = out.join(means)
    out["scur_sd"] = grouped["scur"].std(ddof=0).reindex(items)
    missing = int((out["n_scored"] == 0).sum())
    if missing:
        warnings.warn(
            f"{missing} item(s) were in the fit split of all {s - seed} seeds and have no SCUR "
            "(raise n_seeds or max_seeds)",
            UserWarning,
            stacklevel=2,
        )
    if baselines:
        base = baseline_scores(unlabelled, fit_items=items, items=items, methods=tuple(baselines))
        out = out.join(base)
    for name in aggregators:
        agg = aggregate(unlabelled, name, random_state=seed).set_index("item")
        out[name] = agg["verdict"].reindex(items)
        out[f"{name}_posterior"] = agg["posterior"].reindex(items)
    if "gold" in panel.columns:
        out["gold"] = panel.drop_duplicates("item").set_index("item")["gold"].reindex(items)
    out.attrs["seeds"] = list(range(seed, s))
    return out


def accelerate_options(accelerate: str = "anderson") -> dict[str, Any]:
    """``scur_options`` for the command line's ``--accelerate`` (``"anderson"`` or ``"none"``)."""
    if accelerate not in ("anderson", "none"):
        raise PanelError(f"accelerate must be 'anderson' or 'none', got {accelerate!r}")
    return {"lmm_params": {"accelerate": None if accelerate == "none" else accelerate}}


def _check_count(name: str, value: object, minimum: int = 1) -> None:
    """An integer option of at least ``minimum``, or a :class:`PanelError` naming it."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum:
        raise PanelError(f"{name} must be an integer >= {minimum}, got {value!r}")


def panel_errors(verdict: npt.ArrayLike, gold: npt.ArrayLike) -> pd.Series:
    """Error labels :math:`E_i = 1[\\hat y_i \\ne y^*_i]` of aligned verdicts and gold ("A"/"B").

    Parameters
    ----------
    verdict, gold : pandas.Series
        By item; gold is aligned to the verdict's index.

    Returns
    -------
    pandas.Series of bool
    """
    g = pd.Series(gold).reindex(pd.Series(verdict).index)
    bad = ~g.isin(["A", "B"])
    if bad.any():
        raise PanelError(f"gold must be 'A' or 'B'; bad at items {list(g.index[bad][:10])}")
    return (pd.Series(verdict) != g).rename("error")


def _as_item_frame(df: pd.DataFrame, what: str) -> pd.DataFrame:
    if "item" in df.columns:
        if df["item"].isna().any():
            rows = list(np.flatnonzero(df["item"].isna().to_numpy())[:10])
            raise PanelError(f"{what}: column 'item' has missing values at rows {rows}")
        if df["item"].duplicated().any():
            dups = df.loc[df["item"].duplicated(), "item"].unique()[:10].tolist()
            raise PanelError(f"{what}: column 'item' has duplicated item(s) {dups}")
        return df.set_index("item")
    if df.index.name == "item":
        return df
    raise PanelError(f"{what} needs an 'item' column; got columns {list(df.columns)}")


def select_items(
    scores: pd.DataFrame,
    calibration: pd.DataFrame,
    alpha: float = 0.1,
    score: str = "scur",
    verdict: str = "majority",
    allow_any_score: bool = False,
) -> pd.DataFrame:
    """Certified accept / abstain decisions from a labelled calibration subset.

    Parameters
    ----------
    scores : pandas.DataFrame
        A :func:`score_panel` table (``item`` as index or column) holding ``score`` and
        ``verdict`` columns.
    calibration : pandas.DataFrame
        Labelled items: ``item`` and ``gold`` ("A"/"B"); every item must be in ``scores``.
        They should be a random sample of the panel's items (exchangeability).
    alpha : float in (0, 1), default 0.1
        Target false discovery rate of the accepted verdicts.
    score : str, default "scur"
        Risk column to threshold (larger = riskier): one of :data:`RISK_SCORES`.
    verdict : str, default "majority"
        Column holding the panel verdict to certify ("A"/"B").
    allow_any_score : bool, default False
        Accept a ``score`` column outside :data:`RISK_SCORES` (e.g. a posterior, where
        *larger* means *safer*: thresholding it certifies nothing sensible).

    Returns
    -------
    pandas.DataFrame
        One row per item: ``item, role`` ("calibration" / "test"), ``score`` (the chosen column),
        ``verdict``, ``gold`` (calibration items only), ``error`` (calibration only),
        ``accepted`` (test items: score <= threshold; False for calibration items), ``decision``
        ("accept", "abstain" or "calibration"), ``threshold``, ``feasible`` (False when no
        threshold satisfies the calibration condition: nothing is accepted), ``alpha``.
        ``attrs`` holds ``threshold``, ``feasible``, ``n_calibration``, ``calibration_errors``.

    Warns
    -----
    UserWarning
        When the calibration is empty or no threshold is feasible (every test item abstained).

    Notes
    -----
    :math:`\\hat\\lambda = \\sup\\{\\lambda : \\sum_{cal} 1[s_i \\le \\lambda](E_i - \\alpha) \\le -1\\}`
    (:class:`judgerisk.selective.scope.Scope`); a test item is accepted iff :math:`s \\le \\hat\\lambda`.
    Accepted test verdicts then have expected FDR :math:`\\le \\alpha`. An item without a score
    (NaN) is never accepted; a calibration item without a score is an error (exit code 2 in the
    CLI). When no threshold is feasible every test item is abstained on.
    """
    if not 0.0 < float(alpha) < 1.0:
        raise PanelError(f"alpha must lie in (0, 1), got {alpha!r}")
    sc = _as_item_frame(scores, "scores")
    cal = _as_item_frame(calibration, "calibration")
    for col in (score, verdict):
        if col not in sc.columns:
            raise PanelError(f"scores has no column {col!r}; columns are {list(sc.columns)}")
    if score not in RISK_SCORES and not allow_any_score:
        raise PanelError(
            f"score column {score!r} is not a risk score (larger = riskier); choose among "
            f"{[c for c in RISK_SCORES if c in sc.columns]}, or pass allow_any_score "
            "(--allow-any-score) if it is one"
        )
    if "gold" not in cal.columns:
        raise PanelError(f"calibration needs a 'gold' column; got {list(cal.columns)}")
    sc.index, cal.index = _common_item_type(sc.index, cal.index)
    unknown = cal.index.difference(sc.index)
    if len(unknown):
        raise PanelError(
            f"{len(unknown)} calibration item(s) are not in the scores: {list(unknown[:10])}"
        )
    bad_gold = ~cal["gold"].isin(["A", "B"])
    if bad_gold.any():
        raise PanelError(
            "calibration gold must be 'A' or 'B'; bad at items "
            f"{list(cal.index[bad_gold][:10])} (values {list(cal['gold'][bad_gold][:10])})"
        )
    s = pd.to_numeric(sc[score], errors="coerce")
    v = sc[verdict].astype(object)
    bad_v = ~v.isin(["A", "B"])
    if bad_v.any():
        raise PanelError(
            f"verdict column {verdict!r} must be 'A' or 'B'; bad at items "
            f"{list(sc.index[bad_v][:10])}"
        )
    cal_s = s.reindex(cal.index)
    if cal_s.isna().any():
        raise PanelError(
            f"calibration items without a {score!r} score: {list(cal_s.index[cal_s.isna()][:10])}"
        )
    err = panel_errors(v.reindex(cal.index), cal["gold"])
    sel = Scope(alpha).calibrate(cal_s.to_numpy(), err.to_numpy())
    is_cal = sc.index.isin(cal.index)
    accepted = np.zeros(len(sc), dtype=bool)
    test_s = s.to_numpy()[~is_cal]
    ok = np.isfinite(test_s)
    acc_test = np.zeros(test_s.size, dtype=bool)
    if ok.any():
        acc_test[ok] = sel.accept(test_s[ok])
    accepted[~is_cal] = acc_test
    out = pd.DataFrame(
        {
            "item": sc.index,
            "role": np.where(is_cal, "calibration", "test"),
            "score": s.to_numpy(),
            "verdict": v.to_numpy(),
            "gold": cal["gold"].reindex(sc.index).to_numpy(),
            "error": err.reindex(sc.index).to_numpy(),
            "accepted": accepted,
            "decision": np.where(is_cal, "calibration", np.where(accepted, "accept", "abstain")),
            "threshold": sel.threshold_,
            "feasible": bool(sel.feasible_),
            "alpha": alpha,
        }
    )
    if not sel.feasible_:
        warnings.warn(
            f"no threshold is feasible on {len(cal)} calibration item(s) at alpha={alpha}: "
            f"nothing can be accepted, all {int((~is_cal).sum())} test item(s) are abstained "
            "on (label more items, or raise alpha)",
            UserWarning,
            stacklevel=2,
        )
    out.attrs.update(
        threshold=float(sel.threshold_),
        feasible=bool(sel.feasible_),
        n_calibration=int(sel.n_calibration_),
        calibration_errors=int(err.sum()),
    )
    return out


def _common_item_type(a: pd.Index, b: pd.Index) -> tuple[pd.Index, pd.Index]:
    """Item indexes of two tables read separately, made comparable.

    csv ids that are all plain integers are read as integers, others as text; when one
    table's ids are integers and the other's text, both are compared as text.
    """
    if pd.api.types.is_numeric_dtype(a) == pd.api.types.is_numeric_dtype(b) or not len(b):
        return a, b
    return a.map(str).rename(a.name), b.map(str).rename(b.name)


def _paired_judges(panel: pd.DataFrame) -> list[str]:
    conds = panel.groupby("judge")["condition"].agg(set)
    return sorted(j for j, c in conds.items() if {ORIGINAL, "swap"} <= c)


def best_single_judge(panel: pd.DataFrame, items: Any = None) -> str:
    """The judge with the highest original-condition accuracy among those seen in both orders.

    Parameters
    ----------
    panel : pandas.DataFrame
        A panel with ``gold`` and the ``original`` and ``swap`` conditions.
    items : array-like, optional
        Items on which to measure accuracy (default: all).

    Returns
    -------
    str

    Notes
    -----
    Choosing with gold on all items is an *oracle* choice that favours the single judge; it is
    the comparison :func:`certify_panel` makes (conservative for the panel).
    """
    panel = validate_panel(panel, conditions=None)
    judges = _paired_judges(panel)
    if not judges:
        raise PanelError("no judge has both the 'original' and 'swap' conditions (BPE needs both)")
    sub = panel if items is None else panel[panel["item"].isin(items)]
    acc = judge_accuracy(sub).reindex(judges)
    return str(acc.idxmax())


def judge_bpe(panel: pd.DataFrame, judge: str) -> pd.DataFrame:
    """BPE of one judge on the items it saw in both orders (Methods reference §7).

    Returns
    -------
    pandas.DataFrame
        By item: ``bpe`` (nats), ``verdict`` ("A"/"B", A iff :math:`\\bar p \\ge .5`),
        ``confidence``.
    """
    fwd = to_wide(panel, "logit", ORIGINAL)
    rev = to_wide(panel, "logit", "swap")
    if judge not in fwd.columns or judge not in rev.columns:
        raise PanelError(f"judge {judge!r} lacks the 'original' or 'swap' condition")
    both = pd.concat([fwd[judge].rename("fwd"), rev[judge].rename("rev")], axis=1).dropna()
    sig = bpe(both["fwd"].to_numpy(), both["rev"].to_numpy())
    return pd.DataFrame(
        {
            "bpe": sig.score,
            "verdict": to_labels(sig.pred == 1),
            "confidence": sig.confidence,
        },
        index=both.index,
    )


def certify_panel(
    panel: pd.DataFrame,
    alphas: Sequence[float] = ALPHAS,
    n_splits: int = 1000,
    cal_frac: float = 0.5,
    split_seed: int = 0,
    n_seeds: int = 5,
    seed: int = 0,
    verdict: str = "majority",
    panel_scores: Sequence[str] = ("scur", "pe"),
    single_judge: str | None = "best",
    scores: pd.DataFrame | None = None,
    scur_options: dict | None = None,
    progress: bool = False,
) -> pd.DataFrame:
    """Validity and coverage of certified panel decisions over many calibration / test splits.

    Parameters
    ----------
    panel : pandas.DataFrame
        A panel with ``gold``.
    alphas : sequence of float, default (.05, .10, .15, .20, .25)
    n_splits : int, default 1000
        Random calibration / test splits (:func:`judgerisk.selective.protocol.split_masks`); every score
        uses the same splits.
    cal_frac : float, default 0.5
    split_seed : int, default 0
        Seed of the splits.
    n_seeds, seed, scur_options
        Passed to :func:`score_panel` (ignored when ``scores`` is given).
    verdict : str, default "majority"
        Aggregator whose verdict is certified.
    panel_scores : sequence of str, default ("scur", "pe")
        Panel risk scores used as SCOPE's uncertainty.
    single_judge : str or None, default "best"
        Judge whose BPE (own verdict, both orders) is the single-judge comparison; ``"best"`` =
        :func:`best_single_judge` (oracle choice); ``None`` skips it. Skipped with a warning when
        the panel has no ``swap`` condition.
    scores : pandas.DataFrame, optional
        A precomputed :func:`score_panel` table (must hold ``verdict`` and ``panel_scores``).
    progress : bool, default False

    Returns
    -------
    pandas.DataFrame
        Tidy, one row per (score, method, alpha, split): ``score`` (e.g. ``"SCUR (panel)"``,
        ``"BPE (GPT-4)"``), ``method`` (``scope``, ``naive``, ``vanilla``), ``alpha``, ``split``,
        ``coverage``, ``risk`` (test FDP), ``n_accepted``, ``n_errors``, ``threshold``.
        ``attrs`` holds ``n_items`` (common items), ``n_dropped``, ``judge``, ``verdict``.

    Notes
    -----
    All scores are compared on the same items (those with a finite panel score and, when BPE is
    included, both orders from the single judge; the count left out is in ``attrs``) and the
    same splits, so coverages at equal :math:`\\alpha` are directly comparable. The panel
    verdict's errors are :math:`E_i = 1[\\hat y^{panel}_i \\ne y^*_i]`; BPE's are the judge's own.
    """
    panel = validate_panel(panel, conditions=CONDITIONS)
    if "gold" not in panel.columns:
        raise PanelError("certify_panel needs a panel with a 'gold' column")
    unknown_scores = [c for c in panel_scores if scores is not None and c not in scores.columns]
    if scores is None:
        unknown_scores = [c for c in panel_scores if c not in RISK_SCORES]
    if unknown_scores:
        raise PanelError(
            f"panel_scores {unknown_scores} are not risk score columns; choose among "
            f"{list(RISK_SCORES)}"
        )
    if scores is None:
        scores = score_panel(
            panel,
            n_seeds=n_seeds,
            seed=seed,
            aggregators=(verdict,),
            scur_options=scur_options,
            progress=progress,
        )
    labels = gold_labels(panel)
    gold = pd.Series(np.where(labels.to_numpy() == 1, "A", "B"), index=labels.index)
    keep = pd.Series(scores.index.isin(gold.index), index=scores.index)
    for col in panel_scores:
        keep &= np.isfinite(pd.to_numeric(scores[col], errors="coerce"))
    judge, single = None, None
    if single_judge is not None:
        if "swap" not in set(panel["condition"]):
            warnings.warn(
                "the panel has no 'swap' condition: no BPE single-judge comparison",
                UserWarning,
                stacklevel=2,
            )
        else:
            judge = best_single_judge(panel) if single_judge == "best" else single_judge
            single = judge_bpe(panel, judge)
            keep &= keep.index.isin(single.index)
    items = keep.index[keep.to_numpy()]
    n_dropped = int(len(keep) - len(items))
    if n_dropped:
        warnings.warn(
            f"{n_dropped} item(s) without gold or without every score are left out of the "
            "comparison",
            UserWarning,
            stacklevel=2,
        )
    g = gold.reindex(items).to_numpy()
    kw: dict[str, Any] = dict(alphas=alphas, n_splits=n_splits, cal_frac=cal_frac, seed=split_seed)
    frames = []
    for col in panel_scores:
        tab = split_protocol(
            scores.loc[items, col].to_numpy(dtype=np.float64),
            scores.loc[items, verdict].to_numpy(),
            g,
            methods=("vanilla", "naive", "scope"),
            **kw,
        )
        frames.append(tab.assign(score=f"{style.label(col)} (panel)"))
    if single is not None:
        tab = split_protocol(
            single.loc[items, "bpe"].to_numpy(),
            single.loc[items, "verdict"].to_numpy(),
            g,
            methods=("vanilla", "naive", "scope"),
            **kw,
        )
        frames.append(tab.assign(score=f"BPE ({judge})"))
    out = pd.concat(frames, ignore_index=True)
    out["method"] = out["method"].astype(str)
    out = out[["score", *[c for c in out.columns if c != "score"]]]
    out.attrs.update(n_items=len(items), n_dropped=n_dropped, judge=judge, verdict=verdict)
    return out


def summarize_certified(table: pd.DataFrame) -> pd.DataFrame:
    """Mean / spread over splits per score, method and alpha (:func:`summarize_protocol`).

    Returns
    -------
    pandas.DataFrame
        Indexed by (score, method, alpha): coverage and risk means and standard deviations,
        ``risk_se``, ``pooled_risk`` (marginal FDR estimate), ``abstain_all``, ``n_splits``, and
        ``valid`` = ``risk_mean <= alpha + 4 risk_se`` (the book's validity rule,
        :func:`judgerisk.selective.protocol.within_guarantee`; only for the certified
        ``scope`` rows, ``<NA>`` for the uncertified ``naive`` / ``vanilla``).
    """
    parts = []
    for name, sub in table.groupby("score", sort=False):
        summ = summarize_protocol(sub.drop(columns="score")).reset_index()
        parts.append(summ.assign(score=name))
    out = pd.concat(parts, ignore_index=True)
    out["method"] = out["method"].astype(str)
    valid = pd.Series(within_guarantee(out["risk_mean"], out["alpha"], out["risk_se"]))
    out["valid"] = valid.astype("boolean").where(out["method"].eq("scope"), pd.NA)
    return out.set_index(["score", "method", "alpha"])


def certify_panels(
    panels: dict[str, pd.DataFrame], verdicts: Sequence[str] = ("majority",), **kwargs: Any
) -> tuple[dict[tuple[str, str], pd.DataFrame], pd.DataFrame]:
    """:func:`certify_panel` for several panels and aggregators, with one summary table.

    Parameters
    ----------
    panels : dict of str -> pandas.DataFrame
        Named panels with ``gold`` (e.g. ``{"LLMBar": ..., "JudgeBench": ...}``).
    verdicts : sequence of str, default ("majority",)
        Aggregators whose verdicts are certified, each in turn.
    **kwargs
        Passed to :func:`certify_panel` (``n_splits``, ``split_seed``, ``n_seeds``, ...).

    Returns
    -------
    (dict, pandas.DataFrame)
        The per-split tables by ``(panel name, verdict)``, and their
        :func:`summarize_certified` summaries stacked with the index levels ``dataset`` and
        ``verdict`` in front.
    """
    tables = {
        (name, verdict): certify_panel(panel, verdict=verdict, **kwargs)
        for name, panel in panels.items()
        for verdict in verdicts
    }
    summary = pd.concat(
        {key: summarize_certified(t) for key, t in tables.items()}, names=["dataset", "verdict"]
    )
    return tables, summary
