"""The repeated-split protocol for selective judging (Methods reference §7).

``split_protocol`` draws ``n_splits`` random calibration / test splits of one labelled set,
calibrates every selector on each calibration half and reports coverage and FDP on the test
half — for every method and alpha at once, vectorised across splits (no Python loop per split,
per alpha's threshold or per Trust-or-Escalate grid point). The splits are processed in blocks
sized from a memory budget (``memory_budget_mb``, 256 MB by default), so memory stays bounded
and time grows linearly with items x splits. ``loop=True`` runs the same protocol
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
Methods reference §7; "SCOPE: Selective Conformal Optimized Pairwise LLM Judging" (§3, Table 3,
Figure 2, Appendix B.3.4: 1,000 random 50/50 calibration–test splits).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from judgerisk._util.progress import progress_bar
from judgerisk.options import DEFAULT_DELTA, DEFAULT_SPLITS, check_count
from judgerisk.selective.metrics import errors_of
from judgerisk.selective.registry import (
    SELECTORS,
    Needs,
    Selector,
    get_selector,
    register_selector,
)
from judgerisk.selective.scope import (
    Heuristic,
    Naive,
    Scope,
    Vanilla,
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
    "SELECTORS",
    "split_masks",
    "split_protocol",
    "summarize_protocol",
    "toe_threshold_loop",
    "VALID_SE",
    "within_guarantee",
]

ALPHAS: tuple[float, ...] = (0.05, 0.10, 0.15, 0.20, 0.25)
#: Former name of :data:`judgerisk.selective.registry.SELECTORS` (the registered selectors).
METHODS: Sequence[str] = SELECTORS
_FIELDS = ("coverage", "risk", "n_accepted", "n_errors", "threshold")


def _check_split_args(n: int, n_splits: int, cal_frac: float) -> int:
    """Validate the split settings; return the calibration size ``round(cal_frac * n)``."""
    if not 0.0 < float(cal_frac) < 1.0:
        raise ValueError(f"cal_frac must be in (0, 1), got {cal_frac}")
    n_cal = int(round(cal_frac * n))
    if not 1 <= n_cal <= n - 1:
        raise ValueError(f"cal_frac={cal_frac} leaves an empty half with n={n} items")
    check_count("n_splits", n_splits)
    return n_cal


def _smallest_mask(keys: np.ndarray, k: int) -> np.ndarray:
    """Per row, True at the ``k`` smallest of the uniform ``keys`` (a linear-time selection).

    Same mask as ``argpartition(keys, k - 1, axis=1)[:, :k]``: only the few keys near the
    expected k-th order statistic (±8 standard deviations) are sorted; a row whose k-th key is
    tied with the next one, or falls outside that bracket, is done by ``argpartition``.
    """
    b, n = keys.shape
    p = k / n
    half = 8.0 * np.sqrt(p * (1.0 - p) / n) + 2.0 / n
    lo, hi = p - half, p + half
    below = keys < lo
    n_below = below.sum(axis=1)
    cand = keys <= hi
    cand &= ~below
    del below
    counts = cand.sum(axis=1)
    vals = keys[cand]
    del cand
    width = int(counts.max()) + 1
    padded = np.full((b, width), np.inf)
    rows = np.repeat(np.arange(b), counts)
    starts = np.cumsum(counts) - counts
    padded[rows, np.arange(vals.size) - starts[rows]] = vals
    padded.sort(axis=1)
    rank = np.clip(k - n_below, 1, width - 1)  # 1-based rank of the k-th key among the candidates
    r = np.arange(b)
    kth, nxt = padded[r, rank - 1], padded[r, rank]
    ok = (k - n_below >= 1) & (k - n_below <= counts) & (kth < nxt)
    mask = keys <= kth[:, None]
    for i in np.flatnonzero(~ok):
        mask[i] = False
        mask[i, np.argpartition(keys[i], k - 1)[:k]] = True
    return mask


def _mask_blocks(n: int, n_splits: int, cal_frac: float, seed: int, block: int):
    """Yield ``(first split, calibration masks)`` for consecutive blocks of ``block`` splits.

    The keys are drawn block after block from one generator, so the concatenated blocks are
    :func:`split_masks` exactly, whatever the block size.
    """
    n_cal = _check_split_args(n, n_splits, cal_frac)
    rng = np.random.default_rng(seed)
    for s0 in range(0, int(n_splits), block):
        b = min(block, int(n_splits) - s0)
        yield s0, _smallest_mask(rng.random((b, n)), n_cal)


def split_masks(
    n: int, n_splits: int = DEFAULT_SPLITS, cal_frac: float = 0.5, seed: int = 0
) -> np.ndarray:
    """Random calibration masks, one row per split.

    Split ``s`` draws one uniform key per item (row ``s`` of ``default_rng(seed).random((n_splits,
    n))``) and puts the items with the ``round(cal_frac * n)`` smallest keys in calibration.

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
    _check_split_args(n, n_splits, cal_frac)
    return np.concatenate([m for _, m in _mask_blocks(n, n_splits, cal_frac, seed, int(n_splits))])


