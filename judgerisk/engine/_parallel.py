"""The cross-fitting splits of :func:`judgerisk.engine.certified.score_panel`, scored in parallel.

Each split's SCUR table depends only on the panel, the split and its seed, so the splits can be
scored in any process: forked children (:func:`judgerisk._util.aside.run_aside`) score the
first splits while this process scores the last ones and then computes the label-free columns
that need no split (baselines, aggregators). The tables come back in split order and the
warnings are issued again here in the order one process would have issued them, so the output
is the same, bit for bit, for every ``n_jobs``.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import pandas as pd

from judgerisk._util.aside import fork_possible, run_aside, usable_cores
from judgerisk._util.progress import progress_bar
from judgerisk._util.warning_records import recorded_warnings, replay_warnings
from judgerisk.options import OptionError
from judgerisk.risk.scur import scur_scores

__all__ = ["AUTO_MAX_CELLS", "check_n_jobs", "processes", "score_splits"]

#: Under ``n_jobs=None`` a panel of more cells than this is scored in one process. A forked
#: child shares the panel's pages with this process, but each process's resident memory counts
#: them, so the process tree's peak about doubles: for a large panel the memory is the limit,
#: not the time (a 20,000 x 5 x 6 panel has 600,000 cells).
AUTO_MAX_CELLS = 1_000_000


def check_n_jobs(n_jobs: object) -> None:
    """``n_jobs`` is ``None``, ``-1`` or an integer >= 1, or an :class:`OptionError` names it."""
    if n_jobs is not None and (
        isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or (n_jobs < 1 and n_jobs != -1)
    ):
        raise OptionError(f"n_jobs must be None, -1 or an integer >= 1, got {n_jobs!r}")


def processes(n_jobs: int | None, n_splits: int, n_cells: int) -> int:
    """How many processes score ``n_splits`` splits of a panel of ``n_cells`` cells.

    ``n_jobs``: ``None`` (one per usable core for a panel of at most :data:`AUTO_MAX_CELLS`
    cells, else one), ``-1`` (one per usable core) or a positive count; never more than the
    splits, and one wherever a fork is not possible (:func:`judgerisk._util.aside.fork_possible`).
    """
    check_n_jobs(n_jobs)
    if n_jobs == 1 or not fork_possible():
        return 1
    if n_jobs is None and n_cells > AUTO_MAX_CELLS:
        return 1
    wanted = usable_cores() if n_jobs in (None, -1) else n_jobs
    return max(1, min(wanted, n_splits))


def _tables(
    cells: pd.DataFrame,
    splits: Sequence[tuple[int, Any, pd.Series]],
    keep: str | None,
    scur_options: dict,
    bar: Any = None,
) -> list[pd.DataFrame]:
    """The kept rows of each split's SCUR table (all rows when ``keep`` is None), in order."""
    out = []
    for s, _, split in splits:
        res = scur_scores(cells, seed=s, split=split, check_input=False, **scur_options)
        out.append(res.table if keep is None else res.table.loc[res.table["split"] == keep])
        if bar is not None:
            bar.update(1)
    return out


@contextlib.contextmanager
def _recorded(on: bool) -> Iterator[list[list[Any]]]:
    """Warnings recorded (:mod:`judgerisk._util.warning_records`) when ``on``, else none."""
    if on:
        with recorded_warnings() as records:
            yield records
    else:
        yield []


def score_splits(
    cells: pd.DataFrame,
    splits: Sequence[tuple[int, Any, pd.Series]],
    keep: str | None,
    scur_options: dict,
    meanwhile: Callable[[], Any],
    n_jobs: int | None = None,
    progress: bool = False,
    checks: Callable[[], None] | None = None,
) -> tuple[list[pd.DataFrame], Any, list[list[Any]]]:
    """Score ``splits`` on ``cells`` and call ``meanwhile()``, in up to ``n_jobs`` processes.

    ``checks()`` (the checks that only warn) runs in this process before it scores a split,
    once the children that score the first splits have started; its warnings are issued as
    they come, before the splits' (the order of one process).

    Returns the splits' tables (in split order), what ``meanwhile()`` returned, and the
    warnings ``meanwhile()`` issued when processes were forked (for the caller to issue where
    one process would have: :func:`judgerisk._util.warning_records.replay_warnings`; with one process
    they were issued as they came, and the list is empty). The splits' own warnings have been
    issued, in split order.
    """
    n_proc = processes(n_jobs, len(splits), len(cells))
    # contiguous chunks, the larger ones first: the children take them, this process the
    # smallest, as it also runs ``meanwhile``
    bounds = np.cumsum([0, *map(len, np.array_split(np.arange(len(splits)), n_proc))])
    chunks = [splits[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
    forked = n_proc > 1
    with contextlib.ExitStack() as children:
        asides = [  # forked before the bar, which may start a thread
            children.enter_context(
                run_aside(
                    functools.partial(_tables, cells, chunk, keep, scur_options),
                    True,
                    what="a process scoring cross-fitting splits",
                    record=True,
                )
            )
            for chunk in chunks[:-1]
        ]
        if checks is not None:
            checks()
        bar = children.enter_context(
            progress_bar(total=len(splits), enabled=progress, desc="SCUR splits", unit="split")
        )
        with _recorded(forked) as own:
            tables = _tables(cells, chunks[-1], keep, scur_options, bar)
        with _recorded(forked) as later:
            extra = meanwhile()
        first: list[pd.DataFrame] = []
        for aside in asides:
            try:
                first += aside.result()
            finally:  # what it warned before an error, too
                replay_warnings(aside.warnings)
            bar.update(len(aside.value))
        replay_warnings(own)
    return first + tables, extra, later
