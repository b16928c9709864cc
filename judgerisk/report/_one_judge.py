r"""What the one-judge report says: BPE per item and SCOPE's certified verdicts.

A panel of one judge in both answer orders (``original`` and ``swap``) has no consensus or
conflict to measure; its report (``judgerisk/report/templates/one_judge_report.md``, rendered by
:mod:`judgerisk.report.build`) follows the SCOPE paper instead. For an item with canonical logits
:math:`\ell_{\mathrm{fwd}}` (original order) and :math:`\ell_{\mathrm{rev}}` (swapped order,
mapped back to the original orientation),

.. math::

    \bar p = \tfrac12\left[\sigma(\ell_{\mathrm{fwd}}) + \sigma(\ell_{\mathrm{rev}})\right],
    \qquad
    \mathrm{BPE} = -\bar p \ln \bar p - (1-\bar p)\ln(1-\bar p),

the bidirectional verdict is A when :math:`\bar p > 1/2`, B when :math:`\bar p < 1/2` and a tie
at :math:`\bar p = 1/2` (counted as an error against a gold label: it picks neither answer).
SCOPE calibrates a threshold :math:`\hat\lambda` on labelled items and accepts a verdict iff its
BPE is at most :math:`\hat\lambda`; on exchangeable items the mean false discovery proportion
over calibration draws (the share of wrong verdicts among the accepted ones) is at most α ("SCOPE: Selective Conformal Optimized Pairwise
Evaluation", §2.2–2.3; the book's chapters on BPE and on SCOPE's validity).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__ = [
    "order_consistency",
    "one_judge_overview",
    "one_judge_errors",
    "one_judge_riskiest",
    "one_judge_certify",
    "one_judge_validity",
    "validity_table",
]


def one_judge_errors(table: pd.DataFrame) -> pd.Series:
    """Error of the bidirectional verdict on the labelled items with a BPE (a tie is an error).

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`judgerisk.report.build.report_table` of a one-judge panel (by item: ``bpe``,
        ``verdict``, ``gold``).

    Returns
    -------
    pandas.Series of bool
        By item, for the items with gold and a BPE only.
    """
    if "gold" not in table.columns:
        return pd.Series(dtype=bool)
    sub = table[table["gold"].notna() & table["bpe"].notna()]
    return (sub["verdict"] != sub["gold"]).rename("error")


def order_consistency(table: pd.DataFrame) -> float:
    r"""Share of the items seen in both orders whose verdict survives the swap, ties as everywhere.

    :math:`1 - \frac1N\sum_i |v_{\mathrm{fwd},i} - v_{\mathrm{rev},i}|` with the contract's
    verdicts :math:`v \in \{1, \tfrac12, 0\}` (A, tie, B): one minus the flip rate of
    :func:`judgerisk.engine.describe.flip_rates`, so a tie in both orders counts as the same verdict
    and a tie against A or B as half of one (SCOPE paper §2.2: position bias). NaN without items.
    """
    from judgerisk.engine.describe import flip_rates
    from judgerisk.panel import validate_panel

    both = table[table["bpe"].notna()]
    if both.empty:
        return float("nan")
    items = both["item"] if "item" in both.columns else both.index.to_series()
    pairs = pd.concat(
        [
            pd.DataFrame(
                {
                    "item": items.to_numpy(),
                    "judge": both["judge"].to_numpy(),
                    "logit": both[col].to_numpy(),
                }
            ).assign(condition=cond)
            for col, cond in (("logit_fwd", "original"), ("logit_rev", "swap"))
        ],
        ignore_index=True,
    )
    rates = flip_rates(validate_panel(pairs, conditions=None))
    return 1.0 - float(rates["flip_rate"].iloc[0])  # one judge, one pair: swap vs original


def one_judge_overview(table: pd.DataFrame) -> pd.Series:
    """The report's first table: what the judge saw and how it behaved, in words and counts.

    Order consistency is :func:`order_consistency` (a tie in both orders is the same verdict).
    """
    both = table[table["bpe"].notna()]
    consistency = order_consistency(table)
    rows: dict[str, str] = {
        "judge": str(table["judge"].iloc[0]),
        "items": f"{len(table)}",
        "items in both orders": f"{len(both)}",
        "same verdict in both orders (a tie counts as a verdict)": f"{consistency:.1%}"
        if len(both)
        else "–",
        "tie verdicts (p̄ = 1/2)": f"{int((both['verdict'] == 'tie').sum())}",
    }
    errors = one_judge_errors(table)
    if "gold" in table.columns:
        rows["items with gold"] = f"{int(table['gold'].notna().sum())}"
        if len(errors):
            rows["accuracy of the verdict (gold items)"] = f"{1 - errors.mean():.3f}"
    return pd.Series(rows, name="value")


def one_judge_riskiest(table: pd.DataFrame, n: int = 10) -> pd.DataFrame:
    r"""The ``n`` items of largest BPE, with both logits, :math:`\bar p`, verdict and gold."""
    cols = {
        "bpe": "BPE (nats)",
        "logit_fwd": "logit, original order",
        "logit_rev": "logit, swapped order",
        "p_bar": "p̄ (answer A)",
        "verdict": "verdict",
        "gold": "gold",
    }
    shown = table.dropna(subset=["bpe"]).sort_values("bpe", ascending=False, kind="stable")
    shown = shown[[c for c in cols if c in shown.columns]].head(n).round(3)
    if "gold" in shown.columns:
        shown["gold"] = shown["gold"].fillna("–")  # not labelled
    return shown.rename(columns=cols)


def one_judge_certify(panel: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """SCOPE on the panel's own gold: labelled items calibrate, the others are decided.

    Returns :func:`judgerisk.selective.one_judge.bpe_table` with a calibration (``role``, ``error``,
    ``threshold``, ``accepted``), one row per item seen in both orders, with ``alpha`` and
    ``feasible`` (a finite threshold), the columns
    :func:`judgerisk.report._content.certified_text` reads.
    """
    from judgerisk.selective.one_judge import bpe_table

    labelled = panel.dropna(subset=["gold"]).drop_duplicates("item")[["item", "gold"]]
    out = bpe_table(panel, labelled, alpha)
    return out.assign(alpha=alpha, feasible=np.isfinite(out["threshold"]))


def one_judge_validity(
    table: pd.DataFrame, alphas: Sequence[float], n_splits: int, seed: int
) -> pd.DataFrame:
    """SCOPE (and the uncalibrated naive rule) over repeated random halves of the gold items.

    Returns :func:`judgerisk.selective.protocol.summarize_protocol`'s table with ``valid``
    (:func:`~judgerisk.selective.protocol.within_guarantee`, SCOPE rows only). A tie verdict
    enters as the label that is not gold (an error).
    """
    from judgerisk.selective.protocol import split_protocol, summarize_protocol, within_guarantee

    errors = one_judge_errors(table)
    gold = table.loc[errors.index, "gold"].to_numpy()
    preds = np.where(errors, np.where(gold == "A", "B", "A"), gold)  # a tie: the wrong label
    runs = split_protocol(
        table.loc[errors.index, "bpe"].to_numpy(),
        preds,
        gold,
        alphas=alphas,
        methods=("scope", "naive"),
        n_splits=n_splits,
        seed=seed,
    )
    out = summarize_protocol(runs).reset_index()
    out["method"] = out["method"].astype(str)
    valid = within_guarantee(out["risk_mean"], out["alpha"], out["risk_se"])
    out["valid"] = pd.Series(valid).astype("boolean").where(out["method"].eq("scope"), pd.NA)
    return out.set_index(["method", "alpha"])


def validity_table(summary: pd.DataFrame) -> pd.DataFrame:
    """:func:`one_judge_validity` for people: readable headers, the guarantee in words.

    ``guarantee met`` is "yes" / "no" on SCOPE's rows and "none" on the naive rule's, which
    certifies nothing.
    """
    from judgerisk._plots.certified import CERTIFIED_HEADERS

    cols = ["coverage_mean", "risk_mean", "risk_se", "valid"]
    out = summary[cols].copy()
    out["valid"] = out["valid"].map({True: "yes", False: "no"}).fillna("none")
    out["risk_se"] = out["risk_se"].map(lambda v: f"{v:.4g}" if pd.notna(v) else "–")
    out = out.rename(columns={c: CERTIFIED_HEADERS[c] for c in cols})
    out.index = out.index.set_names(["method", "α"])
    return out