def _last_true(mask: np.ndarray) -> np.ndarray:
    """Index of the last True per row, -1 when none."""
    idx = mask.shape[1] - 1 - np.argmax(mask[:, ::-1], axis=1)
    return np.where(mask[np.arange(mask.shape[0]), idx], idx, -1)


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


def _count_dtype(n_max: int):
    """Narrowest signed integer dtype holding -1 .. n_max."""
    for dt in (np.int16, np.int32):
        if n_max < np.iinfo(dt).max:
            return dt
    return np.int64


@lru_cache(maxsize=64)
def _max_feasible_errors(method: str, n_max: int, alpha: float) -> np.ndarray:
    """For n = 0..n_max accepted calibration items, the largest feasible error count (-1: none).

    Both rules are monotone in the error count, so ``rule(e, n) <=> e <= table[n]``; the table
    is found by bisection on the rule itself, so it makes the same floating-point decisions.
    """
    rule = {"scope": scope_feasible, "naive": naive_feasible}[method]
    n = np.arange(n_max + 1, dtype=np.int64)
    lo, hi = np.full_like(n, -1), n.copy()
    while (lo < hi).any():
        mid = (lo + hi + 1) // 2
        ok = rule(mid, n, alpha)
        lo, hi = np.where(ok, mid, lo), np.where(ok, hi, mid - 1)
    lo.setflags(write=False)
    return lo


class _ThresholdMethods:
    """SCOPE and naive on the uncertainty score, one block of splits at a time.

    Items are sorted once by score. For one split, let ``j`` run over its calibration items in
    that order: ``j + 1`` items are accepted at the ``j``-th one's score, and the number of
    errors among them is a running count. A threshold is a candidate only at the last
    calibration item of a tie block (all tied items enter together), and the rule
    ``e <= table[j + 1]`` is one integer comparison per item; the largest feasible candidate
    wins.
    """

    def __init__(self, score, errors, alphas, methods, n_cal):
        self.order = np.argsort(score, kind="stable")
        self.v = score[self.order]
        self.err = errors[self.order]
        starts, stops = tie_blocks(self.v)  # stops = positions in the padded cumsum
        self.ties = stops.size < self.v.size
        self.end = np.repeat(stops, stops - starts)  # padded end of each item's block
        self.cum_err = np.r_[0, np.cumsum(self.err)]
        self.dtype = _count_dtype(n_cal)
        self.tables = {
            (m, ia): _max_feasible_errors(m, n_cal, a)[1:].astype(self.dtype)
            for m in methods
            for ia, a in enumerate(alphas)
        }

    def block(self, cal, n_cal):
        b = cal.shape[0]
        # sorted positions of each split's calibration items, in order (exactly n_cal per row)
        pos = np.flatnonzero(cal[:, self.order]).reshape(b, n_cal)
        pos -= np.arange(0, b * self.v.size, self.v.size)[:, None]
        cum_e = np.cumsum(self.err[pos], axis=1, dtype=self.dtype)
        last = None
        if self.ties:  # the next calibration item lies beyond this one's tie block
            last = np.ones((b, n_cal), dtype=bool)
            last[:, :-1] = self.end[pos[:, :-1]] <= pos[:, 1:]
        rows = np.arange(b)
        out = {}
        for key, table in self.tables.items():
            feasible = cum_e <= table
            if last is not None:
                feasible &= last
            j = _last_true(feasible)
            ok = j >= 0
            jj = np.maximum(j, 0)
            p = pos[rows, jj]
            end = self.end[p]
            out[key] = (
                np.where(ok, end - (jj + 1), 0),
                np.where(ok, self.cum_err[end] - cum_e[rows, jj], 0),
                np.where(ok, self.v[p], -np.inf),
            )
        return out


