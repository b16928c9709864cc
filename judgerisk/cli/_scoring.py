"""What ``judgerisk score`` and ``judgerisk report`` share: the scoring options and their checks.

Both commands build their scoring options from :func:`add_scoring_arguments` (one argument
group, its defaults read from :class:`judgerisk.options.ScoreSettings`, which
:class:`~judgerisk.options.ReportSettings` extends), so the report accepts every scoring option
``score`` accepts and its embedded score table is ``score``'s output for the same options.
Nothing here imports numpy or pandas.
"""

from __future__ import annotations

import argparse

from judgerisk.cli.common import add_list, count_of, seed
from judgerisk.options import ACCELERATIONS, PROTOCOLS, OptionError, ScoreSettings

__all__ = ["add_scoring_arguments", "check_aggregators", "panel_sizes"]

_ACCELERATE_HELP = (
    "LMM fitting: 'anderson' (Anderson-accelerated sweeps, same fixed point as the "
    "plain sweeps, converges where they drift), 'lbfgs' (the exact minimiser) or 'none' (the plain "
    "sweeps of the latent measurement model's fit)"
)


def add_scoring_arguments(
    p: argparse.ArgumentParser, settings: ScoreSettings, aggregators_help: str
) -> None:
    """The scoring options, with ``settings``' defaults, in a group of their own.

    ``--n-seeds``, ``--protocol``, ``--n-folds``, ``--seed``, ``--aggregators`` (a list) and
    ``--accelerate``: the fields of :class:`~judgerisk.options.ScoreSettings`, one option each.
    """
    g = p.add_argument_group("scoring (as judgerisk score)")
    g.add_argument(
        "--n-seeds",
        type=count_of("n_seeds"),
        default=settings.n_seeds,
        help="repetitions of the cross-fitting (each scores every item once)",
    )
    g.add_argument(
        "--protocol",
        choices=PROTOCOLS,
        default=settings.protocol,
        help="'kfold': repeated K-fold cross-fitting; 'paper': the paper's independent "
        "random fit/reference/evaluation splits (some items may stay unscored)",
    )
    g.add_argument(
        "--n-folds",
        type=count_of("n_folds"),
        default=settings.n_folds,
        help="folds K of each repetition under --protocol kfold (at least 3)",
    )
    g.add_argument("--seed", type=seed, default=settings.seed, help="first split's seed")
    add_list(
        g,
        "--aggregators",
        default=settings.aggregators,
        help=f"{aggregators_help} (default: majority, dawid_skene, then every aggregator "
        "registered beyond the five built-ins)",
    )
    g.add_argument(
        "--accelerate",
        choices=ACCELERATIONS,
        default=settings.accelerate,
        help=_ACCELERATE_HELP,
    )


def check_aggregators(names: tuple[str, ...] | None) -> tuple[str, ...]:
    """``--aggregators`` resolved (``None``: the registry's reported set) and checked."""
    from judgerisk.aggregators._base import AGGREGATORS, reported_aggregators

    resolved = reported_aggregators(names)
    unknown = [n for n in resolved if n not in AGGREGATORS]
    if unknown:
        raise OptionError(
            f"--aggregators: unknown aggregator(s) {unknown}; choose among {list(AGGREGATORS)}"
        )
    return resolved


def panel_sizes(record: dict, n_output: int, loaded: dict) -> list[str]:
    """The bounds of a scored panel's record (``score`` and ``report``), and its row count."""
    from judgerisk.report._record_checks import MAX_SEEDS, record_int

    params = record["parameters"]
    record_int(params, "n_seeds", 1, MAX_SEEDS)
    record_int(params, "seed", 0, 2**32 - 1)
    n_items = loaded["panel"]["item"].nunique()
    if n_items != n_output:
        return [f"the panel has {n_items} items, the output {n_output} rows"]
    return []
