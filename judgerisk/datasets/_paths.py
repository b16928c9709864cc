"""Where the public data lives: an argument, ``$JUDGERISK_DATA``, or ``../shared/data``."""

from __future__ import annotations

import os
from pathlib import Path

ENV_VAR = "JUDGERISK_DATA"
_REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_DATA_DIR = _REPO_ROOT.parent / "shared" / "data"


def data_dir(path: str | os.PathLike | None = None, required: bool = True) -> Path | None:
    """Resolve the folder holding the public data sets.

    Parameters
    ----------
    path : path-like, optional
        Explicit folder. When omitted, ``$JUDGERISK_DATA`` is used, else
        ``<repository>/../shared/data``.
    required : bool, default True
        Raise when the folder does not exist; otherwise return ``None``.

    Returns
    -------
    pathlib.Path or None
    """
    if path is not None:
        candidate, origin = Path(path), "the data_dir argument"
    elif os.environ.get(ENV_VAR):
        candidate, origin = Path(os.environ[ENV_VAR]), f"${ENV_VAR}"
    else:
        candidate, origin = DEFAULT_DATA_DIR, "the default location"
    candidate = candidate.expanduser().resolve()
    if candidate.is_dir():
        return candidate
    if required:
        raise FileNotFoundError(
            f"data folder {candidate} (from {origin}) does not exist; download the public data "
            f"sets (see each loader's docstring) and pass data_dir=... or set {ENV_VAR}"
        )
    return None


def find_datasets(path: str | os.PathLike | None, names) -> Path | None:
    """The data folder when it holds every sub-folder in ``names``, else ``None``.

    For chapters that run on public data only when it is present: resolved as
    :func:`data_dir` (argument, ``$JUDGERISK_DATA``, default location).
    """
    root = data_dir(path, required=False)
    if root is None or not all((root / name).is_dir() for name in names):
        return None
    return root
