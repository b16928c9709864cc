"""``judgerisk import``: another tool's judgments read into a panel, every assumption printed.

It follows the command line's rules (:mod:`judgerisk.cli.common`): the output checked before any
work (never over an input, an existing one only with ``--overwrite``), atomic writes, one-line
errors with exit 2, a provenance record that ``judgerisk verify`` recomputes. The formats are
the importers' registry (:mod:`judgerisk.importers._registry`).
"""

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
    write_output,
)
from judgerisk.options import SWAP

if TYPE_CHECKING:  # building the parser imports no pandas
    import pandas as pd

__all__ = ["COMMAND", "Import"]

#: The importers' options, the one list: flag name -> its argparse settings (each absent
#: unless given, so a format that takes no such option can refuse it: :func:`_assumptions`).
_OPTIONS: dict[str, dict] = {
    "epsilon": {"type": float, "help": "hard verdicts -> 1-epsilon / epsilon (0.05)"},
    "judge_by": {
        "choices": ("model", "model+prompt"),
        "help": "fastchat: what names a judge (model)",
    },
    "weak": {"type": float, "help": "arena_hard: P(A) of A>B (0.75)"},
    "baseline": {
        "action": "append",
        "metavar": "[PATH=]MODEL",
        "help": "arena_hard: the baseline model of records without one (v0.1): one model, or "
        "PATH=MODEL for the files at or under PATH (repeatable)",
    },
    "judge": {"help": "lm_eval: judge name (default: the file's folder)"},
    "swap_suffix": {"help": "lm_eval: task-name suffix of the swapped task (_swap)"},
    "label_a": {"help": "crowdkit: the label meaning answer A wins"},
    "label_tie": {"help": "crowdkit: the label meaning a tie"},
    "columns": {
        "list": True,
        "metavar": "ROLE=COLUMN",
        "help": "crowdkit: the table's names of task, worker, label (and gold), e.g. "
        "task=question worker=worker label=answer",
    },
    "gold": {
        "choices": ("auto", "target", "acc", "none"),
        "help": "lm_eval: where the gold comes from: target (a choice index or a choice's "
        "text), acc (two choices), auto (target, else acc; the default), none (no gold)",
    },
}
#: What ``--duplicates`` does unless told: refuse a cell read twice, naming both records.
DEFAULT_DUPLICATES = "error"


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
        "examples:\n  judgerisk import fastchat model_judgment/*_pair.jsonl -o panel.csv\n"
        "  judgerisk import arena_hard data/arena-hard-v2.0/model_judgment -o panel.csv\n"
        "  judgerisk report panel.csv -o report.html"
    )
    recomputable = True

    @property
    def description(self) -> str:  # type: ignore[override]
        from judgerisk.importers._registry import BUILTIN_FORMATS

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
        p.add_argument(
            "paths",
            nargs="+",
            help="its output files, folders holding them (searched in the tool's layout) or "
            "glob patterns",
        )
        p.add_argument(
            "-o", "--output", required=True, help="panel to write (.csv/.parquet/.jsonl)"
        )
        for name, spec in _OPTIONS.items():
            flag = "--" + name.replace("_", "-")
            if spec.get("list"):
                add_list(
                    p, flag, default=argparse.SUPPRESS, metavar=spec["metavar"], help=spec["help"]
                )
            else:
                p.add_argument(flag, default=argparse.SUPPRESS, **spec)
        p.add_argument(
            "--duplicates",
            choices=("error", "first", "last"),
            default=DEFAULT_DUPLICATES,
            help="a cell read twice (a rerun appended, two copies of a run): refuse naming both "
            "records (error, the default), or keep the first / last record read",
        )
        add_overwrite(p)

    def run(self, args: argparse.Namespace) -> int:
        from judgerisk.importers import get_importer
        from judgerisk.importers._inputs import expand_inputs

        _assumptions(vars(args))  # an unknown format: an error listing the formats
        # folders and globs become the files read: each is an input the record hashes
        files = expand_inputs(args.paths, args.format, get_importer(args.format).layout).files
        check_output(args, args.output, tuple(files))
        inputs = {f"input {k + 1}": (p, None) for k, p in enumerate(files)}
        record = command_record(args, inputs)
        # read as given (a --baseline PATH=MODEL names a folder of the command line)
        panel, info = _import(record["parameters"], args.paths)
        write_output(args, panel, args.output, record, _settings(panel, info))
        _print_assumptions(args, panel, info, len(files))
        return EXIT_OK

    def recompute(self, record: dict, loaded: dict) -> pd.DataFrame:
        inputs = record["inputs"]
        files = [inputs[f"input {k + 1}"]["path"] for k in range(len(inputs))]
        panel, info = _import(record["parameters"], files)
        panel.attrs[_SETTINGS] = _settings(panel, info)  # for output_settings, never written
        return panel

    def output_settings(self, table: pd.DataFrame, loaded: dict, record: dict) -> dict:
        return table.attrs[_SETTINGS]


