"""Importers: the judgments other tools write, read into panels with every assumption recorded.

``import_judgments(fmt, paths, **assumptions) -> (panel, record)``; the command line is
``judgerisk import FORMAT PATH... -o panel.csv``. Formats and what each assumes: book page
"Importing your judges".
"""

from judgerisk.importers.registry import (
    IMPORTERS,
    Importer,
    get_importer,
    import_judgments,
    register_importer,
    unregister_importer,
)

__all__ = [
    "IMPORTERS",
    "Importer",
    "get_importer",
    "import_judgments",
    "register_importer",
    "unregister_importer",
]
