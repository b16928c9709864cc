"""``judgerisk report``: a self-contained HTML report on a panel file."""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

from judgerisk.cli.common import (
    EXIT_OK,
    Command,
    add_overwrite,
    add_progress,
    alpha,
    check_output,
    command_record,
    count_of,
    names,
    positive_int,
    say,
    seed,
    settings_from,
)
from judgerisk.cli.score import (
    ACCELERATE_HELP,
    AGGREGATORS_DEFAULT,
    check_aggregators,
    panel_sizes,
    refuse_unscorable,
)
from judgerisk.options import ACCELERATIONS, OptionError, ReportSettings

if TYPE_CHECKING:  # building the parser imports no pandas
    import pandas as pd

__all__ = ["COMMAND", "Report"]


class Report(Command):
    name = "report"
    help = "self-contained HTML report on a panel file"
    description = (
        "Run the packaged report notebook with papermill on a panel file and "
        "write a self-contained HTML page (tables and base64-embedded figures). A panel of "
        "one judge in both orders ('original' and 'swap') gets the one-judge report: BPE per "
        "item and SCOPE's certified verdicts."
    )
    epilog = "example:\n  judgerisk report panel.csv -o report.html --n-seeds 3"
    recomputable = True
    inputs = {"panel": "panel"}

    def add_arguments(self, p: argparse.ArgumentParser) -> None:
        p.add_argument("panel", help="panel file (.csv, .parquet, .jsonl)")
        p.add_argument("-o", "--output", required=True, help="HTML file to write")
        rs = ReportSettings()  # the report's one set of defaults
        p.add_argument(
            "--n-seeds",
            type=count_of("n_seeds"),
            default=rs.n_seeds,
            help="repetitions of 5-fold cross-fitting averaged in SCUR",
        )
        p.add_argument("--seed", type=seed, default=rs.seed, help="first split's seed")
        p.add_argument("--alpha", type=alpha, default=rs.alpha, help="target false discovery rate")
        p.add_argument(
            "--n-splits",
            type=count_of("n_splits"),
            default=rs.n_splits,
            help="calibration/test splits (gold only)",
        )
        p.add_argument(
            "--accelerate", choices=ACCELERATIONS, default=rs.accelerate, help=ACCELERATE_HELP
        )
        p.add_argument(
            "--aggregators",
            type=names,
            default=rs.aggregators,
            help="comma-separated aggregators to compare, the first one certified "
            f"(default: {AGGREGATORS_DEFAULT})",
        )
        p.add_argument(
            "--certified-scores",
            type=names,
            default=rs.certified_scores,
            help="comma-separated risk scores whose certified decisions to compare (default: "
            "scur,pe, then every risk score registered beyond the built-ins)",
        )
        p.add_argument("--timeout", type=positive_int, default=600, help="seconds per cell")
        add_progress(p)
        add_overwrite(p)

    def run(self, args: argparse.Namespace) -> int:
        from judgerisk._util.progress import want_progress
        from judgerisk.panel import load_panel
        from judgerisk.report.build import one_judge_in_both_orders, render_report

        check_aggregators(args.aggregators)  # None (the default) stays None in the record
        check_certified_scores(args.certified_scores)
        # the output and the panel are checked before the record hashes the panel (its
        # warnings are the report's to show: render_report reads it again)
        check_output(args, args.output, (args.panel,), suffixes=(".html", ".htm"))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            panel = load_panel(args.panel)
        if not one_judge_in_both_orders(panel):  # one judge in both orders: its own report
            refuse_unscorable(args.panel, panel)
        n_rows = len(panel)
        del panel
        out = render_report(
            args.panel,
            args.output,
            parameters=settings_from(ReportSettings, vars(args)).as_parameters(),
            timeout=args.timeout,
            record=command_record(args, {"panel": (args.panel, n_rows)}),
            progress=want_progress(args.progress),
            overwrite=args.overwrite,
            announce=lambda doing: say(args, doing),
        )
        print(f"wrote {out}", file=sys.stderr)
        return EXIT_OK

    def read_output(self, path: Path) -> pd.DataFrame:
        from judgerisk.report.build import embedded_scores

        return embedded_scores(path)

    def check_sizes(self, record: dict, n_output: int, loaded: dict) -> list[str]:
        from judgerisk.report.record_checks import MAX_SPLITS, record_int

        record_int(record["parameters"], "n_splits", 1, MAX_SPLITS)
        return panel_sizes(record, n_output, loaded)

    def recompute(self, record: dict, loaded: dict) -> pd.DataFrame:
        from judgerisk.report.build import report_table

        return report_table(loaded["panel"], _settings(record).as_parameters()).reset_index()

    def compare_output(
        self, path: Path, record: dict, loaded: dict, rtol: float, atol: float
    ) -> list[str]:
        """The report's live content, then its words, figures and markup against a regenerated one."""
        from judgerisk.plots.escape import live_content
        from judgerisk.report.check import compare_visible, regenerate_report

        live = live_content(path.read_text(encoding="utf-8"))
        if live:  # no report holds any: found before the (long) regeneration
            return [f"live content that no report holds: {line}" for line in live]
        page = regenerate_report(
            record, record["inputs"]["panel"]["path"], _settings(record).as_parameters()
        )
        return compare_visible(path.read_text(encoding="utf-8"), page, rtol, atol)


def check_certified_scores(names: tuple[str, ...] | None) -> tuple[str, ...]:
    """``--certified-scores`` resolved (``None``: SCUR, PE and the registered extensions)."""
    from judgerisk.risk.registry import CERTIFIED, COMPARED

    resolved = tuple(CERTIFIED if names is None else names)
    unknown = [n for n in resolved if n not in COMPARED]
    if unknown:
        raise OptionError(
            f"--certified-scores: unknown risk score(s) {unknown}; choose among {list(COMPARED)}"
        )
    return resolved


def _settings(record: dict) -> ReportSettings:
    return settings_from(ReportSettings, record["parameters"])


COMMAND = Report()
