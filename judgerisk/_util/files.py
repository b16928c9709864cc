"""The one file-type rule of every reader: judgerisk opens regular files only.

A FIFO (named pipe), a character or block device or a socket given where a file is read could
block the read forever (a pipe nobody writes to) or never end (``/dev/zero``); each is refused
in one line naming it, from a ``stat`` that never blocks, before anything opens it. A link to a
regular file is read; a folder is left to the caller (an import searches it). Every reader calls
:func:`check_regular` where it opens a path: the table reader
(:func:`judgerisk.panel.read_table`), the importers' inputs (files given, found in a folder or
through a pattern) and their text reader, the items and template readers, the file hash of the
provenance record, and the readers of an output's record and embedded table (``verify``).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from judgerisk.options import InputError

__all__ = ["NotRegularFileError", "check_regular", "file_kind", "float_overflow_message"]

_KINDS = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


class NotRegularFileError(InputError):
    """A path to read that is a FIFO, a device or a socket (the command line exits with 2)."""


def file_kind(path: str | os.PathLike) -> str | None:
    """What ``path`` is when it is neither a regular file nor a folder (links followed), or
    None (also for a path that does not exist: the caller says "not found")."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return None
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    return next((kind for test, kind in _KINDS if test(mode)), "not a regular file")


def check_regular(path: str | os.PathLike, what: str = "") -> Path:
    """``path`` as a :class:`~pathlib.Path`, after refusing a FIFO, a device or a socket.

    Parameters
    ----------
    path : path-like
        The path about to be opened.
    what : str, optional
        Its role, put before the path in the message (``"--items"``, ``"input 2"``).

    Raises
    ------
    NotRegularFileError
        Naming the path and its kind; nothing was opened.
    """
    kind = file_kind(path)
    if kind is not None:
        where = f"{what} {path}" if what else str(path)
        raise NotRegularFileError(
            f"{where}: is {kind}, not a regular file; judgerisk reads regular files only (a "
            "pipe, device or socket could block the read or never end): save its content to "
            "a file and pass that"
        )
    return Path(path)


def float_overflow_message(detail: str) -> str:
    """The one message for a number in the input beyond a float's range (±1.8e308).

    Older pandas raise ``OverflowError`` inside the table reader, newer ones later on; the
    reader (:func:`judgerisk.panel.read_table`, which prefixes the file) and the command line's
    last-resort handler both word it with this text, so the user reads the same line on either.
    """
    return (
        f"a number in the input is too large for a float ({detail}); values must lie "
        "within ±1.8e308"
    )
