"""Latent measurement model (LMM) of a judge panel's verdict log-odds.

The model decomposes every canonical log-odds ``m_ijc`` (item i, judge j, condition c) as

    m_ijc = a_j q_i + b_j + delta_c + kappa_jc + eps_ijc,   a_j > 0,  delta_0 = kappa_j0 = 0

and is fitted by penalised least squares with block (alternating ridge) updates, three
restarts and the paper's convergence rule (Methods reference §2). Fitted judge and condition
parameters give leave-one-judge-out (LOJO) predictions for items not used in the fit
(Methods reference §3).

Implementation note: the sweeps never loop over items or cells. The data enter a sweep
only through sufficient statistics computed once by :func:`numpy.bincount`: per
item x judge the sum of logits ``S_ij`` and the cell count ``N_ij``, per judge x
condition the sum ``T_jc`` and count ``n_jc``, and (only when cells are missing) the
item x (judge, condition) observation mask ``W``, kept as the list of observed cells, so
that its products are :func:`numpy.bincount` calls over the cells. Every block update is
then a few matrix-vector products of size I x J or a pass over the observed cells. The sweep engine (:class:`Design`,
:class:`Params`, :class:`Penalties`, :class:`Stats`, :class:`Sweeper`, :class:`Rule`,
:func:`run_plain`, :func:`margin_change`) is shared with :mod:`judgerisk.studies.drift`,
which measures the plain sweeps' drift; it is public for that reason but not part of
``__all__`` (the estimator is the stable interface).

References
----------
Methods reference §2–3 (the judgerisk methods specification), after the instance-level panel
reliability (SCUR) paper: "latent measurement model" section and its appendix on the
released estimator.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
from scipy.optimize import minimize
from scipy.special import expit
from sklearn.exceptions import ConvergenceWarning
from threadpoolctl import threadpool_limits

from judgerisk.panel import PanelArrays, PanelError, encode_panel, validate_panel
from judgerisk.validation import DEFAULT_ACCELERATE, check_accelerate

__all__ = [
    "LatentMeasurementModel",
    "BLOCKS",
    "A_BOUNDS",
    "align_to_reference",
]

#: The parameter blocks of one sweep, in the paper's default order [R].
BLOCKS: tuple[str, ...] = ("q", "a", "b", "delta", "kappa")
#: Clip applied to each discrimination update, before the scale fix.
A_BOUNDS: tuple[float, float] = (0.05, 20.0)
_ANDERSON_MEMORY = 6
#: Standard deviation of the restarts' draws of log a_j and b_j (Methods reference §2 [R]).
_RESTART_SD = 0.3


# --------------------------------------------------------------------------------------
# sufficient statistics and parameters
# --------------------------------------------------------------------------------------
@dataclass
class Design:
    """Sufficient statistics of the fit cells (see the module docstring).

    Everything is stored per *observed* pair or cell, never as an items x judges (x
    conditions) array, so the cost of a sweep grows with the number of observed cells: a
    crowdsourced panel, where many judges each see a few items, is as cheap as its cells.
    """

    n_items: int
    n_judges: int
    n_cond: int
    pair_i: np.ndarray  # (P,) item of each observed item x judge pair
    pair_j: np.ndarray  # (P,) judge of each pair
    N: np.ndarray  # (P,) cells per pair
    S: np.ndarray  # (P,) sum of logits per pair
    T: np.ndarray  # (J, C) sum of logits per judge x condition
    njc: np.ndarray  # (J, C) cells per judge x condition
    # observed (pair, judge x condition) cells, each once; None when the panel is complete
    cells: tuple[np.ndarray, np.ndarray] | None
    sum_m2: float
    n_obs: int

    @classmethod
    def from_arrays(cls, arr: PanelArrays) -> Design:
        I, J, C = arr.n_items, arr.n_judges, arr.n_conditions
        m = arr.logit
        ij = arr.item_idx.astype(np.int64) * J + arr.judge_idx
        jc = arr.judge_idx.astype(np.int64) * C + arr.cond_idx
        pairs, pair_of_row = np.unique(ij, return_inverse=True)
        N = np.bincount(pair_of_row, minlength=len(pairs)).astype(np.float64)
        S = np.bincount(pair_of_row, weights=m, minlength=len(pairs))
        T = np.bincount(jc, weights=m, minlength=J * C).reshape(J, C)
        njc = np.bincount(jc, minlength=J * C).reshape(J, C).astype(np.float64)
        cells = None
        if len(m) < I * J * C:
            flat = np.unique(pair_of_row.astype(np.int64) * (J * C) + jc)
            cells = np.divmod(flat, J * C)
        pair_i, pair_j = np.divmod(pairs, J)
        return cls(I, J, C, pair_i, pair_j, N, S, T, njc, cells, float(m @ m), len(m))

    def item_sum(self, x: np.ndarray) -> np.ndarray:
        """Per item, the sum of a per-pair array."""
        return np.bincount(self.pair_i, weights=x, minlength=self.n_items)

    def judge_sum(self, x: np.ndarray) -> np.ndarray:
        """Per judge, the sum of a per-pair array."""
        return np.bincount(self.pair_j, weights=x, minlength=self.n_judges)

    def item_means(self) -> np.ndarray:
        """Mean of each item's logits (the sweeps' start point of q)."""
        return self.item_sum(self.S) / self.item_sum(self.N)

    def products(self, p: Params) -> np.ndarray:
        """``P_ij = a_j q_i`` on the observed pairs."""
        return p.q[self.pair_i] * p.a[self.pair_j]

    def wo(self, o: np.ndarray) -> np.ndarray:
        """``WO_ij = sum_c W_ijc o_jc`` (observed offsets summed per item x judge pair).

        With missing cells this is one :func:`numpy.bincount` over the observed cells.
        """
        if self.cells is None:
            return o.sum(axis=1)[self.pair_j]
        cell_pair, cell_jc = self.cells
        return np.bincount(cell_pair, weights=o.ravel()[cell_jc], minlength=len(self.N))

    def qw(self, q: np.ndarray) -> np.ndarray:
        """``QW_jc = sum_i W_ijc q_i`` (sum of q over the observed cells of each judge x c)."""
        if self.cells is None:
            return np.full((self.n_judges, self.n_cond), q.sum())
        cell_pair, cell_jc = self.cells
        n = self.n_judges * self.n_cond
        return np.bincount(cell_jc, weights=q[self.pair_i[cell_pair]], minlength=n).reshape(
            self.n_judges, self.n_cond
        )


@dataclass
class Params:
    q: np.ndarray
    a: np.ndarray
    b: np.ndarray
    delta: np.ndarray  # (C,), delta[0] == 0
    kappa: np.ndarray  # (J, C), kappa[:, 0] == 0

    def copy(self) -> Params:
        return Params(*(x.copy() for x in (self.q, self.a, self.b, self.delta, self.kappa)))

    def offsets(self) -> np.ndarray:
        """``o_jc = b_j + delta_c + kappa_jc``."""
        return self.b[:, None] + self.delta[None, :] + self.kappa

    def to_vector(self) -> np.ndarray:
        return np.concatenate([self.q, self.a, self.b, self.delta[1:], self.kappa[:, 1:].ravel()])

    @classmethod
    def from_vector(cls, x: np.ndarray, I: int, J: int, C: int) -> Params:
        q, a, b = x[:I], x[I : I + J], x[I + J : I + 2 * J]
        delta = np.zeros(C)
        delta[1:] = x[I + 2 * J : I + 2 * J + C - 1]
        kappa = np.zeros((J, C))
        kappa[:, 1:] = x[I + 2 * J + C - 1 :].reshape(J, C - 1)
        return cls(q.copy(), a.copy(), b.copy(), delta, kappa)


@dataclass
class Penalties:
    q: float
    a: float
    b: float
    delta: float
    kappa: float


class Stats:
    """Fitted margins summarised at one parameter point (for convergence checks)."""

    __slots__ = ("P", "o", "WO", "ssr", "criterion")

    def __init__(self, d: Design, p: Params, lam: Penalties, WO: np.ndarray | None = None):
        self.P = d.products(p)
        self.o = p.offsets()
        self.WO = d.wo(self.o) if WO is None else WO
        # SSR = sum m^2 - 2 sum m mu + sum mu^2, each term from the sufficient statistics
        cross = self.P @ d.S + np.sum(self.o * d.T)
        sq = (d.N * self.P) @ self.P + 2.0 * (self.P @ self.WO) + np.sum(d.njc * self.o * self.o)
        self.ssr = max(d.sum_m2 - 2.0 * cross + sq, 0.0)
        self.criterion = (self.ssr + lam.q * p.q @ p.q + lam.b * p.b @ p.b) / d.n_obs


def _objective(d: Design, p: Params, lam: Penalties, ssr: float) -> float:
    """Penalised objective F (Methods reference §2) given the residual sum of squares."""
    return float(
        ssr
        + lam.q * p.q @ p.q
        + lam.a * np.sum((p.a - 1.0) ** 2)
        + lam.b * p.b @ p.b
        + lam.delta * p.delta[1:] @ p.delta[1:]
        + lam.kappa * np.sum(p.kappa[:, 1:] ** 2)
    )


def _objective_grad(x: np.ndarray, d: Design, lam: Penalties) -> tuple[float, np.ndarray]:
    """F and its gradient over the vector (q, a, b, delta[1:], kappa[:, 1:])."""
    I, J, C = d.n_items, d.n_judges, d.n_cond
    p = Params.from_vector(x, I, J, C)
    st = Stats(d, p, lam)
    R = d.S - d.N * st.P - st.WO  # per pair: residual sums over conditions
    QW = d.qw(p.q)
    Rjc = d.T - p.a[:, None] * QW - d.njc * st.o  # (J, C) residual sums over items
    g_q = -2.0 * d.item_sum(R * p.a[d.pair_j]) + 2.0 * lam.q * p.q
    g_a = -2.0 * d.judge_sum(R * p.q[d.pair_i]) + 2.0 * lam.a * (p.a - 1.0)
    g_b = -2.0 * Rjc.sum(axis=1) + 2.0 * lam.b * p.b
    g_d = -2.0 * Rjc[:, 1:].sum(axis=0) + 2.0 * lam.delta * p.delta[1:]
    g_k = -2.0 * Rjc[:, 1:] + 2.0 * lam.kappa * p.kappa[:, 1:]
    grad = np.concatenate([g_q, g_a, g_b, g_d, g_k.ravel()])
    return _objective(d, p, lam, st.ssr), grad


# --------------------------------------------------------------------------------------
# block updates: each is the exact ridge minimiser of F given the other blocks
# --------------------------------------------------------------------------------------
class Sweeper:
    """Runs block updates on a parameter point, caching the two heavy products."""

    def __init__(self, d: Design, lam: Penalties, order: Sequence[str]):
        self.d, self.lam, self.order = d, lam, tuple(order)
        self._wo: np.ndarray | None = None
        self._qw: np.ndarray | None = None
        self.clipped = False

    def set_wo(self, WO: np.ndarray | None) -> None:
        self._wo = WO

    def _WO(self, p: Params) -> np.ndarray:
        if self._wo is None:
            self._wo = self.d.wo(p.offsets())
        return self._wo

    def _QW(self, p: Params) -> np.ndarray:
        if self._qw is None:
            self._qw = self.d.qw(p.q)
        return self._qw

    def update_q(self, p: Params) -> None:
        d, a = self.d, p.a
        aj = a[d.pair_j]
        p.q = d.item_sum((d.S - self._WO(p)) * aj) / (d.item_sum(d.N * aj * aj) + self.lam.q)
        self._qw = None

    def update_a(self, p: Params, rescale: bool = True) -> None:
        d, q, lam = self.d, p.q, self.lam.a
        qi = q[d.pair_i]
        a = (d.judge_sum((d.S - self._WO(p)) * qi) + lam) / (d.judge_sum(d.N * qi * qi) + lam)
        self.clipped = bool(np.any((a <= A_BOUNDS[0]) | (a >= A_BOUNDS[1])))
        p.a = np.clip(a, *A_BOUNDS)
        if rescale:
            g = np.exp(np.mean(np.log(p.a)))
            p.a = p.a / g
            p.q = p.q * g
            if self._qw is not None:
                self._qw = self._qw * g

    def update_b(self, p: Params) -> None:
        d = self.d
        num = (
            d.T.sum(axis=1)
            - p.a * self._QW(p).sum(axis=1)
            - (d.njc * (p.delta[None, :] + p.kappa)).sum(axis=1)
        )
        p.b = num / (d.njc.sum(axis=1) + self.lam.b)
        self._wo = None

    def update_delta(self, p: Params) -> None:
        d = self.d
        if d.n_cond < 2:
            return
        T, n = d.T[:, 1:], d.njc[:, 1:]
        num = (T - p.a[:, None] * self._QW(p)[:, 1:] - n * (p.b[:, None] + p.kappa[:, 1:])).sum(0)
        p.delta = p.delta.copy()
        p.delta[1:] = num / (n.sum(axis=0) + self.lam.delta)
        self._wo = None

    def update_kappa(self, p: Params, centre: bool = True) -> None:
        d = self.d
        if d.n_cond < 2:
            return
        T, n = d.T[:, 1:], d.njc[:, 1:]
        k = (T - p.a[:, None] * self._QW(p)[:, 1:] - n * (p.b[:, None] + p.delta[None, 1:])) / (
            n + self.lam.kappa
        )
        p.kappa = p.kappa.copy()
        p.delta = p.delta.copy()
        if centre:
            shift = k.mean(axis=0)
            k = k - shift
            p.delta[1:] += shift
        p.kappa[:, 1:] = k
        self._wo = None

    def sweep(self, p: Params) -> Params:
        """One sweep of block updates in ``self.order`` on a copy of ``p``."""
        p = p.copy()
        self._qw = None
        for block in self.order:
            getattr(self, f"update_{block}")(p)
        return p


# --------------------------------------------------------------------------------------
# convergence bookkeeping
# --------------------------------------------------------------------------------------
def margin_change(d: Design, old: Stats, new: Stats) -> tuple[float, float]:
    """RMS and an upper bound of the max change of the fitted margins over the fit cells.

    ``dmu_ijc = A_ij + D_jc`` with ``A = dP`` (item x judge) and ``D = do`` (judge x c).
    The bound ``max(|A_ij + max_c D_jc|, |A_ij + min_c D_jc|)`` is exact when every
    condition of (i, j) is observed; :func:`_max_change_exact` is used otherwise.
    """
    A = new.P - old.P
    D = new.o - old.o
    dWO = new.WO - old.WO  # = sum_c W_ijc D_jc (WO is linear in o)
    ss = (d.N * A) @ A + 2.0 * (A @ dWO) + np.sum(d.njc * D * D)
    rms = float(np.sqrt(max(ss, 0.0) / d.n_obs))
    observed = d.njc > 0
    dmax = np.where(observed, D, -np.inf).max(axis=1)
    dmin = np.where(observed, D, np.inf).min(axis=1)
    dmax = np.where(np.isfinite(dmax), dmax, 0.0)
    dmin = np.where(np.isfinite(dmin), dmin, 0.0)
    bound = np.maximum(np.abs(A + dmax[d.pair_j]), np.abs(A + dmin[d.pair_j]))
    return rms, float(np.max(bound, initial=0.0))


def _max_change_exact(d: Design, old: Stats, new: Stats) -> float:
    A = new.P - old.P
    D = new.o - old.o
    assert d.cells is not None
    cell_pair, cell_jc = d.cells
    return float(np.max(np.abs(A[cell_pair] + D.ravel()[cell_jc]), initial=0.0))


@dataclass
class _RunResult:
    params: Params
    converged: bool
    n_iter: int
    criterion: float
    history: np.ndarray
    ssr: float


class Rule:
    """The paper's stopping rule: three successive sweeps under all three tolerances."""

    def __init__(self, tol_rms: float, tol_max: float, tol_obj: float, patience: int):
        self.tol_rms, self.tol_max, self.tol_obj, self.patience = (
            tol_rms,
            tol_max,
            tol_obj,
            patience,
        )
        self.streak = 0

    def update(self, d: Design, old: Stats, new: Stats) -> bool:
        rel = abs(new.criterion - old.criterion) / max(abs(old.criterion), 1e-300)
        ok = rel < self.tol_obj
        if ok:
            rms, max_bound = margin_change(d, old, new)
            ok = rms < self.tol_rms
            if ok and max_bound >= self.tol_max:
                ok = d.cells is not None and _max_change_exact(d, old, new) < self.tol_max
        self.streak = self.streak + 1 if ok else 0
        return self.streak >= self.patience


