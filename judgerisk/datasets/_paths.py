"""The one root resolver of the public data: an argument, else ``$JUDGERISK_DATA``.

The installed package bakes in no default location. Callers that know where the data sits
decide their own fallback by setting ``JUDGERISK_DATA`` when it is unset: the repository's
Makefile, the notebook runner (relative to the book's source folder) and the test suite's
``conftest.py`` do so for a fresh clone (see the book's "Reproducing" page).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal, overload

ENV_VAR = "JUDGERISK_DATA"


@overload
def data_root(data_dir: str | os.PathLike | None = ..., required: Literal[True] = ...) -> Path: ...
@overload
def data_root(data_dir: str | os.PathLike | None = ..., required: bool = ...) -> Path | None: ...
def data_root(data_dir: str | os.PathLike | None = None, required: bool = True) -> Path | None:
    """Resolve the folder holding the public data sets.

    Parameters
    ----------
    data_dir : path-like, optional
        Explicit folder. When omitted, ``$JUDGERISK_DATA`` is used.
    required : bool, default True
        Raise when no folder is given or it does not exist; otherwise return ``None``.

    Returns
    -------
    pathlib.Path or None

    Raises
    ------
    FileNotFoundError
        Naming ``JUDGERISK_DATA`` when the folder is missing and ``required``.
    """
    if data_dir is not None:
        candidate, origin = Path(data_dir), "the data_dir argument"
    elif os.environ.get(ENV_VAR):
        candidate, origin = Path(os.environ[ENV_VAR]), f"${ENV_VAR}"
    else:
        if required:
            raise FileNotFoundError(
                f"no data folder: pass data_dir=... or set the {ENV_VAR} environment variable to "
                "the folder holding llmbar/, judgebench/ and pandalm/"
            )
        return None
    candidate = candidate.expanduser().resolve()
    if candidate.is_dir():
        return candidate
    if required:
        raise FileNotFoundError(
            f"data folder {candidate} (from {origin}) does not exist; download the public data "
            f"sets (see each loader's docstring) and pass data_dir=... or set {ENV_VAR}"
        )
    return None
