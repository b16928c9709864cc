"""SCUR of one seed: fit the LMM on the reference items, score the evaluation items.

:func:`scur_scores` runs the pipeline the module :mod:`judgerisk.risk.signals` describes (the
signals U, C, S on leave-one-out predictions, their ECDF normalisation on the reference split,
the noisy-OR) and returns a :class:`ScurResult`.

References
----------
Methods reference §3–4; "Can We Trust This Evaluation? Instance-Level Reliability of
LLM-as-a-Judge", Section 3 and the cross-fitting appendix.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from judgerisk._splits import SPLIT_NAMES, split_items
from judgerisk.families import FAMILIES, get_family
from judgerisk.options import ANALYSIS
from judgerisk.panel import PanelError, validate_panel
from judgerisk.risk._ecdf import FrozenECDF
from judgerisk.risk.signals import (
    PREDICTION_COLUMNS,
    Z_COLUMNS,
    combine_scur,
    require_columns,
    signal_c,
    signal_s,
    signal_u,
)

__all__ = ["ScurResult", "scur_scores"]


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
        Seed of the item split (:func:`judgerisk._splits.split_items`) and the LMM's
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
        :math:`\\max_F z^{S^F}` with its own reference ECDF, so that :math:`z^S` is uniform on
        the reference items like :math:`z^U` and :math:`z^C`; ``"max"`` uses the maximum
        itself, which is stochastically larger than a uniform when both families are kept.
    split : pandas.Series, optional
        A given fit / reference / evaluation label for every item (e.g. one fold of
        :func:`judgerisk._splits.cross_fit_splits`); then ``splits`` is not used and ``seed``
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
    5. :math:`S_i = \\max_F z^{S^F}_i` over the kept S components (of ``s_families``), the
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
    if not (split == "reference").any():
        raise PanelError(
            f"the reference split is empty ({len(split)} items, splits={tuple(splits)}); "
            "SCUR needs reference items to normalise the signals"
        )
    # a row is a fit cell iff its item is a fit item (one hash pass over the item ids, not a
    # label per row compared as text twice)
    row_fit = panel["item"].isin(split.index[(split == "fit").to_numpy()]).to_numpy()
    fit_panel = panel.loc[row_fit].reset_index(drop=True)
    score_panel = panel.loc[~row_fit].reset_index(drop=True)
    return split, fit_panel, score_panel


def _predict(model: Any, score_panel: pd.DataFrame, check_input: bool) -> pd.DataFrame:
    """Step 2: the fitted LMM's leave-one-judge-out predictions of the cells to score."""
    # a user's model need not know check_input: it is only passed to skip the checks
    preds = model.predict_loo(score_panel, **({} if check_input else {"check_input": False}))
    require_columns(preds, PREDICTION_COLUMNS, "lmm.predict_loo output")
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
    combined = tuple(c for c in Z_COLUMNS if not table[c].isna().all())
    if not combined:
        raise PanelError(
            f"no risk signal varies on the reference split (dropped: {dropped}); "
            "SCUR cannot rank the items (a panel whose judges all give the same answers "
            "carries no risk information)"
        )
    table["scur"] = combine_scur(table[list(combined)]).to_numpy()
    return combined