def run_plain(
    d: Design,
    lam: Penalties,
    p: Params,
    order: Sequence[str],
    rule: Rule,
    max_iter: int,
    anderson: bool,
) -> _RunResult:
    """Sweep until the rule holds or ``max_iter`` sweeps; optionally Anderson-accelerated.

    The rule compares each sweep's output with its input, so for plain sweeps it is the
    change between successive sweeps; with Anderson acceleration it is the change a plain
    sweep would still make from the extrapolated point (the fixed-point residual).
    """
    sw = Sweeper(d, lam, order)
    I, J, C = d.n_items, d.n_judges, d.n_cond
    st = Stats(d, p, lam)
    history = []
    converged = False
    xs: list[np.ndarray] = []
    gs: list[np.ndarray] = []
    best_res = np.inf
    new = p
    st_new = st
    for _ in range(max_iter):
        sw.set_wo(st.WO)
        new = sw.sweep(p)
        st_new = Stats(d, new, lam)
        history.append(st_new.criterion)
        if rule.update(d, st, st_new):
            converged = True
            break
        if not anderson or sw.clipped:
            # plain sweep; a clipped discrimination makes the map non-smooth, where the
            # extrapolation stalls, so Anderson then restarts its memory
            xs, gs = [], []
            p, st = new, st_new
            continue
        # Anderson acceleration (type II) of the sweep map x -> G(x), safeguarded
        x, gx = p.to_vector(), new.to_vector()
        res = float(np.sqrt(np.sum((gx - x) ** 2)))
        if res > 2.0 * best_res:
            # diverging: drop the memory, take the plain step, and measure divergence from
            # here on (a best residual kept across resets would call every later plain
            # step "diverging" and silently turn the acceleration off)
            xs, gs = [], []
            best_res = res
        best_res = min(best_res, res)
        xs.append(x)
        gs.append(gx)
        if len(xs) > _ANDERSON_MEMORY + 1:
            xs.pop(0)
            gs.pop(0)
        if len(xs) < 2:
            p, st = new, st_new
            continue
        X, G = np.array(xs), np.array(gs)
        F = G - X
        dF, dG = np.diff(F, axis=0), np.diff(G, axis=0)
        # least squares min ||F[-1] - dF.T gamma|| through the m x m normal equations
        # (m <= memory; a LAPACK lstsq on the tall n x m matrix costs ~100x more here),
        # with a relative ridge that keeps them solvable when the differences are collinear
        gram = dF @ dF.T
        gram[np.diag_indices_from(gram)] += 1e-12 * np.trace(gram) + 1e-300
        gamma = np.linalg.solve(gram, dF @ F[-1])
        z = G[-1] - gamma @ dG
        trial = Params.from_vector(z, I, J, C)
        trial.a = np.clip(trial.a, *A_BOUNDS)
        st_trial = Stats(d, trial, lam)
        if np.isfinite(st_trial.criterion) and st_trial.criterion <= 1.5 * st_new.criterion:
            p, st = trial, st_trial
        else:
            xs, gs = [], []
            p, st = new, st_new
    return _RunResult(
        new, converged, len(history), st_new.criterion, np.asarray(history), st_new.ssr
    )


