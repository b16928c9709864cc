"""Benchmark the 1,000-split protocol: vectorised vs a plain per-split loop.

Setting: ``simulate_pairs(n=2000)``, BPE scores, 1,000 splits x 5 alphas. The loop baselines
are measured on fewer splits (``--loop-splits``, ``--toe-loop-splits``) and extrapolated
linearly to 1,000 splits (each split costs the same); the script says so in its output.

Usage: ``.venv/bin/python benchmarks/scope_protocol.py [--quick]``
"""

from __future__ import annotations

import argparse
import time

from judgerisk.selective.confidence import bpe
from judgerisk.selective.protocol import split_protocol
from judgerisk.simulate import simulate_pairs

FAST = ("vanilla", "heuristic", "naive", "scope")


def _time(fn, repeat: int = 1) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer splits everywhere")
    ap.add_argument("--loop-splits", type=int, default=50)
    ap.add_argument("--toe-loop-splits", type=int, default=2)
    args = ap.parse_args()
    n_items, n_splits = 2000, (200 if args.quick else 1000)
    loop_splits = min(args.loop_splits, 10 if args.quick else args.loop_splits)
    toe_loop_splits = min(args.toe_loop_splits, 1 if args.quick else args.toe_loop_splits)

    d = simulate_pairs(n=n_items, seed=0)
    s = bpe(d.logit_fwd, d.logit_rev)

    def run(methods, splits, loop=False):
        return split_protocol(
            s.score,
            s.pred,
            d.gold,
            confidence=s.confidence,
            methods=methods,
            n_splits=splits,
            loop=loop,
        )

    run(FAST, 5)  # warm-up (imports, caches)
    t_fast = _time(lambda: run(FAST, n_splits), repeat=3)
    t_fast_loop = _time(lambda: run(FAST, loop_splits, loop=True)) * n_splits / loop_splits
    t_toe = _time(lambda: run(("toe",), n_splits), repeat=3)
    t_toe_loop = (
        _time(lambda: run(("toe",), toe_loop_splits, loop=True)) * n_splits / toe_loop_splits
    )
    per = {m: _time(lambda m=m: run((m,), n_splits)) for m in FAST}

    print(f"split protocol: {n_items} items x {n_splits} splits x 5 alphas (BPE on simulate_pairs)")
    print("per method, vectorised: " + ", ".join(f"{m} {t:.3f} s" for m, t in per.items()))
    print(
        f"SCOPE+naive+heuristic+vanilla together: vectorised {t_fast:.3f} s "
        f"(target < 2 s); plain loop {t_fast_loop:.1f} s (measured on {loop_splits} splits, "
        f"extrapolated x{n_splits / loop_splits:g}); speed-up {t_fast_loop / t_fast:.0f}x"
    )
    print(
        f"Trust-or-Escalate (5,000-threshold grid): vectorised {t_toe:.3f} s (target < 5 s); "
        f"plain loop over the grid {t_toe_loop:.0f} s (measured on {toe_loop_splits} split(s), "
        f"extrapolated x{n_splits / toe_loop_splits:g}); speed-up {t_toe_loop / t_toe:.0f}x "
        "(target >= 50x)"
    )


if __name__ == "__main__":
    main()
