"""The repeated-split protocol for selective judging (Methods reference §7).

``split_protocol`` draws ``n_splits`` random calibration / test splits of one labelled set,
calibrates every selector on each calibration half and reports coverage and FDP on the test
half — for every method and alpha at once, vectorised across splits (no Python loop per split,
per alpha's threshold or per Trust-or-Escalate grid point). ``loop=True`` runs the same protocol
as a plain per-split loop over the public selectors of :mod:`judgerisk.selective.scope` (and a plain loop
over Trust-or-Escalate's grid); the two give identical tables.

Inputs per method
-----------------
===============  ====================  ==========================================
method           needs                 accepts a test item iff
===============  ====================  ==========================================
``vanilla``      —                     always
``heuristic``    ``confidence``        confidence >= 1 − alpha
``naive``        ``uncertainty``       uncertainty <= naive threshold
``scope``        ``uncertainty``       uncertainty <= SCOPE threshold
``toe``          ``confidence``        confidence >= Trust-or-Escalate threshold
===============  ====================  ==========================================

References
----------
Methods reference §7; "SCOPE: Selective Conformal Optimized Pairwise Evaluation" (§3, Table 3,
Figure 2, Appendix B.3.4: 1,000 random 50/50 calibration–test splits).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
from tqdm.auto import tqdm

from judgerisk.selective.metrics import errors_of
from judgerisk.selective.scope import (
    SELECTORS,
    naive_feasible,
    scope_feasible,
    toe_certified,
    toe_grid,
    toe_max_errors,
)
from judgerisk.validation import as_float, check_alpha, tie_blocks

__all__ = [
    "ALPHAS",
    "METHODS",
    "split_masks",
    "split_protocol",
    "summarize_protocol",
    "toe_threshold_loop",
]

ALPHAS: tuple[float, ...] = (0.05, 0.10, 0.15, 0.20, 0.25)
METHODS: tuple[str, ...] = ("vanilla", "heuristic", "naive", "scope", "toe")
_NEEDS = {
    "vanilla": None,
    "heuristic": "confidence",
    "naive": "uncertainty",
    "scope": "uncertainty",
    "toe": "confidence",
}
_FIELDS = ("coverage", "risk", "n_accepted", "n_errors", "threshold")


def split_masks(n: int, n_splits: int = 1000, cal_frac: float = 0.5, seed: int = 0) -> np.ndarray:
    """Random calibration masks, one row per split.

    Parameters
    ----------
    n : int
        Number of items.
    n_splits : int, default 1000
    cal_frac : float in (0, 1), default 0.5
        Share of items in the calibration half; ``round(cal_frac * n)`` items, at least one on
        each side.
    seed : int, default 0

    Returns
    -------
    numpy.ndarray of bool, shape (n_splits, n)
        True = calibration item, False = test item.
    """
    if not 0.0 < float(cal_frac) < 1.0:
        raise ValueError(f"cal_frac must be in (0, 1), got {cal_frac}")
    n_cal = int(round(cal_frac * n))
    if not 1 <= n_cal <= n - 1:
        raise ValueError(f"cal_frac={cal_frac} leaves an empty half with n={n} items")
    if int(n_splits) < 1:
        raise ValueError(f"n_splits must be >= 1, got {n_splits}")
    keys = np.random.default_rng(seed).random((int(n_splits), n))
    first = np.argpartition(keys, n_cal - 1, axis=1)[:, :n_cal]  # the n_cal smallest keys
    mask = np.zeros(keys.shape, dtype=bool)
    np.put_along_axis(mask, first, True, axis=1)
    return mask


def _last_true(mask: np.ndarray) -> np.ndarray:
    """Index of the last True per row, -1 when none."""
    idx = mask.shape[1] - 1 - np.argmax(mask[:, ::-1], axis=1)
    return np.where(mask.any(axis=1), idx, -1)


def _rowpick(arr: np.ndarray, idx: np.ndarray) -> np.ndarray:
    return arr[np.arange(arr.shape[0]), idx]


def _result(n_acc, n_err, threshold, n_test) -> dict[str, np.ndarray]:
    n_acc = np.asarray(n_acc, dtype=np.int64)
    n_err = np.asarray(n_err, dtype=np.int64)
    return {
        "coverage": n_acc / n_test,
        "risk": n_err / np.maximum(n_acc, 1),
        "n_accepted": n_acc,
        "n_errors": n_err,
        "threshold": np.asarray(threshold, dtype=np.float64),
    }


def _sorted_cumcounts(values, errors, cal):
    """Cumulative calibration / error counts after sorting items by ``values`` (ascending).

    Returns the sorted values, and (n_splits, n + 1) cumulative counts with a leading zero.
    """
    order = np.argsort(values, kind="stable")
    cal_s = cal[:, order]
    err_s = errors[order]
    pad = np.zeros((cal.shape[0], 1), dtype=np.int32)
    cum_cal = np.concatenate([pad, np.cumsum(cal_s, axis=1, dtype=np.int32)], axis=1)
    cum_cal_err = np.concatenate([pad, np.cumsum(cal_s & err_s, axis=1, dtype=np.int32)], axis=1)
    cum_err = np.r_[0, np.cumsum(err_s)]
    return values[order], cum_cal, cum_cal_err, cum_err


def _vec_threshold_methods(score, errors, cal, alphas, methods, n_test):
    """SCOPE and naive on the uncertainty score, for all splits and alphas."""
    v, cum_cal, cum_cal_err, cum_err = _sorted_cumcounts(score, errors, cal)
    ends = tie_blocks(v)[1]  # block stops = positions in the padded cumsum
    n_cal_b = cum_cal[:, ends]
    n_err_b = cum_cal_err[:, ends]
    has_cal = np.diff(np.concatenate([np.zeros((cal.shape[0], 1), np.int32), n_cal_b], 1), axis=1)
    has_cal = has_cal > 0
    test_acc_b = ends[None, :] - n_cal_b
    test_err_b = cum_err[ends][None, :] - n_err_b
    values_b = v[ends - 1]
    rules = {"scope": scope_feasible, "naive": naive_feasible}
    out = {}
    for m in methods:
        cols = []
        for a in alphas:
            k = _last_true(rules[m](n_err_b, n_cal_b, a) & has_cal)
            ok = k >= 0
            kk = np.maximum(k, 0)
            cols.append(
                _result(
                    np.where(ok, _rowpick(test_acc_b, kk), 0),
                    np.where(ok, _rowpick(test_err_b, kk), 0),
                    np.where(ok, values_b[kk], -np.inf),
                    n_test,
                )
            )
        out[m] = cols
    return out


def _vec_toe(conf, errors, cal, alphas, n_test, delta, n_grid, min_accepted):
    """Trust-or-Escalate for all splits, alphas and grid points at once."""
    grid = toe_grid(n_grid)
    g = np.searchsorted(grid, conf, side="right")  # accepted at grid index j iff j < g
    _, cum_cal, cum_cal_err, cum_err = _sorted_cumcounts(g, errors, cal)
    g_sorted = np.sort(g, kind="stable")
    # number of items with g <= j, i.e. NOT accepted at threshold j
    pos = np.searchsorted(g_sorted, np.arange(grid.size), side="right")
    n_cal = cum_cal[:, -1:]
    n_acc = n_cal - cum_cal[:, pos]
    n_err = cum_cal_err[:, -1:] - cum_cal_err[:, pos]
    test_acc = (g.size - pos)[None, :] - n_acc
    test_err = (cum_err[-1] - cum_err[pos])[None, :] - n_err
    kept = n_acc >= min_accepted  # a prefix of the grid: n_acc is non-increasing in j
    j_top = kept.sum(axis=1) - 1
    cols = []
    for a in alphas:
        kmax = toe_max_errors(int(cal.shape[1]), float(a), float(delta))
        fail = kept & (n_err > kmax[n_acc])
        j_fail = _last_true(fail)
        ok = (j_top >= 0) & (j_fail < j_top)
        jj = np.where(ok, j_fail + 1, 0)
        cols.append(
            _result(
                np.where(ok, _rowpick(test_acc, jj), 0),
                np.where(ok, _rowpick(test_err, jj), 0),
                np.where(ok, grid[jj], np.inf),
                n_test,
            )
        )
    return cols


def toe_threshold_loop(
    confidence: npt.ArrayLike,
    errors: npt.ArrayLike,
    alpha: float,
    delta: float = 0.1,
    n_grid: int = 5000,
    min_accepted: int = 30,
) -> Any:
    """Reference Trust-or-Escalate: a plain Python loop down the threshold grid.

    Same result as :func:`judgerisk.selective.scope.toe_threshold`; used by the equality tests and the
    benchmark. Returns ``inf`` when nothing is certified.
    """
    c = np.asarray(confidence, dtype=np.float64)
    e = np.asarray(errors, dtype=bool)
    grid = toe_grid(n_grid)
    best = np.inf
    for lam in grid[::-1]:
        acc = c >= lam
        n_acc = int(acc.sum())
        if n_acc < min_accepted:
            continue
        if not toe_certified(int(e[acc].sum()), n_acc, alpha, delta):
            break
        best = float(lam)
    return best


def _loop_protocol(
    inputs, errors, cal, alphas, methods, n_test, delta, n_grid, min_accepted, progress
):
    out = {m: [{f: np.zeros(cal.shape[0]) for f in _FIELDS} for _ in alphas] for m in methods}
    for s in tqdm(range(cal.shape[0]), disable=not progress, desc="splits"):
        c_mask, t_mask = cal[s], ~cal[s]
        for m in methods:
            x = inputs[_NEEDS[m]] if _NEEDS[m] else np.zeros(errors.size)
            for ia, a in enumerate(alphas):
                if m == "toe":
                    thr = toe_threshold_loop(
                        x[c_mask], errors[c_mask], a, delta, n_grid, min_accepted
                    )
                    acc = x[t_mask] >= thr
                else:
                    sel = SELECTORS[m](alpha=a).calibrate(x[c_mask], errors[c_mask])
                    thr, acc = sel.threshold_, sel.accept(x[t_mask])
                res = out[m][ia]
                res["n_accepted"][s] = acc.sum()
                res["n_errors"][s] = (acc & errors[t_mask]).sum()
                res["threshold"][s] = thr
    return {
        m: [_result(r["n_accepted"], r["n_errors"], r["threshold"], n_test) for r in cols]
        for m, cols in out.items()
    }


def split_protocol(
    uncertainty: npt.ArrayLike | None = None,
    preds: npt.ArrayLike | None = None,
    gold: npt.ArrayLike | None = None,
    *,
    confidence: npt.ArrayLike | None = None,
    alphas: Sequence[float] = ALPHAS,
    methods: Sequence[str] | None = None,
    n_splits: int = 1000,
    cal_frac: float = 0.5,
    seed: int = 0,
    delta: float = 0.1,
    n_grid: int = 5000,
    min_accepted: int = 30,
    loop: bool = False,
    progress: bool = False,
) -> pd.DataFrame:
    """Coverage and FDP of every selector over repeated random calibration / test splits.

    Parameters
    ----------
    uncertainty : array-like of float, optional
        Uncertainty score per item (larger = less sure; e.g. BPE). Needed by ``scope`` and
        ``naive``.
    preds : array-like
        The judge's verdict per item (``"A"``/``"B"`` or 1/0).
    gold : array-like
        Gold labels (``"A"``/``"B"`` or 1/0).
    confidence : array-like of float in [0, 1], optional (keyword only)
        Confidence per item (e.g. :math:`\\max(\\bar p, 1-\\bar p)`). Needed by ``heuristic``
        and ``toe``.
    alphas : sequence of float, default (.05, .10, .15, .20, .25)
    methods : sequence of str, optional
        Subset of ``("vanilla", "heuristic", "naive", "scope", "toe")``. Default: every method
        whose input is given.
    n_splits : int, default 1000
    cal_frac : float, default 0.5
    seed : int, default 0
        Seed of the splits (:func:`split_masks`); the same seed gives the same splits for every
        method.
    delta, n_grid, min_accepted :
        Trust-or-Escalate's settings (0.1, 5000, 30).
    loop : bool, default False
        Run the plain per-split reference loop instead of the vectorised code (same output).
    progress : bool, default False
        Show a progress bar (loop mode only).

    Returns
    -------
    pandas.DataFrame
        Tidy, one row per (method, alpha, split): ``method, alpha, split, coverage, risk,
        n_accepted, n_errors, threshold``. ``risk`` is the test FDP (0 when nothing is
        accepted); ``threshold`` is ``-inf`` (uncertainty methods) or ``inf`` (confidence
        methods) when the selector abstains on everything.

    Notes
    -----
    coverage = accepted / n_test, FDP = errors among accepted / max(1, accepted). The mean FDP
    over splits estimates the expected FDP for a calibration set of this size; see
    :func:`summarize_protocol`.
    """
    if preds is None or gold is None:
        raise ValueError("split_protocol needs preds and gold")
    errors = errors_of(preds, gold)
    n = errors.size
    inputs = {}
    for name, val in (("uncertainty", uncertainty), ("confidence", confidence)):
        if val is not None:
            arr = as_float(val, name, *((0.0, 1.0) if name == "confidence" else (None, None)))
            if arr.size != n:
                raise ValueError(f"{name} has {arr.size} entries but preds/gold have {n}")
            inputs[name] = arr
    if methods is None:
        methods = tuple(m for m in METHODS if _NEEDS[m] is None or _NEEDS[m] in inputs)
    methods = tuple(methods)
    for m in methods:
        if m not in _NEEDS:
            raise ValueError(f"unknown method {m!r}; choose from {METHODS}")
        if _NEEDS[m] is not None and _NEEDS[m] not in inputs:
            raise ValueError(f"method {m!r} needs {_NEEDS[m]}=...; it was not given")
    alphas = tuple(check_alpha(a) for a in alphas)
    cal = split_masks(n, n_splits, cal_frac, seed)
    n_test = n - int(cal[0].sum())

    if loop:
        res = _loop_protocol(
            inputs, errors, cal, alphas, methods, n_test, delta, n_grid, min_accepted, progress
        )
    else:
        res = {}
        thr_methods = [m for m in methods if m in ("scope", "naive")]
        if thr_methods:
            res.update(
                _vec_threshold_methods(
                    inputs["uncertainty"], errors, cal, alphas, thr_methods, n_test
                )
            )
        if "toe" in methods:
            res["toe"] = _vec_toe(
                inputs["confidence"], errors, cal, alphas, n_test, delta, n_grid, min_accepted
            )
        test = (~cal).astype(np.float64)
        if "vanilla" in methods:
            n_err = np.rint(test @ errors.astype(np.float64))
            res["vanilla"] = [
                _result(
                    np.full(cal.shape[0], n_test), n_err, np.full(cal.shape[0], -np.inf), n_test
                )
                for _ in alphas
            ]
        if "heuristic" in methods:
            cols = []
            for a in alphas:
                acc = inputs["confidence"] >= 1.0 - a
                cols.append(
                    _result(
                        np.rint(test @ acc.astype(np.float64)),
                        np.rint(test @ (acc & errors).astype(np.float64)),
                        np.full(cal.shape[0], 1.0 - a),
                        n_test,
                    )
                )
            res["heuristic"] = cols
    return _assemble(res, methods, alphas, cal.shape[0])


def _assemble(res, methods, alphas, n_splits) -> pd.DataFrame:
    frames = []
    for m in methods:
        for a, r in zip(alphas, res[m], strict=True):
            frames.append(
                pd.DataFrame(
                    {
                        "method": m,
                        "alpha": a,
                        "split": np.arange(n_splits),
                        **{f: r[f] for f in _FIELDS},
                    }
                )
            )
    out = pd.concat(frames, ignore_index=True)
    out["method"] = pd.Categorical(out["method"], categories=list(methods))
    return out


def summarize_protocol(table: pd.DataFrame) -> pd.DataFrame:
    """Mean and standard deviation over splits, per method and alpha.

    Parameters
    ----------
    table : pandas.DataFrame
        Output of :func:`split_protocol`.

    Returns
    -------
    pandas.DataFrame
        Indexed by (method, alpha): ``coverage_mean, coverage_std, risk_mean, risk_std,
        risk_se`` (= std / sqrt(n_splits), the Monte-Carlo standard error of ``risk_mean``),
        ``pooled_risk`` (total errors / total accepted over splits, a ratio-of-means estimate of
        the marginal FDR :math:`E[E S] / E[S]`), ``abstain_all`` (share of splits accepting
        nothing) and ``n_splits``.
    """
    g = table.groupby(["method", "alpha"], observed=True, sort=True)
    out = pd.DataFrame(
        {
            "coverage_mean": g["coverage"].mean(),
            "coverage_std": g["coverage"].std(ddof=1),
            "risk_mean": g["risk"].mean(),
            "risk_std": g["risk"].std(ddof=1),
            "n_splits": g["risk"].size(),
        }
    )
    out["risk_se"] = out["risk_std"] / np.sqrt(out["n_splits"])
    acc = g["n_accepted"].sum()
    out["pooled_risk"] = g["n_errors"].sum() / acc.where(acc > 0)
    out["abstain_all"] = g["n_accepted"].apply(lambda x: float((x == 0).mean()))
    return out[
        [
            "coverage_mean",
            "coverage_std",
            "risk_mean",
            "risk_std",
            "risk_se",
            "pooled_risk",
            "abstain_all",
            "n_splits",
        ]
    ]
