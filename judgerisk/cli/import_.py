"""``judgerisk import``: another tool's judgments read into a panel, every assumption printed.

It follows the command line's rules (:mod:`judgerisk.cli.common`): the output checked before any
work (never over an input, an existing one only with ``--overwrite``), atomic writes, one-line
errors with exit 2, a provenance record that ``judgerisk verify`` recomputes. The formats are
the importers' registry (:mod:`judgerisk.importers.registry`).
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from typing import TYPE_CHECKING

from judgerisk.cli.common import (
    EXIT_OK,
    Command,
    add_overwrite,
    check_output,
    command_record,
    write_output,
)

if TYPE_CHECKING:  # building the parser imports no pandas
    import pandas as pd

__all__ = ["COMMAND", "Import"]

_OPTIONS = (
    "epsilon",
    "judge_by",
    "weak",
    "baseline",
    "judge",
    "swap_suffix",
    "label_a",
    "label_tie",
)


# --------------------------------------------------------------------------- import
def _assumptions(params: dict) -> dict:
    from judgerisk.importers import get_importer
    from judgerisk.panel import PanelError

    imp = get_importer(params["format"])
    given = {k: params.get(k) for k in _OPTIONS if params.get(k) is not None}
    other = sorted(set(given) - set(imp.options))
    if other:
        flags = ", ".join("--" + k.replace("_", "-") for k in other)
        raise PanelError(f"format {params['format']!r} takes no {flags}")
    return given


class Import(Command):
    name = "import"
    help = "read another tool's judgments into a panel, printing every assumption"
    epilog = (
        "example:\n  judgerisk import fastchat model_judgment/*_pair.jsonl -o panel.csv\n"
        "  judgerisk report panel.csv -o report.html"
    )
    recomputable = True

    @property
    def description(self) -> str:  # type: ignore[override]
        from judgerisk.importers.registry import BUILTIN_FORMATS

        # the built-ins' static description: listing them imports no reader and no plug-in
        formats = "\n".join(f"  {imp.name:12s} {imp.files}" for imp in BUILTIN_FORMATS)
        formats += (
            "\n  and any format an installed plug-in declares (entry-point group"
            "\n  judgerisk.importers), loaded when the command runs"
        )
        return (
            textwrap.dedent(
                """\
                Read the judgment files of FastChat, Arena-Hard, alpaca_eval, lm-evaluation-harness
                or crowd-kit into a panel (csv, parquet or jsonl). What it assumes (epsilon of hard
                verdicts, level map of graded ones, tie policy, item ids, orientation) and what it
                drops is printed and written into the output's provenance record. Book page:
                "Importing your judges".

                formats:
                """
            )
            + formats
        )

    def add_arguments(self, p: argparse.ArgumentParser) -> None:
        p.add_argument("format", help="the tool that wrote the files (a format listed above)")
        p.add_argument("paths", nargs="+", help="its output files")
        p.add_argument(
            "-o", "--output", required=True, help="panel to write (.csv/.parquet/.jsonl)"
        )
        p.add_argument(
            "--epsilon",
            type=float,
            default=argparse.SUPPRESS,
            help="hard verdicts -> 1-epsilon / epsilon (0.05)",
        )
        p.add_argument(
            "--judge-by",
            choices=("model", "model+prompt"),
            default=argparse.SUPPRESS,
            help="fastchat: what names a judge (model)",
        )
        p.add_argument(
            "--weak", type=float, default=argparse.SUPPRESS, help="arena_hard: P(A) of A>B (0.75)"
        )
        p.add_argument(
            "--baseline",
            default=argparse.SUPPRESS,
            help="arena_hard: the baseline model (records without one)",
        )
        p.add_argument(
            "--judge",
            default=argparse.SUPPRESS,
            help="lm_eval: judge name (default: the file's folder)",
        )
        p.add_argument(
            "--swap-suffix",
            default=argparse.SUPPRESS,
            help="lm_eval: task-name suffix of the swapped task (_swap)",
        )
        p.add_argument(
            "--label-a", default=argparse.SUPPRESS, help="crowdkit: the label meaning answer A wins"
        )
        p.add_argument(
            "--label-tie", default=argparse.SUPPRESS, help="crowdkit: the label meaning a tie"
        )
        add_overwrite(p)

    def run(self, args: argparse.Namespace) -> int:
        _assumptions(vars(args))  # an unknown format: an error listing the formats
        check_output(args, args.output, tuple(args.paths))
        inputs = {f"input {k + 1}": (p, None) for k, p in enumerate(args.paths)}
        record = command_record(args, inputs)
        panel, info = _import(record)
        settings = {"rows": len(panel), **info["shape"], "assumptions": info}
        write_output(args, panel, args.output, record, settings)
        _print_assumptions(args, panel, info)
        return EXIT_OK

    def recompute(self, record: dict, loaded: dict) -> pd.DataFrame:
        return _import(record)[0]


def _import(record: dict) -> tuple[pd.DataFrame, dict]:
    """The panel and the importer's account of a record's run (its format, files, options)."""
    from judgerisk.importers import import_judgments

    params = record["parameters"]
    paths = [record["inputs"][f"input {k + 1}"]["path"] for k in range(len(record["inputs"]))]
    return import_judgments(params["format"], paths, **_assumptions(params))


def _print_assumptions(args: argparse.Namespace, panel: pd.DataFrame, info: dict) -> None:
    err = sys.stderr
    print(f"judgerisk import: {args.format}: assumed", file=err)
    for name, value in info["assumptions"].items():
        print(f"  {name}: {value}", file=err)
    dropped = ", ".join(f"{n} {why}" for why, n in info["dropped"].items()) or "nothing"
    ties = info["ties"]
    print(f"  dropped: {dropped}", file=err)
    print(f"  ties: {ties['total']} of {ties['cells']} cells (p = 1/2)", file=err)
    s = info["shape"]
    nxt = f"next: judgerisk report {args.output} -o report.html"
    if s["judges"] < 2 and "swap" in s["conditions"]:
        nxt += (
            " (one judge in both orders: its BPE and SCOPE report; the per-item table alone: "
            f"judgerisk bpe {args.output} -o bpe.csv)"
        )
    print(
        f"wrote {args.output}: {s['items']} items x {s['judges']} judge(s) x "
        f"{len(s['conditions'])} condition(s) ({len(panel)} rows); {nxt}",
        file=err,
    )


COMMAND = Import()
