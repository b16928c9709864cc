"""``judgerisk perturb``: the items under each condition, as the judge is shown them, written."""

from __future__ import annotations

import argparse
import sys
import textwrap
from collections.abc import Iterator
from typing import TYPE_CHECKING

from judgerisk.cli.common import (
    EXIT_OK,
    Command,
    add_list,
    add_overwrite,
    check_output,
    command_record,
    seed,
)
from judgerisk.options import DEFAULT_TEMPLATE, PERTURB_CONDITIONS

if TYPE_CHECKING:  # building the parser imports no pandas
    import pandas as pd

__all__ = ["COMMAND", "Perturb"]


def condition(text: str) -> str:
    """One ``--conditions`` name: declared by the template's table or a perturbation family."""
    from judgerisk.families import is_declared

    if not is_declared(text):
        raise argparse.ArgumentTypeError(
            f"unknown condition {text!r}: a condition is 'original', 'swap', <family><k> or "
            "swap_<family><k> with a registered perturbation family"
        )
    return text


class Perturb(Command):
    name = "perturb"
    help = "write the items under each condition as the judge is shown them"
    description = textwrap.dedent(
        """\
        Render items (item, prompt, answer_a, answer_b[, gold]) under the chosen conditions
        exactly as `judgerisk extract` does, and write one row per item and condition: the
        system and user messages, the assistant prefill, the labels and verdict strings to
        read, the answers as shown and what the perturbation changed. For judges run with
        other tools. A condition is 'original', 'swap', <family><k> or swap_<family><k>
        with a perturbation family: order, rubric, label (answer labels), format (layout,
        drawn from --seed), verbosity (a content-free sentence: odd k pads A, even k pads
        B), or a plug-in's. The same items, template, conditions and seed give the same
        file."""
    )
    epilog = (
        "example:\n  judgerisk perturb items.jsonl -o perturbed.jsonl --conditions original "
        "swap label1 format1 verbosity1 verbosity2 --seed 0"
    )
    recomputable = True

    def add_arguments(self, p: argparse.ArgumentParser) -> None:
        p.add_argument("items", help="items file (.jsonl, .json, .csv or .parquet)")
        p.add_argument(
            "-o", "--output", required=True, help="file to write (.jsonl, .csv, .parquet)"
        )
        add_list(
            p,
            "--conditions",
            default=PERTURB_CONDITIONS,
            element=condition,
            metavar="COND",
            help="conditions (must include original)",
        )
        p.add_argument(
            "--template", default=DEFAULT_TEMPLATE, help="shipped template name or JSON file"
        )
        p.add_argument("--seed", type=seed, default=0, help="perturbation seed (format, verbosity)")
        add_overwrite(p)

    def run(self, args: argparse.Namespace) -> int:
        from judgerisk._provenance import finish_record, write_chunks_with_record
        from judgerisk.extract.perturb import perturb_chunks

        template = _template_file(args.template)
        check_output(args, args.output, (args.items, template))
        counts = {"items": 0, "rows": 0}
        conditions: set[str] = set()

        def chunks() -> Iterator[pd.DataFrame]:  # read, perturbed and written a chunk at a time
            for table in perturb_chunks(
                args.items, args.conditions, template=args.template, seed=args.seed
            ):
                counts["items"] += int(table["item"].nunique())
                counts["rows"] += len(table)
                conditions.update(table["condition"].unique())
                yield table

        def record() -> dict:
            files: dict[str, tuple[str, int | None]] = {"items": (args.items, counts["items"])}
            if template is not None:
                files["template"] = (template, None)
            return finish_record(
                command_record(args, files), {"rows": counts["rows"], "n_items": counts["items"]}
            )

        out = write_chunks_with_record(chunks(), args.output, record, overwrite=args.overwrite)
        print(
            f"wrote {out}: {counts['items']} items x {len(conditions)} conditions "
            f"({counts['rows']} rows)",
            file=sys.stderr,
        )
        return EXIT_OK

    def check_sizes(self, record: dict, n_output: int, loaded: dict) -> list[str]:
        conds = record["parameters"].get("conditions")
        if not isinstance(conds, list) or not conds:
            raise ValueError(f"the record's conditions {conds!r:.60} are not a list")
        n_items = record["inputs"].get("items", {}).get("rows")
        if isinstance(n_items, int) and n_items * len(conds) != n_output:
            return [
                f"the record's {n_items} items x {len(conds)} conditions make "
                f"{n_items * len(conds)} rows, the output has {n_output}"
            ]
        return []

    def output_settings(self, table: pd.DataFrame, loaded: dict, record: dict) -> dict:
        return {"rows": len(table), "n_items": int(table["item"].nunique())}

    def recompute(self, record: dict, loaded: dict) -> pd.DataFrame:
        from judgerisk.extract.perturb import perturb_items

        params = record["parameters"]
        inputs = record["inputs"]
        template = inputs["template"]["path"] if "template" in inputs else params["template"]
        return perturb_items(
            inputs["items"]["path"],
            tuple(params["conditions"]),
            template=template,
            seed=params["seed"],
        )


def _template_file(template: str) -> str | None:
    """The template's file when ``--template`` names one (an input), else None (a shipped one)."""
    return template if str(template).endswith(".json") else None


COMMAND = Perturb()
