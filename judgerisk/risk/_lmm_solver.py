"""The solver of the latent measurement model: sufficient statistics, block sweeps, stopping rule.

:class:`judgerisk.risk.lmm.LatentMeasurementModel` fits

    m_ijc = a_j q_i + b_j + delta_c + kappa_jc + eps_ijc,   a_j > 0,  delta_0 = kappa_j0 = 0

by penalised least squares; this module holds the numerics it runs, restart by restart:

* :class:`Design`, :class:`Params`, :class:`Penalties`, :class:`Stats`: the sufficient
  statistics, the parameter blocks, the ridge penalties and the per-sweep fitted margins;
* :class:`Sweeper`: the block (alternating ridge) updates of one sweep;
* :class:`Rule`, :func:`margin_change`: the paper's convergence rule (Methods reference §2);
* :func:`run_plain` (plain or Anderson-accelerated sweeps) and :func:`run_lbfgs` (bounded
  L-BFGS on the same objective), :func:`start_point`, :func:`restart_spread`.

Implementation note: the sweeps never loop over items or cells. The data enter a sweep
only through sufficient statistics computed once by :func:`numpy.bincount`: per
item x judge the sum of logits ``S_ij`` and the cell count ``N_ij``, per judge x
condition the sum ``T_jc`` and count ``n_jc``, and (only when cells are missing) the
item x (judge, condition) observation mask ``W``, kept as the list of observed cells, so
that its products are :func:`numpy.bincount` calls over the cells. Every block update is
then a few matrix-vector products of size I x J or a pass over the observed cells. The
engine is shared with :mod:`judgerisk._book.studies.drift`, which measures the plain sweeps'
drift; the estimator is the stable interface.

References
----------
Methods reference §2–3 (the judgerisk methods specification), after the instance-level panel
reliability (SCUR) paper: "latent measurement model" section and its appendix on the
released estimator. D. G. Anderson, "Iterative procedures for nonlinear integral equations",
J. ACM 12(4), 1965 (Anderson acceleration). R. H. Byrd, P. Lu, J. Nocedal and C. Zhu, "A
limited memory algorithm for bound constrained optimization", SIAM J. Sci. Comput. 16(5),
1995 (L-BFGS-B).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import expit

from judgerisk.panel import PanelArrays

__all__ = [
    "A_BOUNDS",
    "BLOCKS",
    "Design",
    "Params",
    "Penalties",
    "Rule",
    "RunResult",
    "Stats",
    "Sweeper",
    "margin_change",
    "margins",
    "objective",
    "restart_spread",
    "run_lbfgs",
    "run_plain",
    "start_point",
    "state_mask",
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

    def __init__(self, d: Design, p: Params, lam: Penalties, WO: np.ndarray | None = None) -> None:
        self.P = d.products(p)
        self.o = p.offsets()
        self.WO = d.wo(self.o) if WO is None else WO
        # SSR = sum m^2 - 2 sum m mu + sum mu^2, each term from the sufficient statistics
        cross = self.P @ d.S + np.sum(self.o * d.T)
        sq = (d.N * self.P) @ self.P + 2.0 * (self.P @ self.WO) + np.sum(d.njc * self.o * self.o)
        self.ssr = max(d.sum_m2 - 2.0 * cross + sq, 0.0)
        self.criterion = (self.ssr + lam.q * p.q @ p.q + lam.b * p.b @ p.b) / d.n_obs


def objective(d: Design, p: Params, lam: Penalties, ssr: float) -> float:
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
    return objective(d, p, lam, st.ssr), grad


# --------------------------------------------------------------------------------------
# block updates: each is the exact ridge minimiser of F given the other blocks
# --------------------------------------------------------------------------------------
class Sweeper:
    """Runs block updates on a parameter point, caching the two heavy products."""

    def __init__(self, d: Design, lam: Penalties, order: Sequence[str]) -> None:
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
class RunResult:
    params: Params
    converged: bool
    n_iter: int
    criterion: float
    history: np.ndarray
    ssr: float


class Rule:
    """The paper's stopping rule: three successive sweeps under all three tolerances."""

    def __init__(self, tol_rms: float, tol_max: float, tol_obj: float, patience: int) -> None:
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


def state_mask(d: Design, order: Sequence[str]) -> np.ndarray:
    """Which coordinates of :meth:`Params.to_vector` a sweep in ``order`` reads.

    The first block of a sweep is recomputed from the others before anything reads it (with
    the default order, ``q`` from ``a, b, delta, kappa``), so the sweep map depends on the
    other blocks only: they are its state. Anderson's least squares are fitted on them.
    """
    I, J, C = d.n_items, d.n_judges, d.n_cond
    sizes = {"q": I, "a": J, "b": J, "delta": C - 1, "kappa": J * (C - 1)}
    mask = np.ones(sum(sizes.values()), dtype=bool)
    start = 0
    for block in ("q", "a", "b", "delta", "kappa"):  # the layout of Params.to_vector
        if block == order[0]:
            mask[start : start + sizes[block]] = False
        start += sizes[block]
    return mask


