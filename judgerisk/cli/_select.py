"""``judgerisk select``: accept or abstain per item, with a certified false discovery rate."""

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
    settings_from,
    write_output,
)
from judgerisk.options import SelectSettings

if TYPE_CHECKING:  # building the parser imports no pandas
    import numpy.typing as npt
    import pandas as pd

__all__ = ["COMMAND", "Select", "certificate_check", "print_certificate_check"]


class Select(Command):
    name = "select"
    help = "accept / abstain per item with a certified false discovery rate"
    description = textwrap.dedent(
        """\
        Calibrate the SCOPE threshold on labelled items and accept the other items whose
        risk score is at most the threshold. The calibration file holds item and gold
        (A/B) for some items of the score table; those items calibrate, the rest are
        decided. On exchangeable items the mean false discovery proportion over
        calibration draws (the share of wrong verdicts among the accepted ones, 0 when none
        is accepted, averaged over draws of the calibration items) is <= alpha; one draw's
        share can exceed it (the book's chapter "Certified panel decisions", Methods §7).
        Before trusting it, the command tests whether the labelled items' scores are
        exchangeable with the others' (a permutation Kolmogorov-Smirnov test on the ranks,
        level 0.05, 1000 permutations, seed 0): when it rejects, it says the certificate
        does not apply. It also prints the abstention floor (mu - alpha)/(1 - alpha) from
        the labelled error rate mu."""
    )
    epilog = (
        "example:\n  judgerisk select scores.csv --calibration labelled.csv --alpha 0.1 "
        "-o decisions.csv --score scur --verdict majority"
    )
    recomputable = True
    inputs = {"scores": "table", "calibration": "table"}

    def add_arguments(self, p: argparse.ArgumentParser) -> None:
        p.add_argument("scores", help="score table from `judgerisk score`")
        p.add_argument("--calibration", required=True, help="labelled items: columns item, gold")
        sel = SelectSettings()  # the select command's one set of defaults
        p.add_argument(
            "--alpha",
            type=alpha,
            default=sel.alpha,
            help="target α of the mean false discovery proportion",
        )
        p.add_argument(
            "--score", default=sel.score, help="risk column to threshold (larger = riskier)"
        )
        p.add_argument("--verdict", default=sel.verdict, help="verdict column to certify")
        p.add_argument(
            "--allow-any-score",
            action="store_true",
            default=sel.allow_any_score,
            help="accept a --score column that is not one of judgerisk's risk scores",
        )
        p.add_argument("-o", "--output", required=True, help="decision table to write")
        add_overwrite(p)

    def run(self, args: argparse.Namespace) -> int:
        from judgerisk.panel import read_table

        check_output(args, args.output, (args.scores, args.calibration))
        scores = read_table(args.scores)
        calibration = read_table(args.calibration)
        inputs = {"scores": (args.scores, len(scores))}
        inputs["calibration"] = (args.calibration, len(calibration))
        record = command_record(args, inputs)
        decisions = self.recompute(record, {"scores": scores, "calibration": calibration})
        attrs = self.output_settings(decisions, {}, record)
        write_output(args, decisions, args.output, record, attrs)
        test = decisions[decisions["role"] == "test"]
        n_acc = int(test["accepted"].sum())
        lam = attrs.get("threshold", float("nan"))
        n_cal = int((decisions["role"] == "calibration").sum())
        if test.empty:  # every item labelled (select_items warned): nothing was decided
            print(
                f"{args.score} threshold {lam:.6g} calibrated on {n_cal} labelled items; no item "
                f"is left to decide (every item of {args.scores} is in the calibration file, so "
                f"none was accepted or abstained on); wrote {args.output}",
                file=sys.stderr,
            )
        elif attrs.get("feasible", False):
            print(
                f"{args.score} threshold {lam:.6g} calibrated on {n_cal} labelled items: "
                f"accepted {n_acc} of {len(test)} items (mean false discovery proportion over "
                f"calibration draws <= {args.alpha}); wrote {args.output}",
                file=sys.stderr,
            )
        else:
            print(
                f"no feasible {args.score} threshold on {n_cal} labelled items at alpha "
                f"{args.alpha}: accepted 0 of {len(test)} items (all abstained); wrote "
                f"{args.output}",
                file=sys.stderr,
            )
        print_certificate_check(args, attrs["certificate"], args.alpha)
        return EXIT_OK

    def check_sizes(self, record: dict, n_output: int, loaded: dict) -> list[str]:
        if len(loaded["scores"]) != n_output:
            return [f"the score table has {len(loaded['scores'])} rows, the output {n_output}"]
        return []

    def output_settings(self, table: pd.DataFrame, loaded: dict, record: dict) -> dict:
        return dict(table.attrs)  # the threshold, its feasibility, alpha, ... (select_items)

    def recompute(self, record: dict, loaded: dict) -> pd.DataFrame:
        from judgerisk.engine.certified import select_items

        s = settings_from(SelectSettings, record["parameters"])
        decisions = select_items(
            loaded["scores"],
            loaded["calibration"],
            alpha=s.alpha,
            score=s.score,
            verdict=s.verdict,
            allow_any_score=s.allow_any_score,
        )
        decisions.attrs["certificate"] = certificate_check(
            decisions["score"],
            decisions["role"] == "calibration",
            decisions["error"],
            s.alpha,
            s.score,
        )
        return decisions


def certificate_check(
    scores: npt.ArrayLike, labelled: npt.ArrayLike, errors: npt.ArrayLike, alpha: float, score: str
) -> dict:
    """:func:`judgerisk.estimate.exchangeability.check_certificate` at the settings of
    :data:`judgerisk.options.EXCHANGEABILITY` (``select``, ``bpe``)."""
    from judgerisk.estimate.exchangeability import check_certificate
    from judgerisk.options import EXCHANGEABILITY as X

    return check_certificate(
        scores, labelled, errors, alpha, score, X.level, X.n_permutations, X.seed
    )


def print_certificate_check(args: argparse.Namespace, check: dict, alpha: float) -> None:
    """The exchangeability check's verdict and the abstention floor, on stderr."""
    from judgerisk.estimate.exchangeability import floor_sentence

    kind = "note" if check["applies"] else "warning"
    print(f"judgerisk {args.command}: {kind}: {check['reason']}", file=sys.stderr)
    print(f"judgerisk {args.command}: note: {floor_sentence(check, alpha)}", file=sys.stderr)


COMMAND = Select()
