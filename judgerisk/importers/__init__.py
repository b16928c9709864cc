"""Importers: the judgments other tools write, read into panels with every assumption recorded.

``import_judgments(fmt, paths, **assumptions) -> (panel, record)``; the command line is
``judgerisk import FORMAT PATH... -o panel.csv``. Formats and what each assumes: book page
"Importing your judges". A plug-in's reader returns an :class:`Imported` (imported on first use,
so importing this package imports no pandas).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from judgerisk.importers._registry import (
    BUILTIN_FORMATS,
    IMPORTERS,
    Importer,
    get_importer,
    import_judgments,
    register_importer,
    unregister_importer,
)

if TYPE_CHECKING:
    from judgerisk.importers.base import Imported

__all__ = [
    "BUILTIN_FORMATS",
    "IMPORTERS",
    "Imported",
    "Importer",
    "get_importer",
    "import_judgments",
    "register_importer",
    "unregister_importer",
]


def __getattr__(name: str) -> Any:
    if name == "Imported":
        from judgerisk.importers.base import Imported

        return Imported
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
