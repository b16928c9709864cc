"""An import's inputs: files, folders and glob patterns -> the files to read, and what was skipped.

A folder is searched (recursively, hidden folders such as ``.ipynb_checkpoints`` left out) for
the files of the tool's own layout: each format declares the tail of its files' paths
(:attr:`judgerisk.importers.Importer.layout`, e.g. Arena-Hard's ``model_judgment/*/*.jsonl``),
matched from the right as :meth:`pathlib.PurePath.match` does, so ``data/``,
``data/arena-hard-v2.0/``, ``model_judgment/`` and ``model_judgment/<judge>/`` all find the
same judgment files. A pattern (``*``, ``?``, ``[``) that names no existing path is expanded
(``**`` recursive). A file given twice is read once. Nothing is skipped silently: the files a
folder held outside the layout are counted, and the record says so. A folder's symbolic links
to files outside it are read (as the files they point to), and the note names each.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePath

from judgerisk._util.files import check_regular
from judgerisk.panel import PanelError, PanelFileNotFoundError

__all__ = ["Inputs", "expand_inputs"]

_GLOB = set("*?[")


@dataclass
class Inputs:
    """The files an import reads and how they were found.

    Attributes
    ----------
    files : list of Path
        In the order given; a folder's files sorted by path.
    notes : list of str
        One sentence per folder or pattern (how many files it gave, how many it skipped) and
        per file given more than once.
    """

    files: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _walk(folder: Path) -> tuple[list[Path], int]:
    """Every visible file under ``folder`` (sorted) and the number of hidden entries left out."""
    found: list[Path] = []
    hidden = 0
    for root, dirs, names in os.walk(folder):
        hidden += sum(d.startswith(".") for d in dirs) + sum(n.startswith(".") for n in names)
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        found.extend(Path(root) / n for n in names if not n.startswith("."))
    return sorted(found), hidden


def _in_layout(path: Path, layout: Sequence[str]) -> bool:
    full = PurePath(path.absolute())
    return any(full.match(pattern) for pattern in layout)


def _from_folder(folder: Path, fmt: str, layout: Sequence[str]) -> tuple[list[Path], str]:
    if not layout:
        raise PanelError(
            f"{folder}: is a folder, and format {fmt!r} declares no folder layout; pass its files"
        )
    files, hidden = _walk(folder)
    keep = [f for f in files if _in_layout(f, layout)]
    shape = " or ".join(layout)
    if not keep:
        raise PanelError(
            f"{folder}: a folder holding no {fmt} file ({shape}, searched in every sub-folder); "
            f"pass the files themselves, or the folder that holds them"
        )
    kept = set(keep)
    skipped = [f.name for f in files if f not in kept]
    note = f"{folder}: {len(keep)} file(s) of the layout {shape}"
    if skipped:
        shown = ", ".join(skipped[:3]) + (", ..." if len(skipped) > 3 else "")
        note += f"; skipped {len(skipped)} other file(s) ({shown})"
    if hidden:
        note += f"; skipped {hidden} hidden file(s) or folder(s)"
    outside = _links_outside(folder, keep)
    if outside:
        shown = ", ".join(outside[:3]) + (", ..." if len(outside) > 3 else "")
        note += (
            f"; {len(outside)} of them are links to files outside the folder, read as the "
            f"files they point to ({shown})"
        )
    return keep, note


def _links_outside(folder: Path, files: Sequence[Path]) -> list[str]:
    """``"link -> target"`` for each of ``files`` that is a symbolic link (or lies in a linked
    folder) whose target is outside ``folder``."""
    root = folder.resolve()
    out = []
    for f in files:
        target = f.resolve()
        if target != f.absolute() and not target.is_relative_to(root):
            out.append(f"{f.relative_to(folder)} -> {target}")
    return out


def expand_inputs(paths: Sequence[str | Path], fmt: str, layout: Sequence[str]) -> Inputs:
    """The files to read for ``paths`` (files, folders or glob patterns) of format ``fmt``.

    Raises
    ------
    PanelFileNotFoundError
        A path that does not exist and is no pattern.
    PanelError
        A pattern that matches nothing, or a folder that holds no file of the layout.
    """
    out, seen = Inputs(), set()
    for given in map(str, paths):
        path = Path(given)
        if path.is_dir():
            files, note = _from_folder(path, fmt, layout)
            out.notes.append(note)
        elif path.exists():
            files = [path]
        elif _GLOB & set(given):
            matched = sorted(Path(m) for m in glob.glob(given, recursive=True))
            if not matched:
                raise PanelError(f"{given}: the pattern matches no file")
            files = []
            for m in matched:
                files.extend(_from_folder(m, fmt, layout)[0] if m.is_dir() else [m])
            out.notes.append(f"{given}: {len(files)} file(s)")
        else:
            raise PanelFileNotFoundError(f"{path}: file not found")
        for f in files:
            check_regular(f)  # found in a folder or by a pattern too: refused before any read
            key = f.resolve()
            if key in seen:
                out.notes.append(f"{f}: given more than once, read once")
                continue
            seen.add(key)
            out.files.append(f)
    return out
