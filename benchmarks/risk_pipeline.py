"""Benchmark: the SCUR risk pipeline end to end, 20 seeds on the default 2,000-item panel.

Stages per seed (as in :func:`judgerisk.engine.analysis.evaluate_risk`):

* ``fit``       latent measurement model on the fit split (50 % of items)
* ``lojo``      leave-one-judge-out predictions for reference + evaluation cells
* ``signals``   U, C, S, reference ECDFs and SCUR (``scur_scores`` reusing the fitted model, minus
                one LOJO pass, which it recomputes)
* ``baselines`` PE, VE, MSP and DS entropy (DS fitted on the fit split)
* ``subsets``   AUROC on all / HC / probability-HC / matched-vote subsets for every method

Then :func:`evaluate_risk` itself, serially and with ``n_jobs=2``. Timings are printed in wall and
CPU seconds and as ratios against the sum of the stages measured in the same run (machines are
noisy; CPU seconds of a serial run do not depend on other load). Target (issue 4): the 20-seed run
under 30 s on 2 cores.

Usage: ``.venv/bin/python benchmarks/risk_pipeline.py [--quick]`` (``--quick``: 5 seeds).
"""

from __future__ import annotations

import argparse
import time
import warnings
from collections import defaultdict

import numpy as np

from judgerisk._splits import split_items
from judgerisk.engine.analysis import METHODS, SUBSETS, evaluate_risk, risk_context
from judgerisk.risk.lmm import LatentMeasurementModel
from judgerisk.risk.metrics import auroc_table, matched_vote_auroc
from judgerisk.risk.registry import BASELINES, risk_score_table
from judgerisk.risk.scur import scur_scores
from judgerisk.simulate import simulate_panel

TARGET_S = 30.0


class _Clock:
    """Wall and CPU seconds of this process, accumulated by stage."""

    def __init__(self):
        self.wall: dict[str, float] = defaultdict(float)
        self.cpu: dict[str, float] = defaultdict(float)
        self._start = (0.0, 0.0)

    def start(self) -> None:
        self._start = (time.perf_counter(), time.process_time())

    def stop(self, name: str, minus: tuple[float, float] = (0.0, 0.0)) -> tuple[float, float]:
        wall = time.perf_counter() - self._start[0]
        cpu = time.process_time() - self._start[1]
        self.wall[name] += max(0.0, wall - minus[0])
        self.cpu[name] += max(0.0, cpu - minus[1])
        return wall, cpu


