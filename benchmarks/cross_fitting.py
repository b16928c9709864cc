"""Benchmark of score_panel: repeated K-fold cross-fitting against the old random-split path.

Prints wall time, cost per item and the ratio to the old path measured in the same run:

1. 20,000 items x 5 judges x 6 conditions, ``score_panel`` with the default repetitions
   (``judgerisk._splits.DEFAULT_REPEATS``, 5 folds each) against the old path: the paper's
   random 50/30/20 splits, topped up from 5 seeds until every item was scored (what
   ``judgerisk score --n-seeds 5`` ran before: the seeds are counted here the way the top-up
   counted them).
2. 200,000 items, the default only (peak memory of the process, too). Skipped by --quick.
3. A crowdsourced shape: 500 items x 5 judges plus k judges seen only on item 0, one
   repetition, at k = 1,667; and the latent measurement model's fit at k = 400 with the old
   dense items x (judges x conditions) mask products put back, for the ratio.

Usage: python benchmarks/cross_fitting.py [--quick] [--old-tree DIR]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
import warnings

import numpy as np
import pandas as pd

from judgerisk._splits import DEFAULT_REPEATS, split_items
from judgerisk.engine.certified import score_panel
from judgerisk.risk import _lmm_solver as lmm_solver
from judgerisk.risk.lmm import LatentMeasurementModel
from judgerisk.simulate import simulate_panel


def old_topup_seeds(items, n_seeds: int = 5) -> int:
    """How many seeds the removed top-up ran: until every item was outside a fit split."""
    max_seeds = max(4 * n_seeds, 20)
    scored = np.zeros(len(items), bool)
    s = 0
    while s < n_seeds or (not scored.all() and s < max_seeds):
        scored |= split_items(items, s).to_numpy() != "fit"
        s += 1
    return s


CPU: dict[str, float] = {}


def timed(fn, *args, **kwargs) -> float:
    """Wall seconds of one call; its CPU seconds go to ``CPU["last"]`` (a busy machine)."""
    t, c = time.perf_counter(), time.process_time()
    fn(*args, **kwargs)
    CPU["last"] = time.process_time() - c
    return time.perf_counter() - t


def old_code_seconds(tree: str, n_items: int) -> float:
    """Wall seconds of the old code's ``score_panel(n_seeds=5)`` (top-up), in a subprocess.

    ``tree`` holds an export of the old package, e.g.
    ``git archive ddc6148 judgerisk | tar -x -C /tmp/old``.
    """
    code = (
        "import time, warnings; warnings.simplefilter('ignore');"
        "from judgerisk.simulate import simulate_panel;"
        "from judgerisk.engine.certified import score_panel;"
        f"p = simulate_panel(n_items={n_items}, n_judges=5, seed=0).data;"
        "t = time.perf_counter(); score_panel(p, n_seeds=5); print(time.perf_counter() - t)"
    )
    env = {**os.environ, "PYTHONPATH": tree}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    return float(out.stdout.strip().splitlines()[-1])


def dense_panel(n_items: int) -> pd.DataFrame:
    return simulate_panel(n_items=n_items, n_judges=5, seed=0).data


def crowd_panel(k: int, n_items: int = 500) -> pd.DataFrame:
    base = dense_panel(n_items)
    one = base[(base["item"] == base["item"].iloc[0]) & (base["judge"] == "J1")]
    return pd.concat([base, *(one.assign(judge=f"crowd{n}") for n in range(k))], ignore_index=True)


class DenseMask:
    """Put the old dense mask products back into Design.wo / Design.qw (for the ratio)."""

    def __enter__(self):
        self.wo, self.qw = lmm_solver.Design.wo, lmm_solver.Design.qw

        def mask(d):
            if not hasattr(d, "_w2"):
                cell_pair, cell_jc = d.cells
                d._w2 = np.zeros((d.n_items, d.n_judges * d.n_cond))
                d._w2[d.pair_i[cell_pair], cell_jc] = 1.0
            return d._w2

        def wo(d, o):
            if d.cells is None:
                return self.wo(d, o)
            J, C = d.n_judges, d.n_cond
            block = np.zeros((J * C, J))
            block[np.arange(J * C), np.repeat(np.arange(J), C)] = o.ravel()
            return (mask(d) @ block)[d.pair_i, d.pair_j]

        def qw(d, q):
            if d.cells is None:
                return self.qw(d, q)
            return (q @ mask(d)).reshape(d.n_judges, d.n_cond)

        lmm_solver.Design.wo, lmm_solver.Design.qw = wo, qw
        return self

    def __exit__(self, *exc):
        lmm_solver.Design.wo, lmm_solver.Design.qw = self.wo, self.qw


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="skip 200,000 items")
    ap.add_argument("--old-tree", help="folder with an export of the old package (ratio)")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    aggs = ("majority", "dawid_skene")

    panel = dense_panel(20_000)
    n_old = old_topup_seeds(pd.unique(panel["item"]))
    new = timed(score_panel, panel, aggregators=aggs)
    cpu = CPU["last"]
    old = timed(score_panel, panel, n_seeds=n_old, aggregators=aggs, protocol="paper")
    print(
        f"20,000 items: k-fold R={DEFAULT_REPEATS} {new:.1f} s wall, {cpu:.1f} s CPU "
        f"({1e6 * new / 20_000:.0f} us/item); the paper's random splits topped up as before "
        f"({n_old} seeds) {old:.1f} s wall, {CPU['last']:.1f} s CPU; ratio {old / new:.1f}"
    )
    if args.old_tree:
        t_old = old_code_seconds(args.old_tree, 20_000)
        print(
            f"20,000 items, the old code (score_panel, n_seeds=5): {t_old:.1f} s wall; "
            f"ratio old/new {t_old / new:.1f}"
        )

    if not args.quick:
        big = dense_panel(200_000)
        t = timed(score_panel, big, aggregators=aggs)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2
        print(
            f"200,000 items: k-fold R={DEFAULT_REPEATS} {t:.1f} s wall, {CPU['last']:.1f} s CPU "
            f"({1e6 * t / 200_000:.0f} us/item), peak resident memory of this process "
            f"{peak:.2f} GB"
        )

    crowd = crowd_panel(1667)
    t = timed(score_panel, crowd, n_seeds=1, aggregators=aggs)
    print(
        f"crowd k=1,667 ({len(crowd)} cells): one repetition (5 fits) {t:.1f} s wall, "
        f"{CPU['last']:.1f} s CPU"
    )
    small = crowd_panel(400)
    fit_new = timed(LatentMeasurementModel(random_state=0).fit, small)
    with DenseMask():
        fit_old = timed(LatentMeasurementModel(random_state=0).fit, small)
    print(
        f"crowd k=400 LMM fit: observed-cell products {fit_new:.2f} s, dense mask products "
        f"{fit_old:.2f} s; ratio dense/sparse {fit_old / fit_new:.1f}"
    )


if __name__ == "__main__":
    main()
