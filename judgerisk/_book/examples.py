"""Small example files the book's exercises use, written from the data shipped with judgerisk.

``notebooks/data/my_judge.csv`` (chapters 8 and 9, exercise 1) is the bundled SmolLM2-135M
judge's canonical log-odds on LLMBar {Zeng et al., ICLR 2024} in both answer orders, in the
single-judge contract of the book's data-contract page. :func:`write_my_judge` writes it; the
tests check that the shipped copy equals what it writes.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from judgerisk._util.safe_write import atomic_write

__all__ = ["my_judge_table", "write_my_judge"]

#: Columns of the single-judge file: item, log-odds in both orders, gold label.
MY_JUDGE_COLUMNS = ["item", "logit_fwd", "logit_rev", "gold"]


def my_judge_table() -> pd.DataFrame:
    """The bundled judge's LLMBar items as one judge's two-order file (one row per item)."""
    from judgerisk._book.diagnostics import order_pairs
    from judgerisk.datasets.shipped import load_smollm2_llmbar

    pairs = order_pairs(load_smollm2_llmbar()).reset_index()
    return pairs[MY_JUDGE_COLUMNS].round(6)


def write_my_judge(path: str | os.PathLike, overwrite: bool = False) -> Path:
    """Write :func:`my_judge_table` as csv at ``path`` (atomically; never over a file).

    Raises
    ------
    FileExistsError
        When ``path`` exists and ``overwrite`` is false.
    """
    path = Path(path)
    if path.exists() and not overwrite:
        raise FileExistsError(f"{path} exists; pass overwrite=True to replace it")
    table = my_judge_table()
    # onto a free name only without overwrite: a file that appeared meanwhile is kept
    return atomic_write(path, lambda tmp: table.to_csv(tmp, index=False), exclusive=not overwrite)
