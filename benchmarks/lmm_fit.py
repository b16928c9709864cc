"""Benchmark of LatentMeasurementModel.fit (judgerisk.risk.lmm).

Prints, for panels of 2,000 / 20,000 / 200,000 items x 5 judges x 6 conditions:
fit time, sweeps and peak memory of the paper's plain sweeps and of the two accelerated
modes, and the time a generic optimiser (scipy L-BFGS-B over all parameters, on a
cell-by-cell objective with its analytic gradient) needs to reach the same penalised
objective F as the sweeps (two smaller sizes). Ratios are against the plain sweeps
measured in the same run. Last, a table of the share of missing cells -> sweeps per
restart and seconds for the old default (plain sweeps) and the new default (Anderson).

Usage: .venv/bin/python benchmarks/lmm_fit.py [--quick] [--missing-only]
(--quick skips 200,000 items; --missing-only prints the last table only)
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import resource
import time
import warnings

import numpy as np
from scipy.optimize import minimize
from sklearn.exceptions import ConvergenceWarning

from judgerisk.panel import encode_panel, validate_panel
from judgerisk.risk._lmm_solver import A_BOUNDS
from judgerisk.risk.lmm import LatentMeasurementModel
from judgerisk.simulate import simulate_panel
from judgerisk.validation import DEFAULT_ACCELERATE

LAM = {"q": 1.0, "a": 1.0, "b": 1.0, "delta": 5.0, "kappa": 10.0}


def cellwise_objective(arr):
    """F and gradient over the long cells (a generic implementation, no sufficient stats)."""
    I, J, C = arr.n_items, arr.n_judges, arr.n_conditions
    i, j, c, m = arr.item_idx, arr.judge_idx, arr.cond_idx, arr.logit

    def f(x):
        q, a, b = x[:I], x[I : I + J], x[I + J : I + 2 * J]
        d = np.concatenate([[0.0], x[I + 2 * J : I + 2 * J + C - 1]])
        k = np.hstack([np.zeros((J, 1)), x[I + 2 * J + C - 1 :].reshape(J, C - 1)])
        r = m - (a[j] * q[i] + b[j] + d[c] + k[j, c])
        val = (
            r @ r
            + LAM["q"] * q @ q
            + LAM["a"] * np.sum((a - 1) ** 2)
            + LAM["b"] * b @ b
            + LAM["delta"] * d @ d
            + LAM["kappa"] * np.sum(k**2)
        )
        gq = -2 * np.bincount(i, a[j] * r, I) + 2 * LAM["q"] * q
        ga = -2 * np.bincount(j, q[i] * r, J) + 2 * LAM["a"] * (a - 1)
        gb = -2 * np.bincount(j, r, J) + 2 * LAM["b"] * b
        gd = (-2 * np.bincount(c, r, C) + 2 * LAM["delta"] * d)[1:]
        gk = -2 * np.bincount(j * C + c, r, J * C).reshape(J, C) + 2 * LAM["kappa"] * k
        return val, np.concatenate([gq, ga, gb, gd, gk[:, 1:].ravel()])

    return f


def scipy_time_to(arr, target: float, max_seconds: float = 300.0):
    """Seconds for scipy L-BFGS-B (from the paper's start point) to reach F <= target."""
    I, J, C = arr.n_items, arr.n_judges, arr.n_conditions
    f = cellwise_objective(arr)
    x0 = np.zeros(I + 2 * J + (C - 1) * (J + 1))
    x0[:I] = np.bincount(arr.item_idx, arr.logit, I) / np.bincount(arr.item_idx, minlength=I)
    x0[I : I + J] = 1.0
    bounds = [(None, None)] * len(x0)
    bounds[I : I + J] = [A_BOUNDS] * J
    state = {"reached": False, "t0": time.perf_counter(), "nit": 0}

    def callback(intermediate_result):
        state["nit"] += 1
        if intermediate_result.fun <= target:
            state["reached"] = True
            raise StopIteration
        if time.perf_counter() - state["t0"] > max_seconds:
            raise StopIteration

    t0 = time.perf_counter()
    state["t0"] = t0
    minimize(
        f,
        x0,
        jac=True,
        method="L-BFGS-B",
        bounds=bounds,
        callback=callback,
        options={"maxiter": 100_000, "ftol": 0.0, "gtol": 0.0, "maxcor": 20},
    )
    return time.perf_counter() - t0, state["nit"], state["reached"]


def _child(n, missing, mode, queue):
    sim = simulate_panel(n_items=n, seed=0, missing_rate=missing)
    t0 = time.perf_counter()
    encode_panel(validate_panel(sim.data, conditions=None))
    prep = time.perf_counter() - t0
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        lmm = LatentMeasurementModel(random_state=0, accelerate=mode).fit(sim.data)
    dt = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    queue.put(
        (lmm.converged_, list(lmm.restarts_["n_iter"]), dt, before, peak, lmm.objective_, prep)
    )


def timed_fit(n, missing=0.0, mode=None):
    """Fit in a fresh process: (converged, sweeps, seconds, RSS before fit, peak RSS, F)."""
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_child, args=(n, missing, mode, queue))
    proc.start()
    out = queue.get()
    proc.join()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="skip the 200,000-item panel")
    ap.add_argument("--missing-only", action="store_true", help="only the missing-cells table")
    args = ap.parse_args()
    if args.missing_only:
        missing_table()
        return
    sizes = [2_000, 20_000] if args.quick else [2_000, 20_000, 200_000]
    print("LatentMeasurementModel.fit: 5 judges x 6 conditions, 3 restarts, complete panels")
    print("(each fit in a fresh process; peak RSS includes the interpreter and the panel)")
    print(
        f"{'items':>8} {'cells':>9} {'mode':>9} {'conv':>5} {'sweeps/restart':>15} "
        f"{'time s':>8} {'x plain':>8} {'RSS before':>10} {'peak RSS MiB':>12} {'F':>14}"
    )
    for n in sizes:
        base = None
        modes = (None, "anderson", "lbfgs") if n <= 20_000 else (None, "anderson")
        for mode in modes:
            conv, sweeps, dt, before, peak, obj, prep = timed_fit(n, 0.0, mode)
            base = dt if base is None else base
            sw = "/".join(str(x) for x in sweeps)
            print(
                f"{n:>8} {n * 30:>9} {mode or 'plain':>9} {conv!s:>5} {sw:>15} {dt:>8.2f} "
                f"{dt / base:>8.2f} {before:>10.0f} {peak:>12.0f} {obj:>14.8g}"
            )
            if mode is None:
                plain_obj, plain_time, plain_prep = obj, dt, prep
        if n <= 20_000:
            arr = encode_panel(simulate_panel(n_items=n, seed=0).data)
            t_sc, nit, reached = scipy_time_to(arr, plain_obj)
            print(
                f"{'':>8} scipy L-BFGS-B to F <= F(plain sweeps): {t_sc:.2f} s, {nit} "
                f"iterations, reached={reached}; time ratio scipy / plain fit = "
                f"{t_sc / plain_time:.1f}x; excluding the panel's validation + encoding "
                f"({plain_prep:.2f} s, which the scipy run skips): "
                f"{t_sc / max(plain_time - plain_prep, 1e-9):.1f}x"
            )
    missing_table()


def missing_table() -> None:
    """Missing cells, where the plain sweeps drift: old default vs new default."""
    print("\n2,000 items: share of missing cells -> sweeps per restart and seconds,")
    print("old default (plain sweeps, accelerate=None) vs new default (accelerate='anderson')")
    print(
        f"{'missing':>8} {'old conv':>8} {'old sweeps':>15} {'old s':>7} "
        f"{'new conv':>8} {'new sweeps':>15} {'new s':>7} {'new / old time':>14}"
    )
    for missing in (0.0, 0.01, 0.1, 0.3):
        old = timed_fit(2_000, missing, None)
        new = timed_fit(2_000, missing, DEFAULT_ACCELERATE)
        print(
            f"{missing:>8.0%} {old[0]!s:>8} {'/'.join(map(str, old[1])):>15} {old[2]:>7.2f} "
            f"{new[0]!s:>8} {'/'.join(map(str, new[1])):>15} {new[2]:>7.2f} "
            f"{new[2] / old[2]:>14.2f}"
        )


if __name__ == "__main__":
    main()
