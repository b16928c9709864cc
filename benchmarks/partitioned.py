"""Benchmark: ``judgerisk score`` on a parquet panel larger than the in-memory path's budget.

Two measurements (issue 43, item 5):

* **scale** (the default): a dense panel of ``--items`` items (default 2,000,000) x 5 judges x
  2 conditions (``original``, ``swap``: 20 million cells), written as a folder of parquet parts
  (each part a :func:`judgerisk.simulate.simulate_panel` of its own seed), is scored from the
  command line in a fresh process (the streamed path: a sampled fit, then
  ``--partition-items`` items at a time). Its wall time and the peak resident memory of its
  process tree are printed against the target of 2 GB.
* **compare** (``--compare N``): a panel of N items (default 300,000) is scored twice in this
  process, with the default fit sample and with the full fit, and the Spearman correlation of
  their SCUR and the AUROCs of their risk scores for the majority verdict's errors are printed
  against the targets (Spearman >= 0.999, AUROCs within 0.002).

Usage: ``.venv/bin/python benchmarks/partitioned.py [--items N] [--dask ADDRESS]`` or
``.venv/bin/python benchmarks/partitioned.py --compare [N]``.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

from judgerisk.options import StreamSettings
from judgerisk.simulate import simulate_panel

sys.path.insert(0, str(Path(__file__).resolve().parent))
from crowd_memory import peak_memory  # noqa: E402 - the process tree's peak, one definition

TARGET_GB = 2.0
TARGET_SPEARMAN, TARGET_AUROC = 0.999, 0.002
CONDITIONS = ("original", "swap")


def write_dataset(folder: Path, n_items: int, chunk: int = 250_000, seed: int = 0) -> int:
    """``n_items`` items x 5 judges x 2 conditions as parquet parts of ``chunk`` items; rows."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = 0
    for k, start in enumerate(range(0, n_items, chunk)):
        n = min(chunk, n_items - start)
        data = simulate_panel(n_items=n, n_judges=5, conditions=CONDITIONS, seed=seed + k).data
        data["item"] += start
        data.to_parquet(folder / f"part-{k:04d}.parquet", index=False)
        rows += len(data)
    return rows


def scale(n_items: int, dask: str | None) -> None:
    with tempfile.TemporaryDirectory(prefix="judgerisk-stream-") as tmp:
        folder = Path(tmp) / "panel"
        t = time.perf_counter()
        rows = write_dataset(folder, n_items)
        print(f"wrote {n_items:,} items x 5 judges x 2 conditions ({rows:,} rows) in "
              f"{time.perf_counter() - t:.0f} s", flush=True)  # fmt: skip
        exe = str(Path(sys.executable).with_name("judgerisk"))
        argv = [exe, "score", str(folder), "-o", str(Path(tmp) / "scores.parquet")]
        argv += ["--dask", dask] if dask else []
        gb, secs = peak_memory(argv, Path(tmp) / "score.log")
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)  # the command: the only child
        cpu = usage.ru_utime + usage.ru_stime
        verdict = "meets" if gb <= TARGET_GB else "MISSES"
        st = StreamSettings()
        print(
            f"score (streamed, fit sample {st.fit_sample:,} items, partitions of "
            f"{st.partition_items:,}): {n_items:,} items in {secs:.0f} s wall, {cpu:.0f} s of "
            f"CPU ({cpu / n_items * 1e6:.0f} CPU s per million items), peak {gb:.2f} GB: "
            f"{verdict} the target of {TARGET_GB:.0f} GB (ratio {gb / TARGET_GB:.2f})"
        )


def compare(n_items: int) -> None:
    from scipy.stats import spearmanr
    from sklearn.metrics import roc_auc_score

    from judgerisk.engine.partitioned import score_parquet

    warnings.simplefilter("ignore")
    with tempfile.TemporaryDirectory(prefix="judgerisk-compare-") as tmp:
        path = Path(tmp) / "panel.parquet"
        sim = simulate_panel(n_items=n_items, n_judges=5, conditions=CONDITIONS, seed=0)
        sim.data.to_parquet(path, index=False)
        t = time.perf_counter()
        sub = score_parquet(path)
        t_sub = time.perf_counter() - t
        full = score_parquet(path, fit_sample=n_items)
        t_full = time.perf_counter() - t - t_sub
    rho = spearmanr(sub["scur"], full["scur"]).statistic
    err = (full["majority"] != full["gold"]).to_numpy()
    print(
        f"{n_items:,} items: sampled fit ({sub.attrs['fit_sample_items']:,} items) {t_sub:.0f} s, "
        f"full fit {t_full:.0f} s; Spearman of SCUR {rho:.6f} (target >= {TARGET_SPEARMAN}); "
        f"majority errors {err.mean():.3f}"
    )
    worst = 0.0
    for col in ("scur", "z_U", "z_C", "z_S", "pe", "ve", "msp", "ds_entropy"):
        a, b = roc_auc_score(err, full[col]), roc_auc_score(err, sub[col])
        worst = max(worst, abs(b - a))
        print(f"  AUROC {col:<10} full {a:.5f}  sampled {b:.5f}  difference {b - a:+.5f}")
    same = np.mean(sub["dawid_skene"].to_numpy() == full["dawid_skene"].to_numpy())
    print(
        f"largest AUROC difference {worst:.5f} (target <= {TARGET_AUROC}); Dawid-Skene "
        f"verdicts equal on {same:.4%} of the items"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=2_000_000, help="items of the scale run")
    parser.add_argument("--dask", help="score on this Dask scheduler")
    parser.add_argument(
        "--compare", type=int, nargs="?", const=300_000, help="sampled vs full fit on N items"
    )
    args = parser.parse_args()
    if args.compare:
        compare(args.compare)
    else:
        scale(args.items, args.dask)


if __name__ == "__main__":
    main()