def _run_lbfgs(
    d: Design,
    lam: Penalties,
    p: Params,
    order: Sequence[str],
    rule: Rule,
    max_iter: int,
) -> _RunResult:
    """A few plain sweeps, then L-BFGS-B on F over all parameters (the exact minimiser).

    The paper's rule is applied to successive L-BFGS iterates; the iteration stops as soon
    as it holds (or at L-BFGS's own convergence, which is then checked against the rule).
    """
    warm = min(20, max_iter)
    head = run_plain(d, lam, p, order, Rule(0, 0, 0, 10**9), warm, anderson=False)
    I, J, C = d.n_items, d.n_judges, d.n_cond
    x0 = head.params.to_vector()
    bounds: list[tuple[float | None, float | None]] = [(None, None)] * len(x0)
    bounds[I : I + J] = [A_BOUNDS] * J
    history = list(head.history)
    state: dict[str, Any] = {"st": Stats(d, head.params, lam), "converged": False, "x": x0}

    def callback(intermediate_result):
        x = intermediate_result.x
        q = Params.from_vector(x, I, J, C)
        st_new = Stats(d, q, lam)
        history.append(st_new.criterion)
        state["x"] = x
        if rule.update(d, state["st"], st_new):
            state["converged"] = True
            state["st"] = st_new
            raise StopIteration
        state["st"] = st_new

    minimize(
        _objective_grad,
        x0,
        args=(d, lam),
        jac=True,
        method="L-BFGS-B",
        bounds=bounds,
        callback=callback,
        options={"maxiter": max(max_iter - warm, 1), "ftol": 0.0, "gtol": 1e-10, "maxcor": 20},
    )
    params = Params.from_vector(state["x"], I, J, C)
    st = Stats(d, params, lam)
    return _RunResult(
        params, state["converged"], len(history), st.criterion, np.asarray(history), st.ssr
    )


