"""``judgerisk score``: the per-item risk table of a panel (SCUR, its signals, baselines, verdicts)."""

from __future__ import annotations

import argparse
import sys
import textwrap
from typing import TYPE_CHECKING

from judgerisk.cli.common import (
    EXIT_OK,
    Command,
    add_overwrite,
    add_progress,
    check_output,
    command_record,
    panel_size,
    say,
    settings_from,
    write_output,
)
from judgerisk.cli.scoring import add_scoring_arguments, check_aggregators, panel_sizes
from judgerisk.options import ScoreSettings

if TYPE_CHECKING:  # building the parser imports no pandas
    import pandas as pd

__all__ = ["COMMAND", "Score"]


class Score(Command):
    name = "score"
    help = "per-item risk table: SCUR, z's, baselines, aggregator verdicts"
    description = textwrap.dedent(
        """\
        Score every item of a panel. SCUR and its components are cross-fitted by repeated
        K-fold cross-fitting: each of --n-seeds repetitions partitions the items into
        --n-folds folds and evaluates each fold once (another fold is the reference set, the
        others the fit set), so every item gets exactly --n-seeds out-of-fold scores, whose
        mean is its score (gold, if present, is never read). judgerisk report takes the same
        scoring options and embeds the same table. --protocol paper uses the
        paper's independent random 50/30/20 splits instead. PE, VE, MSP and the
        aggregators' verdicts use the original condition."""
    )
    epilog = (
        "example:\n  judgerisk score panel.csv -o scores.csv --n-seeds 5 "
        "--aggregators majority dawid_skene"
    )
    recomputable = True
    inputs = {"panel": "panel"}

    def add_arguments(self, p: argparse.ArgumentParser) -> None:
        p.add_argument("panel", help="panel file (.csv, .parquet, .jsonl)")
        p.add_argument("-o", "--output", required=True, help="score table to write")
        add_scoring_arguments(
            p, ScoreSettings(), "aggregators whose verdicts (and *_posterior) to add"
        )
        add_progress(p)
        add_overwrite(p)

    def run(self, args: argparse.Namespace) -> int:
        from judgerisk._util.progress import want_progress
        from judgerisk.panel import load_panel, refuse_unscorable

        check_output(args, args.output, (args.panel,))
        check_aggregators(args.aggregators)  # None (the default) stays None in the record
        settings = settings_from(ScoreSettings, vars(args))
        panel = load_panel(args.panel)
        refuse_unscorable(args.panel, panel)
        record = command_record(args, {"panel": (args.panel, len(panel))})
        say(args, f"scoring {panel_size(panel)} with {settings.n_seeds} repetition(s)")
        progress = want_progress(args.progress)
        table = _score(panel, settings, progress)
        out = self.output_settings(table.reset_index(), {"panel": panel}, record)
        write_output(args, table.reset_index(), args.output, record, out)
        print(
            f"wrote {args.output}: {len(table)} items; columns {', '.join(table.columns)}",
            file=sys.stderr,
        )
        return EXIT_OK

    def check_sizes(self, record: dict, n_output: int, loaded: dict) -> list[str]:
        return panel_sizes(record, n_output, loaded)

    def output_settings(self, table: pd.DataFrame, loaded: dict, record: dict) -> dict:
        from judgerisk.orientation import count_ties

        columns = [c for c in table.columns if c != "item"]
        out = {"seeds": table.attrs.get("seeds", []), "n_items": len(table)}
        return {**out, "columns": columns, "ties": count_ties(loaded["panel"])}

    def recompute(self, record: dict, loaded: dict) -> pd.DataFrame:
        settings = settings_from(ScoreSettings, record["parameters"])
        return _score(loaded["panel"], settings).reset_index()


def _score(panel: pd.DataFrame, settings: ScoreSettings, progress: bool = False) -> pd.DataFrame:
    """The score table (:func:`judgerisk.engine.certified.score_with`, the report's path)."""
    from judgerisk.engine.certified import score_with

    return score_with(panel, settings, progress)


COMMAND = Score()
