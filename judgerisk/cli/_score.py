"""``judgerisk score``: the per-item risk table of a panel (SCUR, its signals, baselines, verdicts)."""

from __future__ import annotations

import argparse
import sys
import textwrap
from typing import TYPE_CHECKING

from judgerisk.cli._scoring import add_scoring_arguments, check_aggregators, panel_sizes
from judgerisk.cli.common import (
    EXIT_OK,
    Command,
    add_overwrite,
    add_progress,
    check_output,
    command_record,
    count_of,
    panel_size,
    say,
    settings_from,
    write_output,
)
from judgerisk.options import OptionError, ScoreSettings, StreamSettings

if TYPE_CHECKING:  # building the parser imports no pandas
    import pandas as pd

    from judgerisk.engine.partitioned import StreamPlan

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
        aggregators' verdicts use the original condition.

        A parquet panel with more than --stream-rows rows, a folder of parquet files (one
        dataset) or a run with --dask is streamed: the splits are drawn over every item as
        above, but each fold's LMM is fitted on the items of a random sample of --fit-sample
        items (numpy.random.default_rng([seed, 1]).choice over the sorted ids; every item
        when the panel has no more) that are among its fit items, and its ECDFs are frozen
        on the sample's reference items; Dawid-Skene (entropy and verdicts) fits on the
        sample. Then the items are read, scored and written --partition-items at a time,
        in this process or on the Dask cluster at --dask. The output is one parquet file
        written part by part; its record states the sample and the partitions."""
    )
    epilog = (
        "example:\n  judgerisk score panel.csv -o scores.csv --n-seeds 5 "
        "--aggregators majority dawid_skene"
    )
    recomputable = True
    inputs = {"panel": "panel"}

    def add_arguments(self, p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "panel", help="panel file (.csv, .parquet, .jsonl), or a folder of parquet files"
        )
        p.add_argument("-o", "--output", required=True, help="score table to write")
        add_scoring_arguments(
            p, ScoreSettings(), "aggregators whose verdicts (and *_posterior) to add"
        )
        st = StreamSettings()  # the streamed path's defaults
        p.add_argument(
            "--stream-rows",
            type=count_of("stream_rows"),
            default=st.stream_rows,
            help="stream a parquet panel with more rows than this (see above)",
        )
        p.add_argument(
            "--fit-sample",
            type=count_of("fit_sample"),
            default=st.fit_sample,
            help="items of the random sample a streamed panel is fitted on",
        )
        p.add_argument(
            "--partition-items",
            type=count_of("partition_items"),
            default=st.partition_items,
            help="items a streamed panel is scored at a time",
        )
        p.add_argument(
            "--dask",
            metavar="SCHEDULER_ADDRESS",
            default=st.dask,
            help="stream the panel and score its partitions on this existing Dask cluster "
            "(dask.distributed: pip install 'judgerisk[dask]'); every worker reads the panel "
            "from its path",
        )
        add_progress(p)
        add_overwrite(p)

    def run(self, args: argparse.Namespace) -> int:
        from judgerisk._util.progress import want_progress
        from judgerisk.panel import load_panel, refuse_unscorable

        check_output(args, args.output, (args.panel,))
        check_aggregators(args.aggregators)  # None (the default) stays None in the record
        settings = settings_from(ScoreSettings, vars(args))
        stream = settings_from(StreamSettings, vars(args))
        if streams(args.panel, stream):
            return _run_streamed(args, settings, stream)
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

    def load_inputs(self, record: dict) -> dict[str, pd.DataFrame]:
        if _was_streamed(record):  # recomputed from the file, partition by partition
            return {}
        return super().load_inputs(record)

    def check_sizes(self, record: dict, n_output: int, loaded: dict) -> list[str]:
        if _was_streamed(record):
            n_items = record["settings"].get("n_items")
            return [] if n_items == n_output else [f"{n_items} items recorded, {n_output} rows"]
        return panel_sizes(record, n_output, loaded)

    def output_settings(self, table: pd.DataFrame, loaded: dict, record: dict) -> dict:
        from judgerisk._orientation import count_ties

        if _was_streamed(record):  # regenerated by _score_streamed, as _run_streamed wrote it
            return dict(table.attrs["streamed_settings"])
        columns = [c for c in table.columns if c != "item"]
        out = {"seeds": table.attrs.get("seeds", []), "n_items": len(table)}
        return {**out, "columns": columns, "ties": count_ties(loaded["panel"])}

    def recompute(self, record: dict, loaded: dict) -> pd.DataFrame:
        settings = settings_from(ScoreSettings, record["parameters"])
        if _was_streamed(record):
            stream = settings_from(StreamSettings, record["parameters"])
            return _score_streamed(record["inputs"]["panel"]["path"], settings, stream)
        return _score(loaded["panel"], settings).reset_index()


def _score(panel: pd.DataFrame, settings: ScoreSettings, progress: bool = False) -> pd.DataFrame:
    """The score table (:func:`judgerisk.engine.certified.score_with`, the report's path) of a
    panel that :func:`judgerisk.panel.load_panel` validated as it read it (not validated again)."""
    from judgerisk.engine.certified import score_with

    return score_with(panel, settings, progress, check_input=False)


def streams(panel: str, stream: StreamSettings) -> bool:
    """Whether ``judgerisk score`` streams ``panel``: a folder of parquet files, a parquet file
    of more than ``stream.stream_rows`` rows, or any parquet panel with ``--dask``."""
    from pathlib import Path

    from judgerisk.engine.partitioned import count_rows, is_parquet_source

    if not is_parquet_source(panel):
        if stream.dask is not None:
            raise OptionError(
                f"--dask streams a parquet panel (a .parquet file or a folder of them); "
                f"{panel} is not one (convert it, e.g. pandas.read_csv(...).to_parquet(...))"
            )
        return False
    return Path(panel).is_dir() or stream.dask is not None or count_rows(panel) > stream.stream_rows


def _was_streamed(record: dict) -> bool:
    settings = record.get("settings")
    return isinstance(settings, dict) and settings.get("streamed") is True


def _plan(panel: str, settings: ScoreSettings, stream: StreamSettings) -> StreamPlan:
    """The streamed run's plan (the sampled fit), on one BLAS thread."""
    from judgerisk._util.determinism import one_blas_thread
    from judgerisk.engine.certified import accelerate_options
    from judgerisk.engine.partitioned import plan_stream

    with one_blas_thread():
        return plan_stream(
            panel,
            n_seeds=settings.n_seeds,
            seed=settings.seed,
            aggregators=settings.aggregators,
            scur_options=accelerate_options(settings.accelerate),
            protocol=settings.protocol,
            n_folds=settings.n_folds,
            fit_sample=stream.fit_sample,
            partition_items=stream.partition_items,
        )


def _score_streamed(panel: str, settings: ScoreSettings, stream: StreamSettings) -> pd.DataFrame:
    """The streamed score table of ``panel`` in memory (what ``verify`` compares)."""
    import pandas as pd

    from judgerisk.engine.partitioned import run_partitions

    plan = _plan(panel, settings, stream)
    table = pd.concat(list(run_partitions(plan, stream.dask))).rename_axis("item").reset_index()
    columns = [c for c in table.columns if c != "item"]
    table.attrs["streamed_settings"] = _streamed_settings(plan, len(table), columns)
    return table


def _streamed_settings(plan: StreamPlan, n_items: int, columns: list[str]) -> dict:
    """The settings a streamed score table's record holds (written and regenerated alike)."""
    return {"seeds": plan.seeds, "n_items": n_items, "columns": columns, **plan.settings()}


def _run_streamed(args: argparse.Namespace, settings: ScoreSettings, stream: StreamSettings) -> int:
    """``judgerisk score`` on a streamed parquet panel: plan, then write partition by partition."""
    from pathlib import Path

    from judgerisk._provenance import finish_record
    from judgerisk._util.progress import progress_bar, want_progress
    from judgerisk.engine.partitioned import count_rows, run_partitions, write_parquet_parts

    out = Path(args.output)
    if out.suffix.lower() not in (".parquet", ".pq"):
        raise OptionError(
            f"-o/--output {args.output}: a streamed panel's score table is written as parquet, "
            "part by part; name a .parquet file"
        )
    src = Path(args.panel).resolve()
    if src.is_dir() and src in out.resolve().parents:
        raise OptionError(
            f"-o/--output {args.output} lies inside the input folder {args.panel}; "
            "choose a folder outside the panel's dataset"
        )
    n_rows = count_rows(args.panel)
    record = command_record(args, {"panel": (args.panel, n_rows)})
    say(args, f"streaming {n_rows} rows: fitting on a sample of at most {stream.fit_sample} items")
    plan = _plan(args.panel, settings, stream)
    where = f"on the Dask cluster at {stream.dask}" if stream.dask else "in this process"
    say(
        args,
        f"scoring {plan.n_items} items in {len(plan.partitions)} partition(s) {where} "
        f"(fit sample: {plan.sample_items} items)",
    )
    columns: list[str] = []

    def tables():  # the partitions, in order, the first one's columns kept for the record
        bar = progress_bar(
            run_partitions(plan, stream.dask),
            total=len(plan.partitions),
            enabled=want_progress(args.progress),
            desc="partitions",
            unit="partition",
        )
        for table in bar:
            columns[:] = columns or list(table.columns)
            yield table

    def finish(n: int) -> dict:
        return finish_record(record, _streamed_settings(plan, n, columns))

    n = write_parquet_parts(tables(), args.output, finish, exclusive=not args.overwrite)
    print(
        f"wrote {args.output}: {n} items in {len(plan.partitions)} part(s); columns "
        f"{', '.join(columns)}",
        file=sys.stderr,
    )
    return EXIT_OK


COMMAND = Score()