def _start_point(q0: np.ndarray, J: int, C: int, rng: np.random.Generator | None) -> Params:
    """Start of a restart (Methods reference §2, corrected restarts [R]).

    The first restart (``rng=None``) starts at ``a = 1, b = delta = kappa = 0`` and ``q_i``
    = mean of item i's logits. Later restarts draw ``log a_j ~ N(0, 0.3^2)`` and
    ``b_j ~ N(0, 0.3^2)``: the blocks the first (q) update reads, so the restart really
    starts elsewhere (a jitter on q alone is overwritten by the first q update).
    """
    a, b = np.ones(J), np.zeros(J)
    if rng is not None:
        a = np.exp(rng.normal(0.0, _RESTART_SD, J))
        b = rng.normal(0.0, _RESTART_SD, J)
    return Params(q0.copy(), a, b, np.zeros(C), np.zeros((J, C)))


def _restart_spread(arr: PanelArrays, runs: list[_RunResult], kept: int):
    """Per restart: max |p_hat - p_hat of the kept restart| over the fit cells, and the
    criterion minus the kept restart's; plus the largest pairwise |Δp_hat|."""
    p_hat = np.array([expit(_margins(arr, r.params)) for r in runs])
    dp_kept = np.abs(p_hat - p_hat[kept]).max(axis=1)
    pairwise = float(max(np.abs(p_hat - row).max() for row in p_hat))
    return dp_kept, pairwise


