"""The importer registry: ``import_judgments(fmt, paths, **assumptions) -> (panel, record)``.

Each importer reads the files one tool writes (book page "Importing your judges") and returns
panel rows plus what it assumed. The built-in formats are listed in :data:`BUILTIN_FORMATS`,
where the registry is defined; a package adds a format with no edit to judgerisk through the
entry-point group ``judgerisk.importers`` (an :class:`Importer`, or a reader function), and
:func:`register_importer` adds one in a session (recipe in CONTRIBUTING.md). Importing this
module imports neither pandas nor a reader: ``judgerisk --help`` lists the built-ins for free.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import json
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judgerisk._util.registry import Registry

if TYPE_CHECKING:
    import pandas as pd

    from judgerisk.importers.base import Imported

__all__ = [
    "BUILTIN_FORMATS",
    "IMPORTERS",
    "Importer",
    "get_importer",
    "import_judgments",
    "register_importer",
    "unregister_importer",
]

#: ``reader(paths, **assumptions) -> Imported``.
Reader = Callable[..., "Imported"]


@dataclass(frozen=True)
class Importer:
    """A format: its reader, the files it reads and the options it takes.

    ``reader`` is the function ``reader(paths, **options) -> Imported``, or its
    ``"module:function"`` name, imported on first use (so listing a format imports nothing).
    """

    name: str
    reader: Reader | str
    files: str
    options: tuple[str, ...] = ()

    def read(self, paths: Sequence[str | Path], **options: Any) -> Imported:
        """Call the reader (importing it first when it is given by name)."""
        reader = self.reader
        if isinstance(reader, str):
            module, _, attr = reader.partition(":")
            reader = getattr(importlib.import_module(module), attr)
        return reader(paths, **options)


#: The built-in formats, in the order of :data:`IMPORTERS` (their readers by name).
BUILTIN_FORMATS: tuple[Importer, ...] = tuple(
    Importer(name, f"judgerisk.importers.{name}:read_{name}", files, options)
    for name, files, options in (
        ("fastchat", "model_judgment/*_pair.jsonl", ("epsilon", "judge_by")),
        ("arena_hard", "model_judgment/<judge>/<model>.jsonl", ("epsilon", "weak", "baseline")),
        ("alpaca_eval", "annotations.json", ("epsilon",)),
        ("lm_eval", "samples_<task>_<time>.jsonl", ("judge", "swap_suffix")),
        (
            "crowdkit",
            "task, worker, label table (csv/parquet/jsonl)",
            ("epsilon", "label_a", "label_tie"),
        ),
    )
)


def _adopt(name: str, obj: Any) -> None:
    """Register a plug-in (entry-point group ``judgerisk.importers``): an :class:`Importer`, or a
    reader function (its ``files`` and ``options`` attributes, if any, describe it)."""
    if isinstance(obj, Importer):
        _REGISTRY.add(name, obj if obj.name == name else dataclasses.replace(obj, name=name))
    elif callable(obj):
        register_importer(
            name, obj, files=getattr(obj, "files", ""), options=getattr(obj, "options", None)
        )
    else:
        raise TypeError(f"{obj!r} is neither an Importer nor a reader function")


#: The built-in formats (registered below, by this module), then the plug-ins of the entry-point
#: group ``judgerisk.importers``.
_REGISTRY: Registry[Importer] = Registry(
    "import format",
    builtins=dict.fromkeys((imp.name for imp in BUILTIN_FORMATS), __name__),
    group="judgerisk.importers",
    adopt=lambda name, obj: _adopt(name, obj),
)
for _imp in BUILTIN_FORMATS:
    _REGISTRY.add(_imp.name, _imp)
#: Registered format names (a live view: the built-ins, then plug-ins and session formats).
IMPORTERS: Sequence[str] = _REGISTRY.names()


def _keyword_options(reader: Reader) -> tuple[str, ...]:
    """The parameters of ``reader`` after ``paths`` (its options)."""
    params = list(inspect.signature(reader).parameters.values())[1:]
    return tuple(p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))


def register_importer(
    name: str, reader: Reader, *, files: str, options: Sequence[str] | None = None
) -> Reader:
    """Register ``reader(paths, **options) -> Imported`` as the format ``name``.

    ``options`` default to the reader's parameters after ``paths``.
    """
    opts = _keyword_options(reader) if options is None else tuple(options)
    _REGISTRY.add(name, Importer(name, reader, files, opts))
    return reader


def unregister_importer(name: str) -> None:
    """Remove a registered format (for tests and interactive sessions)."""
    _REGISTRY.remove(name)


def get_importer(fmt: str | Importer) -> Importer:
    """The importer registered under ``fmt`` (an :class:`Importer` is returned as is); an error
    lists the registered formats."""
    from judgerisk.panel import PanelError

    if isinstance(fmt, Importer):
        return fmt
    try:
        return _REGISTRY.get(fmt)
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
    from judgerisk.options import ORIGINAL

    has = set(rows.loc[rows["condition"] == ORIGINAL, "item"])
    orphan = ~rows["item"].isin(has)
    if not orphan.any():
        return rows, dropped
    out = Counter(dropped)
    out["verdicts of items with no original-order verdict left"] += int(orphan.sum())
    return rows.loc[~orphan].reset_index(drop=True), out


def import_judgments(
    fmt: str | Importer, paths: Sequence[str | Path] | str | Path, **assumptions: Any
) -> tuple[pd.DataFrame, dict]:
    """Read one tool's judgment files into a validated panel and a record of the assumptions.

    Parameters
    ----------
    fmt : str or Importer
        A registered format (:data:`IMPORTERS`): ``"fastchat"``, ``"arena_hard"``,
        ``"alpaca_eval"``, ``"lm_eval"``, ``"crowdkit"``, an installed plug-in's; or an
        :class:`Importer` (registered or not).
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
    import pandas as pd

    from judgerisk.orientation import check_orientation, count_ties
    from judgerisk.panel import PanelError, validate_panel

    imp = get_importer(fmt)
    fmt = imp.name
    unknown = sorted(set(assumptions) - set(imp.options))
    if unknown:
        raise PanelError(
            f"format {fmt!r} takes no option(s) {unknown}; it takes {list(imp.options)}"
        )
    paths = [paths] if isinstance(paths, str | Path) else list(paths)
    if not paths:
        raise PanelError(f"format {fmt!r}: no file given")
    got = imp.read(paths, **assumptions)
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