def _stages(panel, seeds) -> _Clock:
    """Run the pipeline stage by stage; wall and CPU seconds per stage, summed over seeds."""
    clock = _Clock()
    clock.start()
    ctx = risk_context(panel, "majority", None, "fit", (0.5, 0.3, 0.2), 0.8, 0.8, None)
    clock.stop("setup (validate, majority, masks)")
    for seed in seeds:
        split = split_items(ctx.items, seed)
        row_split = split.reindex(ctx.panel["item"].to_numpy()).to_numpy()
        fit_panel = ctx.panel.loc[row_split == "fit"].reset_index(drop=True)
        score_panel = ctx.panel.loc[row_split != "fit"].reset_index(drop=True)

        clock.start()
        model = LatentMeasurementModel(random_state=seed).fit(fit_panel)
        clock.stop("fit")

        clock.start()
        model.predict_loo(score_panel)
        lojo = clock.stop("lojo")

        clock.start()
        res = scur_scores(ctx.panel, seed, lmm=model)
        clock.stop("signals", minus=lojo)

        eval_idx = split.index[split.to_numpy() == "evaluation"]
        fit_idx = split.index[split.to_numpy() == "fit"]
        clock.start()
        table = risk_score_table(ctx.probs, ctx.votes, fit_idx, eval_idx, BASELINES)
        clock.stop("baselines")

        clock.start()
        table["scur"] = res.scores("evaluation")["scur"].reindex(eval_idx).to_numpy()
        err = ctx.errors.reindex(eval_idx)
        masks = {
            "all": np.ones(len(eval_idx), bool),
            "hc": ctx.hc.reindex(eval_idx).to_numpy(),
            "prob_hc": ctx.prob_hc.reindex(eval_idx).to_numpy(),
        }
        for mask in masks.values():
            auroc_table(table.loc[mask, list(METHODS)], err[mask])
        votes = ctx.votes.loc[eval_idx]
        for m in METHODS:
            matched_vote_auroc(table[m], err, votes)
        clock.stop("subsets")
    return clock


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="5 seeds instead of 20")
    args = parser.parse_args(argv)
    n_seeds = 5 if args.quick else 20
    seeds = range(n_seeds)
    warnings.simplefilter("ignore", RuntimeWarning)

    t = time.perf_counter()
    panel = simulate_panel(seed=0).data
    t_sim = time.perf_counter() - t
    n_items = panel["item"].nunique()
    print(
        f"panel: {n_items} items, {len(panel)} rows (simulated in {t_sim:.2f} s); {n_seeds} seeds; "
        f"methods {', '.join(METHODS)}; subsets {', '.join(SUBSETS)}"
    )

    clock = _stages(panel, seeds)
    base = sum(clock.wall.values())
    base_cpu = sum(clock.cpu.values())
    print(
        f"\nstage by stage (serial; baseline = their sum = {base:.2f} s wall, "
        f"{base_cpu:.2f} s CPU, {base / n_seeds:.3f} s wall a seed):"
    )
    print(f"  {'stage':<34s} {'wall':>8s} {'CPU':>8s}   share of baseline wall")
    for name, sec in clock.wall.items():
        print(f"  {name:<34s} {sec:7.2f}s {clock.cpu[name]:7.2f}s   {sec / base:6.1%}")

    t, c = time.perf_counter(), time.process_time()
    serial = evaluate_risk(panel, seeds=seeds, n_jobs=1)
    t_serial, c_serial = time.perf_counter() - t, time.process_time() - c
    t = time.perf_counter()
    parallel = evaluate_risk(panel, seeds=seeds, n_jobs=2)
    t_cold = time.perf_counter() - t
    t = time.perf_counter()
    parallel_warm = evaluate_risk(panel, seeds=seeds, n_jobs=2)
    t_par = time.perf_counter() - t
    same = serial.equals(parallel) and serial.equals(parallel_warm)

    print("\nevaluate_risk end to end:")
    print(
        f"  n_jobs=1  {t_serial:7.2f} s wall  ratio to baseline {t_serial / base:5.2f}   "
        f"{t_serial / n_seeds:.3f} s a seed   CPU {c_serial:.2f} s "
        f"(ratio to baseline CPU {c_serial / base_cpu:4.2f})"
    )
    print(
        f"  n_jobs=2  {t_cold:7.2f} s wall  ratio to baseline {t_cold / base:5.2f}   "
        f"speed-up over n_jobs=1 {t_serial / t_cold:4.2f}x   (cold: starts the worker processes)"
    )
    print(
        f"  n_jobs=2  {t_par:7.2f} s wall  ratio to baseline {t_par / base:5.2f}   "
        f"speed-up over n_jobs=1 {t_serial / t_par:4.2f}x   (warm workers; identical tables: {same})"
    )
    scale = 20 / n_seeds
    best = min(t_serial, t_cold) * scale
    print(
        f"\n20 seeds, faster run: {best:.1f} s wall; target {TARGET_S:.0f} s -> ratio "
        f"{best / TARGET_S:.2f} ({'met' if best < TARGET_S else 'NOT met'})"
    )
    print(
        f"20 seeds, serial CPU: {c_serial * scale:.1f} s -> ratio {c_serial * scale / TARGET_S:.2f} "
        "of the target (independent of other load on the machine)"
    )


if __name__ == "__main__":
    main()
