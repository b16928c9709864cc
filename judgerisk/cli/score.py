"""``judgerisk score``: the per-item risk table of a panel (SCUR, its signals, baselines, verdicts)."""

from __future__ import annotations

import argparse
import sys
import textwrap
from typing import TYPE_CHECKING

from judgerisk.cli.common import (
    EXIT_OK,
    Command,
    add_overwrite,
    add_progress,
    check_output,
    command_record,
    count_of,
    names,
    panel_size,
    say,
    seed,
    settings_from,
    write_output,
)
from judgerisk.options import ACCELERATIONS, PROTOCOLS, OptionError, ScoreSettings

if TYPE_CHECKING:  # building the parser imports no pandas
    import pandas as pd

__all__ = [
    "COMMAND",
    "ACCELERATE_HELP",
    "AGGREGATORS_DEFAULT",
    "Score",
    "check_aggregators",
    "panel_sizes",
]

#: The help of ``--accelerate`` (``score`` and ``report``).
ACCELERATE_HELP = (
    "LMM fitting: 'anderson' (Anderson-accelerated sweeps, same fixed point as the "
    "plain sweeps, converges where they drift), 'lbfgs' (the exact minimiser) or 'none' (the plain "
    "sweeps of the latent measurement model's fit)"
)

#: What ``--aggregators`` means when not given (``score`` and ``report``).
AGGREGATORS_DEFAULT = (
    "majority,dawid_skene, then every aggregator registered beyond the five built-ins"
)


class Score(Command):
    name = "score"
    help = "per-item risk table: SCUR, z's, baselines, aggregator verdicts"
    description = textwrap.dedent(
        """\
        Score every item of a panel. SCUR and its components are cross-fitted by repeated
        5-fold cross-fitting: each of --n-seeds repetitions partitions the items into 5
        folds and evaluates each fold once (another fold is the reference set, the other
        three the fit set), so every item gets exactly --n-seeds out-of-fold scores, whose
        mean is its score (gold, if present, is never read). --protocol paper uses the
        paper's independent random 50/30/20 splits instead. PE, VE, MSP and the
        aggregators' verdicts use the original condition."""
    )
    epilog = (
        "example:\n  judgerisk score panel.csv -o scores.csv --n-seeds 5 "
        "--aggregators majority,dawid_skene"
    )
    recomputable = True
    inputs = {"panel": "panel"}

    def add_arguments(self, p: argparse.ArgumentParser) -> None:
        p.add_argument("panel", help="panel file (.csv, .parquet, .jsonl)")
        p.add_argument("-o", "--output", required=True, help="score table to write")
        ss = ScoreSettings()  # the score command's one set of defaults
        p.add_argument(
            "--n-seeds",
            type=count_of("n_seeds"),
            default=ss.n_seeds,
            help="repetitions of the cross-fitting (each scores every item once)",
        )
        p.add_argument(
            "--protocol",
            choices=PROTOCOLS,
            default=ss.protocol,
            help="'kfold': repeated 5-fold cross-fitting; 'paper': the paper's independent "
            "random fit/reference/evaluation splits (some items may stay unscored)",
        )
        p.add_argument(
            "--n-folds",
            type=count_of("n_folds"),
            default=ss.n_folds,
            help="folds K of each repetition under --protocol kfold (at least 3)",
        )
        p.add_argument("--seed", type=seed, default=ss.seed, help="first split's seed")
        p.add_argument(
            "--aggregators",
            type=names,
            default=ss.aggregators,
            help="comma-separated aggregators whose verdicts (and *_posterior) to add "
            f"(default: {AGGREGATORS_DEFAULT})",
        )
        p.add_argument(
            "--accelerate", choices=ACCELERATIONS, default=ss.accelerate, help=ACCELERATE_HELP
        )
        add_progress(p)
        add_overwrite(p)

    def run(self, args: argparse.Namespace) -> int:
        from judgerisk._util.progress import want_progress
        from judgerisk.orientation import count_ties
        from judgerisk.panel import load_panel

        check_output(args, args.output, (args.panel,))
        check_aggregators(args.aggregators)  # None (the default) stays None in the record
        settings = settings_from(ScoreSettings, vars(args))
        panel = load_panel(args.panel)
        record = command_record(args, {"panel": (args.panel, len(panel))})
        say(args, f"scoring {panel_size(panel)} with {settings.n_seeds} repetition(s)")
        progress = want_progress(args.progress)
        table = _score(panel, settings, progress)
        out = {"seeds": table.attrs.get("seeds", []), "n_items": len(table)}
        out.update(columns=list(table.columns), ties=count_ties(panel))
        write_output(args, table.reset_index(), args.output, record, out)
        print(
            f"wrote {args.output}: {len(table)} items; columns {', '.join(table.columns)}",
            file=sys.stderr,
        )
        return EXIT_OK

    def check_sizes(self, record: dict, n_output: int, loaded: dict) -> list[str]:
        return panel_sizes(record, n_output, loaded)

    def recompute(self, record: dict, loaded: dict) -> pd.DataFrame:
        settings = settings_from(ScoreSettings, record["parameters"])
        return _score(loaded["panel"], settings).reset_index()


def panel_sizes(record: dict, n_output: int, loaded: dict) -> list[str]:
    """The bounds of a scored panel's record (``score`` and ``report``), and its row count."""
    from judgerisk.report.record_checks import MAX_SEEDS, record_int

    params = record["parameters"]
    record_int(params, "n_seeds", 1, MAX_SEEDS)
    record_int(params, "seed", 0, 2**32 - 1)
    n_items = loaded["panel"]["item"].nunique()
    if n_items != n_output:
        return [f"the panel has {n_items} items, the output {n_output} rows"]
    return []


def _score(
    panel: pd.DataFrame,
    settings: ScoreSettings,
    progress: bool = False,
) -> pd.DataFrame:
    """``score_panel`` with ``settings``, on one BLAS thread (the numbers ``verify`` expects)."""
    from judgerisk._util.determinism import one_blas_thread
    from judgerisk.engine.certified import accelerate_options, score_panel

    with one_blas_thread():  # identical numbers whatever the BLAS thread count (verify)
        return score_panel(
            panel,
            n_seeds=settings.n_seeds,
            seed=settings.seed,
            aggregators=settings.aggregators,
            scur_options=accelerate_options(settings.accelerate),
            progress=progress,
            protocol=settings.protocol,
            n_folds=settings.n_folds,
        )


def check_aggregators(names: tuple[str, ...] | None) -> tuple[str, ...]:
    """``--aggregators`` resolved (``None``: the registry's reported set) and checked."""
    from judgerisk.aggregators.base import AGGREGATORS, reported_aggregators

    resolved = reported_aggregators(names)
    unknown = [n for n in resolved if n not in AGGREGATORS]
    if unknown:
        raise OptionError(
            f"--aggregators: unknown aggregator(s) {unknown}; choose among {list(AGGREGATORS)}"
        )
    return resolved


COMMAND = Score()
