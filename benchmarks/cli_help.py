"""Wall time of ``judgerisk --help``: a fresh interpreter per run, as a shell runs it.

Run: ``.venv/bin/python benchmarks/cli_help.py [--repeats 5] [--against ../main]``

Each run starts a new ``python -c`` that calls the console script's ``main(["--help"])``; the
time is the median of ``--repeats`` runs (interleaved, hyperfine-like), printed with its ratio
to the interpreter starting and importing ``argparse`` alone, measured in the same run
(machines are noisy; compare ratios). ``--against FOLDER`` also times the checkout in FOLDER
(``PYTHONPATH=FOLDER``, the same interpreter), e.g. ``main`` before a change. Also prints the
judgerisk modules the help imports (``python -X importtime``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HELP = "from judgerisk.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
BASELINE = "import argparse"


def _run(code: str, checkout: Path, *flags: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    return subprocess.run(
        [sys.executable, *flags, "-c", code],
        env=env,
        cwd=checkout,  # ``-c`` puts the working folder first on sys.path
        capture_output=True,
        text=True,
        check=True,
    )


def _once(code: str, checkout: Path) -> float:
    t0 = time.perf_counter()
    _run(code, checkout)
    return time.perf_counter() - t0


def imported_modules(checkout: Path) -> list[str]:
    """The judgerisk modules ``judgerisk --help`` imports, in import order."""
    lines = _run(HELP, checkout, "-X", "importtime").stderr.splitlines()
    names = [ln.rsplit("|", 1)[-1].strip() for ln in lines if "|" in ln]
    return list(dict.fromkeys(n for n in names if n.split(".")[0] == "judgerisk"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--against", type=Path, help="another checkout to time (e.g. ../main)")
    args = parser.parse_args()
    checkouts = {"this checkout": ROOT}
    if args.against is not None:
        checkouts[f"{args.against}"] = args.against.resolve()
    runs: dict[str, list[float]] = {name: [] for name in ("python + argparse", *checkouts)}
    for _ in range(args.repeats):  # interleaved: a slow moment of the machine hits every row
        runs["python + argparse"].append(_once(BASELINE, ROOT))
        for name, path in checkouts.items():
            runs[name].append(_once(HELP, path))
    base = statistics.median(runs["python + argparse"])
    print(f"judgerisk --help wall time, median of {args.repeats} fresh interpreter(s)")
    print(f"{'':<28} {'seconds':>8} {'x baseline':>11}  runs")
    for name, times in runs.items():
        med = statistics.median(times)
        shown = " ".join(f"{t:.3f}" for t in times)
        print(f"{name:<28} {med:8.3f} {med / base:11.2f}  {shown}")
    for name, path in checkouts.items():
        modules = imported_modules(path)
        print(f"{name}: imports {len(modules)} judgerisk modules: {' '.join(modules)}")


if __name__ == "__main__":
    main()
