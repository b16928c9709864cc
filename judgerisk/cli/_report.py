"""``judgerisk report``: a self-contained HTML report on a panel file."""

from __future__ import annotations

import argparse
import atexit
import gc
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from judgerisk.cli._scoring import add_scoring_arguments, check_aggregators, panel_sizes
from judgerisk.cli.common import (
    EXIT_OK,
    Command,
    add_list,
    add_overwrite,
    add_progress,
    alpha,
    check_output,
    command_record,
    count_of,
    positive_int,
    say,
    settings_from,
)
from judgerisk.options import DEFAULT_CELL_TIMEOUT, OptionError, ReportSettings

if TYPE_CHECKING:  # building the parser imports no pandas
    import pandas as pd

__all__ = ["COMMAND", "Report"]


class Report(Command):
    name = "report"
    help = "self-contained HTML report on a panel file"
    description = (
        "Run the packaged report notebook on a panel file (its cells run in this process; "
        "no Jupyter kernel starts) and write a self-contained HTML page (tables and base64-embedded figures). A panel of "
        "one judge in both orders ('original' and 'swap') gets the one-judge report: BPE per "
        "item and SCOPE's certified verdicts."
    )
    epilog = "example:\n  judgerisk report panel.csv -o report.html --n-seeds 3 --n-folds 5"
    recomputable = True
    inputs = {"panel": "panel"}

    def add_arguments(self, p: argparse.ArgumentParser) -> None:
        p.add_argument("panel", help="panel file (.csv, .parquet, .jsonl)")
        p.add_argument("-o", "--output", required=True, help="HTML file to write")
        rs = ReportSettings()  # the report's one set of defaults (ScoreSettings' extended)
        add_scoring_arguments(p, rs, "aggregators to compare, the first one certified")
        p.add_argument(
            "--alpha",
            type=alpha,
            default=rs.alpha,
            help="target α of the mean false discovery proportion",
        )
        p.add_argument(
            "--n-splits",
            type=count_of("n_splits"),
            default=rs.n_splits,
            help="calibration/test splits (gold only)",
        )
        add_list(
            p,
            "--certified-scores",
            default=rs.certified_scores,
            help="risk scores whose certified decisions to compare (default: scur, pe, then "
            "every risk score registered beyond the built-ins)",
        )
        p.add_argument(
            "--timeout", type=positive_int, default=DEFAULT_CELL_TIMEOUT, help="seconds per cell"
        )
        add_progress(p)
        add_overwrite(p)

    def run(self, args: argparse.Namespace) -> int:
        from judgerisk._util.files import check_regular
        from judgerisk._util.progress import want_progress
        from judgerisk.panel import PanelFileNotFoundError
        from judgerisk.report.build import render_report

        check_aggregators(args.aggregators)  # None (the default) stays None in the record
        check_certified_scores(args.certified_scores)
        check_output(args, args.output, (args.panel,), suffixes=(".html", ".htm"))
        check_regular(args.panel)  # a FIFO, device or socket: refused before any read
        if not Path(args.panel).is_file():  # before the record hashes it
            raise PanelFileNotFoundError(f"{args.panel}: file not found")
        # the panel is read once, by render_report, which adds its row count to the record
        out = render_report(
            args.panel,
            args.output,
            parameters=settings_from(ReportSettings, vars(args)).as_parameters(),
            timeout=args.timeout,
            record=command_record(args, {"panel": (args.panel, None)}),
            progress=want_progress(args.progress),
            overwrite=args.overwrite,
            announce=lambda doing: say(args, doing),
        )
        print(f"wrote {out}", file=sys.stderr)
        # the process ends after the command: the interpreter's last collections need not walk
        # the objects the report imported (0.4 s of a 2,000-item report); nothing of the report
        # is left to finalize, its page is written and closed
        atexit.register(gc.freeze)
        return EXIT_OK

    def read_output(self, path: Path) -> pd.DataFrame:
        from judgerisk.report.build import embedded_scores

        return embedded_scores(path)

    def check_sizes(self, record: dict, n_output: int, loaded: dict) -> list[str]:
        from judgerisk.report._record_checks import MAX_SPLITS, record_int

        record_int(record["parameters"], "n_splits", 1, MAX_SPLITS)
        return panel_sizes(record, n_output, loaded)

    def recompute(self, record: dict, loaded: dict) -> pd.DataFrame:
        from judgerisk.report.build import report_table

        return report_table(loaded["panel"], _settings(record).as_parameters()).reset_index()

    def output_settings(self, table: pd.DataFrame, loaded: dict, record: dict) -> dict:
        from judgerisk.report.build import one_judge_in_both_orders, report_settings

        panel = loaded["panel"]
        one = one_judge_in_both_orders(panel)
        return report_settings(panel["item"].nunique(), one, table.attrs.get("seeds"))

    def compare_output(
        self, path: Path, record: dict, loaded: dict, rtol: float, atol: float
    ) -> list[str]:
        """The report's live content, then its words, figures and markup against a regenerated one."""
        from judgerisk._plots.escape import live_content
        from judgerisk.report._check import compare_visible, regenerate_report

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
