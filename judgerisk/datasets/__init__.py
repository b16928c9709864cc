"""Loaders that turn public judge data into panels, read by path (never copied).

The folder is given as ``data_dir`` or by the ``JUDGERISK_DATA`` environment variable
(:func:`data_root`); :func:`load_dataset` loads any registered data set by name and
:func:`available` says whether it is on disk.
"""

from judgerisk.datasets import judgebench, llmbar, pandalm
from judgerisk.datasets._paths import ENV_VAR, data_root
from judgerisk.datasets._registry import (
    DATASETS,
    Dataset,
    available,
    load_dataset,
    register_dataset,
    unregister_dataset,
)

__all__ = [
    "DATASETS",
    "ENV_VAR",
    "Dataset",
    "available",
    "data_root",
    "judgebench",
    "llmbar",
    "load_dataset",
    "pandalm",
    "register_dataset",
    "unregister_dataset",
]
