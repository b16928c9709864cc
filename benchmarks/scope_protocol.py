"""Benchmark the 1,000-split protocol at scale: time and peak memory against the number of items.

Setting: ``simulate_pairs(n)``, BPE scores, 1,000 splits x 5 alphas, for n = 2k, 20k, 200k.
Each measurement runs in its own Python process, which reports its wall time and its peak
resident memory (``getrusage(RUSAGE_SELF).ru_maxrss``, the whole process: interpreter, data and
protocol). The plain per-split loop (``loop=True``) is measured side by side on a subsample of
splits (``--loop-splits``, ``--toe-loop-splits``) and extrapolated linearly to all splits (each
split costs the same); the ratio column is loop CPU time / blocked CPU time (CPU time, unlike
wall time, is not inflated by other processes on a loaded machine).

Targets (issue 15): SCOPE + naive + heuristic + vanilla at 200k items < 10 s, Trust-or-Escalate
at 200k items < 30 s, both with peak RSS < 1.5 GB; time per item x split flat within 2x.

Usage: ``.venv/bin/python benchmarks/scope_protocol.py [--quick] [--sizes 2000 20000 200000]``
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

FAST = ("vanilla", "heuristic", "naive", "scope")
GROUPS = {"fast": FAST, "toe": ("toe",)}


def _child(n: int, group: str, n_splits: int, loop: bool, budget: float) -> None:
    """Run one protocol call in this process and print time and peak RSS as JSON."""
    from judgerisk.selective.confidence import bpe
    from judgerisk.selective.protocol import split_protocol
    from judgerisk.simulate import simulate_pairs

    def run(size, splits, **kw):
        d = simulate_pairs(n=size, seed=0)
        s = bpe(d.logit_fwd, d.logit_rev)
        args = (s.score, s.pred, d.gold)
        kw = dict(confidence=s.confidence, methods=GROUPS[group], n_splits=splits, **kw)
        t, c = time.perf_counter(), time.process_time()
        split_protocol(*args, **kw)
        return time.perf_counter() - t, time.process_time() - c

    run(200, 2, loop=loop)  # imports and first calls, at a size too small to matter
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    dt, cpu = run(n, n_splits, loop=loop, memory_budget_mb=budget)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"time": dt, "cpu": cpu, "rss_mb": rss / 1024, "rss_before_mb": rss0 / 1024}))


def _measure(n: int, group: str, n_splits: int, loop: bool, budget: float) -> dict:
    cmd = [sys.executable, __file__, "--child", str(n), group, str(n_splits), str(int(loop))]
    proc = subprocess.run(cmd + ["--budget", str(budget)], capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"measurement {cmd[3:]} failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="2k and 20k items, 200 splits")
    ap.add_argument("--sizes", type=int, nargs="+", default=[2000, 20000, 200000])
    ap.add_argument("--splits", type=int, default=1000)
    ap.add_argument("--loop-splits", type=int, default=5)
    ap.add_argument("--toe-loop-splits", type=int, default=1)
    ap.add_argument("--budget", type=float, default=256.0, help="memory_budget_mb")
    ap.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        n, group, n_splits, loop = args.child
        _child(int(n), group, int(n_splits), bool(int(loop)), args.budget)
        return
    sizes, n_splits = args.sizes, args.splits
    if args.quick:
        sizes, n_splits = [s for s in sizes if s <= 20000], 200

    print(
        f"split protocol: simulate_pairs(n) x {n_splits} splits x 5 alphas, BPE scores, "
        f"memory_budget_mb={args.budget:g}; one process per measurement"
    )
    print(
        "methods      items    wall (CPU)      CPU ns/(item x split)   peak RSS (before call)"
        "   loop CPU (extrapolated)   loop / blocked"
    )
    for group, loop_splits in (("fast", args.loop_splits), ("toe", args.toe_loop_splits)):
        per = []
        for n in sizes:
            r = _measure(n, group, n_splits, False, args.budget)
            lp = _measure(n, group, loop_splits, True, args.budget)
            t_loop = lp["cpu"] * n_splits / loop_splits
            per.append(r["cpu"] / (n * n_splits) * 1e9)
            print(
                f"{group:<8} {n:>9,} {r['time']:>7.2f} s ({r['cpu']:>6.2f} s) {per[-1]:>12.1f}"
                "        "
                f"{r['rss_mb']:>7.0f} MB ({r['rss_before_mb']:>4.0f} MB)      "
                f"{t_loop:>9.0f} s ({loop_splits} splits)   {t_loop / r['cpu']:>7.0f}x"
            )
        print(f"{group}: time per item x split, largest / smallest = {max(per) / min(per):.2f}")
    print(
        "targets at 200k items: fast < 10 s, toe < 30 s, peak RSS < 1,500 MB; "
        "time per item x split flat within 2x. Per item x split and loop ratios use CPU time, "
        "which a loaded machine does not inflate; wall = CPU on a quiet one"
    )


if __name__ == "__main__":
    main()
