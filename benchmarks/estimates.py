"""The estimators' full simulation study (judgerisk.estimate._simulation), with its numbers.

Prints, for random and SCUR-driven labelling at several labelled-slice sizes, each interval's
coverage of the known truth, its mean width, its width relative to plain PPI++ and to the
labelled-only interval (the baseline measured in the same run), and the labels it is worth;
then the exchangeability test's false-alarm rate on random slices and its detection rate on
slices of easy items. ``tests/test_estimate_simulation.py`` runs a 500-repetition slice of it.

Usage: python benchmarks/estimates.py [--reps 2000] [--quick]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from judgerisk.estimate._simulation import (
    exchangeability_study,
    interval_study,
    summarize_intervals,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000, help="repetitions per setting")
    parser.add_argument("--quick", action="store_true", help="500 repetitions, n = 100 only")
    args = parser.parse_args()
    reps = 500 if args.quick else args.reps
    sizes = (100,) if args.quick else (50, 100, 200)
    level = 0.9
    band = 3 * np.sqrt(level * (1 - level) / reps)
    print(f"{reps} repetitions, 1000 items, level {level}; coverage band +/- {band:.3f}")
    for n in sizes:
        t0 = time.perf_counter()
        s = summarize_intervals(interval_study(reps, n_labelled=n, level=level, seed=n))
        s["labels_worth"] = n / s["width_vs_labelled"] ** 2
        print(f"\nn_labelled = {n} ({time.perf_counter() - t0:.1f} s)")
        print(s.round(3).to_string())
    for easy in (False, True):
        rejects = exchangeability_study(reps, seed=7, easy=easy)
        what = "detection on easy-only slices" if easy else "false alarms on random slices"
        print(f"\nexchangeability test at level 0.05, {what}: {rejects.mean():.3f}")


if __name__ == "__main__":
    main()
