"""``judgerisk estimate``: corrected estimates from the labelled slice, or a labelling plan."""

from __future__ import annotations

import argparse
import sys
import textwrap
from typing import TYPE_CHECKING

from judgerisk.cli.common import (
    EXIT_OK,
    Command,
    add_list,
    add_overwrite,
    check_output,
    command_record,
    count_of,
    panel_size,
    positive_int,
    say,
    seed,
    settings_from,
    write_output,
)
from judgerisk.options import EstimateSettings, OptionError, check_alpha

if TYPE_CHECKING:  # building the parser imports no pandas
    import pandas as pd

__all__ = ["COMMAND", "Estimate"]


def _level(text: str) -> float:
    try:
        return check_alpha(text)
    except OptionError:
        raise argparse.ArgumentTypeError(f"level must be in (0, 1), got {text!r}") from None


def _floor(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0.0 < value <= 1.0:
        raise argparse.ArgumentTypeError(f"floor must be in (0, 1], got {text!r}")
    return value


class Estimate(Command):
    name = "estimate"
    help = "corrected accuracies and win rate from the labelled slice (PPI), or a labelling plan"
    description = textwrap.dedent(
        """\
        The panel's items with gold are the labelled slice, the rest unlabelled. For each
        aggregator's accuracy, each judge's accuracy and the win rate of A, write the
        judge-only estimate (the panel's own prediction, no valid interval), the labelled-only
        estimate and the prediction-powered ones (PPI++, within SCUR deciles, and from every
        judge by cross-fitting), each with its interval at --level, the width ratio against
        labelled-only and the effective number of labels. With --plan N, write instead which
        about N items to label next (drawn with probabilities that grow with SCUR, with a
        floor); label them, add their gold to the panel and run again with --inclusion PLAN
        for the inverse-probability-weighted estimates (book chapter "From risk to
        estimates")."""
    )
    epilog = (
        "examples:\n  judgerisk estimate panel.csv -o estimates.csv --level 0.9\n"
        "  judgerisk estimate panel.csv --plan 200 -o plan.csv\n"
        "  judgerisk estimate labelled_panel.csv --inclusion plan.csv -o estimates.csv"
    )
    recomputable = True
    inputs = {"panel": "panel", "inclusion": "table"}

    def add_arguments(self, p: argparse.ArgumentParser) -> None:
        s = EstimateSettings()  # the estimate command's one set of defaults
        p.add_argument("panel", help="panel file (.csv, .parquet, .jsonl) with gold on some items")
        p.add_argument(
            "-o", "--output", required=True, help="estimate table (or, with --plan, the plan)"
        )
        p.add_argument("--level", type=_level, default=s.level, help="level of the intervals")
        p.add_argument(
            "--plan",
            type=positive_int,
            help="write a labelling plan of about N items (columns item, inclusion_probability) "
            "instead of the estimates",
        )
        p.add_argument(
            "--inclusion",
            help="the plan that drew the labelled items (from --plan): weighted estimates",
        )
        p.add_argument(
            "--n-strata", type=positive_int, default=s.n_strata, help="SCUR strata (deciles)"
        )
        p.add_argument(
            "--n-folds",
            type=count_of("n_folds"),
            default=s.n_folds,
            help="folds of the cross-fitted multi-judge prediction",
        )
        p.add_argument(
            "--proxy",
            default=s.proxy,
            help="aggregator whose P(A) predicts the judges' accuracies and the win rate",
        )
        p.add_argument(
            "--floor",
            type=_floor,
            default=s.floor,
            help="plan: the safest item's weight relative to the riskiest's",
        )
        p.add_argument("--seed", type=seed, default=s.seed, help="seed of scores, folds and plan")
        p.add_argument(
            "--n-seeds",
            type=count_of("n_seeds"),
            default=s.n_seeds,
            help="repetitions of the scores' cross-fitting",
        )
        add_list(
            p,
            "--aggregators",
            default=s.aggregators,
            help="aggregators whose accuracy to estimate (default: the reported ones)",
        )
        add_overwrite(p)

    def run(self, args: argparse.Namespace) -> int:
        from judgerisk.cli._scoring import check_aggregators
        from judgerisk.panel import load_panel, read_table

        if args.plan is not None and args.inclusion:
            raise OptionError("--plan writes a plan and --inclusion reads one: give one of them")
        check_output(args, args.output, (args.panel, args.inclusion))
        check_aggregators(args.aggregators)
        settings_from(EstimateSettings, vars(args))  # one check of the values
        loaded = {"panel": load_panel(args.panel)}
        inputs = {"panel": (args.panel, len(loaded["panel"]))}
        if args.inclusion:
            loaded["inclusion"] = read_table(args.inclusion)
            inputs["inclusion"] = (args.inclusion, len(loaded["inclusion"]))
        record = command_record(args, inputs)
        say(args, f"scoring {panel_size(loaded['panel'])}")
        table = self.recompute(record, loaded)
        write_output(args, table, args.output, record, self.output_settings(table, loaded, record))
        print(_summary(args, table), file=sys.stderr)
        return EXIT_OK

    def check_sizes(self, record: dict, n_output: int, loaded: dict) -> list[str]:
        from judgerisk.report._record_checks import record_int

        record_int(record["parameters"], "seed", 0, 2**32 - 1)
        return []

    def output_settings(self, table: pd.DataFrame, loaded: dict, record: dict) -> dict:
        return dict(table.attrs)  # the estimator's account (estimate_panel, plan_labels)

    def recompute(self, record: dict, loaded: dict) -> pd.DataFrame:
        from judgerisk._util.determinism import one_blas_thread
        from judgerisk.engine.estimates import estimate_panel, plan_labels

        params = record["parameters"]
        s = settings_from(EstimateSettings, params)
        with one_blas_thread():  # identical numbers whatever the BLAS thread count (verify)
            if params.get("plan") is not None:
                return plan_labels(loaded["panel"], int(params["plan"]), s)
            inclusion = None
            if "inclusion" in loaded:
                inclusion = _inclusion(loaded["inclusion"], params.get("inclusion"))
            return estimate_panel(loaded["panel"], s, inclusion=inclusion)


def _inclusion(table: pd.DataFrame, path: str | None) -> pd.Series:
    """The plan's ``item -> inclusion_probability``; a missing column is one error line."""
    from judgerisk.panel import PanelError

    missing = [c for c in ("item", "inclusion_probability") if c not in table.columns]
    if missing:
        raise PanelError(f"{path}: the plan has no column(s) {missing} (write it with --plan)")
    if table["item"].duplicated().any():
        dup = table.loc[table["item"].duplicated(), "item"].iloc[0]
        raise PanelError(f"{path}: item {dup!r} appears twice in the plan")
    return table.set_index("item")["inclusion_probability"]


def _summary(args: argparse.Namespace, table: pd.DataFrame) -> str:
    """What the command wrote, in one paragraph: the plan's widths, or the default quantity."""
    a = table.attrs
    if args.plan is not None:
        return (
            f"wrote {args.output}: {a['drawn']} items drawn (expected {a['expected_n']}) with "
            f"probabilities growing with SCUR (floor {a['floor']:g}); expected {args.level:g} "
            f"interval half-width of {a['quantity']}: {a['half_width_plan']:.4f} with this plan "
            f"vs {a['half_width_random']:.4f} with {a['expected_n']} random labels (the plan is "
            f"worth about {a['equivalent_random_labels']:.0f} random labels); label them, add "
            f"their gold and run judgerisk estimate PANEL --inclusion {args.output} -o OUT"
        )
    best = table.dropna(subset=["width"])
    first = best["quantity"].iloc[0] if len(best) else table["quantity"].iloc[0]
    rows = table[table["quantity"] == first]
    lines = [f"wrote {args.output}: {table['quantity'].nunique()} quantities; {first}:"]
    for r in rows.itertuples():
        if r.method == "judge":
            lines.append(f"  judge-only     {r.estimate:.4f} (no valid interval)")
            continue
        lines.append(
            f"  {r.method:<14} {r.estimate:.4f} [{r.lower:.4f}, {r.upper:.4f}] "
            f"worth {r.effective_labels:.0f} labels (of {r.n_labelled})"
        )
    return "\n".join(lines)


COMMAND = Estimate()
