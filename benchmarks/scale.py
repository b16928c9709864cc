"""Benchmark: the scale targets of ``judgerisk score``, ``report`` and ``perturb``, each beside its target.

Every figure comes from the command line: each command runs in a fresh process on a file, and
its peak resident memory is that of its process tree (``benchmarks/crowd_memory.py``'s
``peak_memory``: the command's resident memory plus the private memory of the children it forks,
sampled every 0.1 s, never below the command's own ``ru_maxrss``). The rows
are those of issue 43's table:

* ``score`` on the crowd panel of ``benchmarks/crowd_memory.py`` (5,000 judges, 5 per item,
  both orders) at 8,000, 20,000 and 100,000 items: memory linear in the cells;
* ``score`` on dense panels of 5 judges x 6 conditions (``simulate_panel``): 200,000 items
  (memory) and 20,000 items (time);
* ``report`` on 2,000 items x 5 judges x 6 conditions (time);
* ``perturb`` on an items file (memory, independent of the file's size).

Usage: ``.venv/bin/python benchmarks/scale.py [--quick] [--write-readme]`` (``--quick``: the
small rows only, no 100,000-item crowd nor 200,000-item dense panel; ``--write-readme``: put the
table into README.md between its ``scale table`` markers). Times depend on the machine and its
load: the table says which machine measured them.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from crowd_memory import crowd_panel, peak_memory  # noqa: E402

from judgerisk.simulate import simulate_panel  # noqa: E402

README = Path(__file__).resolve().parent.parent / "README.md"
BEGIN, END = "<!-- scale table: benchmarks/scale.py --write-readme -->", "<!-- end scale table -->"


def _exe() -> str:
    return str(Path(sys.executable).with_name("judgerisk"))


def _items_file(path: Path, n_items: int) -> float:
    """An items file of ``n_items`` items with texts of a few hundred words; its size in MB."""
    words = "the of and to in is was for on that with as by at from this be are or an".split()
    rng = random.Random(0)
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(n_items):
            text = [" ".join(rng.choices(words, k=k)) for k in (100, 180, 180)]
            row = dict(zip(("prompt", "answer_a", "answer_b"), text, strict=True))
            fh.write(json.dumps({"item": i, **row, "gold": "AB"[i % 2]}) + "\n")
    return path.stat().st_size / 1e6


def _median_seconds(argv: list[str], out: Path, runs: int = 3) -> float:
    """Median wall seconds of ``runs`` runs of a command that writes ``out`` (removed first)."""
    times = []
    for _ in range(runs):
        out.unlink(missing_ok=True)
        t = time.perf_counter()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def measure(quick: bool) -> list[tuple[str, str, str, bool]]:
    """(what, measured, target, met) for every row."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="judgerisk-scale-") as tmp:
        folder = Path(tmp)

        def score(
            panel, name: str, command: str = "score", extra=(), timed: bool = False
        ) -> tuple[float, float]:
            """Peak GB and seconds; ``timed``: the seconds are the median of three bare runs
            (the memory sampler, 0.1 s apart, takes a core's share on a 2-core machine)."""
            src = folder / f"{name}.parquet"
            panel.to_parquet(src, index=False)
            out = folder / (f"{name}.html" if command == "report" else f"{name}-scores.parquet")
            argv = [_exe(), command, str(src), "-o", str(out), *extra]
            gb, secs = peak_memory(argv, folder / f"{name}.log")
            if timed:
                secs = _median_seconds(argv, out)
            return gb, secs

        crowd = {}
        for n in (8_000, 20_000) + (() if quick else (100_000,)):
            crowd[n] = score(crowd_panel(n), f"crowd{n}")
        gb8, gb20 = crowd[8_000][0], crowd[20_000][0]
        slope = (gb20 - gb8) * 1024**3 / (10 * 12_000)  # bytes per added cell
        rows.append(
            (
                "`score`, crowd, 20,000 items (5,000 judges, 5 per item, both orders)",
                f"{gb20:.2f} GB, {crowd[20_000][1]:.0f} s",
                "≤ 0.5 GB",
                gb20 <= 0.5,
            )
        )
        rows.append(
            (
                "the same at 8,000 items",
                f"{gb8:.2f} GB; {slope:,.0f} bytes per added cell",
                "linear in cells",
                slope < 2_000,
            )
        )
        if not quick:
            gb, secs = crowd[100_000]
            rows.append(
                ("the same at 100,000 items", f"{gb:.2f} GB, {secs:.0f} s", "≤ 1 GB", gb <= 1)
            )
            gb, secs = score(simulate_panel(n_items=200_000, n_judges=5, seed=0).data, "dense200k")
            rows.append(
                (
                    "`score`, dense 200,000 items × 5 judges × 6 conditions",
                    f"{gb:.2f} GB, {secs:.0f} s",
                    "≤ 1 GB",
                    gb <= 1,
                )
            )
        gb, secs = score(
            simulate_panel(n_items=20_000, n_judges=5, seed=0).data, "dense20k", timed=True
        )
        rows.append(
            (
                "`score`, 20,000 items × 5 × 6",
                f"{secs:.2f} s ({gb:.2f} GB)",
                "≤ 2 s (median of 3 runs)",
                secs <= 2,
            )
        )
        gb, secs = score(
            simulate_panel(n_items=2_000, n_judges=5, seed=0).data,
            "dense2k",
            "report",
            ("--n-splits", "100"),
            timed=True,
        )
        rows.append(
            (
                "`report`, 2,000 items × 5 × 6",
                f"{secs:.2f} s ({gb:.2f} GB)",
                "≤ 3 s (median of 3 runs)",
                secs <= 3,
            )
        )
        src = folder / "items.jsonl"
        mb = _items_file(src, 6_000 if quick else 50_000)
        gb, secs = peak_memory(
            [_exe(), "perturb", str(src), "-o", str(folder / "p.jsonl")], folder / "perturb.log"
        )
        rows.append(
            (
                f"`perturb`, {mb:.0f} MB of items",
                f"{gb:.2f} GB, {secs:.0f} s",
                "streams: ≤ 0.5 GB",
                gb <= 0.5,
            )
        )
    return rows  # fmt: skip


def table(rows: list[tuple[str, str, str, bool]]) -> str:
    machine = f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the end"
    lines = [
        f"Measured by `benchmarks/scale.py` from the command line ({machine}):",
        "",
        "| what | measured | target | met |",
        "|---|---|---|---|",
    ]
    lines += [f"| {w} | {m} | {t} | {'yes' if ok else '**no**'} |" for w, m, t, ok in rows]
    return "\n".join(lines)  # fmt: skip


def write_readme(text: str) -> None:
    readme = README.read_text(encoding="utf-8")
    start, end = readme.index(BEGIN) + len(BEGIN), readme.index(END)
    README.write_text(readme[:start] + "\n" + text + "\n" + readme[end:], encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the small rows only")
    parser.add_argument(
        "--write-readme", action="store_true", help="write the table into README.md"
    )
    args = parser.parse_args()
    rows = measure(args.quick)
    for what, measured, target, ok in rows:
        print(f"{what}: {measured}; target {target}: {'meets' if ok else 'MISSES'} it", flush=True)
    text = table(rows)
    if args.write_readme:
        write_readme(text)
        print(f"wrote the table into {README}")
    else:
        print(text)


if __name__ == "__main__":
    main()
