"""``judgerisk bpe``: one judge in both orders, BPE per item and SCOPE's certified selection."""

from __future__ import annotations

import argparse
import sys
import textwrap
from typing import TYPE_CHECKING

from judgerisk.cli.common import (
    EXIT_OK,
    Command,
    add_overwrite,
    alpha,
    check_output,
    command_record,
    write_output,
)
from judgerisk.options import DEFAULT_ALPHA

if TYPE_CHECKING:  # building the parser imports no pandas
    import pandas as pd

__all__ = ["COMMAND", "Bpe"]


class Bpe(Command):
    name = "bpe"
    help = "one judge in both orders: BPE per item and SCOPE's certified selection"
    description = textwrap.dedent(
        """\
        For a panel holding a judge's verdicts in both orders ('original' and 'swap'),
        write the Bidirectional Preference Entropy of every item (SCOPE paper). With
        --calibration (item, gold of labelled items), calibrate SCOPE's threshold at
        --alpha on them and accept the other items whose BPE is at most the threshold
        (mean false discovery proportion over calibration draws <= alpha: the share of
        wrong verdicts among the accepted ones, 0 when none is accepted, averaged over draws
        of the calibration items). With --calibration it also tests, per judge, whether the
        labelled items' BPE is exchangeable with the others' (permutation
        Kolmogorov-Smirnov test on the ranks, level 0.05) and says when the certificate does
        not apply, and prints the abstention floor (mu - alpha)/(1 - alpha) from the
        labelled error rate mu."""
    )
    epilog = "example:\n  judgerisk bpe panel.csv -o bpe.csv --calibration labels.csv --alpha 0.1"
    recomputable = True
    inputs = {"panel": "panel, any conditions", "calibration": "table"}

    def add_arguments(self, p: argparse.ArgumentParser) -> None:
        p.add_argument("panel", help="panel file with 'original' and 'swap' conditions")
        p.add_argument(
            "-o", "--output", required=True, help="table to write (.csv/.parquet/.jsonl)"
        )
        p.add_argument("--calibration", help="labelled items: a table with columns item, gold")
        p.add_argument(
            "--alpha", type=alpha, default=DEFAULT_ALPHA, help="SCOPE's target risk level"
        )
        add_overwrite(p)

    def run(self, args: argparse.Namespace) -> int:
        from judgerisk.panel import load_panel, read_table

        check_output(args, args.output, (args.panel, args.calibration))
        loaded = {"panel": load_panel(args.panel, conditions=None)}
        inputs = {"panel": (args.panel, len(loaded["panel"]))}
        if args.calibration:
            loaded["calibration"] = read_table(args.calibration)
            inputs["calibration"] = (args.calibration, len(loaded["calibration"]))
        record = command_record(args, inputs)
        table = self.recompute(record, loaded)
        n_tie = int((table["verdict"] == "tie").sum())
        settings = self.output_settings(table, loaded, record)
        write_output(args, table, args.output, record, settings)
        msg = f"wrote {args.output}: BPE of {len(table)} (item, judge) pairs; {n_tie} tie verdicts"
        if args.calibration:
            msg += (
                f"; SCOPE at alpha {args.alpha}: accepted {settings['accepted']} of "
                f"{settings['n_test']} unlabelled items"
            )
        print(msg, file=sys.stderr)
        if args.calibration:
            from judgerisk.cli._select import print_certificate_check

            for judge, check in table.attrs["certificate"].items():
                named = {**check, "reason": f"judge {judge}: {check['reason']}"}
                print_certificate_check(args, named, args.alpha)
        return EXIT_OK

    def output_settings(self, table: pd.DataFrame, loaded: dict, record: dict) -> dict:
        settings: dict = {"rows": len(table), "ties": int((table["verdict"] == "tie").sum())}
        if "calibration" in loaded:
            test = table[table["role"] == "test"]
            settings.update(
                accepted=int(test["accepted"].sum()),
                n_test=len(test),
                thresholds=table.groupby("judge")["threshold"].first().to_dict(),
            )
            settings["certificate"] = table.attrs["certificate"]
        return settings

    def recompute(self, record: dict, loaded: dict) -> pd.DataFrame:
        from judgerisk.cli._select import certificate_check
        from judgerisk.selective.one_judge import bpe_table

        alpha = record["parameters"]["alpha"]
        table = bpe_table(loaded["panel"], loaded.get("calibration"), alpha)
        if "role" in table.columns:  # calibrated: does each judge's certificate apply?
            table.attrs["certificate"] = {
                str(judge): certificate_check(
                    d["bpe"], d["role"] == "calibration", d["error"], alpha, "BPE"
                )
                for judge, d in table.groupby("judge", sort=True)
            }
        return table


COMMAND = Bpe()