def _group_counts(cal: np.ndarray, order: np.ndarray, starts: np.ndarray, dtype) -> np.ndarray:
    """Calibration items per group, per split: ``(b, n_groups)``.

    ``order`` sorts the items by group and ``starts`` marks where each group begins.
    """
    return np.add.reduceat(cal[:, order], starts, axis=1, dtype=dtype)


def _groups(key: np.ndarray):
    """Stable sort order of integer ``key``, the start of each run and the run's key."""
    order = np.argsort(key, kind="stable")
    ks = key[order]
    starts = np.flatnonzero(np.r_[True, ks[1:] != ks[:-1]])
    return order, starts, ks[starts]


class _FixedSetMethods:
    """Vanilla and the heuristic: the accepted set does not depend on the split.

    Per split, the test counts are totals minus calibration counts; the calibration counts
    come from one pass over groups of items that share (error, heuristic acceptance at each
    alpha).
    """

    def __init__(self, errors, conf, alphas, heuristic):
        cols = [errors] + ([conf >= 1.0 - a for a in alphas] if heuristic else [])
        bits = np.stack(cols, axis=1).astype(np.int64)
        key = bits @ (1 << np.arange(bits.shape[1]))
        self.order, self.starts, gkey = _groups(key)
        g_bits = (gkey[:, None] >> np.arange(bits.shape[1])) & 1  # (groups, columns)
        err_g = g_bits[:, 0].astype(bool)
        # per alpha: groups accepted, groups accepted with an error
        self.acc = [g_bits[:, 1 + i].astype(bool) for i in range(len(alphas) if heuristic else 0)]
        self.err_g = err_g
        self.size = np.diff(np.r_[self.starts, key.size])

    def block(self, cal):
        c = _group_counts(cal, self.order, self.starts, np.int64)
        test = self.size[None, :] - c
        vanilla_err = test[:, self.err_g].sum(axis=1)
        heur = [
            (test[:, acc].sum(axis=1), test[:, acc & self.err_g].sum(axis=1)) for acc in self.acc
        ]
        return vanilla_err, heur


class _ToE:
    """Trust-or-Escalate for all alphas and grid points, one block of splits at a time.

    The accepted set only changes at grid points where some item's confidence cell begins, so
    the grid is cut into runs of points that accept the same items (at most ``n_grid``, at most
    one more than the number of distinct cells). Calibration items and errors are counted per
    run (one pass over the items per split), then accumulated down the runs:
    ``(block, n_runs)`` arrays only. The first point of a run stands for the run: it is where
    fixed-sequence testing lands when it stops inside the run.
    """

    def __init__(self, conf, errors, alphas, n_cal, delta, n_grid, min_accepted):
        self.grid = toe_grid(n_grid)
        g = np.searchsorted(self.grid, conf, side="right")  # accepted at grid index j iff j < g
        self.run_start = np.unique(np.r_[0, g[(g > 0) & (g < self.grid.size)]])
        g = np.searchsorted(self.run_start, g, side="left")  # accepted in run i iff i < g
        self.order, self.starts, gkey = _groups(2 * g + errors)
        self.cell, self.cell_err = gkey // 2, (gkey % 2).astype(bool)
        g_sorted = np.sort(g)
        # number of items with g <= i, i.e. NOT accepted in run i
        self.pos = np.searchsorted(g_sorted, np.arange(self.run_start.size), side="right")
        cum_err = np.r_[0, np.cumsum(errors[np.argsort(g, kind="stable")])]
        self.test_all = (g.size - self.pos, cum_err[-1] - cum_err[self.pos])
        self.kmax = [toe_max_errors(int(n_cal), float(a), float(delta)) for a in alphas]
        self.min_accepted = min_accepted
        self.dtype = _count_dtype(n_cal)

    def block(self, cal, n_cal):
        b, n_cells = cal.shape[0], self.run_start.size + 1
        c = _group_counts(cal, self.order, self.starts, self.dtype)
        per_cell = np.zeros((b, n_cells), dtype=self.dtype)
        per_cell_err = np.zeros((b, n_cells), dtype=self.dtype)
        per_cell_err[:, self.cell[self.cell_err]] = c[:, self.cell_err]
        per_cell[:, self.cell[~self.cell_err]] = c[:, ~self.cell_err]
        per_cell += per_cell_err
        cum = np.cumsum(per_cell, axis=1, dtype=self.dtype)
        cum_err = np.cumsum(per_cell_err, axis=1, dtype=self.dtype)
        n_acc = n_cal - cum[:, :-1]
        n_err = cum_err[:, -1:] - cum_err[:, :-1]
        kept = n_acc >= self.min_accepted  # a prefix of the runs: n_acc is non-increasing
        j_top = kept.sum(axis=1) - 1
        rows = np.arange(b)
        out = []
        for kmax in self.kmax:
            j_fail = _last_true(kept & (n_err > kmax[n_acc]))
            ok = (j_top >= 0) & (j_fail < j_top)
            jj = np.where(ok, j_fail + 1, 0)
            out.append(
                (
                    np.where(ok, self.test_all[0][jj] - n_acc[rows, jj], 0),
                    np.where(ok, self.test_all[1][jj] - n_err[rows, jj], 0),
                    np.where(ok, self.grid[self.run_start[jj]], np.inf),
                )
            )
        return out


