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
    ``paths`` are files: folders and patterns are expanded before (``layout``).
    """

    name: str
    reader: Reader | str
    files: str
    options: tuple[str, ...] = ()
    #: Tails of the paths of the format's files (``model_judgment/*/*.jsonl``): what a folder
    #: given as input is searched for (:mod:`judgerisk.importers._inputs`); empty: folders refused.
    layout: tuple[str, ...] = ()

    def read(self, paths: Sequence[str | Path], **options: Any) -> Imported:
        """Call the reader (importing it first when it is given by name)."""
        reader = self.reader
        if isinstance(reader, str):
            module, _, attr = reader.partition(":")
            reader = getattr(importlib.import_module(module), attr)
        return reader(paths, **options)


#: The built-in formats, in the order of :data:`IMPORTERS`; each reader is named in full
#: (``module:function``) and imported on first use.
BUILTIN_FORMATS: tuple[Importer, ...] = (
    Importer(
        "fastchat",
        "judgerisk.importers._fastchat:read_fastchat",
        files="model_judgment/*_pair.jsonl",
        options=("epsilon", "judge_by"),
        layout=("*_pair.jsonl",),
    ),
    Importer(
        "arena_hard",
        "judgerisk.importers._arena_hard:read_arena_hard",
        files="model_judgment/<judge>/<model>.jsonl (v0.1 and v2.0)",
        options=("epsilon", "weak", "baseline"),
        layout=("model_judgment/*/*.jsonl",),
    ),
    Importer(
        "alpaca_eval",
        "judgerisk.importers._alpaca_eval:read_alpaca_eval",
        files="annotations.json",
        options=("epsilon",),
        layout=("annotations.json",),
    ),
    Importer(
        "lm_eval",
        "judgerisk.importers._lm_eval:read_lm_eval",
        files="samples_<task>_<time>.jsonl",
        options=("judge", "swap_suffix", "gold"),
        layout=("samples_*.jsonl",),
    ),
    Importer(
        "crowdkit",
        "judgerisk.importers._crowdkit:read_crowdkit",
        files="task, worker, label table (csv/tsv/parquet/jsonl); Get-Another-Label's labels.txt",
        options=("epsilon", "label_a", "label_tie", "columns"),
        layout=("*.csv", "*.tsv", "*.parquet", "*.jsonl", "labels.txt"),
    ),
)


def _adopt(name: str, obj: Any) -> None:
    """Register a plug-in (entry-point group ``judgerisk.importers``): an :class:`Importer`, or a
    reader function (its ``files`` and ``options`` attributes, if any, describe it)."""
    if isinstance(obj, Importer):
        _REGISTRY.add(name, obj if obj.name == name else dataclasses.replace(obj, name=name))
    elif callable(obj):
        register_importer(
            name,
            obj,
            files=getattr(obj, "files", ""),
            options=getattr(obj, "options", None),
            layout=getattr(obj, "layout", ()),
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
    name: str,
    reader: Reader,
    *,
    files: str,
    options: Sequence[str] | None = None,
    layout: Sequence[str] = (),
) -> Reader:
    """Register ``reader(paths, **options) -> Imported`` as the format ``name``.

    ``options`` default to the reader's parameters after ``paths``; ``layout`` is the tails of
    the paths of its files, what a folder given as input is searched for (none: a folder is
    refused).
    """
    opts = _keyword_options(reader) if options is None else tuple(options)
    _REGISTRY.add(name, Importer(name, reader, files, opts, tuple(layout)))
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


#: The duplicates policy in words, for the record.
_DUPLICATE_RULE = {
    "error": "a cell (item, judge, condition) read twice is refused",
    "first": "a cell read twice in one file keeps the first record read; a cell two files "
    "hold is refused (two runs are never merged into one judge)",
    "last": "a cell read twice in one file keeps the last record read (FastChat's own rule); a "
    "cell two files hold is refused (two runs are never merged into one judge)",
}


def _is_blank(path: Path) -> bool:
    """Whether a regular file holds nothing but blank space (read until its first other byte)."""
    if not path.is_file():
        return False
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 16):
            if chunk.strip():
                return False
    return True


def _blank_files(files: Sequence[Path]) -> list[str]:
    """A note for each file read that holds nothing but blank space (no judgement in it)."""
    return [
        f"{f}: an empty file (nothing but blank space): no judgement read from it"
        for f in files
        if _is_blank(f)
    ]


def _nothing_left(files: Sequence[Path], dropped: Counter) -> str:
    """The one-line refusal of an import that leaves no cell: an empty file, or all dropped."""
    names = ", ".join(map(str, files))
    if not dropped:
        return (
            f"{names}: holds no judgement (an empty file, or only blank lines); pass the tool's "
            "output file(s) once its run has written judgements"
        )
    why = ", ".join(f"{n} {reason}" for reason, n in dropped.items())
    return (
        f"{names}: no judgement left to import: every one was dropped ({why}); rerun the "
        "judge on the failed records, or pass files that hold usable verdicts"
    )


def import_judgments(
    fmt: str | Importer,
    paths: Sequence[str | Path] | str | Path,
    *,
    duplicates: str = "error",
    **assumptions: Any,
) -> tuple[pd.DataFrame, dict]:
    """Read one tool's judgment files into a validated panel and a record of the assumptions.

    Parameters
    ----------
    fmt : str or Importer
        A registered format (:data:`IMPORTERS`): ``"fastchat"``, ``"arena_hard"``,
        ``"alpaca_eval"``, ``"lm_eval"``, ``"crowdkit"``, an installed plug-in's; or an
        :class:`Importer` (registered or not).
    paths : path or sequence of paths
        The tool's output files, folders holding them (searched in the tool's own layout,
        :attr:`Importer.layout`) or glob patterns (:mod:`judgerisk.importers._inputs`).
    duplicates : {"error", "first", "last"}, default "error"
        A cell (item, judge, condition) read twice, as a rerun appended to a file or a second
        copy of a run gives: refused with the file and line of both records, or the first /
        last record read kept and the others counted (:mod:`judgerisk.importers._cells`).
    **assumptions
        The format's options (ε, level map, baseline, ...; :class:`Importer` ``options``).

    Returns
    -------
    panel : pandas.DataFrame
        Validated (data contract of :mod:`judgerisk.panel`).
    record : dict
        ``format``, ``files`` (those read), ``inputs`` (how folders and patterns were
        expanded), ``assumptions`` (every choice, defaults included), ``dropped`` (reason ->
        count), ``ties`` (:func:`judgerisk._orientation.count_ties`), ``orientation_warnings``,
        ``shape``.

    Examples
    --------
    >>> from judgerisk.importers import IMPORTERS
    >>> list(IMPORTERS)[:5]  # the built-ins first, then the formats registered later
    ['fastchat', 'arena_hard', 'alpaca_eval', 'lm_eval', 'crowdkit']
    """
    import pandas as pd

    from judgerisk._orientation import check_orientation, count_ties
    from judgerisk.importers._cells import DUPLICATES, resolve_cells
    from judgerisk.importers._inputs import expand_inputs
    from judgerisk.panel import PanelError, validate_panel

    imp = get_importer(fmt)
    fmt = imp.name
    unknown = sorted(set(assumptions) - set(imp.options))
    if unknown:
        raise PanelError(
            f"format {fmt!r} takes no option(s) {unknown}; it takes {list(imp.options)}"
        )
    if duplicates not in DUPLICATES:
        raise PanelError(f"duplicates must be one of {list(DUPLICATES)}, got {duplicates!r}")
    paths = [paths] if isinstance(paths, str | Path) else list(paths)
    if not paths:
        raise PanelError(f"format {fmt!r}: no file given")
    found = expand_inputs(paths, fmt, imp.layout)
    got = imp.read(found.files, **assumptions)
    found.notes.extend(_blank_files(found.files))
    rows, dropped = resolve_cells(_scalars(got.rows), got.dropped, duplicates, fmt)
    if rows.empty:
        raise PanelError(_nothing_left(found.files, dropped))
    panel = validate_panel(rows, conditions=None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_orientation(panel)
    record = {
        "format": fmt,
        "files": [str(p) for p in found.files],
        "inputs": found.notes,
        "assumptions": {
            "tie policy": "p = 1/2 is a tie: half a vote for A and half for B",
            "duplicates": _DUPLICATE_RULE[duplicates],
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
