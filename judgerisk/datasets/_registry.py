"""The loader registry: ``load_dataset(name)`` and ``available(name)`` over every public data set.

Each loader module registers its panel loader with :func:`register_dataset`, naming the folder
it reads under the data root and the files whose presence means the data is there. The root is
resolved once, by :func:`~judgerisk.datasets.data_root` (``data_dir`` argument, else
``$JUDGERISK_DATA``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from judgerisk._util.registry import Registry
from judgerisk.datasets._paths import ENV_VAR, data_root

__all__ = [
    "DATASETS",
    "Dataset",
    "available",
    "load_dataset",
    "register_dataset",
    "unregister_dataset",
]

#: ``loader(data_root, **options) -> panel``.
Loader = Callable[..., pd.DataFrame]


@dataclass(frozen=True)
class Dataset:
    """A registered data set: its loader, folder under the data root and marker files."""

    name: str
    loader: Loader
    folder: str
    markers: tuple[str, ...]

    def present(self, root: os.PathLike | str) -> bool:
        """Whether any marker exists under ``<root>/<folder>``."""
        base = os.path.join(root, self.folder)
        return any(os.path.exists(os.path.join(base, m)) for m in self.markers)


def _adopt(name: str, obj: Any) -> None:
    """Register a plug-in loader (entry-point group ``judgerisk.datasets``) under its name."""
    register_dataset(name)(obj)


#: The public data sets shipped with judgerisk, then the plug-ins of the entry-point group
#: ``judgerisk.datasets``.
_REGISTRY: Registry[Dataset] = Registry(
    "data set",
    builtins={
        "judgebench": "judgerisk.datasets.judgebench",
        "llmbar": "judgerisk.datasets.llmbar",
        "pandalm": "judgerisk.datasets.pandalm",
    },
    group="judgerisk.datasets",
    adopt=lambda name, obj: _adopt(name, obj),
)
#: Registered data set names (a live view).
DATASETS: Sequence[str] = _REGISTRY.names()


def register_dataset(
    name: str, *, folder: str | None = None, markers: Sequence[str] = ()
) -> Callable[[Loader], Loader]:
    """Register a panel loader ``loader(data_root, **options)`` under ``name`` (a decorator).

    Parameters
    ----------
    name : str
        Name for :func:`load_dataset`.
    folder : str, optional
        Sub-folder of the data root holding the files (default ``name``).
    markers : sequence of str
        Files or folders under ``<root>/<folder>``; the data counts as available when any exists
        (default: the folder itself).
    """

    def deco(loader: Loader) -> Loader:
        _REGISTRY.add(name, Dataset(name, loader, folder or name, tuple(markers) or ("",)))
        return loader

    return deco


def unregister_dataset(name: str) -> None:
    """Remove a registered data set (for tests and interactive sessions)."""
    _REGISTRY.remove(name)


def available(name: str, data_dir: str | os.PathLike | None = None) -> bool:
    """Whether the data set ``name`` is on disk (under ``data_dir``, else ``$JUDGERISK_DATA``).

    Examples
    --------
    >>> available("llmbar", data_dir="/nonexistent")
    False
    """
    ds = _REGISTRY.get(name)
    root = data_root(data_dir, required=False)
    return root is not None and ds.present(root)


def load_dataset(
    name: str, data_dir: str | os.PathLike | None = None, **options: Any
) -> pd.DataFrame:
    """Load the registered data set ``name`` as a panel (the book's data contract).

    Parameters
    ----------
    name : str
        A name of :data:`DATASETS`: ``"llmbar"``, ``"judgebench"``, ``"pandalm"``.
    data_dir : path-like, optional
        Folder holding the data sets; default ``$JUDGERISK_DATA``.
    **options
        Passed to the loader (e.g. ``epsilon`` or ``subsets`` of
        :func:`~judgerisk.datasets.llmbar.load_llmbar_panel`).

    Raises
    ------
    FileNotFoundError
        When the data is missing; the message names ``JUDGERISK_DATA``.
    """
    ds = _REGISTRY.get(name)
    root = data_root(data_dir)
    assert root is not None
    if not ds.present(root):
        raise FileNotFoundError(
            f"data set {name!r} not found under {root / ds.folder} (expected one of "
            f"{list(ds.markers)}); pass data_dir=... or set {ENV_VAR} to the folder holding "
            f"{ds.folder}/"
        )
    return ds.loader(root, **options)
