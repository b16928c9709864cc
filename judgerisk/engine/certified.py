"""Certified panel decisions: SCOPE calibration on a panel risk score (Methods reference §8).

No paper does this: the panel's own risk score (SCUR, or the predictive entropy PE for comparison)
replaces the single-judge BPE as the uncertainty score of SCOPE, so a *panel* verdict is accepted
only under a threshold whose mean false discovery proportion over calibration draws is certified
:math:`\\le \\alpha`.

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
scores every item the same way: ``n_seeds`` repetitions of 5-fold cross-fitting (Methods
reference §3) each evaluate every item exactly once — as an evaluation item, against ECDFs frozen
on another fold — and an item's score is the mean of its ``n_seeds`` evaluation scores. The folds
are drawn independently of which items are labelled, so permuting the items permutes the scores in
distribution, and a random labelled subset is exchangeable with the rest. Reference scores are
left out: reference items sit inside their own normalisation (:math:`z \\ge 1/n_{ref}` for them,
not for evaluation items), so mixing them in would mix two score distributions. (The paper's
protocol, ``protocol="paper"``, averages an item's reference and evaluation scores over the
random splits that did not fit on it, as before.)

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

import functools
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from judgerisk._splits import PROTOCOLS, cross_fit_splits
from judgerisk._util.registry import NameView
from judgerisk._util.warning_records import replay_warnings
from judgerisk.aggregators._base import BaseAggregator, aggregator_name, reported_aggregators
from judgerisk.aggregators.aggregate import aggregate
from judgerisk.engine._parallel import check_n_jobs, score_splits
from judgerisk.engine.describe import judge_accuracy
from judgerisk.options import DEFAULT_SPLITS, ScoreSettings, SelectSettings, check_count
from judgerisk.panel import (
    ORIGINAL,
    PanelError,
    gold_labels,
    validate_panel,
    validate_scores,
)
from judgerisk.panel._contract import scorable_original_rows, warn_where_thin
from judgerisk.risk import registry as risk_registry
from judgerisk.risk.baselines import BASELINES, baseline_scores
from judgerisk.risk.registry import CERTIFIED, COMPONENTS
from judgerisk.selective.confidence import bpe
from judgerisk.selective.protocol import (
    ALPHAS,
    split_protocol,
    summarize_protocol,
    within_guarantee,
)
from judgerisk.selective.registry import SELECTORS, get_selector
from judgerisk.selective.scope import Scope
from judgerisk.validation import (
    check_accelerate,
    check_alpha,
    error_labels,
    to_labels,
)

__all__ = [
    "SCORE_COLUMNS",
    "RISK_SCORES",
    "score_panel",
    "combine_repetitions",
    "accelerate_options",
    "score_with",
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

#: SCUR columns averaged over the seeds in :func:`score_panel`, for a panel of the paper's
#: perturbation families (order, rubric); a panel with another family (label, format,
#: verbosity, a plug-in) also has its ``S_<family>`` after ``S_rubric`` and its
#: ``z_S_<family>`` after ``z_S_rubric`` (:func:`judgerisk.families.reported_families`).
_PAPER_S = ("S_order", "S_rubric")
SCORE_COLUMNS: tuple[str, ...] = (
    "U",
    "C",
    *_PAPER_S,
    "S",
    "z_U",
    "z_C",
    *(f"z_{c}" for c in _PAPER_S),
    "z_S",
    "scur",
)


#: The defaults of :func:`score_panel` and :func:`select_items`, shared with the command line.
_SCORE = ScoreSettings()
_SELECT = SelectSettings()


def score_panel(
    panel: pd.DataFrame,
    n_seeds: int = _SCORE.n_seeds,
    seed: int = _SCORE.seed,
    aggregators: Sequence[str | BaseAggregator] | None = _SCORE.aggregators,
    baselines: Sequence[str] = BASELINES,
    scur_options: dict | None = None,
    progress: bool = False,
    *,
    protocol: str = _SCORE.protocol,
    n_folds: int = _SCORE.n_folds,
    check_input: bool = True,
    n_jobs: int | None = None,
) -> pd.DataFrame:
    """Cross-fitted, label-free risk scores and verdicts for every item of a panel.

    Parameters
    ----------
    panel : pandas.DataFrame
        A panel (``judgerisk.panel`` contract). ``gold``, if present, is never used; it is copied
        to the output for convenience.
    n_seeds : int, default :data:`judgerisk.options.DEFAULT_REPEATS`
        Repetitions R of the cross-fitting (seeds ``seed, seed + 1, ...``). Under ``"kfold"``
        each repetition partitions the items into ``n_folds`` folds and evaluates every fold
        once, so every item gets exactly R out-of-fold scores; under ``"paper"`` it is the
        number of independent random splits.
    seed : int, default 0
        First seed.
    aggregators : sequence of str, optional
        Default :data:`judgerisk.aggregators._base.REPORTED_AGGREGATORS` (majority vote,
        Dawid–Skene, then every aggregator registered beyond the built-ins). Aggregators (:func:`judgerisk.aggregators.aggregate.aggregate`) whose verdicts ("A"/"B") and
        posteriors are added as columns ``<name>`` and ``<name>_posterior``.
    baselines : sequence of str, default all of :data:`judgerisk.risk.baselines.BASELINES`
        PE, VE, MSP, DS entropy (Dawid–Skene fitted on all items, label-free).
    scur_options : dict, optional
        Keyword arguments of :func:`judgerisk.risk.scur.scur_scores` (``c_kind``, ``s_kind``, ...).
    progress : bool, default False
        Show a progress bar over the splits.
    protocol : {"kfold", "paper"}, default :data:`judgerisk.options.DEFAULT_PROTOCOL`
        Repeated K-fold cross-fitting (:func:`judgerisk._splits.cross_fit_splits`), or the
        paper's protocol: independent random fit / reference / evaluation splits, where an
        item is scored (as a reference or evaluation item) in the splits that did not fit on
        it, and may be scored in none (NaN, with a warning).
    n_folds : int, default :data:`judgerisk.options.DEFAULT_FOLDS`
        K of ``"kfold"`` (60 / 20 / 20 fit / reference / evaluation at K = 5).
    check_input : bool, default True
        Validate ``panel`` (:func:`judgerisk.panel.validate_panel`). ``False`` only for a panel
        that :func:`judgerisk.panel.load_panel` or :func:`~judgerisk.panel.validate_panel`
        returned (``judgerisk score`` validates where the file is read, once); the scorability
        check and its warnings run either way.
    n_jobs : int, optional
        Processes that score the cross-fitting splits: this one and forked copies of it
        (Linux; elsewhere, or while another thread runs, one). ``None``: one per usable core
        for a panel of at most 1,000,000 cells (a forked copy's resident memory counts the
        panel's pages again), one above; ``-1``: one per usable core;
        ``k``: up to ``k``. Every split's numbers depend only on the panel, the split and its
        seed, so the table and the warnings are the same for every ``n_jobs``.

    Returns
    -------
    pandas.DataFrame
        Indexed by item (sorted): ``n_scored`` (out-of-fold scores averaged), the columns of
        :data:`SCORE_COLUMNS` (means over those scores), ``scur_sd`` (their spread), the
        baselines, the aggregator columns, and ``gold`` when the panel has it (NaN for
        unlabelled items). ``attrs["seeds"]`` lists the repetitions' seeds, ``attrs["protocol"]``
        the protocol.

    Raises
    ------
    PanelError
        For a panel that breaks the contract (unknown condition names included), fewer than
        two judges (:func:`judgerisk.panel.check_scorable`).
    OptionError
        For ``n_seeds`` / ``seed`` / ``n_folds`` that are not integers of the right range
        (:func:`judgerisk.options.check_count`, the check of :class:`ScoreSettings` and the
        command line).

    Notes
    -----
    Under ``"kfold"``,
    :math:`\\mathrm{SCUR}_i = R^{-1} \\sum_{r=1}^{R} \\mathrm{SCUR}^{(r, k_r(i))}_i`, with
    :math:`k_r(i)` the fold of item *i* in repetition *r* and :math:`\\mathrm{SCUR}^{(r,k)}`
    from :func:`judgerisk.risk.scur.scur_scores` on the split that evaluates fold *k*: only
    evaluation scores enter, and every item has R of them, so labelled and unlabelled items
    are treated identically (see the module docstring).
    """
    for name, value in (("n_seeds", n_seeds), ("seed", seed), ("n_folds", n_folds)):
        check_count(name, value)
    check_n_jobs(n_jobs)
    if protocol not in PROTOCOLS:
        raise PanelError(f"protocol must be one of {PROTOCOLS}, got {protocol!r}")
    if check_input:
        panel = validate_panel(panel)
    # valid (validated above) and never re-validated: the steps below take check_input=False;
    # the condition (and, for SCUR, the judge) compared and factorized by integer codes
    unlabelled = _coded(panel.drop(columns=[c for c in ("gold",) if c in panel.columns]))
    # check_scorable: its refusals now, its warnings' checks (0.15 s of a 600,000-row panel)
    # once the splits are being scored in the other processes
    thin = functools.partial(warn_where_thin, unlabelled, scorable_original_rows(unlabelled))
    items = pd.Index(pd.unique(unlabelled["item"]), name="item").sort_values()
    splits = cross_fit_splits(items, n_seeds, seed, protocol, n_folds)
    keep = "evaluation" if protocol == "kfold" else None
    cells = _coded(unlabelled[["item", "judge", "condition", "logit", "p"]], ("judge",))
    label_free = functools.partial(
        _label_free_columns, unlabelled, items, tuple(baselines), aggregators, seed
    )
    tables, extra, later = score_splits(
        cells, splits, keep, scur_options or {}, label_free, n_jobs, progress, checks=thin
    )
    out = combine_repetitions(tables, items)
    missing = int((out["n_scored"] == 0).sum())
    if missing:
        warnings.warn(
            f"{missing} item(s) were in the fit split of all {n_seeds} random splits of the "
            "paper's protocol and have no SCUR (raise n_seeds, or use protocol='kfold')",
            UserWarning,
            stacklevel=2,
        )
    replay_warnings(later)
    out = out.join(extra)
    if "gold" in panel.columns:
        out["gold"] = panel.drop_duplicates("item").set_index("item")["gold"].reindex(items)
    out.attrs["seeds"] = list(range(seed, seed + n_seeds))
    out.attrs["protocol"] = protocol
    return out


def _label_free_columns(
    unlabelled: pd.DataFrame,
    items: pd.Index,
    baselines: tuple[str, ...],
    aggregators: Sequence[str | BaseAggregator] | None,
    seed: int,
) -> pd.DataFrame:
    """The columns of :func:`score_panel` that need no split, indexed by ``items``: the
    baselines, then each aggregator's verdict and posterior."""
    out = pd.DataFrame(index=items)
    if baselines:
        out = out.join(
            baseline_scores(
                unlabelled, fit_items=items, items=items, methods=baselines, check_input=False
            )
        )
    for method in reported_aggregators(aggregators):
        name = aggregator_name(method)
        agg = aggregate(unlabelled, method, random_state=seed, check_input=False).set_index("item")
        out[name] = agg["verdict"].reindex(items)
        out[f"{name}_posterior"] = agg["posterior"].reindex(items)
    return out


def _coded(panel: pd.DataFrame, columns: Sequence[str] = ("condition",)) -> pd.DataFrame:
    """``panel`` with ``columns`` as pandas categoricals (categories: the values present).

    The same values and rows; a comparison (``panel["condition"] == "original"``), a split
    and a factorization then run on integer codes instead of Python strings (28 such passes
    over a 600,000-row panel took 0.7 s). The judge stays text where a table is pivoted by
    it (the aggregators' and baselines' item x judge tables).
    """
    return panel.assign(**{c: pd.Categorical(panel[c]) for c in columns})


def combine_repetitions(tables: Sequence[pd.DataFrame], items: pd.Index) -> pd.DataFrame:
    """The per-item SCUR columns of :func:`score_panel` from the splits' scored tables.

    Parameters
    ----------
    tables : sequence of pandas.DataFrame
        The kept rows of each split's :class:`~judgerisk.risk.signals.ScurResult` table, in
        split order (columns ``item, split, U, C, ..., scur``).
    items : pandas.Index
        The items of the output, in order.

    Returns
    -------
    pandas.DataFrame
        Indexed by ``items``: ``n_scored`` (the rows of the item), the mean of every signal,
        z and ``scur`` over them, and ``scur_sd`` (their population standard deviation,
        :math:`\\sqrt{R^{-1}\\sum_r (s_r - \\bar s)^2}`, Methods reference §3).
    """
    long = pd.concat(tables, ignore_index=True)
    grouped = long.groupby("item")
    out = pd.DataFrame(index=items)
    out["n_scored"] = grouped.size().reindex(items).fillna(0).astype(np.int64)
    means = grouped[[c for c in long.columns if c not in ("item", "split")]].mean()
    out = out.join(means)
    out["scur_sd"] = grouped["scur"].std(ddof=0).reindex(items)
    return out


def score_selectors() -> list[str]:
    """The registered selectors that read an uncertainty score or none (built in: vanilla,
    naive, SCOPE), compared on every risk score by :func:`certify_panel`."""
    return [m for m in SELECTORS if get_selector(m).needs in (None, "uncertainty")]


def accelerate_options(accelerate: str | None = _SCORE.accelerate) -> dict[str, Any]:
    """``scur_options`` for the command line's ``--accelerate`` (one of
    :data:`judgerisk.validation.ACCELERATIONS`)."""
    return {"lmm_params": {"accelerate": check_accelerate(accelerate)}}


def score_with(
    panel: pd.DataFrame,
    settings: ScoreSettings = _SCORE,
    progress: bool = False,
    check_input: bool = True,
) -> pd.DataFrame:
    """:func:`score_panel` with a :class:`~judgerisk.options.ScoreSettings`, on one BLAS thread.

    The one scoring path of ``judgerisk score``, ``judgerisk report`` (its embedded score
    table) and ``judgerisk verify``: the same panel and settings give the same table, and the
    numbers do not depend on the machine's BLAS thread count
    (:func:`judgerisk._util.determinism.one_blas_thread`).

    Parameters
    ----------
    panel : pandas.DataFrame
        A panel (``judgerisk.panel`` contract).
    settings : ScoreSettings, default ``ScoreSettings()``
        Repetitions, first seed, aggregators, protocol, folds and the LMM's solver; a
        :class:`~judgerisk.options.ReportSettings` (which extends it) is read the same way.
    progress : bool, default False
        Show a progress bar over the splits.
    check_input : bool, default True
        :func:`score_panel`'s: ``False`` for a panel already validated where it was read.

    Returns
    -------
    pandas.DataFrame
        :func:`score_panel`'s table.
    """
    from judgerisk._util.determinism import one_blas_thread

    with one_blas_thread():
        return score_panel(
            panel,
            n_seeds=settings.n_seeds,
            seed=settings.seed,
            aggregators=settings.aggregators,
            scur_options=accelerate_options(settings.accelerate),
            progress=progress,
            protocol=settings.protocol,
            n_folds=settings.n_folds,
            check_input=check_input,
        )


def panel_errors(verdict: npt.ArrayLike, gold: npt.ArrayLike) -> pd.Series:
    """Error labels of verdicts against gold: :func:`judgerisk.validation.error_labels`."""
    return error_labels(verdict, gold)


def select_items(
    scores: pd.DataFrame,
    calibration: pd.DataFrame,
    alpha: float = _SELECT.alpha,
    score: str = _SELECT.score,
    verdict: str = _SELECT.verdict,
    allow_any_score: bool = _SELECT.allow_any_score,
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

    Raises
    ------
    PanelError
        On bad input, and for ``verdict="gold"`` (the labels certified against themselves).

    Warns
    -----
    UserWarning
        When the calibration is empty or no threshold is feasible (every test item abstained),
        or when every item is a calibration item (no test item is left to decide).

    Notes
    -----
    :math:`\\hat\\lambda = \\sup\\{\\lambda : \\sum_{cal} 1[s_i \\le \\lambda](E_i - \\alpha) \\le -1\\}`
    (:class:`judgerisk.selective.scope.Scope`); a test item is accepted iff :math:`s \\le \\hat\\lambda`.
    Accepted test verdicts then have expected FDR :math:`\\le \\alpha`. An item without a score
    (NaN) is never accepted; a calibration item without a score is an error (exit code 2 in the
    CLI). When no threshold is feasible every test item is abstained on.
    """
    alpha = check_alpha(alpha)
    if verdict == "gold":
        raise PanelError(
            "verdict 'gold' would certify the labels against themselves (every calibration "
            "error would be 0); choose a judge or aggregator verdict column, e.g. 'majority'"
        )
    sc = validate_scores(scores, columns=(score,), labels=(verdict,))
    cal = validate_scores(calibration, labels=("gold",), name="calibration")
    if score not in RISK_SCORES and not allow_any_score:
        raise PanelError(
            f"score column {score!r} is not a risk score (larger = riskier); choose among "
            f"{[c for c in RISK_SCORES if c in sc.columns]}, or pass allow_any_score "
            "(--allow-any-score) if it is one"
        )
    sc.index, cal.index = _common_item_type(sc.index, cal.index)
    unknown = cal.index.difference(sc.index)
    if len(unknown):
        raise PanelError(
            f"{len(unknown)} calibration item(s) are not in the scores: {list(unknown[:10])}"
        )
    s = pd.to_numeric(sc[score], errors="coerce")
    v = sc[verdict].astype(object)
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
    if is_cal.all():
        warnings.warn(
            f"all {len(sc)} item(s) of the scores are in the calibration file: no test items "
            "are left to decide (label only a sample, e.g. judgerisk simulate --n-labelled)",
            UserWarning,
            stacklevel=2,
        )
    elif not sel.feasible_:
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
    # the judge's own rows only (a crowd's item x judge tables would be mostly empty)
    rows = panel.loc[panel["judge"] == judge]
    fwd, rev = (
        rows.loc[rows["condition"] == c].set_index("item")["logit"] for c in (ORIGINAL, "swap")
    )
    if fwd.empty or rev.empty:
        raise PanelError(f"judge {judge!r} lacks the 'original' or 'swap' condition")
    both = pd.concat([fwd.rename("fwd"), rev.rename("rev")], axis=1).dropna().sort_index()
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
    n_splits: int = DEFAULT_SPLITS,
    cal_frac: float = 0.5,
    split_seed: int = 0,
    n_seeds: int = _SCORE.n_seeds,
    seed: int = 0,
    verdict: str = "majority",
    panel_scores: Sequence[str] = CERTIFIED,
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
    n_splits : int, default :data:`judgerisk.options.DEFAULT_SPLITS`
        Random calibration / test splits (:func:`judgerisk.selective.protocol.split_masks`); every score
        uses the same splits.
    cal_frac : float, default 0.5
    split_seed : int, default 0
        Seed of the splits.
    n_seeds, seed, scur_options
        Passed to :func:`score_panel` (ignored when ``scores`` is given); ``n_seeds``'s
        default is :func:`score_panel`'s (:data:`judgerisk.options.DEFAULT_REPEATS`).
    verdict : str, default "majority"
        Aggregator whose verdict is certified.
    panel_scores : sequence of str, default :data:`judgerisk.risk.registry.CERTIFIED`
        Panel risk scores used as SCOPE's uncertainty: SCUR, PE, then every score registered
        beyond the built-ins (those missing from a given ``scores`` table are skipped when
        left at the default).
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
    panel = validate_panel(panel)
    if "gold" not in panel.columns:
        raise PanelError("certify_panel needs a panel with a 'gold' column")
    if panel_scores is CERTIFIED and scores is not None:  # the default: the scores present
        panel_scores = [c for c in CERTIFIED if c in scores.columns]
    panel_scores = list(panel_scores)
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
            methods=score_selectors(),
            **kw,
        )
        registered = col in risk_registry.RISK_SCORES
        name = risk_registry.get_risk_score(col).label if registered else col
        frames.append(tab.assign(score=f"{name} (panel)"))
    if single is not None:
        tab = split_protocol(
            single.loc[items, "bpe"].to_numpy(),
            single.loc[items, "verdict"].to_numpy(),
            g,
            methods=score_selectors(),
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
