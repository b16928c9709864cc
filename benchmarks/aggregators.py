"""Fit time of each aggregator for 2,000 and 20,000 items x 5 judges.

Run: ``.venv/bin/python benchmarks/aggregators.py [--quick] [--crowdkit]``

Times are the median of ``--repeats`` runs of each estimator on the original-condition verdicts
(probabilities for CARE) of a simulated panel, printed with their ratio to majority vote measured
in the same run (machines are noisy; compare ratios). ``--crowdkit`` also times crowd-kit 1.4.2's
DawidSkene, MACE (one restart) and GLAD at 2,000 items, the reference implementations that
judgerisk's vectorised versions replace.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from judgerisk.aggregators._care import CARE
from judgerisk.aggregators.aggregate import GLAD, MACE, majority_vote
from judgerisk.aggregators.dawid_skene import DawidSkene
from judgerisk.panel import to_wide, verdicts
from judgerisk.simulate import simulate_panel


def _median_time(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def _crowdkit_long(votes):
    long = votes.stack().dropna().rename("label").reset_index()
    long.columns = ["task", "worker", "label"]
    long["label"] = long["label"].astype(int)
    return long


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2,000 items only, one repeat")
    parser.add_argument("--crowdkit", action="store_true", help="also time crowd-kit at 2,000")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    sizes = (2000,) if args.quick else (2000, 20000)
    repeats = 1 if args.quick else args.repeats
    print(f"aggregator fit time, 5 judges, median of {repeats} run(s)")
    print(f"{'items':>7} {'aggregator':<22} {'seconds':>9} {'x majority':>11}")
    for n in sizes:
        panel = simulate_panel(n_items=n, n_judges=5, conditions=("original",), seed=0).data
        votes = verdicts(panel)
        probs = to_wide(panel, "p")
        runs = {
            "majority": lambda v=votes, p=probs: majority_vote(v, p),
            "dawid_skene": lambda v=votes: DawidSkene().fit(v),
            "mace (10 restarts)": lambda v=votes: MACE(random_state=0).fit(v),
            "glad": lambda v=votes: GLAD().fit(v),
            "care": lambda p=probs: CARE().fit(p).posterior(p),
        }
        if args.crowdkit and n == 2000:
            from crowdkit.aggregation import GLAD as CKGLAD
            from crowdkit.aggregation import MACE as CKMACE
            from crowdkit.aggregation import DawidSkene as CKDS

            long = _crowdkit_long(votes)
            runs["crowd-kit DawidSkene"] = lambda d=long: CKDS(n_iter=200, tol=1e-7).fit(d)
            runs["crowd-kit MACE (1 rst)"] = lambda d=long: CKMACE(n_restarts=1).fit(d)
            runs["crowd-kit GLAD"] = lambda d=long: CKGLAD().fit(d)
        base = None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for name, fn in runs.items():
                reps = 1 if name.startswith("crowd-kit") else repeats
                sec = _median_time(fn, reps)
                base = sec if base is None else base
                print(f"{n:>7} {name:<22} {sec:>9.4f} {sec / base:>11.1f}")


if __name__ == "__main__":
    main()