def run_plain(
    d: Design,
    lam: Penalties,
    p: Params,
    order: Sequence[str],
    rule: Rule,
    max_iter: int,
    anderson: bool,
) -> RunResult:
    """Sweep until the rule holds or ``max_iter`` sweeps; optionally Anderson-accelerated.

    The rule compares each sweep's output with its input, so for plain sweeps it is the
    change between successive sweeps; with Anderson acceleration it is the change a plain
    sweep would still make from the extrapolated point (the fixed-point residual).

    Anderson's extrapolation coefficients are the least-squares fit of the residuals of the
    sweep map's state (:func:`state_mask`: every block but the first one swept, by default
    ``a, b, delta, kappa``), and they extrapolate every block, q included. Fitted on all
    coordinates, the I item coordinates outweigh the few judge and condition ones, and the
    fit then follows the drift direction ``q -> q + t, b -> b - a t`` (see
    :class:`~judgerisk.risk.lmm.LatentMeasurementModel`), along which the sweep map is far
    from linear when its fixed point lies several units of ``t`` from the start: on a
    simulated 2,000-item panel with 30 % of the cells missing it contracts ``t`` by 3e-4
    per sweep one unit from the fixed point and by 1e-5 seven units away. The linear model
    of the last sweeps then mispredicts where ``t`` settles, the coefficients reach 1e3, the
    iterate is thrown further out along ``t``, where the contraction is slower still, and
    one restart needed 358 sweeps (13-33 for the others). Fitted on the state, the same
    study needs at most 54 (appendix A1 of the book reports the sweeps of its panels).
    """
    sw = Sweeper(d, lam, order)
    I, J, C = d.n_items, d.n_judges, d.n_cond
    state = state_mask(d, order)
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
        res = float(np.sqrt(np.sum((gx - x)[state] ** 2)))
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
        F = (G - X)[:, state]
        dF, dG = np.diff(F, axis=0), np.diff(G, axis=0)
        # least squares min ||F[-1] - dF.T gamma|| over the state through the m x m normal
        # equations (m <= memory; a LAPACK lstsq on the tall matrix costs ~100x more here),
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
    return RunResult(
        new, converged, len(history), st_new.criterion, np.asarray(history), st_new.ssr
    )


def run_lbfgs(
    d: Design,
    lam: Penalties,
    p: Params,
    order: Sequence[str],
    rule: Rule,
    max_iter: int,
) -> RunResult:
    """A few plain sweeps, then L-BFGS-B on F over all parameters (the exact minimiser).

    The paper's rule is applied to successive L-BFGS iterates; the iteration stops as soon
    as it holds (or at L-BFGS's own convergence, which is then checked against the rule).
    """
    from scipy.optimize import minimize  # scipy.optimize loads slowly: only for "lbfgs"

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
    return RunResult(
        params, state["converged"], len(history), st.criterion, np.asarray(history), st.ssr
    )


def start_point(q0: np.ndarray, J: int, C: int, rng: np.random.Generator | None) -> Params:
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


def restart_spread(arr: PanelArrays, runs: list[RunResult], kept: int) -> tuple[np.ndarray, float]:
    """Per restart: max |p_hat - p_hat of the kept restart| over the fit cells, and the
    criterion minus the kept restart's; plus the largest pairwise |Δp_hat|.

    Each unordered pair of restarts is compared once (``|x - y| = |y - x|`` exactly), so
    ``n`` restarts cost ``n(n-1)/2`` passes over the cells instead of ``n^2 + n``.
    """
    p_hat = [expit(margins(arr, r.params)) for r in runs]
    gap = np.zeros((len(runs), len(runs)))
    for r, s in itertools.combinations(range(len(runs)), 2):
        gap[r, s] = gap[s, r] = np.abs(p_hat[r] - p_hat[s]).max()
    gap[kept, kept] = np.abs(p_hat[kept] - p_hat[kept]).max()  # 0, or NaN as p_hat's
    return gap[kept], float(max(gap.max(axis=1).tolist()))  # a NaN row first stays NaN, as before


def margins(arr: PanelArrays, p: Params) -> np.ndarray:
    """Fitted margins ``a_j q_i + b_j + delta_c + kappa_jc`` of every cell of ``arr``.

    When ``arr`` holds every cell once, in item, judge, condition order (a complete panel as
    validation sorts it), the same sums are formed by broadcasting, without gathering the
    parameters cell by cell (about 6x faster; the same products and sums, so the same bits).
    """
    I, J, C = len(p.q), len(p.a), p.kappa.shape[1]
    cell_jc = arr.judge_idx * C + arr.cond_idx
    if len(cell_jc) == I * J * C and np.array_equal(
        arr.item_idx * (J * C) + cell_jc, np.arange(I * J * C)
    ):
        return (np.multiply.outer(p.q, p.a)[:, :, None] + p.offsets()[None, :, :]).ravel()
    return p.a[arr.judge_idx] * p.q[arr.item_idx] + p.offsets().ravel()[cell_jc]
