"""SCUR: per-item risk signals U, C, S of a judge panel and their noisy-OR combination.

For a panel verdict on item *i* the three signals ask:

* **U** — is the panel's pooled (held-out) preference ambiguous?
* **C** — do the judges' responses disagree with what the panel structure predicts for them?
* **S** — do the responses move under a perturbation that should not matter (the answer
  order, the rubric's wording, the answer labels, the layout, a content-free padding: one
  component per perturbation family of :mod:`judgerisk.families`)?

Each raw signal is mapped through the empirical CDF of the *reference* items (frozen before
any evaluation item is scored), and the three z's are combined by a noisy-OR into SCUR.
No gold label is read anywhere in this module.

Public API (stable; other modules code against it)
--------------------------------------------------
``binary_entropy(p, base=2) -> ndarray``

``signal_u(predictions, conditions="original") -> Series "U" by item``
    ``predictions`` is :meth:`LatentMeasurementModel.predict_loo` output (panel rows plus
    ``q_loo, logit_hat, p_hat``); ``conditions`` is ``"original"`` or ``"all"``.
``signal_c(predictions, kind="xent", sigma=None) -> Series "C" by item``
    ``kind`` is ``"xent"`` or ``"residual"`` (then ``sigma`` = ``lmm.sigma_``, by judge).
``signal_s(panel_or_predictions, kind="prob", lmm=None) -> DataFrame by item [S_<family>]``
    One column per reported family (:func:`judgerisk.families.reported_families`: ``S_order``
    and ``S_rubric`` always, all-NaN when the family has no observed pair, then ``S_label``,
    ``S_format``, ``S_verbosity``, ... for each other family with a pair present);
    ``kind="debiased"`` needs the fitted ``lmm`` (``delta_``, ``kappa_``, ``sigma_``).
``combine_scur(z) -> Series "scur"``
    ``1 - prod max(1 - z, 1e-12)`` over the columns ``z_U, z_C, z_S`` present in ``z``.
``scur_scores(panel, seed, splits=ANALYSIS.fractions, c_kind="xent", s_kind="prob",
u_conditions="original", lmm=None, lmm_params=None, s_norm="ecdf", split=None,
check_input=True, s_families=None) -> ScurResult`` (``split``: a given fold of
:func:`judgerisk.splits.cross_fit_splits`)
``explain(result, item, panel=None) -> ItemExplanation`` (the paper's Table 2 for one item)
``riskiest(result, n=10, split="evaluation", threshold=0.9) -> DataFrame`` (Table-2-like list)

:class:`ScurResult` (frozen dataclass)
    ``table``
        DataFrame with a RangeIndex, one row per reference and evaluation item, sorted by
        item, columns ``item, split, U, C, S_order, S_rubric[, S_<family> ...], S, z_U, z_C,
        z_S_order, z_S_rubric[, z_S_<family> ...], z_S, scur`` (one ``S_`` column per
        reported family, :func:`judgerisk.families.reported_families`). ``S`` is the
        per-item maximum of the kept ``z_S_k`` (of the families in ``s_families``); ``z_S``
        its reference ECDF. A dropped component has NaN ``z``.
    ``split``
        Series by item over *all* items (fit items too): ``"fit"``, ``"reference"``,
        ``"evaluation"`` (from :func:`judgerisk.splits.split_items`).
    ``lmm``
        The :class:`~judgerisk.risk.lmm.LatentMeasurementModel` fitted on the fit items.
    ``predictions``
        ``lmm.predict_loo`` output for the reference and evaluation rows.
    ``kept``
        Tuple of kept components among ``U``, ``C`` and the ``S_<family>`` columns.
    ``dropped``
        Dict component -> reason (``"absent"`` or ``"constant on the reference split"``;
        ``"S"`` appears when the maximum of the kept S components is constant).
    ``combined``
        Tuple of the z columns (among ``z_U, z_C, z_S``) that entered SCUR.
    ``ecdfs``
        Dict component -> :class:`~judgerisk.risk.ecdf.FrozenECDF` (``"S"`` is the ECDF of the max).
    ``settings``
        Dict of the arguments (seed, splits, c_kind, s_kind, u_conditions, s_norm,
        s_families).
    ``scores(split=None)``
        The table indexed by item, optionally restricted to ``"reference"`` /
        ``"evaluation"``.

References
----------
Methods reference §3–4; "Can We Trust This Evaluation? Instance-Level Reliability of
LLM-as-a-Judge" (risk signals U, C, S; reference normalisation; Table 2).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
from scipy.special import entr

from judgerisk.families import FAMILIES, family_pairs, get_family, reported_families
from judgerisk.options import ANALYSIS
from judgerisk.panel import ORIGINAL, PanelError, validate_panel
from judgerisk.panel.cell_table import is_sparse
from judgerisk.risk.ecdf import FrozenECDF
from judgerisk.risk.registry import COMPONENTS as REGISTERED_COMPONENTS
from judgerisk.splits import SPLIT_NAMES, split_items

__all__ = [
    "COMPONENTS",
    "Z_FLOOR",
    "ScurResult",
    "ItemExplanation",
    "binary_entropy",
    "signal_u",
    "signal_c",
    "signal_s",
    "combine_scur",
    "scur_scores",
    "explain",
    "riskiest",
]

#: Every raw component a table can hold, in table order: U, C, then ``S_<family>`` for each
#: registered perturbation family (a table holds those of its reported families).
COMPONENTS: Sequence[str] = REGISTERED_COMPONENTS
#: Floor of each complement 1 - z in the noisy-OR (Methods reference §4).
Z_FLOOR = 1e-12
_Z_COLUMNS = ("z_U", "z_C", "z_S")
_SIGNAL_NAMES = {"z_U": "ambiguity U", "z_C": "conflict C", "z_S": "sensitivity S"}
_PRED_COLUMNS = ("item", "judge", "condition", "logit", "p", "logit_hat", "p_hat")


# --------------------------------------------------------------------------- helpers
def binary_entropy(p: npt.ArrayLike, base: float = 2.0) -> np.ndarray:
    """Binary entropy :math:`H(p) = -[p \\log p + (1-p) \\log(1-p)]`, with ``0 log 0 = 0``.

    Parameters
    ----------
    p : array-like of float in [0, 1]
    base : float, default 2
        Logarithm base (2: bits, range [0, 1]; ``numpy.e``: nats).

    Returns
    -------
    numpy.ndarray of float64
    """
    p = np.asarray(p, dtype=np.float64)
    return (entr(p) + entr(1.0 - p)) / np.log(base)


def _require(df: pd.DataFrame, columns: Sequence[str], what: str) -> None:
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"{what} must be a pandas DataFrame, got {type(df).__name__}")
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(f"{what} lacks column(s) {missing}; got columns {list(df.columns)}")


def _item_codes(items: pd.Series) -> tuple[np.ndarray, pd.Index]:
    codes, uniques = pd.factorize(items, sort=True)
    return codes, pd.Index(uniques, name="item")


def _item_mean(codes: np.ndarray, n: int, values: np.ndarray, mask=None) -> np.ndarray:
    """Mean of ``values`` per item code (over rows in ``mask``); NaN where an item has none."""
    if mask is not None:
        codes, values = codes[mask], values[mask]
    total = np.bincount(codes, weights=values, minlength=n)
    count = np.bincount(codes, minlength=n)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.maximum(count, 1), np.nan)


def _as_judge_series(values, judges: pd.Index, name: str) -> np.ndarray:
    """Per-row array of a by-judge parameter, raising when a judge is not covered."""
    s = values if isinstance(values, pd.Series) else pd.Series(values)
    missing = sorted(set(judges) - set(s.index.astype(str)))
    if missing:
        raise ValueError(f"{name} has no value for judge(s) {missing[:10]}")
    s = pd.Series(s.to_numpy(dtype=np.float64), index=s.index.astype(str))
    return s.reindex(judges).to_numpy()


# --------------------------------------------------------------------------- signals
def signal_u(predictions: pd.DataFrame, conditions: str = "original") -> pd.Series:
    """Ambiguity of the pooled held-out preference, :math:`U_i = H_2(\\bar p_i)`.

    Parameters
    ----------
    predictions : pandas.DataFrame
        :meth:`LatentMeasurementModel.predict_loo` output: one row per observed cell with
        ``item, judge, condition, p_hat`` (the leave-one-judge-out prediction).
    conditions : {"original", "all"}, default "original"
        Average :math:`\\hat p_{ijc}` over the original condition only (the default of the
        book's Methods reference **[R]**) or over every observed condition.

    Returns
    -------
    pandas.Series
        ``U`` by item (sorted), in bits (range [0, 1]); NaN for an item without a cell in
        the chosen conditions.

    Notes
    -----
    :math:`\\bar p_i = \\operatorname{mean}_j \\hat p_{ij0}` and
    :math:`U_i = -[\\bar p_i \\log_2 \\bar p_i + (1-\\bar p_i) \\log_2 (1-\\bar p_i)]`.
    The entropy base does not change the ranking nor the ECDF.

    References
    ----------
    Methods reference §4 (U).
    """
    _require(predictions, ("item", "condition", "p_hat"), "predictions")
    if conditions not in ("original", "all"):
        raise ValueError(f"conditions must be 'original' or 'all', got {conditions!r}")
    codes, items = _item_codes(predictions["item"])
    mask = None
    if conditions == "original":
        mask = (predictions["condition"] == ORIGINAL).to_numpy()
    pbar = _item_mean(codes, len(items), predictions["p_hat"].to_numpy(np.float64), mask)
    return pd.Series(binary_entropy(pbar), index=items, name="U")


def signal_c(
    predictions: pd.DataFrame, kind: str = "xent", sigma: npt.ArrayLike | None = None
) -> pd.Series:
    """Conflict of the judges' responses with the held-out panel structure, :math:`C_i`.

    Parameters
    ----------
    predictions : pandas.DataFrame
        :meth:`LatentMeasurementModel.predict_loo` output with ``item, judge, p, logit,
        logit_hat`` (``p``/``logit``: the judge's observed canonical response).
    kind : {"xent", "residual"}, default "xent"
        ``"xent"`` (Methods reference default **[R]**): mean cross-entropy of the observed
        probability against the prediction; ``"residual"``: mean squared standardised
        log-odds residual.
    sigma : pandas.Series, optional
        Residual scale by judge (``lmm.sigma_``); required for ``kind="residual"``.

    Returns
    -------
    pandas.Series
        ``C`` by item (sorted).

    Notes
    -----
    With :math:`\\ell = \\operatorname{logit} \\hat p_{ijc}` and the mean over the item's
    observed cells :math:`(j, c) \\in O_i`:

    .. math::

        C_i^{\\mathrm{xent}} = \\operatorname{mean}_{O_i}
            -[p_{ijc} \\log \\hat p_{ijc} + (1-p_{ijc}) \\log(1-\\hat p_{ijc})],
        \\qquad
        C_i^{\\mathrm{res}} = \\operatorname{mean}_{O_i}
            \\left(\\frac{m_{ijc} - \\ell_{ijc}}{\\sigma_j}\\right)^2 .

    The cross-entropy is computed from the logit as
    :math:`p\\,\\mathrm{softplus}(-\\ell) + (1-p)\\,\\mathrm{softplus}(\\ell)`, so it stays
    finite for extreme predictions. It is raised both by a conflict with the prediction and
    by a judge's own uncertainty (:math:`p` near .5), as the paper notes.

    References
    ----------
    Methods reference §4 (C).
    """
    if kind not in ("xent", "residual"):
        raise ValueError(f"kind must be 'xent' or 'residual', got {kind!r}")
    _require(predictions, ("item", "judge", "p", "logit", "logit_hat"), "predictions")
    codes, items = _item_codes(predictions["item"])
    ell = predictions["logit_hat"].to_numpy(np.float64)
    if kind == "xent":
        p = predictions["p"].to_numpy(np.float64)
        cell = p * np.logaddexp(0.0, -ell) + (1.0 - p) * np.logaddexp(0.0, ell)
    else:
        if sigma is None:
            raise ValueError(
                "kind='residual' needs sigma, the residual scale by judge (lmm.sigma_)"
            )
        jcodes, judges = pd.factorize(predictions["judge"])
        sig = _as_judge_series(sigma, pd.Index(judges), "sigma")
        if np.any(~(sig > 0)):
            bad = list(pd.Index(judges)[~(sig > 0)])
            raise ValueError(f"sigma must be positive; got non-positive/NaN for judge(s) {bad}")
        resid = predictions["logit"].to_numpy(np.float64) - ell
        cell = (resid / sig[jcodes]) ** 2
    return pd.Series(_item_mean(codes, len(items), cell), index=items, name="C")


def _lmm_offsets(lmm, judges: pd.Index, conditions: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Return (effect[j, c] = delta_c + kappa_jc, sigma[j]) from a fitted LMM."""
    for attr in ("delta_", "kappa_", "sigma_"):
        if not hasattr(lmm, attr):
            raise ValueError(f"kind='debiased' needs a fitted lmm with attribute {attr!r}")
    delta = pd.Series(lmm.delta_, dtype=np.float64)
    kappa = pd.DataFrame(lmm.kappa_).astype(np.float64)
    kappa.index = kappa.index.astype(str)
    missing_c = [c for c in conditions if c != ORIGINAL and c not in delta.index]
    if missing_c:
        raise ValueError(f"lmm.delta_ has no effect for condition(s) {missing_c}")
    missing_j = sorted(set(judges) - set(kappa.index))
    if missing_j:
        raise ValueError(f"lmm.kappa_ has no row for judge(s) {missing_j[:10]}")
    d = delta.reindex(list(conditions)).fillna(0.0).to_numpy()  # only original may be absent
    k = kappa.reindex(index=judges, columns=list(conditions)).fillna(0.0).to_numpy()
    effect = d[None, :] + k
    sig = _as_judge_series(lmm.sigma_, judges, "lmm.sigma_")
    return effect, sig


def signal_s(
    panel_or_predictions: pd.DataFrame, kind: str = "prob", lmm: Any = None
) -> pd.DataFrame:
    """Dependence of the responses on perturbations, one component per family.

    Parameters
    ----------
    panel_or_predictions : pandas.DataFrame
        Rows with ``item, judge, condition`` and ``p`` (``kind="prob"``) or ``logit``
        (``kind="logit"`` or ``"debiased"``): a validated panel or ``predict_loo`` output.
    kind : {"prob", "logit", "debiased"}, default "prob"
        ``"prob"`` (Methods reference default **[R]**): absolute change of the canonical
        probability; ``"logit"``: absolute change of the log-odds; ``"debiased"``: absolute
        change of the log-odds minus the LMM's condition effects, in units of the judge's
        residual scale.
    lmm : LatentMeasurementModel, optional
        Fitted model (``delta_``, ``kappa_``, ``sigma_``); required for ``"debiased"``.

    Returns
    -------
    pandas.DataFrame
        By item (sorted), one column ``S_<family>`` per reported family
        (:func:`judgerisk.families.reported_families`): ``S_order`` and ``S_rubric`` always
        (all-NaN when none of the family's pairs is observed), then one per other registered
        family with a pair present (``S_label``, ``S_format``, ``S_verbosity``, plug-ins). An
        item with no observed pair of a family gets NaN there.

    Notes
    -----
    For family :math:`k` with condition pairs :math:`(c, c')`
    (:meth:`judgerisk.families.Family.pairs`: for order ``(swap, original)`` and each
    ``(swap_F<k>, F<k>)``; for any other family F ``(F<k>, original)`` and ``(swap_F<k>,
    swap)``), the mean runs over the judges and pairs for which both cells are observed:

    .. math::

        S^k_i = \\operatorname{mean}_{j, (c,c') \\in k} |p_{ijc} - p_{ijc'}|, \\qquad
        S^{k,\\mathrm{logit}}_i = \\operatorname{mean}_{j, (c,c') \\in k} |m_{ijc} - m_{ijc'}|,
        \\qquad
        S^{k,\\mathrm{deb}}_i = \\operatorname{mean}_{j, (c,c') \\in k}
          \\frac{|m_{ijc} - m_{ijc'} - (\\delta_c + \\kappa_{jc} - \\delta_{c'} - \\kappa_{jc'})|}
               {\\sigma_j}.

    References
    ----------
    Methods reference §4 (S).
    """
    if kind not in ("prob", "logit", "debiased"):
        raise ValueError(f"kind must be 'prob', 'logit' or 'debiased', got {kind!r}")
    value = "p" if kind == "prob" else "logit"
    df = panel_or_predictions
    _require(df, ("item", "judge", "condition", value), "panel_or_predictions")
    if kind == "debiased" and lmm is None:
        raise ValueError("kind='debiased' needs the fitted lmm (its delta_, kappa_, sigma_)")
    icodes, items = _item_codes(df["item"])
    jcodes, judges = pd.factorize(df["judge"])
    judges = pd.Index(judges, name="judge").astype(str)
    ccodes, conds = pd.factorize(df["condition"])
    conds = [str(c) for c in conds]
    n_i, n_j, n_c = len(items), len(judges), len(conds)
    values = df[value].to_numpy(np.float64)
    effect, sig = _lmm_offsets(lmm, judges, conds) if kind == "debiased" else (None, None)
    if is_sparse(len(df), n_i * n_j * n_c):  # a crowd: memory by observed cells
        return pd.DataFrame(
            _s_by_pairs(icodes, jcodes, ccodes, values, (n_i, n_j, conds), effect, sig),
            index=items,
        )
    cube = np.full((n_i, n_j, n_c), np.nan)
    cube[icodes, jcodes, ccodes] = values
    if effect is not None:
        cube = cube - effect[None, :, :]
    out = {}
    observed = family_pairs(conds)
    for family in reported_families(conds):
        col = np.full(n_i, np.nan)
        present = [(conds.index(c), conds.index(d)) for c, d in observed.get(family, ())]
        if present:
            diffs = np.stack([np.abs(cube[:, :, a] - cube[:, :, b]) for a, b in present], axis=2)
            if sig is not None:  # kind == "debiased"
                diffs = diffs / sig[None, :, None]
            ok = ~np.isnan(diffs)
            count = ok.sum(axis=(1, 2))
            total = np.where(ok, diffs, 0.0).sum(axis=(1, 2))
            col = np.where(count > 0, total / np.maximum(count, 1), np.nan)
        out[f"S_{family}"] = col
    return pd.DataFrame(out, index=items)


def _s_by_pairs(icodes, jcodes, ccodes, values, shape, effect, sig) -> dict[str, np.ndarray]:
    """:func:`signal_s` on the observed (item, judge) pairs only, for a sparse panel.

    The same means as the dense item x judge x condition cube (over the judges and condition
    pairs of a family observed for the item), held in an array of observed pairs x conditions.
    """
    n_i, n_j, conds = shape
    pairs, pair_of_cell = np.unique(icodes.astype(np.int64) * n_j + jcodes, return_inverse=True)
    pair_i, pair_j = pairs // n_j, pairs % n_j
    table = np.full((len(pairs), len(conds)), np.nan)
    table[pair_of_cell.reshape(-1), ccodes] = values
    if effect is not None:
        table -= effect[pair_j]
    out = {}
    observed = family_pairs(conds)
    for family in reported_families(conds):  # the families the dense cube reports, in order
        col = np.full(n_i, np.nan)
        present = [(conds.index(c), conds.index(d)) for c, d in observed.get(family, ())]
        if present:
            diffs = np.stack([np.abs(table[:, a] - table[:, b]) for a, b in present], axis=1)
            if sig is not None:
                diffs = diffs / sig[pair_j][:, None]
            ok = ~np.isnan(diffs)
            count = np.bincount(pair_i, weights=ok.sum(axis=1), minlength=n_i)
            total = np.bincount(pair_i, weights=np.where(ok, diffs, 0.0).sum(axis=1), minlength=n_i)
            col = np.where(count > 0, total / np.maximum(count, 1), np.nan)
        out[f"S_{family}"] = col
    return out


# --------------------------------------------------------------------------- combination
def combine_scur(z: pd.DataFrame) -> pd.Series:
    """Noisy-OR of the normalised signals: :math:`1 - \\prod_k \\max(1 - z^k, 10^{-12})`.

    Parameters
    ----------
    z : pandas.DataFrame
        Columns among ``z_U, z_C, z_S`` (values in [0, 1]); other columns are ignored.
        A NaN cell (an item lacking that signal) contributes no evidence (factor 1).

    Returns
    -------
    pandas.Series
        ``scur`` on ``z``'s index, in [0, 1].

    Notes
    -----
    .. math::

        \\mathrm{SCUR}_i = 1 - \\prod_{k \\in \\{U, C, S\\}} \\max(1 - z^k_i, 10^{-12}),

    the noisy-OR of the signals, which ranks items like Fisher's
    :math:`-2 \\sum_k \\log \\max(1 - z^k_i, 10^{-12})`. The floor keeps the product
    positive when some :math:`z^k = 1`, so items with a maximal signal are still ranked
    by their other signals.

    References
    ----------
    Methods reference §4 (SCUR); the paper's Section 3.3 and its appendix on the 1e-12 floor.
    """
    if not isinstance(z, pd.DataFrame):
        raise TypeError(f"z must be a DataFrame with columns among {_Z_COLUMNS}")
    cols = [c for c in _Z_COLUMNS if c in z.columns]
    if not cols:
        raise ValueError(f"z has none of the columns {_Z_COLUMNS}; got {list(z.columns)}")
    vals = z[cols].to_numpy(np.float64)
    bad = ~np.isnan(vals) & ((vals < 0) | (vals > 1))
    if bad.any():
        rows = list(z.index[bad.any(axis=1)][:10])
        raise ValueError(f"z values must lie in [0, 1]; out of range for rows {rows}")
    comp = np.maximum(1.0 - np.where(np.isnan(vals), 0.0, vals), Z_FLOOR)
    return pd.Series(1.0 - comp.prod(axis=1), index=z.index, name="scur")


# --------------------------------------------------------------------------- pipeline
@dataclass(frozen=True)
class ScurResult:
    """SCUR scores of one seed's reference and evaluation items (see the module docstring)."""

    table: pd.DataFrame = field(repr=False)
    split: pd.Series = field(repr=False)
    lmm: Any = field(repr=False)
    predictions: pd.DataFrame = field(repr=False)
    kept: tuple[str, ...]
    dropped: dict[str, str]
    combined: tuple[str, ...]
    ecdfs: dict[str, FrozenECDF] = field(repr=False)
    settings: dict[str, Any]

    def scores(self, split: str | None = None) -> pd.DataFrame:
        """The table indexed by item, optionally only ``"reference"`` or ``"evaluation"`` items."""
        t = self.table
        if split is not None:
            if split not in ("reference", "evaluation"):
                raise ValueError(f"split must be 'reference', 'evaluation' or None, got {split!r}")
            t = t.loc[t["split"] == split]
        return t.set_index("item")


def _fit_or_reuse_lmm(lmm, lmm_params, fit_panel: pd.DataFrame, seed, check_input: bool = True):
    if lmm is not None and lmm_params:
        raise ValueError(
            "give either lmm (a model) or lmm_params (its constructor arguments), not both"
        )
    if lmm is None:
        from judgerisk.risk.lmm import LatentMeasurementModel

        params = {"random_state": seed, **(lmm_params or {})}
        return LatentMeasurementModel(**params).fit(fit_panel, check_input=check_input)
    if not hasattr(lmm, "a_"):
        return lmm.fit(fit_panel)
    q = getattr(lmm, "q_", None)
    if isinstance(q, pd.Series):
        fit_items = pd.Index(pd.unique(fit_panel["item"]))
        if len(q) != len(fit_items) or not fit_items.isin(q.index).all():
            raise ValueError(
                "the given fitted lmm was not fitted on this seed's fit items; pass an unfitted "
                "model, or one fitted on result.split == 'fit'"
            )
    return lmm


def _given_split(split: pd.Series, panel: pd.DataFrame) -> pd.Series:
    """A caller's split, checked to label every item of the panel with a split name."""
    if not isinstance(split, pd.Series):
        raise TypeError(f"split must be a pandas Series by item, got {type(split).__name__}")
    items = pd.Index(pd.unique(panel["item"]))
    missing = items.difference(split.index)
    if len(missing):
        raise ValueError(f"split has no label for item(s) {list(missing[:10])}")
    bad = ~split.isin(SPLIT_NAMES)
    if bad.any():
        raise ValueError(f"split labels must be among {SPLIT_NAMES}; got {split[bad].iloc[0]!r}")
    return split.reindex(items.sort_values()).rename_axis("item").rename("split")


def _fitted_cells(score_panel: pd.DataFrame, model: Any) -> pd.DataFrame:
    """The cells of judges and conditions the fit saw; the others are left out, with a warning.

    A judge seen only on reference or evaluation items (a crowdsourced panel) has no fitted
    parameters, so its cells cannot be predicted in this split.
    """
    known_j = getattr(model, "judges_", None)
    known_c = getattr(model, "conditions_", None)
    if known_j is None or known_c is None:
        return score_panel
    ok = score_panel["judge"].isin(known_j) & score_panel["condition"].isin(known_c)
    if ok.all():
        return score_panel
    n_bad = int((~ok).sum())
    names = sorted(set(score_panel.loc[~ok, "judge"]))
    warnings.warn(
        f"{n_bad} cell(s) of {len(names)} judge(s) or condition(s) absent from this split's fit "
        f"items (e.g. judge {names[0]!r}) cannot be predicted and are left out of its signals",
        UserWarning,
        stacklevel=3,
    )
    return score_panel.loc[ok.to_numpy()].reset_index(drop=True)


def _normalise(
    raw: pd.DataFrame, is_ref: np.ndarray, stacklevel: int = 3
) -> tuple[dict[str, np.ndarray], dict[str, FrozenECDF], dict[str, str]]:
    """Step 4: fit the frozen reference ECDFs of each component and transform every item."""
    z, ecdfs, dropped = {}, {}, {}
    for name in raw.columns:
        x = raw[name].to_numpy(np.float64)
        ref = x[is_ref]
        finite = ref[~np.isnan(ref)]
        if finite.size == 0:
            dropped[name] = "absent"
            z[name] = np.full(len(x), np.nan)
            continue
        if finite.size < ref.size:
            warnings.warn(
                f"{ref.size - finite.size} of {ref.size} reference items have no {name} value "
                f"(no observed cell for it); its reference ECDF uses the other {finite.size}",
                stacklevel=stacklevel,
            )
        ecdf = FrozenECDF().fit(finite)
        if ecdf.is_constant_:
            dropped[name] = "constant on the reference split"
            z[name] = np.full(len(x), np.nan)
            continue
        ecdfs[name] = ecdf
        z[name] = ecdf.transform(x)
    return z, ecdfs, dropped


def scur_scores(
    panel: pd.DataFrame,
    seed: int,
    splits: Sequence[float] = ANALYSIS.fractions,
    c_kind: str = "xent",
    s_kind: str = "prob",
    u_conditions: str = "original",
    lmm: Any = None,
    lmm_params: dict | None = None,
    s_norm: str = "ecdf",
    split: pd.Series | None = None,
    check_input: bool = True,
    s_families: Sequence[str] | None = None,
) -> ScurResult:
    """Cross-fitted SCUR risk scores for the reference and evaluation items of one seed.

    Parameters
    ----------
    panel : pandas.DataFrame
        A panel (validated here; a condition name no perturbation family declares is an
        error). A ``gold`` column, if present, is removed before anything else happens: no
        gold label is read.
    seed : int
        Seed of the item split (:func:`judgerisk.splits.split_items`) and the LMM's
        ``random_state``; the same seed gives identical numbers.
    splits : sequence of three floats, default ``ANALYSIS.fractions``
        Fit / reference / evaluation fractions.
    c_kind : {"xent", "residual"}, default "xent"
        Variant of C (:func:`signal_c`).
    s_kind : {"prob", "logit", "debiased"}, default "prob"
        Variant of S (:func:`signal_s`).
    u_conditions : {"original", "all"}, default "original"
        Conditions pooled in U (:func:`signal_u`).
    lmm : LatentMeasurementModel, optional
        An unfitted model to fit on the fit items, or one already fitted on exactly this
        seed's fit items (reused as is). Default: ``LatentMeasurementModel(random_state=seed,
        **lmm_params)``.
    lmm_params : dict, optional
        Constructor arguments of the default model (not together with ``lmm``).
    s_norm : {"ecdf", "max"}, default "ecdf"
        How the S families are merged: ``"ecdf"`` (default **[R]**) re-normalises
        :math:`\\max_k z^{S_k}` with its own reference ECDF, so that :math:`z^S` is uniform on
        the reference items like :math:`z^U` and :math:`z^C`; ``"max"`` uses the maximum
        itself, which is stochastically larger than a uniform when both families are kept.
    split : pandas.Series, optional
        A given fit / reference / evaluation label for every item (e.g. one fold of
        :func:`judgerisk.splits.cross_fit_splits`); then ``splits`` is not used and ``seed``
        only seeds the LMM's restarts.
    check_input : bool, default True
        Validate the panel. ``False`` skips every check, for callers that pass a panel
        :func:`judgerisk.panel.validate_panel` returned, as the cross-fitting loops do once
        for all their folds.
    s_families : sequence of str, optional
        The perturbation families whose z's enter :math:`z^S` (default: every family present).
        ``("order", "rubric")`` is the paper's S on a panel with more families; the other
        families' ``S_`` and ``z_S_`` columns are still computed and reported. **[R]**

    Returns
    -------
    ScurResult
        See the module docstring: ``table``, ``split``, ``lmm``, ``predictions``, ``kept``,
        ``dropped``, ``combined``, ``ecdfs``, ``settings``.

    Raises
    ------
    judgerisk.panel.PanelError
        When the reference split is empty or no signal varies on it (a ``ValueError``).

    Notes
    -----
    1. Split the items at random into fit / reference / evaluation (or take ``split``).
       Cells of judges or conditions that no fit item has cannot be predicted; they are
       left out of the signals, with a warning (a crowdsourced judge seen only on
       reference or evaluation items).
    2. Fit the LMM on the fit items only; predict every reference and evaluation cell
       leave-one-judge-out, :math:`\\hat p_{ijc} = \\sigma(\\hat a_j q_i^{(-j)} + \\hat b_j
       + \\hat\\delta_c + \\hat\\kappa_{jc})`.
    3. Compute U, C and one S per reported perturbation family (``S_order``, ``S_rubric``,
       then ``S_label``, ``S_format``, ``S_verbosity``, ... when present) per item.
    4. Freeze each component's ECDF on the reference items:
       :math:`z^X_i = n_\\mathrm{ref}^{-1} \\sum_{r} \\mathbf{1}[X_r \\le X_i]`. A component
       absent or constant on the reference split is dropped (listed in ``dropped``).
    5. :math:`S_i = \\max_k z^{S_k}_i` over the kept S components (of ``s_families``), the
       paper's combination of its two families applied to every family present,
       re-normalised on the reference split: :math:`z^S_i = F^{\\max}_\\mathrm{ref}(S_i)`.
    6. :math:`\\mathrm{SCUR}_i = 1 - \\prod_{k} \\max(1 - z^k_i, 10^{-12})` over the kept
       z_U, z_C, z_S (:func:`combine_scur`).

    An original-condition-only panel has no S family, so SCUR comes from U and C. Items
    without a value for a kept component (a family pair never observed for them) get NaN
    there, which contributes no evidence to SCUR; reference items without a value are left
    out of that ECDF, with a warning.

    References
    ----------
    Methods reference §3–4; "Can We Trust This Evaluation? Instance-Level Reliability of
    LLM-as-a-Judge", Section 3 and the cross-fitting appendix.
    """
    _check_kinds(c_kind=c_kind, s_kind=s_kind, u_conditions=u_conditions, s_norm=s_norm)
    s_families = _check_families(s_families)
    cols = [c for c in ("item", "judge", "condition", "logit", "p") if c in panel.columns]
    panel = panel[cols]  # gold and extras never enter
    if check_input:
        panel = validate_panel(panel)
    split, fit_panel, score_panel = _split_panel(panel, seed, splits, split)

    model = _fit_or_reuse_lmm(lmm, lmm_params, fit_panel, seed, check_input)
    preds = _predict(model, _fitted_cells(score_panel, model), check_input)
    raw = _raw_signals(preds, model, c_kind=c_kind, s_kind=s_kind, u_conditions=u_conditions)
    item_split = split.reindex(raw.index).to_numpy()
    is_ref = item_split == "reference"

    z, ecdfs, dropped = _normalise(raw, is_ref)
    kept = tuple(c for c in raw.columns if c not in dropped)
    merged = tuple(c for c in kept if c.startswith("S_") and _in(c[2:], s_families))
    s_max, z_s = _merge_s(z, merged, is_ref, s_norm, ecdfs, dropped)
    table = _score_table(raw, item_split, z, s_max, z_s)
    combined = _combine(table, dropped)
    return ScurResult(
        table=table,
        split=split,
        lmm=model,
        predictions=preds,
        kept=kept,
        dropped=dropped,
        combined=combined,
        ecdfs=ecdfs,
        settings={
            "seed": seed,
            "splits": tuple(splits),
            "c_kind": c_kind,
            "s_kind": s_kind,
            "u_conditions": u_conditions,
            "s_norm": s_norm,
            "s_families": s_families,
        },
    )


# the steps of scur_scores, in order ----------------------------------------------------------
_KINDS = {
    "c_kind": ("xent", "residual"),
    "s_kind": ("prob", "logit", "debiased"),
    "u_conditions": ("original", "all"),
    "s_norm": ("ecdf", "max"),
}


def _check_kinds(**options: str) -> None:
    """Each variant option among its allowed values (:data:`_KINDS`), or a ``ValueError``."""
    for name, val in options.items():
        if val not in _KINDS[name]:
            raise ValueError(f"{name} must be one of {_KINDS[name]}, got {val!r}")


def _check_families(names: Sequence[str] | None) -> tuple[str, ...] | None:
    """``s_families`` as a tuple of registered family names (None: every family)."""
    if names is None:
        return None
    if isinstance(names, str):
        names = (names,)
    for name in names:
        try:
            get_family(name)
        except ValueError:
            raise ValueError(
                f"s_families: unknown perturbation family {name!r}; choose from {list(FAMILIES)}"
            ) from None
    if not names:
        raise ValueError("s_families is empty: give at least one family, or None for all")
    return tuple(dict.fromkeys(names))


def _in(family: str, families: tuple[str, ...] | None) -> bool:
    return families is None or family in families


def _split_panel(
    panel: pd.DataFrame, seed: int, splits: Sequence[float], split: pd.Series | None
) -> tuple[pd.Series, pd.DataFrame, pd.DataFrame]:
    """Step 1: the item split (drawn from ``seed`` or given), the fit cells and the cells to score."""
    if split is None:
        split = split_items(pd.unique(panel["item"]), seed, splits)
    else:
        split = _given_split(split, panel)
    row_split = split.reindex(panel["item"].to_numpy()).to_numpy()
    if not (split == "reference").any():
        raise PanelError(
            f"the reference split is empty ({len(split)} items, splits={tuple(splits)}); "
            "SCUR needs reference items to normalise the signals"
        )
    fit_panel = panel.loc[row_split == "fit"].reset_index(drop=True)
    score_panel = panel.loc[row_split != "fit"].reset_index(drop=True)
    return split, fit_panel, score_panel


def _predict(model: Any, score_panel: pd.DataFrame, check_input: bool) -> pd.DataFrame:
    """Step 2: the fitted LMM's leave-one-judge-out predictions of the cells to score."""
    # a user's model need not know check_input: it is only passed to skip the checks
    preds = model.predict_loo(score_panel, **({} if check_input else {"check_input": False}))
    _require(preds, _PRED_COLUMNS, "lmm.predict_loo output")
    return preds


def _raw_signals(
    preds: pd.DataFrame, model: Any, *, c_kind: str, s_kind: str, u_conditions: str
) -> pd.DataFrame:
    """Step 3: U, C and one S per reported perturbation family, per item."""
    return pd.concat(
        [
            signal_u(preds, conditions=u_conditions),
            signal_c(preds, kind=c_kind, sigma=getattr(model, "sigma_", None)),
            signal_s(preds, kind=s_kind, lmm=model if s_kind == "debiased" else None),
        ],
        axis=1,
    )


def _merge_s(
    z: dict[str, np.ndarray],
    s_kept: tuple[str, ...],
    is_ref: np.ndarray,
    s_norm: str,
    ecdfs: dict[str, FrozenECDF],
    dropped: dict[str, str],
) -> tuple[np.ndarray, np.ndarray]:
    """Step 5: the maximum of the merged S families' z's, and z_S (``ecdfs``/``dropped`` grow)."""
    n = len(is_ref)
    s_max, z_s = np.full(n, np.nan), np.full(n, np.nan)
    if not s_kept:
        return s_max, z_s
    zs = np.column_stack([z[c] for c in s_kept])
    has = ~np.isnan(zs).all(axis=1)
    s_max[has] = np.nanmax(zs[has], axis=1)
    if s_norm != "ecdf":
        return s_max, s_max.copy()
    zmax, ecdf_max, drop_max = _normalise(pd.DataFrame({"S": s_max}), is_ref, stacklevel=4)
    ecdfs.update(ecdf_max)
    dropped.update(drop_max)
    return s_max, zmax["S"]


def _score_table(
    raw: pd.DataFrame,
    item_split: np.ndarray,
    z: dict[str, np.ndarray],
    s_max: np.ndarray,
    z_s: np.ndarray,
) -> pd.DataFrame:
    """The per-item table of raw components, their z's and z_S (no SCUR yet)."""
    return pd.DataFrame(
        {
            "item": raw.index.to_numpy(),
            "split": item_split,
            **{c: raw[c].to_numpy() for c in raw.columns},
            "S": s_max,
            **{f"z_{c}": z[c] for c in raw.columns},
            "z_S": z_s,
        }
    )


def _combine(table: pd.DataFrame, dropped: dict[str, str]) -> tuple[str, ...]:
    """Step 6: the ``scur`` column from the z's that have a value; returns their names."""
    combined = tuple(c for c in _Z_COLUMNS if not table[c].isna().all())
    if not combined:
        raise PanelError(
            f"no risk signal varies on the reference split (dropped: {dropped}); "
            "SCUR cannot rank the items (a panel whose judges all give the same answers "
            "carries no risk information)"
        )
    table["scur"] = combine_scur(table[list(combined)]).to_numpy()
    return combined


# --------------------------------------------------------------------------- explanation
def _reason_text(zrow: pd.Series, threshold: float) -> str:
    """Name the signals at or above ``threshold``, strongest first."""
    zs = {c: float(zrow[c]) for c in _Z_COLUMNS if c in zrow.index and not pd.isna(zrow[c])}
    high = sorted(((v, c) for c, v in zs.items() if v >= threshold), reverse=True)
    if high:
        return "; ".join(f"{_SIGNAL_NAMES[c]} (z={v:.2f})" for v, c in high)
    if float(zrow.get("scur", 0.0)) >= threshold:
        return "several moderately elevated signals"
    return "no elevated signal"


@dataclass(frozen=True)
class ItemExplanation:
    """Why one item got its SCUR: its scores and the judges' responses (the paper's Table 2).

    Attributes
    ----------
    item : hashable
    split : str
        ``"reference"`` or ``"evaluation"``.
    scores : pandas.Series
        ``U, C, S_order, S_rubric[, S_<family> ...], S, z_U, z_C, z_S_order, z_S_rubric[,
        z_S_<family> ...], z_S, scur``.
    reason : str
        The signals with z at or above the threshold, strongest first.
    responses : pandas.DataFrame
        Observed canonical probability P(original A wins), judge x condition.
    predicted : pandas.DataFrame
        Leave-one-judge-out predictions :math:`\\hat p_{ijc}`, judge x condition.
    """

    item: Any
    split: str
    scores: pd.Series
    reason: str
    responses: pd.DataFrame
    predicted: pd.DataFrame


def _judge_by_condition(rows: pd.DataFrame, value: str) -> pd.DataFrame:
    wide = rows.pivot(index="judge", columns="condition", values=value)
    order = list(pd.unique(rows["condition"]))
    return wide.reindex(columns=order).rename_axis(index="judge", columns="condition")


def explain(
    result: ScurResult,
    item: Any,
    panel: pd.DataFrame | None = None,
    threshold: float = ANALYSIS.elevated_z,
) -> ItemExplanation:
    """The scores of one reference or evaluation item and the responses behind them.

    Parameters
    ----------
    result : ScurResult
        Output of :func:`scur_scores`.
    item : hashable
        A reference or evaluation item of ``result``.
    panel : pandas.DataFrame, optional
        Panel to read the judges' responses from; default ``result.predictions`` (which
        holds every observed cell of the scored items).
    threshold : float, default ``ANALYSIS.elevated_z``
        A signal counts as elevated in ``reason`` when its z is at least this.

    Returns
    -------
    ItemExplanation

    References
    ----------
    The paper's Table 2 (z^U, z^C, z^S and SCUR of single items, with their reasons).
    """
    scores = result.scores()
    if item not in scores.index:
        where = result.split.get(item, None) if item in result.split.index else None
        if where == "fit":
            raise ValueError(
                f"item {item!r} is a fit item; only reference and evaluation items are scored"
            )
        raise ValueError(f"item {item!r} is not in this result")
    row = scores.loc[item]
    src = result.predictions if panel is None else panel
    rows = src.loc[src["item"] == item]
    if rows.empty:
        raise ValueError(f"item {item!r} has no rows in the given panel")
    preds = result.predictions.loc[result.predictions["item"] == item]
    return ItemExplanation(
        item=item,
        split=str(row["split"]),
        scores=row.drop("split").astype(np.float64),
        reason=_reason_text(row, threshold),
        responses=_judge_by_condition(rows, "p"),
        predicted=_judge_by_condition(preds, "p_hat"),
    )


def riskiest(
    result: ScurResult,
    n: int = 10,
    split: str = "evaluation",
    threshold: float = ANALYSIS.elevated_z,
) -> pd.DataFrame:
    """The ``n`` highest-SCUR items with their z's, vote split and reasons (Table-2-like).

    Parameters
    ----------
    result : ScurResult
    n : int, default 10
    split : {"evaluation", "reference"}, default "evaluation"
    threshold : float, default ``ANALYSIS.elevated_z``
        z at or above which a signal is named as a reason.

    Returns
    -------
    pandas.DataFrame
        Indexed by item, sorted by decreasing SCUR (ties by item): ``z_U, z_C, z_S,
        scur, votes_A`` (votes for A / judges, original condition; a tie is half a vote),
        ``p_bar`` (mean observed original-condition probability) and ``reason``.
    """
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 0:
        raise PanelError(f"n must be a non-negative integer, got {n!r}")
    t = result.scores(split).sort_values("scur", ascending=False, kind="stable").head(n)
    pr = result.predictions
    orig = pr.loc[(pr["condition"] == ORIGINAL) & pr["item"].isin(t.index)]
    g = orig.assign(vote=orig["verdict"]).groupby("item")  # a tie is half a vote
    votes = g["vote"].sum().map("{:g}".format).astype(str) + "/" + g["vote"].size().astype(str)
    out = t[["z_U", "z_C", "z_S", "scur"]].copy()
    out["votes_A"] = votes.reindex(out.index)
    out["p_bar"] = g["p"].mean().reindex(out.index)
    out["reason"] = [_reason_text(r, threshold) for _, r in out.iterrows()]
    return out
