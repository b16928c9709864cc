"""The slow direction of the LMM's plain sweeps, measured from the sweep map.

The plain block sweeps of :class:`~judgerisk.risk.lmm.LatentMeasurementModel` contract
every direction of parameter space but one quickly. The slow one is the margins' exact
symmetry

    q_i -> q_i + t,   b_j -> b_j - a_j t        (every a_j q_i + b_j unchanged),

which neither identifiability step fixes: the scale fix pins the product of the a_j
(``q -> s q``), the kappa centring pins how ``delta_c + kappa_jc`` is split, but only the
ridges ``lambda_q sum q^2 + lambda_b sum b^2`` pin ``t``. This module measures it without
assuming it: late in a run of plain sweeps the step ``x_{k+1} - x_k`` is dominated by the
slowest mode of the sweep map (power iteration), so its direction *is* the drift and the
ratio of successive step lengths is the contraction factor per sweep.

References
----------
Chapter 3 of the book (the latent measurement model); the SCUR paper's estimator
(alternating ridge updates with three restarts and a three-sweep stopping rule).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from judgerisk.panel import encode_panel, validate_panel
from judgerisk.risk._lmm_solver import (
    BLOCKS,
    Design,
    Params,
    Penalties,
    Rule,
    Stats,
    Sweeper,
    margin_change,
    run_plain,
)
from judgerisk.risk.lmm import LatentMeasurementModel

__all__ = ["SweepDrift", "sweep_drift"]


@dataclass
class SweepDrift:
    """What the plain sweeps do on one panel (see :func:`sweep_drift`).

    Attributes
    ----------
    trace : pandas.DataFrame
        One row per plain sweep ``k``: ``offset`` (mean of ``q_k`` minus the mean of the
        fixed point's q: the position along the drift), ``margin_error`` (RMS distance of
        the fitted margins from the fixed point's, over the fit cells), ``rel_criterion``
        and ``rms_change`` (two of the stopping rule's three quantities for sweep k).
    direction : pandas.Series
        The last step's direction, summarised: ``rho`` (contraction per sweep),
        ``share_q, share_a, share_b, share_delta, share_kappa`` (share of the step's
        squared length in each block), ``q_uniformity`` (sd / |mean| of the step in q:
        0 for a pure shift), ``b_over_minus_a_dq`` (mean over judges of
        ``db_j / (-a_j mean(dq))``: 1 for the exact symmetry) and ``margin_per_param`` (RMS change of the margins per unit RMS change
        of the parameters: 0 for the exact symmetry).
    fixed_point_sweeps : int
        Anderson sweeps that found the fixed point used as the reference.
    """

    trace: pd.DataFrame
    direction: pd.Series
    fixed_point_sweeps: int


def _fixed_point(d: Design, lam: Penalties, start: Params) -> tuple[Params, int]:
    """The sweep map's fixed point, by Anderson-accelerated sweeps to tight tolerances."""
    res = run_plain(
        d, lam, start.copy(), BLOCKS, Rule(1e-12, 1e-11, 1e-14, 3), 20_000, anderson=True
    )
    return res.params, res.n_iter


def sweep_drift(panel: pd.DataFrame, n_sweeps: int = 2100) -> SweepDrift:
    r"""Run the paper's plain sweeps and measure where and how fast they drift.

    Parameters
    ----------
    panel : pandas.DataFrame
        A panel (validated here).
    n_sweeps : int, default 2100
        Plain sweeps to run (2,100 is the estimator's extended budget).

    Returns
    -------
    SweepDrift

    Notes
    -----
    With :math:`x_k` the parameters after sweep k and :math:`x^*` the fixed point
    (Anderson sweeps to tolerances far below the paper's), the late steps satisfy
    :math:`x_{k+1} - x_k \approx \rho\,(x_k - x_{k-1})` along the slowest eigenvector of
    the sweep map's Jacobian. The estimator's defaults are used (ridges 1, 1, 1, 5, 10
    and the order q, a, b, delta, kappa), from restart 0's start point.
    """
    if int(n_sweeps) < 3:
        raise ValueError(f"n_sweeps={n_sweeps!r} must be >= 3")
    arr = encode_panel(validate_panel(panel, conditions=None))
    d = Design.from_arrays(arr)
    est = LatentMeasurementModel()
    lam = Penalties(est.lambda_q, est.lambda_a, est.lambda_b, est.lambda_delta, est.lambda_kappa)
    J, C = d.n_judges, d.n_cond
    q0 = d.item_means()
    p = Params(q0, np.ones(J), np.zeros(J), np.zeros(C), np.zeros((J, C)))
    star, n_star = _fixed_point(d, lam, p)
    st_star = Stats(d, star, lam)
    sw = Sweeper(d, lam, BLOCKS)
    st = Stats(d, p, lam)
    rows = []
    steps: list[np.ndarray] = []
    for k in range(1, int(n_sweeps) + 1):
        sw.set_wo(st.WO)
        new = sw.sweep(p)
        st_new = Stats(d, new, lam)
        rms, _ = margin_change(d, st, st_new)
        err, _ = margin_change(d, st_star, st_new)
        rel = abs(st_new.criterion - st.criterion) / max(abs(st.criterion), 1e-300)
        rows.append((k, float(new.q.mean() - star.q.mean()), err, rel, rms))
        steps = [steps[-1], new.to_vector() - p.to_vector()] if steps else [new.to_vector()]
        p, st = new, st_new
    trace = pd.DataFrame(
        rows, columns=["sweep", "offset", "margin_error", "rel_criterion", "rms_change"]
    ).set_index("sweep")
    # the last two steps: the direction and its contraction factor
    sw.set_wo(st.WO)
    nxt = sw.sweep(p)
    last, step = steps[-1], nxt.to_vector() - p.to_vector()
    return SweepDrift(trace, _describe(d, p, last, step, lam), n_star)


def _describe(
    d: Design, p: Params, prev: np.ndarray, step: np.ndarray, lam: Penalties
) -> pd.Series:
    I, J, C = d.n_items, d.n_judges, d.n_cond
    rho = float(np.linalg.norm(step) / np.linalg.norm(prev))
    v = Params.from_vector(step, I, J, C)
    blocks = {
        "q": v.q,
        "a": v.a,
        "b": v.b,
        "delta": v.delta[1:],
        "kappa": v.kappa[:, 1:],
    }
    total = float(step @ step)
    out = {"rho": rho}
    out.update({f"share_{k}": float(np.sum(x * x)) / total for k, x in blocks.items()})
    dq = float(v.q.mean())
    out["q_uniformity"] = float(v.q.std() / abs(dq))
    out["b_over_minus_a_dq"] = float(np.mean(v.b / (-p.a * dq)))
    moved = p.copy()
    for name in ("q", "a", "b", "delta", "kappa"):
        setattr(moved, name, getattr(p, name) + getattr(v, name))
    dmu, _ = margin_change(d, Stats(d, p, lam), Stats(d, moved, lam))
    out["margin_per_param"] = dmu / float(np.sqrt(total / step.size))
    return pd.Series(out, name="drift direction")