def _margins(arr: PanelArrays, p: Params) -> np.ndarray:
    """Fitted margins ``a_j q_i + b_j + delta_c + kappa_jc`` of every cell of ``arr``."""
    return p.a[arr.judge_idx] * p.q[arr.item_idx] + p.offsets()[arr.judge_idx, arr.cond_idx]


# --------------------------------------------------------------------------------------
# the estimator
# --------------------------------------------------------------------------------------
class LatentMeasurementModel:
    r"""Latent measurement model of a judge panel, fitted by block ridge updates.

    Parameters
    ----------
    lambda_q, lambda_a, lambda_b, lambda_delta, lambda_kappa : float
        Ridge strengths. With F/2 as the negative log posterior and unit noise variance
        the priors are ``q, b, delta, kappa ~ N(0, 1/lambda)`` and
        ``a ~ N(1, 1/lambda_a)``: with the defaults ``q_i, b_j ~ N(0, 1)``,
        ``a_j ~ N(1, 1)``, ``delta_c ~ N(0, 1/5)``, ``kappa_jc ~ N(0, 1/10)``.
    n_restarts : int, default 3
        Restarts; the first starts at ``a = 1, b = delta = kappa = 0`` and ``q_i`` = mean
        of item i's logits, the others draw ``log a_j ~ N(0, 0.3^2)`` and
        ``b_j ~ N(0, 0.3^2)`` [R] (the blocks the first q update reads).
    max_iter : int, default 700
        Nominal sweeps per restart.
    max_iter_extended : int, default 2100
        The sweeps are extended up to this many while the rule is not met; ``n_iter_ >
        max_iter`` shows that the extension was used.
    tol_rms, tol_max, tol_obj : float
        Convergence rule: RMS change of the fitted margins over the fit cells
        ``< tol_rms``, max change ``< tol_max`` and relative change of the criterion
        ``< tol_obj``, for ``patience`` successive sweeps.
    patience : int, default 3
    update_order : tuple of str, default ("q", "a", "b", "delta", "kappa")
        Order of the block updates in a sweep [R: order]; any permutation of
        :data:`BLOCKS`. The scale fix follows the ``a`` update and the judge-centring of
        kappa follows the ``kappa`` update wherever they sit.
    accelerate : {"anderson", "lbfgs", "none"} or None, default "anderson"
        ``"anderson"`` (the default, :data:`judgerisk.validation.DEFAULT_ACCELERATE`, shared
        with the CLI and the report):
        Anderson acceleration (memory 6, safeguarded; plain sweeps while a discrimination
        sits at its clip) of the paper's sweep map, which has the same fixed points. The
        plain sweeps drift along ``q -> q + t, b -> b - a t`` (see Notes) and on panels
        with missing cells often never meet the stopping rule; the accelerated sweeps meet
        the same, unchanged rule in tens of sweeps. ``"none"`` (or ``None``): the literal
        plain sweeps.
        ``"lbfgs"``: 20 plain sweeps, then L-BFGS-B on F over all parameters: the exact
        minimiser of F, which differs slightly from the sweeps' fixed point (see Notes);
        the rule is applied to the L-BFGS iterates.
    random_state : int, numpy.random.Generator or None
        Seed of the restarts' draws.

    Attributes
    ----------
    q_ : pandas.Series
        Latent preference by item (``q > 0`` favours the original answer A).
    a_, b_, sigma_ : pandas.Series
        Discrimination, bias and residual scale by judge.
    delta_ : pandas.Series
        Condition effect by condition (0 for ``original``).
    kappa_ : pandas.DataFrame
        Judge x condition interaction (0 for ``original``).
    converged_ : bool
        Whether the kept restart met the convergence rule.
    n_iter_ : int
        Sweeps run by the kept restart (L-BFGS iterations count as sweeps).
    criterion_ : float
        ``(sum_O r^2 + lambda_q sum q^2 + lambda_b sum b^2) / |O|`` of the kept restart [R].
    objective_ : float
        The penalised objective F at the kept restart.
    history_ : pandas.Series
        Criterion after each sweep of the kept restart (index = sweep number).
    histories_ : dict of int -> pandas.Series
        The same for every restart (for convergence plots).
    restarts_ : pandas.DataFrame
        One row per restart: ``converged, n_iter, extended, criterion, objective, kept,
        max_abs_dp_hat, criterion_gap`` (see Notes).
    restart_spread_ : dict
        ``max_abs_dp_hat`` (largest pairwise ``max |Δp_hat|`` between restarts over the fit
        cells) and ``criterion_range`` (max - min criterion over the restarts).
    items_, judges_, conditions_ :
        The fit's items, judges and conditions.

    Notes
    -----
    Model and objective (Methods reference §2), over the observed fit cells O:

    .. math::

        m_{ijc} = a_j q_i + b_j + \delta_c + \kappa_{jc} + \varepsilon_{ijc},

        F = {} & \sum_O (m - \mu)^2 + \lambda_q\sum_i q_i^2 + \lambda_a\sum_j (a_j-1)^2 \\
            & + \lambda_b\sum_j b_j^2 + \lambda_\delta\sum_{c\ne0}\delta_c^2
            + \lambda_\kappa\sum_{j,c\ne0}\kappa_{jc}^2.

    Each block update is the exact ridge minimiser of F given the other blocks. Two
    identifiability steps are *not* minimisers of F: after the ``a`` update,
    ``g = exp(mean_j log a_j)``, ``a <- a / g``, ``q <- g q`` (it preserves every
    ``a_j q_i`` but changes the penalties), and after the ``kappa`` update the judge-mean
    of each ``kappa_{.c}`` moves into ``delta_c``. The sweeps' fixed point is therefore
    close to, but not exactly, the minimiser of F, and near it the sweeps can move very
    slowly; ``converged_`` and a :class:`~sklearn.exceptions.ConvergenceWarning` report a
    fit that did not meet the rule.

    Residual scale per judge (not used to reweight):
    :math:`\sigma_j^2 = n_j^{-1}\sum_{O_j}(m - \hat\mu)^2`.

    Restarts [R]: restart 0 starts at ``a = 1, b = delta = kappa = 0``, ``q_i`` = mean of
    item i's logits; each later restart draws ``log a_j ~ N(0, 0.3^2)`` and
    ``b_j ~ N(0, 0.3^2)``. ``restarts_`` reports, per restart, ``max_abs_dp_hat`` (max over
    the fit cells of ``|p_hat - p_hat of the kept restart|``, ``p_hat = sigmoid(mu)``) and
    ``criterion_gap`` (criterion minus the kept restart's); ``restart_spread_`` holds the
    largest pairwise ``|Δp_hat|`` and the criterion's range over the restarts.

    The drift: ``q -> q + t``, ``b -> b - a t`` leaves every margin ``a_j q_i + b_j``
    unchanged, and neither the scale fix nor the kappa centring removes it; only the
    ridges on q and b pin ``t``, and the plain sweeps contract it by a factor close to 1
    per sweep (about ``1 - 2e-4`` on a 2,000-item panel). The stopping rule watches the
    margins and the criterion, so it cannot see ``t`` settle, and on panels with missing
    cells the plain sweeps end far from the fixed point along ``t`` (chapter 3 of the
    book shows it).

    With only the original condition, delta and kappa are absent and the model is
    ``m = a_j q_i + b_j + eps``.

    References
    ----------
    Methods reference §2–3; the SCUR paper (instance-level reliability of LLM judge panels),
    latent measurement model and appendix on the estimator.
    """

    def __init__(
        self,
        lambda_q: float = 1.0,
        lambda_a: float = 1.0,
        lambda_b: float = 1.0,
        lambda_delta: float = 5.0,
        lambda_kappa: float = 10.0,
        n_restarts: int = 3,
        max_iter: int = 700,
        max_iter_extended: int = 2100,
        tol_rms: float = 1e-6,
        tol_max: float = 1e-5,
        tol_obj: float = 1e-7,
        patience: int = 3,
        update_order: Sequence[str] = BLOCKS,
        accelerate: str | None = DEFAULT_ACCELERATE,
        random_state: int | np.random.Generator | None = None,
    ) -> None:
        self.lambda_q = lambda_q
        self.lambda_a = lambda_a
        self.lambda_b = lambda_b
        self.lambda_delta = lambda_delta
        self.lambda_kappa = lambda_kappa
        self.n_restarts = n_restarts
        self.max_iter = max_iter
        self.max_iter_extended = max_iter_extended
        self.tol_rms = tol_rms
        self.tol_max = tol_max
        self.tol_obj = tol_obj
        self.patience = patience
        self.update_order = update_order
        self.accelerate = accelerate
        self.random_state = random_state

    # ---------------------------------------------------------------- checks
    def _check_params(self) -> Penalties:
        lam = Penalties(
            self.lambda_q, self.lambda_a, self.lambda_b, self.lambda_delta, self.lambda_kappa
        )
        for name, value in vars(lam).items():
            if not (np.isfinite(value) and value >= 0):
                raise ValueError(f"lambda_{name}={value!r} must be a finite number >= 0")
        if sorted(self.update_order) != sorted(BLOCKS):
            raise ValueError(
                f"update_order={tuple(self.update_order)!r} must be a permutation of {BLOCKS}"
            )
        check_accelerate(self.accelerate)
        if int(self.n_restarts) < 1:
            raise ValueError(f"n_restarts={self.n_restarts!r} must be >= 1")
        if not 1 <= int(self.max_iter) <= int(self.max_iter_extended):
            raise ValueError(
                f"need 1 <= max_iter ({self.max_iter}) <= max_iter_extended "
                f"({self.max_iter_extended})"
            )
        if int(self.patience) < 1:
            raise ValueError(f"patience={self.patience!r} must be >= 1")
        return lam

    # ---------------------------------------------------------------- fit
    def fit(
        self, panel: pd.DataFrame, y: npt.ArrayLike | None = None, check_input: bool = True
    ) -> LatentMeasurementModel:
        """Fit the model to every cell of a panel (normally the fit split's items).

        Parameters
        ----------
        panel : pandas.DataFrame
            A panel (validated here); only ``item, judge, condition, logit`` are used.
        y : ignored
            No gold label is used.
        check_input : bool, default True
            Validate the panel (:func:`judgerisk.panel.validate_panel`). ``False`` is for
            callers that pass rows of a panel they validated already (cross-fitting's folds):
            the checks are skipped, so anything else gives undefined results.

        Returns
        -------
        self
        """
        lam = self._check_params()
        if check_input:
            panel = validate_panel(panel, conditions=None)
        arr = encode_panel(panel)
        d = Design.from_arrays(arr)
        rng = np.random.default_rng(self.random_state)

        q0 = d.item_means()
        # the sweeps' products are vectors and thin matrices: one BLAS thread is as fast, and
        # avoids the threads' synchronisation cost on a busy machine (and keeps the numbers
        # independent of the thread count)
        with threadpool_limits(limits=1, user_api="blas"):
            runs = [self._run(d, lam, q0, r, rng) for r in range(int(self.n_restarts))]

        crit = np.array([r.criterion for r in runs])
        conv = np.array([r.converged for r in runs])
        pool = np.flatnonzero(conv) if conv.any() else np.arange(len(runs))
        kept = int(pool[np.argmin(crit[pool])])
        if not conv.any():
            warnings.warn(
                f"LatentMeasurementModel: no restart met the convergence rule within "
                f"{self.max_iter_extended} sweeps (rms < {self.tol_rms}, max < {self.tol_max}, "
                f"relative criterion change < {self.tol_obj} for {self.patience} sweeps); "
                f"keeping the restart with the smallest criterion ({crit[kept]:.6g}); "
                "converged_ is False",
                ConvergenceWarning,
                stacklevel=2,
            )
        best = runs[kept]
        dp_kept, pairwise = _restart_spread(arr, runs, kept)
        self._store(arr, d, lam, best)
        self.converged_ = bool(best.converged)
        self.n_iter_ = int(best.n_iter)
        self.criterion_ = float(best.criterion)
        self.history_ = pd.Series(
            best.history,
            index=pd.RangeIndex(1, len(best.history) + 1, name="sweep"),
            name="criterion",
        )
        self.histories_ = {
            r: pd.Series(
                run.history,
                index=pd.RangeIndex(1, len(run.history) + 1, name="sweep"),
                name="criterion",
            )
            for r, run in enumerate(runs)
        }
        self.restarts_ = pd.DataFrame(
            {
                "converged": conv,
                "n_iter": [r.n_iter for r in runs],
                "extended": [r.n_iter > self.max_iter for r in runs],
                "criterion": crit,
                "objective": [_objective(d, r.params, lam, r.ssr) for r in runs],
                "kept": np.arange(len(runs)) == kept,
                "max_abs_dp_hat": dp_kept,
                "criterion_gap": crit - crit[kept],
            },
            index=pd.RangeIndex(len(runs), name="restart"),
        )
        self.restart_spread_ = {
            "max_abs_dp_hat": pairwise,
            "criterion_range": float(crit.max() - crit.min()),
        }
        return self

    def _run(self, d: Design, lam: Penalties, q0: np.ndarray, r: int, rng) -> _RunResult:
        """One restart: its start point (restart 0 deterministic), then the sweeps."""
        J, C = d.n_judges, d.n_cond
        p = _start_point(q0, J, C, rng if r > 0 else None)
        rule = Rule(self.tol_rms, self.tol_max, self.tol_obj, int(self.patience))
        accelerate = check_accelerate(self.accelerate)
        if accelerate == "lbfgs":
            res = _run_lbfgs(d, lam, p, self.update_order, rule, int(self.max_iter_extended))
        else:
            res = run_plain(
                d,
                lam,
                p,
                self.update_order,
                rule,
                int(self.max_iter_extended),
                anderson=accelerate == "anderson",
            )
        return res

    def _store(self, arr: PanelArrays, d: Design, lam: Penalties, res: _RunResult) -> None:
        p = res.params
        conds = pd.Index(arr.conditions, name="condition")
        judges = pd.Index(arr.judges, name="judge")
        self.items_ = arr.items
        self.judges_ = judges
        self.conditions_ = tuple(arr.conditions)
        self.q_ = pd.Series(p.q, index=arr.items, name="q")
        self.a_ = pd.Series(p.a, index=judges, name="a")
        self.b_ = pd.Series(p.b, index=judges, name="b")
        self.delta_ = pd.Series(p.delta, index=conds, name="delta")
        self.kappa_ = pd.DataFrame(p.kappa, index=judges, columns=conds)
        r2 = (arr.logit - _margins(arr, p)) ** 2
        nj = np.bincount(arr.judge_idx, minlength=d.n_judges)
        ssr_j = np.bincount(arr.judge_idx, weights=r2, minlength=d.n_judges)
        self.sigma_ = pd.Series(np.sqrt(ssr_j / nj), index=judges, name="sigma")
        self.objective_ = _objective(d, p, lam, float(r2.sum()))

    # ---------------------------------------------------------------- predictions
    def _check_fitted(self) -> None:
        if not hasattr(self, "q_"):
            raise RuntimeError("LatentMeasurementModel is not fitted yet; call fit(panel)")

    def _codes(
        self, panel: pd.DataFrame, check_input: bool = True
    ) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
        """Validate a panel and map its judges / conditions to the fit's codes."""
        self._check_fitted()
        if check_input:
            panel = validate_panel(panel, conditions=None)
        j = self.judges_.get_indexer(panel["judge"])
        c = pd.Index(self.conditions_).get_indexer(panel["condition"])
        problems = []
        if (j < 0).any():
            names = sorted(set(panel.loc[j < 0, "judge"]))
            problems.append(f"judge(s) {names} not in the fit (fit judges: {list(self.judges_)})")
        if (c < 0).any():
            names = sorted(set(panel.loc[c < 0, "condition"]))
            problems.append(
                f"condition(s) {names} not in the fit (fit conditions: {list(self.conditions_)})"
            )
        if problems:
            raise PanelError("cannot predict: " + "; ".join(problems))
        return panel, j, c

    def _assemble(self, panel, j, c, q, name: str) -> pd.DataFrame:
        a = self.a_.to_numpy()
        offsets = self.b_.to_numpy()[:, None] + self.delta_.to_numpy()[None, :]
        offsets = offsets + self.kappa_.to_numpy()
        logit_hat = a[j] * q + offsets[j, c]
        return panel.assign(**{name: q, "logit_hat": logit_hat, "p_hat": expit(logit_hat)})

    def predict_loo(self, panel: pd.DataFrame, check_input: bool = True) -> pd.DataFrame:
        r"""Leave-one-judge-out predictions for every cell of a panel (Methods reference §3).

        Parameters
        ----------
        panel : pandas.DataFrame
            A panel whose items need not be in the fit (that is the purpose); its judges
            and conditions must be.
        check_input : bool, default True
            As in :meth:`fit`.

        Returns
        -------
        pandas.DataFrame
            The validated panel's rows plus ``q_loo`` (:math:`q_i^{(-j)}`), ``logit_hat``
            and ``p_hat``.

        Notes
        -----
        .. math::

            q_i^{(-j)} = \frac{\sum_{(k,c)\in O_i, k\ne j} a_k (m_{ikc} - b_k - \delta_c
            - \kappa_{kc})}{\sum_{(k,c)\in O_i, k\ne j} a_k^2 + \lambda_q},

            \hat p_{ijc} = \sigma(a_j q_i^{(-j)} + b_j + \delta_c + \kappa_{jc}).

        Every condition of the held-out judge is excluded. An item seen by one judge only
        has no other judge, so :math:`q_i^{(-j)} = 0` (the prior mean) and
        :math:`\hat p_{ijc} = \sigma(b_j + \delta_c + \kappa_{jc})`.

        Raises
        ------
        PanelError
            When the panel has judges or conditions that the fit did not see.
        """
        panel, j, c = self._codes(panel, check_input)
        items = pd.Index(pd.unique(panel["item"]))
        i = items.get_indexer(panel["item"])
        J = len(self.judges_)
        a = self.a_.to_numpy()
        offsets = (
            self.b_.to_numpy()[:, None] + self.delta_.to_numpy()[None, :] + self.kappa_.to_numpy()
        )
        m = panel["logit"].to_numpy(dtype=np.float64)
        num_cell = a[j] * (m - offsets[j, c])
        den_cell = a[j] ** 2
        ij = i * J + j
        n_ij = len(items) * J
        num_ij = np.bincount(ij, weights=num_cell, minlength=n_ij)
        den_ij = np.bincount(ij, weights=den_cell, minlength=n_ij)
        seen_ij = np.bincount(ij, minlength=n_ij) > 0
        num_i = num_ij.reshape(-1, J).sum(axis=1)
        den_i = den_ij.reshape(-1, J).sum(axis=1)
        n_judges_i = seen_ij.reshape(-1, J).sum(axis=1)
        # leave judge j out: totals of the item minus judge j's own cells
        q_loo = (num_i[i] - num_ij[ij]) / (den_i[i] - den_ij[ij] + self.lambda_q)
        q_loo = np.where(n_judges_i[i] > 1, q_loo, 0.0)
        return self._assemble(panel, j, c, q_loo, "q_loo")

    def fitted(self, panel: pd.DataFrame) -> pd.DataFrame:
        """In-sample predictions ``a_j q_i + b_j + delta_c + kappa_jc`` for fit items.

        Returns the validated panel's rows plus ``q`` (the fitted ``q_i``), ``logit_hat``
        and ``p_hat``. Raises :class:`~judgerisk.panel.PanelError` for items, judges or
        conditions not in the fit.
        """
        panel, j, c = self._codes(panel)
        i = self.items_.get_indexer(panel["item"])
        if (i < 0).any():
            missing = list(pd.unique(panel.loc[i < 0, "item"]))
            raise PanelError(
                f"fitted() needs fit items; {len(missing)} item(s) not in the fit "
                f"(first: {missing[:10]}); use predict_loo for new items"
            )
        return self._assemble(panel, j, c, self.q_.to_numpy()[i], "q")


