"""Label-free baseline risk scores for a judge panel (Methods reference §5).

All four baselines read only the **original condition** and return one value per item
(higher = riskier); entropies are in bits (base 2), so PE, VE and DS entropy lie in [0, 1] and
MSP in [0, 0.5]. No gold label is read.

* PE (predictive entropy): :math:`H_2(\\bar p^{llm}_i)`,
  :math:`\\bar p^{llm}_i = J_i^{-1}\\sum_j p_{ij0}`.
* VE (vote entropy): :math:`H_2(J_i^{-1}\\sum_j y_{ij0})`.
* MSP (maximum softmax probability): :math:`J_i^{-1}\\sum_j [1 - \\max(p_{ij0}, 1 - p_{ij0})]`.
* DS entropy: :math:`H_2(\\hat\\rho_i)`, the posterior of a binary Dawid–Skene model fitted on
  the fit split's original verdicts and frozen for the other items
  (:class:`judgerisk.aggregators.dawid_skene.DawidSkene`).

Sums run over the :math:`J_i` judges that gave item i an original-condition response.

References
----------
- "Can We Trust This Evaluation? Instance-Level Reliability of LLM-as-a-Judge", Appendix B
  (PE, VE, DS entropy, MSP).
- A. P. Dawid and A. M. Skene (1979). Maximum likelihood estimation of observer error-rates
  using the EM algorithm. JRSS C 28(1), 20–28.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from judgerisk.aggregators.dawid_skene import DawidSkene
from judgerisk.panel import ORIGINAL, to_wide, validate_panel, verdicts, wide_table
from judgerisk.panel._cell_table import CellTable
from judgerisk.risk.registry import BASELINES, register_risk_score, risk_score_table
from judgerisk.risk.signals import binary_entropy

__all__ = [
    "BASELINES",
    "binary_entropy",
    "mean_probability",
    "mean_probability_table",
    "pe",
    "ve",
    "msp",
    "ds_entropy",
    "baseline_scores",
]

# ------------------------------------------------------------------ wide-matrix kernels (internal)
# Row means of the same multiset of probabilities can differ in the last bits depending on
# the judges' column order; rounding to 1e-12 makes equal multisets give equal scores, so
# that ties (e.g. smoothed 0/1 verdicts of real panels) stay ties when ranked.
_ROUND = 12


def mean_probability_table(probs: pd.DataFrame | CellTable) -> pd.Series:
    """Row means of an item x judge probability table, rounded to 1e-12 (name ``"p_bar"``)."""
    if isinstance(probs, CellTable):
        return pd.Series(probs.row_mean(), index=probs.index, name="p_bar").round(_ROUND)
    return probs.mean(axis=1, skipna=True).round(_ROUND).rename("p_bar")


@register_risk_score("pe", label="PE", color="#4c72b0", cells=True)
def _pe_score(probs: pd.DataFrame, votes: pd.DataFrame, fit: pd.Index | None, items: pd.Index):
    return _pe(probs.loc[items])


@register_risk_score("ve", cells=True, label="VE", color="#55a868")
def _ve_score(probs: pd.DataFrame, votes: pd.DataFrame, fit: pd.Index | None, items: pd.Index):
    return _ve(votes.loc[items])


@register_risk_score("msp", cells=True, label="MSP", color="#8172b2")
def _msp_score(probs: pd.DataFrame, votes: pd.DataFrame, fit: pd.Index | None, items: pd.Index):
    return _msp(probs.loc[items])


@register_risk_score("ds_entropy", needs_fit=True, label="DS entropy", color="#937860", cells=True)
def _ds_score(probs: pd.DataFrame, votes: pd.DataFrame, fit: pd.Index | None, items: pd.Index):
    assert fit is not None  # checked by risk_score_table (needs_fit)
    return _ds_entropy(votes, fit, items, DawidSkene())


def _pe(probs: pd.DataFrame) -> pd.Series:
    # rounded too: H(p) and H(1 - p) differ in the last bits, which would break the ties
    # between items whose panels agree equally strongly on A and on B
    pe = binary_entropy(mean_probability_table(probs)).round(_ROUND)
    return pd.Series(pe, index=probs.index, name="pe")


def _ve(votes: pd.DataFrame | CellTable) -> pd.Series:
    if isinstance(votes, CellTable):
        share = votes.row_sum() / votes.row_count()
    else:
        arr = votes.to_numpy(dtype=np.float64)
        # integer counts, so items with the same vote split get bit-identical entropies
        share = np.nansum(arr, axis=1) / np.sum(~np.isnan(arr), axis=1)
    return pd.Series(binary_entropy(share), index=votes.index, name="ve")


def _msp(probs: pd.DataFrame | CellTable) -> pd.Series:
    if isinstance(probs, CellTable):
        unc = probs.row_mean(1.0 - np.maximum(probs.values, 1.0 - probs.values))
    else:
        arr = probs.to_numpy(dtype=np.float64)
        unc = np.nanmean(1.0 - np.maximum(arr, 1.0 - arr), axis=1)
    return pd.Series(unc.round(_ROUND), index=probs.index, name="msp")


def _ds_entropy(
    votes: pd.DataFrame, fit_items: pd.Index, items: pd.Index, model: DawidSkene
) -> pd.Series:
    model.fit(votes.loc[fit_items])
    target = votes.loc[items]
    if isinstance(target, CellTable):  # sparse products: equal vote vectors, equal values
        rho = model.posterior(target).to_numpy()
        return pd.Series(binary_entropy(rho), index=items, name="ds_entropy")
    # Score each distinct vote vector once: items with the same votes get bit-identical values.
    # Codes are twice the vote (0 B, 1 a tie, 2 A; -1 missing): a tie stays half a vote each.
    arr = target.to_numpy(dtype=np.float64)
    codes = np.where(np.isnan(arr), -1, np.rint(2 * np.nan_to_num(arr))).astype(int)
    uniq, inverse = np.unique(codes, axis=0, return_inverse=True)
    patterns = pd.DataFrame(np.where(uniq < 0, np.nan, uniq / 2), columns=votes.columns)
    rho = model.posterior(patterns).to_numpy()
    return pd.Series(binary_entropy(rho)[inverse.reshape(-1)], index=items, name="ds_entropy")


def _item_index(values: Iterable, known: pd.Index, what: str) -> pd.Index:
    idx = pd.Index(values if hasattr(values, "__len__") else list(values))
    if idx.has_duplicates:
        raise ValueError(f"{what} has duplicated items: {idx[idx.duplicated()][:10].tolist()}")
    missing = idx.difference(known)
    if len(missing):
        raise ValueError(f"{what} has items not in the panel: {missing[:10].tolist()}")
    return idx.rename(known.name)


# ------------------------------------------------------------------ public API
def mean_probability(panel: pd.DataFrame) -> pd.Series:
    """Panel-mean original-condition probability :math:`\\bar p^{llm}_i = J_i^{-1}\\sum_j p_{ij0}`.

    Parameters
    ----------
    panel : pandas.DataFrame
        A panel (see :func:`judgerisk.panel.validate_panel`).

    Returns
    -------
    pandas.Series
        By item (name ``"p_bar"``).
    """
    panel = validate_panel(panel, conditions=None)
    return mean_probability_table(to_wide(panel, "p", ORIGINAL))


def pe(panel: pd.DataFrame) -> pd.Series:
    """Predictive entropy of the panel-mean probability, in bits.

    Parameters
    ----------
    panel : pandas.DataFrame
        A panel; only original-condition rows are used.

    Returns
    -------
    pandas.Series
        :math:`PE_i = H_2(\\bar p^{llm}_i)` by item, in [0, 1] (name ``"pe"``).

    Notes
    -----
    Largest at :math:`\\bar p = .5`, which can come from uncertain judges or from confident judges
    who disagree.

    References
    ----------
    - Instance-Level Reliability of LLM-as-a-Judge, Appendix B, "PE".
    """
    panel = validate_panel(panel, conditions=None)
    return _pe(to_wide(panel, "p", ORIGINAL))


def ve(panel: pd.DataFrame) -> pd.Series:
    """Vote entropy of the original-condition verdicts, in bits.

    Parameters
    ----------
    panel : pandas.DataFrame
        A panel; only original-condition verdicts are used (``y`` = 1 for A, 0 for B, 1/2 for a
        tie: half a vote each, :func:`judgerisk.panel.verdicts`).

    Returns
    -------
    pandas.Series
        :math:`VE_i = H_2(J_i^{-1} \\sum_j y_{ij0})` by item, in [0, 1] (name ``"ve"``).

    Notes
    -----
    Zero for unanimous panels, whether right or wrong; constant among items with the same vote
    split. The share is computed from integer counts, so equal splits give bit-identical values.

    References
    ----------
    - Instance-Level Reliability of LLM-as-a-Judge, Appendix B, "VE".
    """
    panel = validate_panel(panel, conditions=None)
    return _ve(verdicts(panel, ORIGINAL))


def msp(panel: pd.DataFrame) -> pd.Series:
    """Mean over judges of one minus the maximum softmax probability (original condition).

    Parameters
    ----------
    panel : pandas.DataFrame
        A panel; only original-condition probabilities are used.

    Returns
    -------
    pandas.Series
        :math:`MSP_i = J_i^{-1} \\sum_j [1 - \\max(p_{ij0}, 1 - p_{ij0})]` by item, in [0, 0.5]
        (name ``"msp"``).

    Notes
    -----
    The maximum is taken per judge before averaging, so confident judges who disagree still give a
    low MSP.

    References
    ----------
    - Instance-Level Reliability of LLM-as-a-Judge, Appendix B, "MSP"; D. Hendrycks and
      K. Gimpel (2017), A baseline for detecting misclassified and out-of-distribution examples.
    """
    panel = validate_panel(panel, conditions=None)
    return _msp(to_wide(panel, "p", ORIGINAL))


def ds_entropy(
    panel: pd.DataFrame,
    fit_items: Iterable,
    items: Iterable | None = None,
    *,
    smoothing: float = 0.5,
    max_iter: int = 200,
    tol: float = 1e-7,
) -> pd.Series:
    """Entropy of a frozen binary Dawid–Skene posterior, in bits.

    Parameters
    ----------
    panel : pandas.DataFrame
        A panel; only original-condition verdicts are used.
    fit_items : iterable
        Items whose verdicts fit the model (the fit split; no gold label is read).
    items : iterable, optional
        Items to score with the parameters frozen; default every item not in ``fit_items``.
    smoothing, max_iter, tol
        Passed to :class:`judgerisk.aggregators.dawid_skene.DawidSkene` (Methods reference §5 defaults).

    Returns
    -------
    pandas.Series
        :math:`H_2(\\hat\\rho_i)` by item of ``items`` (name ``"ds_entropy"``), in [0, 1].

    Notes
    -----
    :math:`\\hat\\rho_i = P(z_i = A \\mid y_{i\\cdot 0})` under the fitted class prior and judge
    confusion matrices. It depends on the votes only, so items with the same vote vector get the
    same (bit-identical) value; the orientation of the classes does not change the entropy.

    References
    ----------
    - Instance-Level Reliability of LLM-as-a-Judge, Appendix B, "DS entropy".
    - Dawid and Skene (1979).
    """
    panel = validate_panel(panel, conditions=None)
    votes = verdicts(panel, ORIGINAL)
    fit_idx = _item_index(fit_items, votes.index, "fit_items")
    if len(fit_idx) == 0:
        raise ValueError("fit_items is empty: Dawid–Skene needs items to fit on")
    target = (
        votes.index.difference(fit_idx)
        if items is None
        else _item_index(items, votes.index, "items")
    )
    model = DawidSkene(smoothing=smoothing, max_iter=max_iter, tol=tol)
    return _ds_entropy(votes, fit_idx, target, model)


def baseline_scores(
    panel: pd.DataFrame,
    fit_items: Iterable | None = None,
    items: Iterable | None = None,
    methods: Sequence[str] = BASELINES,
    check_input: bool = True,
) -> pd.DataFrame:
    """All requested baselines as one item x method table.

    Parameters
    ----------
    panel : pandas.DataFrame
        A panel.
    fit_items : iterable, optional
        Fit split for ``ds_entropy`` (required when it is requested).
    items : iterable, optional
        Items to report; default every item not in ``fit_items`` (all items when ``fit_items`` is
        None).
    methods : sequence of str
        Subset of :data:`BASELINES`.
    check_input : bool, default True
        Validate the panel (:func:`judgerisk.panel.validate_panel`). ``False`` is for callers
        that pass a panel they validated where it entered (the engine's repetitions): the
        checks are skipped, so anything else gives undefined results.

    Returns
    -------
    pandas.DataFrame
        Index item, one column per method.
    """
    unknown = [m for m in methods if m not in BASELINES]
    if unknown:
        raise ValueError(f"unknown baseline(s) {unknown}; choose from {list(BASELINES)}")
    if check_input:
        panel = validate_panel(panel, conditions=None)
    # a crowd's tables are held by their cells (judgerisk.panel._cell_table): memory grows with its cells
    probs = wide_table(panel, "p", ORIGINAL)
    votes = wide_table(panel, "verdict", ORIGINAL)
    if isinstance(votes, pd.DataFrame):
        votes = votes.astype(np.float64)  # as judgerisk.panel.verdicts
    fit_idx = None if fit_items is None else _item_index(fit_items, votes.index, "fit_items")
    if items is not None:
        target = _item_index(items, votes.index, "items")
    elif fit_idx is not None:
        target = votes.index.difference(fit_idx)
    else:
        target = votes.index
    return risk_score_table(probs, votes, fit_idx, target, methods, panel=panel)