#: Where :meth:`Import.recompute` keeps the settings of the panel it imported again.
_SETTINGS = "judgerisk import settings"


def _settings(panel: pd.DataFrame, info: dict) -> dict:
    """The settings of an imported panel's record: its size and the importer's account."""
    return {"rows": len(panel), **info["shape"], "assumptions": info}


def _import(params: dict, paths: list) -> tuple[pd.DataFrame, dict]:
    """The panel and the importer's account of a run: its format and options, these files."""
    from judgerisk.importers import import_judgments

    # a record written before --duplicates existed read its files the default way
    duplicates = params.get("duplicates", DEFAULT_DUPLICATES)
    return import_judgments(params["format"], paths, duplicates=duplicates, **_assumptions(params))


def _next_step(panel: pd.DataFrame, output: str) -> str:
    """The ``next:`` sentence: only a command that accepts this panel, else what is missing."""
    from judgerisk.panel._overlap import judge_groups, no_shared_items

    groups = judge_groups(panel)
    if len(groups) > 1:
        return f"not a panel: {no_shared_items(groups)}"
    swap = SWAP in set(panel["condition"])
    if sum(map(len, groups)) >= 2:
        return f"next: judgerisk report {output} -o report.html"
    if swap:
        return (
            f"next: judgerisk report {output} -o report.html (one judge in both orders: its "
            f"BPE and SCOPE report; the per-item table alone: judgerisk bpe {output} -o bpe.csv)"
        )
    return (
        "next: no judgerisk command scores one judge in one answer order; a report needs the "
        "same judge in the swapped order too (its BPE and SCOPE report: for lm-eval, the "
        "<task>_swap task) or two judges or more on the same items (a panel report)"
    )


def _print_assumptions(
    args: argparse.Namespace, panel: pd.DataFrame, info: dict, n_files: int
) -> None:
    err = sys.stderr
    print(f"judgerisk import: {args.format}: read {n_files} file(s)", file=err)
    for note in info["inputs"]:
        print(f"  {note}", file=err)
    print(f"judgerisk import: {args.format}: assumed", file=err)
    for name, value in info["assumptions"].items():
        print(f"  {name}: {value}", file=err)
    dropped = ", ".join(f"{n} {why}" for why, n in info["dropped"].items()) or "nothing"
    ties = info["ties"]
    print(f"  dropped: {dropped}", file=err)
    print(f"  ties: {ties['total']} of {ties['cells']} cells (p = 1/2)", file=err)
    s = info["shape"]
    print(
        f"wrote {args.output}: {s['items']} items x {s['judges']} judge(s) x "
        f"{len(s['conditions'])} condition(s) ({len(panel)} rows); "
        f"{_next_step(panel, args.output)}",
        file=err,
    )


COMMAND = Import()
