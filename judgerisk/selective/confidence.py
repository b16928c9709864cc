"""Single-judge uncertainty: Bidirectional Preference Entropy (BPE) and its baselines.

Every function returns a :class:`Signal` ``(score, pred, confidence)``:

* ``score`` — an *uncertainty* score in nats (larger = less sure), the input of SCOPE and the
  naive selector;
* ``pred`` — the verdict, ``int8`` with 1 = answer A wins, 0 = answer B wins;
* ``confidence`` — confidence in that verdict, in [0, 1], the input of ECE / AUROC / AUPRC, the
  heuristic selector and Trust-or-Escalate.

Logits are canonical (Methods reference §1): ``logit_fwd`` = log P(A) − log P(B) with the answers in
their original order; ``logit_rev`` = the same quantity for the *original* answer A when the
judge saw the answers swapped.

References
----------
Methods reference §7; "SCOPE: Selective Conformal Optimized Pairwise LLM Judging" (§2.2, Appendix B.1);
Zheng et al. (2023), "Judging LLM-as-a-judge with MT-Bench and Chatbot Arena" (swap-and-aggregate);
Tian et al. (2023) (verbalized confidence); Wang et al. (2023) (self-consistency).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt
import pandas as pd

from judgerisk.selective.metrics import uncertainty_metrics
from judgerisk.validation import as_binary, as_float

__all__ = [
    "Signal",
    "bpe",
    "predictive_probability",
    "swap_and_aggregate",
    "verbalized_confidence",
    "self_consistency",
    "compare_uncertainty",
]

_LN2 = np.log(2.0)


class Signal(NamedTuple):
    """An uncertainty signal for one judge: ``score`` (nats), ``pred`` (1 = A), ``confidence``."""

    score: np.ndarray
    pred: np.ndarray
    confidence: np.ndarray


def _log_mean_sigmoid(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    # log((σ(a) + σ(b)) / 2) = m + log1p(expm1(d) / 2), m = max(log σ), d = min − max <= 0;
    # accurate for large |a|, |b| (no "ln 2 + tiny − ln 2" cancellation)
    la, lb = -np.logaddexp(0.0, -a), -np.logaddexp(0.0, -b)
    m = np.maximum(la, lb)
    return m + np.log1p(np.expm1(np.minimum(la, lb) - m) / 2.0)


def _logits(x, name: str) -> np.ndarray:
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    bad = np.isnan(arr)
    if bad.any():
        rows = np.flatnonzero(bad)[:10].tolist()
        raise ValueError(f"{name} has NaN at rows {rows} ({int(bad.sum())} in all)")
    return arr


def _core(logit_fwd, logit_rev) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    a = _logits(logit_fwd, "logit_fwd")
    b = a if logit_rev is None else _logits(logit_rev, "logit_rev")
    if a.shape != b.shape:
        raise ValueError(f"logit_fwd has {a.size} entries but logit_rev has {b.size}")
    log_p = _log_mean_sigmoid(a, b)
    log_q = _log_mean_sigmoid(-a, -b)
    return -(np.exp(log_p) * log_p + np.exp(log_q) * log_q), log_p, log_q


def bpe(logit_fwd: npt.ArrayLike, logit_rev: npt.ArrayLike) -> Signal:
    """Bidirectional Preference Entropy.

    Parameters
    ----------
    logit_fwd : array-like of float
        Canonical logit of answer A with the answers in the original order.
    logit_rev : array-like of float
        Canonical logit of the original answer A when the judge saw them swapped.

    Returns
    -------
    Signal
        ``score`` = :math:`s(x)` in nats (float64), ``pred`` = 1 iff :math:`\\bar p \\ge 0.5`,
        ``confidence`` = :math:`\\max(\\bar p, 1 - \\bar p)`.

    Notes
    -----
    .. math::
        p_{fwd} = \\sigma(m_{fwd}),\\quad p_{rev} = \\sigma(m_{rev}),\\quad
        \\bar p = \\tfrac12 (p_{fwd} + p_{rev}),

        s(x) = -[\\bar p \\ln \\bar p + (1 - \\bar p) \\ln (1 - \\bar p)].

    Renaming the answers (A ↔ B) maps ``(logit_fwd, logit_rev)`` to ``(-logit_rev, -logit_fwd)``;
    the score is unchanged and the verdict flips (except at :math:`\\bar p = 0.5` exactly).

    References
    ----------
    SCOPE paper, §2.2 and Appendix B.1 (Eq. for BPE); Methods reference §7.
    """
    score, log_p, log_q = _core(logit_fwd, logit_rev)
    pred = (log_p >= log_q).astype(np.int8)
    return Signal(score, pred, np.exp(np.maximum(log_p, log_q)))


def predictive_probability(logit: npt.ArrayLike) -> Signal:
    """Predictive probability: one forward pass, confidence :math:`\\max(p, 1 - p)`.

    Parameters
    ----------
    logit : array-like of float
        Canonical logit of the single pass (usually ``logit_fwd``).

    Returns
    -------
    Signal
        ``pred`` = 1 iff :math:`p \\ge 0.5` (the same rule as BPE, so BPE with two equal passes
        equals this baseline), ``score`` = binary entropy of :math:`p` (nats).
    """
    return bpe(logit, logit)


def swap_and_aggregate(logit_fwd: npt.ArrayLike, logit_rev: npt.ArrayLike) -> Signal:
    """Swap-and-aggregate: BPE's verdict with a vote-agreement confidence.

    Returns
    -------
    Signal
        ``pred`` as in :func:`bpe`; ``confidence`` = 1 when the two orders' verdicts
        (:math:`1[p \\ge 0.5]` each) agree and 0.5 otherwise; ``score`` = entropy of the vote
        share, 0 when they agree and :math:`\\ln 2` otherwise.

    References
    ----------
    Zheng et al. (2023); SCOPE paper §3 (baselines); Methods reference §7.
    """
    sig = bpe(logit_fwd, logit_rev)
    agree = (np.asarray(logit_fwd, float) >= 0) == (np.asarray(logit_rev, float) >= 0)
    return Signal(np.where(agree, 0.0, _LN2), sig.pred, np.where(agree, 1.0, 0.5))


def verbalized_confidence(pred: npt.ArrayLike, confidence: npt.ArrayLike) -> Signal:
    """Verbalized confidence: the judge's own numeric confidence in its greedy verdict.

    Parameters
    ----------
    pred : array-like
        The greedy verdicts (``"A"``/``"B"`` or 1/0).
    confidence : array-like of float in [0, 1]
        The parsed self-reported confidence ("0.0 = total guess, 1.0 = absolute certainty").

    Returns
    -------
    Signal
        ``score`` = 1 − confidence (a monotone uncertainty; not in nats).
    """
    p = as_binary(pred, "pred")
    c = as_float(confidence, "confidence", 0.0, 1.0)
    if c.shape != p.shape:
        raise ValueError(f"pred has {p.size} entries but confidence has {c.size}")
    return Signal(1.0 - c, p, c)


def self_consistency(votes: Any) -> Signal:
    """Self-consistency: majority vote of k sampled verdicts (e.g. k = 5 at T = 0.7).

    Parameters
    ----------
    votes : array-like of shape (n_items, k) or DataFrame
        Sampled verdicts per item, ``"A"``/``"B"`` or 1/0.

    Returns
    -------
    Signal
        ``pred`` = 1 iff the share of A votes is >= 0.5; ``confidence`` = majority share;
        ``score`` = entropy (nats) of the vote share.
    """
    raw = votes.to_numpy() if isinstance(votes, pd.DataFrame) else np.asarray(votes)
    if raw.ndim != 2 or raw.shape[1] < 1:
        raise ValueError(f"votes must be a 2-d (items x samples) array, got shape {raw.shape}")
    v = as_binary(raw.ravel(), "votes").reshape(raw.shape)
    share = v.mean(axis=1)
    conf = np.maximum(share, 1.0 - share)
    with np.errstate(divide="ignore", invalid="ignore"):
        ent = -(
            np.where(share > 0, share * np.log(share), 0.0)
            + np.where(share < 1, (1 - share) * np.log1p(-share), 0.0)
        )
    return Signal(ent, (share >= 0.5).astype(np.int8), conf)


def compare_uncertainty(
    logit_fwd: npt.ArrayLike,
    logit_rev: npt.ArrayLike,
    gold: npt.ArrayLike,
    n_bins: int = 10,
    randomize_order: bool = False,
    seed: int = 0,
    extra: dict[str, Signal] | None = None,
) -> pd.DataFrame:
    """A Table-1-like comparison of predictive probability, swap-and-aggregate and BPE.

    Parameters
    ----------
    logit_fwd, logit_rev : array-like of float
        Canonical logits of the two orders.
    gold : array-like
        Gold labels (``"A"``/``"B"`` or 1/0).
    n_bins : int, default 10
        ECE bins.
    randomize_order : bool, default False
        Predictive probability uses ``logit_fwd``; with True each item's single pass is drawn at
        random from the two orders (the SCOPE paper randomises the order to avoid an aggregate
        position bias).
    seed : int, default 0
        Seed for ``randomize_order``.
    extra : dict of name -> Signal, optional
        Further signals (e.g. verbalized confidence, self-consistency) to add as rows.

    Returns
    -------
    pandas.DataFrame
        Indexed by method: ``accuracy, ece, auroc, auprc``.
    """
    a = _logits(logit_fwd, "logit_fwd")
    b = _logits(logit_rev, "logit_rev")
    single = a
    if randomize_order:
        single = np.where(np.random.default_rng(seed).random(a.size) < 0.5, a, b)
    signals = {
        "predictive_probability": predictive_probability(single),
        "swap_and_aggregate": swap_and_aggregate(a, b),
        "bpe": bpe(a, b),
    }
    signals.update(extra or {})
    rows = {k: uncertainty_metrics(s.pred, gold, s.confidence, n_bins) for k, s in signals.items()}
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("method")
