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
:func:`judgerisk._splits.cross_fit_splits`), in :mod:`judgerisk.risk.scur`
``explain(result, item, panel=None) -> ItemExplanation`` (the paper's Table 2 for one item)
``riskiest(result, n=10, split="evaluation", threshold=0.9) -> DataFrame`` (Table-2-like list),
both in :mod:`judgerisk.risk.explain`

:class:`~judgerisk.risk.scur.ScurResult` (frozen dataclass)
    ``table``
        DataFrame with a RangeIndex, one row per reference and evaluation item, sorted by
        item, columns ``item, split, U, C, S_order, S_rubric[, S_<family> ...], S, z_U, z_C,
        z_S_order, z_S_rubric[, z_S_<family> ...], z_S, scur`` (one ``S_`` column per
        reported family, :func:`judgerisk.families.reported_families`). ``S`` is the
        per-item maximum of the kept ``z_S_k`` (of the families in ``s_families``); ``z_S``
        its reference ECDF. A dropped component has NaN ``z``.
    ``split``
        Series by item over *all* items (fit items too): ``"fit"``, ``"reference"``,
        ``"evaluation"`` (from :func:`judgerisk._splits.split_items`).
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
        Dict component -> :class:`~judgerisk.risk._ecdf.FrozenECDF` (``"S"`` is the ECDF of the max).
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

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
from scipy.special import entr

from judgerisk.families import family_pairs, reported_families
from judgerisk.panel import ORIGINAL
from judgerisk.panel._cell_table import is_sparse
from judgerisk.risk.registry import COMPONENTS as REGISTERED_COMPONENTS

__all__ = [
    "COMPONENTS",
    "Z_FLOOR",
    "binary_entropy",
    "signal_u",
    "signal_c",
    "signal_s",
    "combine_scur",
]

#: Every raw component a table can hold, in table order: U, C, then ``S_<family>`` for each
#: registered perturbation family (a table holds those of its reported families).
COMPONENTS: Sequence[str] = REGISTERED_COMPONENTS
#: Floor of each complement 1 - z in the noisy-OR (Methods reference §4).
Z_FLOOR = 1e-12
Z_COLUMNS = ("z_U", "z_C", "z_S")
SIGNAL_NAMES = {"z_U": "ambiguity U", "z_C": "conflict C", "z_S": "sensitivity S"}
PREDICTION_COLUMNS = ("item", "judge", "condition", "logit", "p", "logit_hat", "p_hat")


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


def require_columns(df: pd.DataFrame, columns: Sequence[str], what: str) -> None:
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
    require_columns(predictions, ("item", "condition", "p_hat"), "predictions")
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
    require_columns(predictions, ("item", "judge", "p", "logit", "logit_hat"), "predictions")
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
    For family :math:`F` with condition pairs :math:`(c, c') \\in P_F`
    (:meth:`judgerisk.families.Family.pairs`: for order ``(swap, original)`` and each
    ``(swap_F<k>, F<k>)``; for any other family F ``(F<k>, original)`` and ``(swap_F<k>,
    swap)``), the mean runs over the judges and pairs for which both cells are observed:

    .. math::

        S^F_i = \\operatorname{mean}_{j, (c,c') \\in P_F} |p_{ijc} - p_{ijc'}|,

        S^{F,\\mathrm{logit}}_i = \\operatorname{mean}_{j, (c,c') \\in P_F} |m_{ijc} - m_{ijc'}|,

        S^{F,\\mathrm{deb}}_i = \\operatorname{mean}_{j, (c,c') \\in P_F}
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
    require_columns(df, ("item", "judge", "condition", value), "panel_or_predictions")
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
    """Noisy-OR of the normalised signals: :math:`1 - \\prod_X \\max(1 - z^X, 10^{-12})`.

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
        raise TypeError(f"z must be a DataFrame with columns among {Z_COLUMNS}")
    cols = [c for c in Z_COLUMNS if c in z.columns]
    if not cols:
        raise ValueError(f"z has none of the columns {Z_COLUMNS}; got {list(z.columns)}")
    vals = z[cols].to_numpy(np.float64)
    bad = ~np.isnan(vals) & ((vals < 0) | (vals > 1))
    if bad.any():
        rows = list(z.index[bad.any(axis=1)][:10])
        raise ValueError(f"z values must lie in [0, 1]; out of range for rows {rows}")
    comp = np.maximum(1.0 - np.where(np.isnan(vals), 0.0, vals), Z_FLOOR)
    return pd.Series(1.0 - comp.prod(axis=1), index=z.index, name="scur")
