"""``judgerisk simulate``: draw a judge panel from the simulator and write it."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from judgerisk.cli.common import (
    EXIT_OK,
    Command,
    add_list,
    add_overwrite,
    check_output,
    command_record,
    conditions,
    count,
    positive_int,
    seed,
    write_output,
)
from judgerisk.options import SIMULATE, OptionError

if TYPE_CHECKING:  # building the parser imports no pandas
    import pandas as pd

__all__ = ["COMMAND", "Simulate"]


class Simulate(Command):
    name = "simulate"
    help = "write a simulated panel file"
    description = "Draw a judge panel from the simulator and write it (csv/parquet/jsonl)."
    epilog = (
        "example:\n  judgerisk simulate -o panel.csv --n-items 500 --n-judges 5 --seed 1\n"
        "  judgerisk simulate -o panel.parquet --conditions original swap --no-gold "
        "--labels gold.csv"
    )
    recomputable = True

    def add_arguments(self, p: argparse.ArgumentParser) -> None:
        p.add_argument("-o", "--output", required=True, help="panel file to write")
        p.add_argument(
            "--n-items", type=positive_int, default=SIMULATE.n_items, help="items to simulate"
        )
        p.add_argument(
            "--n-judges", type=positive_int, default=SIMULATE.n_judges, help="judges of the panel"
        )
        p.add_argument("--seed", type=seed, default=SIMULATE.seed, help="random seed")
        add_list(
            p,
            "--conditions",
            default=SIMULATE.conditions,
            check=conditions,
            metavar="COND",
            help="conditions to simulate (must include original)",
        )
        p.add_argument(
            "--no-gold",
            dest="gold",
            action="store_false",
            help="leave the gold column out (default: kept)",
        )
        p.add_argument(
            "--labels",
            help="also write the gold labels (item, gold) to this file (default: not written)",
        )
        p.add_argument(
            "--n-labelled",
            type=count,
            default=None,
            help="label only a random sample of this many items in --labels, the calibration "
            "sample of `judgerisk select` (default: every item, which leaves none to decide)",
        )
        add_overwrite(p)

    def run(self, args: argparse.Namespace) -> int:
        from judgerisk.simulate import calibration_labels, simulate_panel

        check_output(args, args.output)
        if args.labels is not None:
            check_output(args, args.labels, (args.output,), option="--labels")
        elif args.n_labelled is not None:
            raise OptionError("--n-labelled needs --labels (the file the labels are written to)")
        if args.n_labelled is not None and args.n_labelled > args.n_items:
            raise OptionError(
                f"--n-labelled {args.n_labelled} exceeds --n-items {args.n_items} (the items "
                "to label)"
            )
        sim = simulate_panel(
            n_items=args.n_items, n_judges=args.n_judges, conditions=args.conditions, seed=args.seed
        )
        data = sim.data if args.gold else sim.data.drop(columns="gold")
        record = command_record(args)
        out = write_output(args, data, args.output, record, self.output_settings(data, {}, record))
        if args.labels is not None:
            labels = calibration_labels(sim.data, args.n_labelled, args.seed)
            write_output(args, labels, args.labels, record, _LABELS)
        print(
            f"wrote {out}: {data['item'].nunique()} items x {data['judge'].nunique()} judges x "
            f"{data['condition'].nunique()} conditions ({len(data)} rows)"
            + ("" if args.labels is None else f"; labels of {len(labels)} items to {args.labels}"),
            file=sys.stderr,
        )
        return EXIT_OK

    def check_sizes(self, record: dict, n_output: int, loaded: dict) -> list[str]:
        from judgerisk.report._record_checks import MAX_SAMPLED_ITEMS, record_int

        params = record["parameters"]
        labels = _is_labels(record)
        n_labelled = record_int(params, "n_labelled", 1, n_output, None) if labels else None
        # a labels file of a sample: its panel may be larger, up to MAX_SAMPLED_ITEMS
        most = MAX_SAMPLED_ITEMS if n_labelled is not None else n_output
        n_items = record_int(params, "n_items", 1, most)
        n_judges = record_int(params, "n_judges", 1, max(n_output, 1000) if labels else n_output)
        conds = params.get("conditions")
        if not isinstance(conds, list) or not conds:
            raise ValueError(f"the record's conditions {conds!r:.60} are not a list")
        if labels:
            expected = n_labelled if n_labelled is not None else n_items
        else:
            expected = n_items * n_judges * len(conds)  # type: ignore[operator]
        if expected != n_output:
            return [f"the record's parameters make {expected} rows, the output has {n_output}"]
        return []

    def output_settings(self, table: pd.DataFrame, loaded: dict, record: dict) -> dict:
        if _is_labels(record):
            return dict(_LABELS)
        return {"n_items": int(table["item"].nunique()), "rows": len(table)}

    def recompute(self, record: dict, loaded: dict) -> pd.DataFrame:
        from judgerisk.simulate import calibration_labels, simulate_panel

        params = record["parameters"]
        sim = simulate_panel(
            n_items=params["n_items"],
            n_judges=params["n_judges"],
            conditions=tuple(params["conditions"]),
            seed=params["seed"],
        )
        if _is_labels(record):
            return calibration_labels(sim.data, params["n_labelled"], params["seed"])
        data = sim.data if params["gold"] else sim.data.drop(columns="gold")
        return data.reset_index(drop=True)


#: The settings of a ``--labels`` file's record (how ``verify`` tells it from the panel's).
_LABELS = {"part": "labels"}


def _is_labels(record: dict) -> bool:
    """Whether a simulate record is the one of its ``--labels`` file."""
    settings = record.get("settings")
    return isinstance(settings, dict) and settings.get("part") == "labels"


COMMAND = Simulate()
