"""Benchmark: memory of ``judgerisk score`` and ``judgerisk report`` on crowdsourced panels.

A crowd-style panel: 5,000 judges, each item labelled by 5 of them, in both orders (10 cells per
item). Its item x judge tables are 99.9 % empty, so every step that builds one densely costs
items x judges (issue 33: 4,000 items took 1.64 GB, 8,000 items 3.11 GB, about 40 GB at
100,000). Each command runs in a fresh process on a panel file; the peak resident memory of the
process tree (the command and, for ``report``, its notebook kernel, sampled every 0.1 s, and
never below the largest process's own ``ru_maxrss``) is printed

* per observed cell, against a dense panel with the same number of cells (5 judges x 2 orders,
  one tenth of a cell per item and judge missing nowhere) measured in the same run: the ratio
  is what the crowd's shape costs beyond its cells (1.0: nothing);
* at 100,000 crowd items (1,000,000 cells), against the target of 1 GB (``score``).

The slope between two crowd sizes (MB per 1,000 items) shows that the growth is linear in the
items, hence in the observed cells, not in items x judges.

Usage: ``.venv/bin/python benchmarks/crowd_memory.py [--quick] [--report]`` (``--quick``: the
10,000- and 20,000-item panels only; ``--report``: also run ``judgerisk report`` on them).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from judgerisk.simulate import simulate_panel

TARGET_GB = 1.0
N_JUDGES, PER_ITEM = 5000, 5


def crowd_panel(n_items: int, n_judges: int = N_JUDGES, per_item: int = PER_ITEM, seed: int = 0):
    """``n_items`` items, each judged by ``per_item`` distinct judges of ``n_judges``, both orders.

    Judge j's canonical logit is ``a_j q_i + b_j ± position bias + noise`` (the latent measurement
    model's shape), with gold the sign of the item's preference ``q_i``.
    """
    rng = np.random.default_rng(seed)
    judges = rng.integers(0, n_judges, size=(n_items, per_item))
    while True:  # redraw repeated judges of an item until each item has distinct ones
        ordered = np.sort(judges, axis=1)
        dup = np.zeros_like(judges, dtype=bool)
        dup[:, 1:] = ordered[:, 1:] == ordered[:, :-1]
        if not dup.any():
            break
        judges = np.where(dup, rng.integers(0, n_judges, size=judges.shape), ordered)
    q = rng.choice([-1.0, 1.0], n_items) * rng.lognormal(1.0, 0.5, n_items)
    a, b = rng.lognormal(0.0, 0.3, n_judges), rng.normal(0.0, 0.3, n_judges)
    noise = rng.uniform(0.5, 2.0, n_judges)
    item = np.repeat(np.arange(n_items), per_item)
    j = judges.ravel()
    base = a[j] * q[item] + b[j]
    names = np.char.add("w", j.astype(str))
    parts = [
        pd.DataFrame(
            {
                "item": item,
                "judge": names,
                "condition": cond,
                "logit": np.clip(base + bias + rng.normal(0.0, noise[j]), -20, 20),
            }
        )
        for cond, bias in (("original", 0.5), ("swap", -0.5))
    ]
    out = pd.concat(parts, ignore_index=True)
    gold = np.where(q > 0, "A", "B")[out["item"].to_numpy()]
    out["gold"] = np.where(out["item"].to_numpy() % 5 == 0, gold, None)  # a fifth labelled
    return out


def dense_panel(n_cells: int, seed: int = 0) -> pd.DataFrame:
    """5 judges x 2 orders, every cell observed, with ``n_cells`` cells."""
    panel = simulate_panel(
        n_items=n_cells // 10, n_judges=5, conditions=("original", "swap"), seed=seed
    )
    data = panel.data
    return data.assign(gold=data["gold"].where(data["item"] % 5 == 0))


def _tree_rss(proc) -> tuple[int, int]:
    """Resident bytes of the command (the launcher's child), and the private bytes (USS) of its
    children: a forked child (``score`` scoring splits on another core, ``report`` scoring its
    panel) shares its parent's pages until it writes them, and its resident size counts them
    again; its private memory is what it adds to the machine's. The sum of the resident sizes,
    which counts the shared pages once per process, is kept in :data:`PARTS`."""
    import psutil

    try:
        command = psutil.Process(proc.pid).children()[0]  # proc is peak_rss.py, the launcher
        procs = [command, *command.children(recursive=True)]
    except (psutil.NoSuchProcess, IndexError):
        return 0, 0
    own, added, counted_twice = 0, 0, 0
    for i, p in enumerate(procs):
        try:
            if i == 0:
                own = p.memory_info().rss
            else:
                info = p.memory_full_info()
                added += info.uss
                counted_twice += info.rss
        except psutil.NoSuchProcess:
            continue
    key = "tree, shared pages counted in each process"
    PARTS[key] = max(PARTS.get(key, 0), own + counted_twice)
    return own, added


def peak_memory(argv: list[str], log: Path) -> tuple[float, float]:
    """Peak resident memory (GB) of a command's process tree, and its wall seconds.

    The tree (the command's resident memory and its children's private memory,
    :func:`_tree_rss`) is sampled every 0.1 s; the figure is never below the command's own ``ru_maxrss``,
    read by ``peak_rss.py`` (the command is forked from that small launcher, so the size of this
    benchmark, which built the panel, is not counted in it).
    """
    t = time.perf_counter()
    report = log.with_suffix(".peak")
    launcher = [sys.executable, str(Path(__file__).with_name("peak_rss.py")), str(report), "--"]
    with open(log, "w") as err:
        proc = subprocess.Popen([*launcher, *argv], stdout=subprocess.DEVNULL, stderr=err)
    peak, code = 0, None
    while code is None:
        own, children = _tree_rss(proc)
        peak = max(peak, own + children)
        if children:
            PARTS["command while its children run"] = max(
                PARTS.get("command while its children run", 0), own
            )
            PARTS["children (private memory)"] = max(
                PARTS.get("children (private memory)", 0), children
            )
        time.sleep(0.1)
        code = proc.poll()
    seconds = time.perf_counter() - t
    if code:
        raise SystemExit(f"{' '.join(argv)} failed: {log.read_text()[-2000:]}")
    return max(peak, int(report.read_text())) / 1024**3, seconds


#: Peak bytes of the parts of the last command measured (the command and its forked children).
PARTS: dict[str, int] = {}


def run(command: str, panel: pd.DataFrame, folder: Path, name: str) -> tuple[float, float]:
    """Peak GB and seconds of ``judgerisk <command>`` on ``panel`` (written as parquet)."""
    src = folder / f"{name}.parquet"
    panel.to_parquet(src, index=False)
    out = folder / (f"{name}-{command}." + ("html" if command == "report" else "parquet"))
    exe = [str(Path(sys.executable).with_name("judgerisk"))]
    args = [command, str(src), "-o", str(out)]
    if command == "report":
        args += ["--n-splits", "100"]
    return peak_memory([*exe, *args], folder / f"{name}-{command}.log")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10,000 and 20,000 items only")
    parser.add_argument("--sizes", type=int, nargs="+", help="crowd sizes (items) to measure")
    parser.add_argument("--report", action="store_true", help="also measure judgerisk report")
    args = parser.parse_args()
    sizes = args.sizes or ((10_000, 20_000) if args.quick else (10_000, 20_000, 100_000))
    commands = ("score", "report") if args.report else ("score",)
    with tempfile.TemporaryDirectory(prefix="judgerisk-crowd-") as tmp:
        folder = Path(tmp)
        for command in commands:
            crowd: dict[int, float] = {}
            for n in sizes:
                panel = crowd_panel(n)
                PARTS.clear()
                gb, secs = run(command, panel, folder, f"crowd{n}")
                parts = ", ".join(f"{k} {v / 1024**3:.2f} GB" for k, v in PARTS.items())
                dense_gb, dense_secs = run(command, dense_panel(len(panel)), folder, f"dense{n}")
                crowd[n] = gb
                cells = len(panel)
                print(
                    f"{command}: {n:,} crowd items x {N_JUDGES:,} judges ({cells:,} cells, "
                    f"{cells / (n * N_JUDGES * 2):.2%} of items x judges x orders): "
                    f"{gb:.2f} GB in {secs:.0f} s, {gb * 1024**3 / cells:,.0f} bytes per cell; "
                    f"dense panel of the same {cells:,} cells {dense_gb:.2f} GB in "
                    f"{dense_secs:.0f} s; ratio crowd/dense per cell {gb / dense_gb:.2f}"
                    + (f" (crowd: {parts})" if parts else ""),
                    flush=True,
                )
            if len(crowd) >= 2:
                (n0, g0), (n1, g1) = list(crowd.items())[:2]
                print(
                    f"{command}: slope {1000 * 1024 * (g1 - g0) / (n1 - n0):.1f} MB per 1,000 "
                    f"crowd items ({1024**3 * (g1 - g0) / (10 * (n1 - n0)):,.0f} bytes per added "
                    "cell)"
                )
            if 100_000 in crowd:
                verdict = "meets" if crowd[100_000] <= TARGET_GB else "MISSES"
                print(
                    f"{command}: 100,000 crowd items {crowd[100_000]:.2f} GB: {verdict} the target "
                    f"of {TARGET_GB:.0f} GB (ratio {crowd[100_000] / TARGET_GB:.2f})"
                )


if __name__ == "__main__":
    main()
