"""The importer registry: ``import_judgments(fmt, paths, **assumptions) -> (panel, record)``.

Each importer reads the files one tool writes (book page "Importing your judges") and returns
panel rows plus what it assumed. The built-in importers are listed at the end of this module;
:func:`register_importer` adds another (recipe in CONTRIBUTING.md).
"""

from __future__ import annotations

import json
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from judgerisk._registry import Registry
from judgerisk.importers.alpaca_eval import read_alpaca_eval
from judgerisk.importers.arena_hard import read_arena_hard
from judgerisk.importers.base import Imported
from judgerisk.importers.crowdkit import read_crowdkit
from judgerisk.importers.fastchat import read_fastchat
from judgerisk.importers.lm_eval import read_lm_eval
from judgerisk.orientation import check_orientation, count_ties
from judgerisk.panel import ORIGINAL, PanelError, validate_panel

__all__ = [
    "IMPORTERS",
    "Importer",
    "get_importer",
    "import_judgments",
    "register_importer",
    "unregister_importer",
]

#: ``reader(paths, **assumptions) -> Imported``.
Reader = Callable[..., Imported]


@dataclass(frozen=True)
class Importer:
    """A registered format: its reader, the files it reads and the options it takes."""

    name: str
    reader: Reader
    files: str
    options: tuple[str, ...] = ()


_REGISTRY: Registry[Importer] = Registry("import format")
#: Registered format names (a live view).
IMPORTERS: Sequence[str] = _REGISTRY.names()


def register_importer(
    name: str, reader: Reader, *, files: str, options: Sequence[str] = ()
) -> Reader:
    """Register ``reader(paths, **options) -> Imported`` as the format ``name``."""
    _REGISTRY.add(name, Importer(name, reader, files, tuple(options)))
    return reader


def unregister_importer(name: str) -> None:
    """Remove a registered format (for tests and interactive sessions)."""
    _REGISTRY.remove(name)


def get_importer(name: str) -> Importer:
    """The importer registered under ``name``; an error lists the registered formats."""
    try:
        return _REGISTRY.get(name)
    except ValueError as exc:
        raise PanelError(str(exc)) from None


def _scalars(rows: pd.DataFrame) -> pd.DataFrame:
    """Extra columns copied from the records with any list or object value written as JSON text."""
    out = rows.copy()
    for col in out.columns:
        if out[col].dtype == object:
            nested = out[col].map(lambda v: isinstance(v, list | dict | tuple))
            if nested.any():
                out[col] = out[col].map(
                    lambda v: json.dumps(v) if isinstance(v, list | dict | tuple) else v
                )
    return out


def _without_orphans(rows: pd.DataFrame, dropped: Counter) -> tuple[pd.DataFrame, Counter]:
    """Drop (and count) the rows of items left with no original-order verdict by any judge."""
    has = set(rows.loc[rows["condition"] == ORIGINAL, "item"])
    orphan = ~rows["item"].isin(has)
    if not orphan.any():
        return rows, dropped
    out = Counter(dropped)
    out["verdicts of items with no original-order verdict left"] += int(orphan.sum())
    return rows.loc[~orphan].reset_index(drop=True), out


def import_judgments(
    fmt: str, paths: Sequence[str | Path] | str | Path, **assumptions: Any
) -> tuple[pd.DataFrame, dict]:
    """Read one tool's judgment files into a validated panel and a record of the assumptions.

    Parameters
    ----------
    fmt : str
        A registered format (:data:`IMPORTERS`): ``"fastchat"``, ``"arena_hard"``,
        ``"alpaca_eval"``, ``"lm_eval"``, ``"crowdkit"``.
    paths : path or sequence of paths
        The tool's output files.
    **assumptions
        The format's options (ε, level map, baseline, ...; :class:`Importer` ``options``).

    Returns
    -------
    panel : pandas.DataFrame
        Validated (data contract of :mod:`judgerisk.panel`).
    record : dict
        ``format``, ``assumptions`` (every choice, defaults included), ``dropped`` (reason ->
        count), ``ties`` (:func:`judgerisk.orientation.count_ties`), ``orientation_warnings``.

    Examples
    --------
    >>> from judgerisk.importers import IMPORTERS
    >>> list(IMPORTERS)
    ['fastchat', 'arena_hard', 'alpaca_eval', 'lm_eval', 'crowdkit']
    """
    imp = get_importer(fmt)
    unknown = sorted(set(assumptions) - set(imp.options))
    if unknown:
        raise PanelError(
            f"format {fmt!r} takes no option(s) {unknown}; it takes {list(imp.options)}"
        )
    paths = [paths] if isinstance(paths, str | Path) else list(paths)
    if not paths:
        raise PanelError(f"format {fmt!r}: no file given")
    got = imp.reader(paths, **assumptions)
    got.rows = _scalars(got.rows)
    rows, dropped = (
        (got.rows, got.dropped) if got.rows.empty else _without_orphans(got.rows, got.dropped)
    )
    if rows.empty:
        files = ", ".join(map(str, paths))
        raise PanelError(f"{files}: no judgement left to import (dropped: {dict(dropped)})")
    panel = validate_panel(rows, conditions=None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_orientation(panel)
    record = {
        "format": fmt,
        "files": [str(p) for p in paths],
        "assumptions": {
            "tie policy": "p = 1/2 is a tie: half a vote for A and half for B",
            **got.assumptions,
        },
        "dropped": dict(dropped),
        "ties": count_ties(panel),
        "orientation_warnings": [str(w.message) for w in caught],
        "shape": {
            "items": int(panel["item"].nunique()),
            "judges": int(panel["judge"].nunique()),
            "conditions": sorted(map(str, pd.unique(panel["condition"]))),
        },
    }
    for w in caught:
        warnings.warn(w.message, w.category, stacklevel=2)
    return panel, record


# ----------------------------------------------------------------------------- built-ins
# Listed here explicitly, in the order of IMPORTERS.
register_importer(
    "fastchat", read_fastchat, files="model_judgment/*_pair.jsonl", options=("epsilon", "judge_by")
)
register_importer(
    "arena_hard",
    read_arena_hard,
    files="model_judgment/<judge>/<model>.jsonl",
    options=("epsilon", "weak", "baseline"),
)
register_importer("alpaca_eval", read_alpaca_eval, files="annotations.json", options=("epsilon",))
register_importer(
    "lm_eval", read_lm_eval, files="samples_<task>_<time>.jsonl", options=("judge", "swap_suffix")
)
register_importer(
    "crowdkit",
    read_crowdkit,
    files="task, worker, label table (csv/parquet/jsonl)",
    options=("epsilon", "label_a", "label_tie"),
)