def align_to_reference(
    q_hat: pd.Series, a_hat: pd.Series, b_hat: pd.Series, q_ref: pd.Series
) -> tuple[pd.Series, pd.Series, pd.Series]:
    """Undo the LMM's affine non-identifiability against a reference latent scale.

    ``a_j q_i + b_j`` is unchanged by ``q -> s q + t``, ``a -> a / s``, ``b -> b - a t / s``
    (s > 0). This picks ``s, t`` by least squares of ``q_ref`` on ``q_hat`` over common
    items and returns the transformed ``(q, a, b)``; it is how recovery against a
    simulator's truth is measured (the model's own scale fix is ``prod a_j = 1``).

    Parameters
    ----------
    q_hat, a_hat, b_hat : pandas.Series
        Fitted latent preference (by item), discrimination and bias (by judge).
    q_ref : pandas.Series
        Reference latent preference by item (e.g. the simulator's truth).

    Returns
    -------
    tuple of pandas.Series
        Aligned ``q`` (on the items of ``q_hat``), ``a`` and ``b``.
    """
    common = q_hat.index.intersection(q_ref.index)
    if len(common) < 2:
        raise ValueError("need at least two common items to align the latent scale")
    x = q_hat.loc[common].to_numpy(dtype=float)
    y = q_ref.loc[common].to_numpy(dtype=float)
    s, t = np.polyfit(x, y, 1)
    if s <= 0:
        raise ValueError(f"the fitted latent scale runs against the reference (slope {s:.3g})")
    return q_hat * s + t, a_hat / s, b_hat - a_hat * t / s