def _block_size(n: int, n_splits: int, toe_cells: int, memory_budget_mb: float) -> int:
    """Splits per block so that the block's working arrays stay within the budget.

    Per split and item: 8 bytes of keys, about 12 more of masks, positions and counts; per
    split and Trust-or-Escalate run of grid points (at most ``n_grid + 1``), about 80 bytes.
    """
    per_split = 24 * n + 80 * toe_cells
    return int(np.clip(memory_budget_mb * 2**20 // per_split, 1, n_splits))


def _put(arr: np.ndarray, sl: slice, cols) -> None:
    """Write a block's (accepted, errors, threshold) columns into the split range ``sl``."""
    for i, c in enumerate(cols):
        arr[i, sl] = c


# ------------------------------------------------------------- the built-in selectors' kernels
class _ThresholdKernel:
    """SCOPE or naive: :class:`_ThresholdMethods` for one method."""

    cells = 0

    def __init__(self, method, inputs, errors, alphas, n_cal, settings):
        self.method, self.n_alphas, self.n_cal = method, len(alphas), n_cal
        self.kernel = _ThresholdMethods(inputs["uncertainty"], errors, alphas, [method], n_cal)

    def block(self, cal):
        out = self.kernel.block(cal, self.n_cal)
        return [out[(self.method, ia)] for ia in range(self.n_alphas)]


class _VanillaKernel:
    """Accept every test item: the test errors are the totals minus the calibration ones."""

    cells = 0

    def __init__(self, inputs, errors, alphas, n_cal, settings):
        self.kernel = _FixedSetMethods(errors, None, alphas, heuristic=False)
        self.n_test, self.n_alphas = errors.size - n_cal, len(alphas)

    def block(self, cal):
        errors, _ = self.kernel.block(cal)
        return [(self.n_test, errors, -np.inf)] * self.n_alphas


class _HeuristicKernel:
    """Accept iff confidence >= 1 - alpha: a fixed set, whatever the split."""

    cells = 0

    def __init__(self, inputs, errors, alphas, n_cal, settings):
        self.kernel = _FixedSetMethods(errors, inputs["confidence"], alphas, heuristic=True)
        self.alphas = alphas

    def block(self, cal):
        _, heur = self.kernel.block(cal)
        return [(acc, err, 1.0 - a) for (acc, err), a in zip(heur, self.alphas, strict=True)]


class _ToEKernel:
    """Trust-or-Escalate: :class:`_ToE` with the protocol's settings."""

    def __init__(self, inputs, errors, alphas, n_cal, settings):
        self.cells = settings["n_grid"] + 1
        self.n_cal = n_cal
        self.kernel = _ToE(
            inputs["confidence"],
            errors,
            alphas,
            n_cal,
            settings["delta"],
            settings["n_grid"],
            settings["min_accepted"],
        )

    def block(self, cal):
        return self.kernel.block(cal, self.n_cal)


def _class_reference(cls):
    """The per-split reference of a selector class of :mod:`judgerisk.selective.scope`."""

    def reference(x_cal, e_cal, x_test, alpha, settings):
        sel = cls(alpha=alpha).calibrate(x_cal, e_cal)
        return sel.threshold_, sel.accept(x_test)

    return reference


def _toe_reference(x_cal, e_cal, x_test, alpha, settings):
    thr = toe_threshold_loop(
        x_cal, e_cal, alpha, settings["delta"], settings["n_grid"], settings["min_accepted"]
    )
    return thr, x_test >= thr


def _threshold_kernel(method: str):
    return lambda *args: _ThresholdKernel(method, *args)


#: The five selectors of Methods reference §7, in the order reported:
#: (name, input, kernel, per-split reference, display name, colour).
_BUILTINS: tuple[tuple[str, Needs, Any, Any, str, str], ...] = (
    ("vanilla", None, _VanillaKernel, _class_reference(Vanilla), "Vanilla", "#8c8c8c"),
    (
        "heuristic",
        "confidence",
        _HeuristicKernel,
        _class_reference(Heuristic),
        "Heuristic",
        "#55a868",
    ),
    (
        "naive",
        "uncertainty",
        _threshold_kernel("naive"),
        _class_reference(Naive),
        "Naive",
        "#4c72b0",
    ),
    (
        "scope",
        "uncertainty",
        _threshold_kernel("scope"),
        _class_reference(Scope),
        "SCOPE",
        "#c44e52",
    ),
    ("toe", "confidence", _ToEKernel, _toe_reference, "Trust-or-Escalate", "#8172b2"),
)


def _vectorised_protocol(
    inputs,
    errors,
    alphas,
    selectors,
    n_splits,
    cal_frac,
    seed,
    settings,
    memory_budget_mb,
    progress,
):
    n = errors.size
    n_cal = _check_split_args(n, n_splits, cal_frac)
    kernels = {s.name: s.kernel(inputs, errors, alphas, n_cal, settings) for s in selectors}
    cells = sum(int(getattr(k, "cells", 0)) for k in kernels.values())
    block = _block_size(n, n_splits, cells, memory_budget_mb)
    acc = {m: [np.zeros((3, n_splits)) for _ in alphas] for m in kernels}
    blocks = _mask_blocks(n, n_splits, cal_frac, seed, block)
    n_blocks = -(-n_splits // block)
    for s0, cal in progress_bar(
        blocks, enabled=progress, total=n_blocks, desc="split blocks", delay=2
    ):
        sl = slice(s0, s0 + cal.shape[0])
        for m, kernel in kernels.items():
            for ia, cols in enumerate(kernel.block(cal)):
                _put(acc[m][ia], sl, cols)
    n_test = n - n_cal
    return {m: [_result(*arr, n_test) for arr in cols] for m, cols in acc.items()}


def toe_threshold_loop(
    confidence: npt.ArrayLike,
    errors: npt.ArrayLike,
    alpha: float,
    delta: float = DEFAULT_DELTA,
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


def _loop_protocol(inputs, errors, cal, alphas, selectors, n_test, settings, progress):
    out = {
        s.name: [{f: np.zeros(cal.shape[0]) for f in _FIELDS} for _ in alphas] for s in selectors
    }
    for k in progress_bar(range(cal.shape[0]), enabled=progress, desc="splits"):
        c_mask, t_mask = cal[k], ~cal[k]
        for sel in selectors:
            x = inputs[sel.needs] if sel.needs else np.zeros(errors.size)
            for ia, a in enumerate(alphas):
                thr, acc = sel.reference(x[c_mask], errors[c_mask], x[t_mask], a, settings)
                res = out[sel.name][ia]
                res["n_accepted"][k] = acc.sum()
                res["n_errors"][k] = (acc & errors[t_mask]).sum()
                res["threshold"][k] = thr
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
    methods: Sequence[str | Selector] | None = None,
    n_splits: int = DEFAULT_SPLITS,
    cal_frac: float = 0.5,
    seed: int = 0,
    delta: float = DEFAULT_DELTA,
    n_grid: int = 5000,
    min_accepted: int = 30,
    loop: bool = False,
    memory_budget_mb: float = 256.0,
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
    methods : sequence of str or Selector, optional
        Registered selectors (:data:`judgerisk.selective.registry.SELECTORS`: built in
        ``"vanilla"``, ``"heuristic"``, ``"naive"``, ``"scope"``, ``"toe"``) or
        :class:`~judgerisk.selective.registry.Selector` entries. Default: every registered
        selector whose input is given.
    n_splits : int, default 1000
    cal_frac : float, default 0.5
    seed : int, default 0
        Seed of the splits (:func:`split_masks`); the same seed gives the same splits for every
        method.
    delta, n_grid, min_accepted :
        Trust-or-Escalate's settings (0.1, 5000, 30).
    loop : bool, default False
        Run the plain per-split reference loop instead of the vectorised code (same output).
    memory_budget_mb : float, default 256
        Upper bound for the vectorised code's working arrays: the splits are processed in
        blocks of as many splits as fit (at least one). Any budget gives the same table.
    progress : bool, default False
        Show a progress bar over splits (loop) or blocks of splits (vectorised), once a run
        has lasted more than two seconds.

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
        chosen = [get_selector(m) for m in SELECTORS]
        selectors = [s for s in chosen if s.needs is None or s.needs in inputs]
    else:
        selectors = [get_selector(m) for m in methods]
    for sel in selectors:
        if sel.needs is not None and sel.needs not in inputs:
            raise ValueError(f"method {sel.name!r} needs {sel.needs}=...; it was not given")
    alphas = tuple(check_alpha(a) for a in alphas)
    settings = {"delta": delta, "n_grid": int(n_grid), "min_accepted": int(min_accepted)}
    if loop:
        cal = split_masks(n, n_splits, cal_frac, seed)
        n_test = n - int(cal[0].sum())
        res = _loop_protocol(inputs, errors, cal, alphas, selectors, n_test, settings, progress)
    else:
        res = _vectorised_protocol(
            inputs,
            errors,
            alphas,
            selectors,
            int(n_splits),
            cal_frac,
            seed,
            settings,
            memory_budget_mb,
            progress,
        )
    return _assemble(res, [s.name for s in selectors], alphas, int(n_splits))


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


#: The book's one validity rule: at a level α, SCOPE's guarantee E[FDP] <= α counts as met
#: when the mean FDP over the splits is at most α + ``VALID_SE`` Monte-Carlo standard errors.
#: The rule is applied to many (score, α, data set) cells at once; at 4 s.e. a method whose
#: expected FDP is exactly α fails one cell by Monte-Carlo chance with probability about
#: 3e-5 (one-sided normal tail), so even 60 cells raise a false alarm with probability below
#: 0.2 %, whereas at 2 s.e. (2.3 % per cell) 60 cells would raise one three times in four.
VALID_SE = 4.0


def within_guarantee(
    risk_mean: npt.ArrayLike, alpha: npt.ArrayLike, risk_se: npt.ArrayLike
) -> np.ndarray:
    """``risk_mean <= alpha + VALID_SE * risk_se``: the guarantee met, per cell (bool array).

    Parameters
    ----------
    risk_mean, alpha, risk_se : array-like
        Mean test FDP over the splits, the target level, and the Monte-Carlo standard error
        of the mean (:func:`summarize_protocol`'s ``risk_mean``, ``alpha``, ``risk_se``).
    """
    mean, a, se = (np.asarray(x, dtype=float) for x in (risk_mean, alpha, risk_se))
    return mean <= a + VALID_SE * np.nan_to_num(se)


def summarize_protocol(table: pd.DataFrame) -> pd.DataFrame:
    r"""Mean and standard deviation over splits, per method and alpha.

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
        the marginal FDR :math:`E[E S] / E[S]`), ``pooled_risk_se`` (its delta-method standard
        error over splits, below), ``abstain_all`` (share of splits accepting nothing) and
        ``n_splits``.

    Notes
    -----
    With :math:`V_b` errors among :math:`R_b` accepted items on split :math:`b` and
    :math:`\hat r = \sum_b V_b / \sum_b R_b`, the ratio's standard error is the delta-method
    (ratio-estimator) one, :math:`\mathrm{sd}_b(V_b - \hat r R_b) / (\sqrt{B}\, \bar R)`
    (Cochran, *Sampling Techniques*, 1977, §6.3): the splits are the draws, as for
    ``risk_se``. The book's methods page (§7) shows why the two can differ.
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
    ratio = out["pooled_risk"].reindex(pd.MultiIndex.from_frame(table[["method", "alpha"]]))
    resid = table["n_errors"].to_numpy(float) - ratio.to_numpy() * table["n_accepted"].to_numpy()
    spread = pd.Series(resid, index=table.index).groupby(
        [table["method"], table["alpha"]], observed=True, sort=True
    )
    mean_acc = g["n_accepted"].mean()
    out["pooled_risk_se"] = spread.std(ddof=1) / (
        np.sqrt(out["n_splits"]) * mean_acc.where(acc > 0)
    )
    out["abstain_all"] = g["n_accepted"].apply(lambda x: float((x == 0).mean()))
    return out[
        [
            "coverage_mean",
            "coverage_std",
            "risk_mean",
            "risk_std",
            "risk_se",
            "pooled_risk",
            "pooled_risk_se",
            "abstain_all",
            "n_splits",
        ]
    ]


for _name, _needs, _kernel, _reference, _label, _color in _BUILTINS:
    register_selector(
        _name, needs=_needs, kernel=_kernel, reference=_reference, label=_label, color=_color
    )
