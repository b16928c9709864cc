"""Perturbed items: every condition's prompt as text, for judges run with other tools.

:func:`perturb_items` renders the items under the chosen conditions exactly as the extraction
does (:func:`judgerisk.extract._prompts.build_prompts`: the template's table for its own
conditions, the perturbation families of :mod:`judgerisk.families` for the others), and returns
one row per (item, condition) with the system and user messages, the assistant prefill, the
labels and verdict strings to read, and the answers as shown. ``judgerisk perturb`` writes it.
The same items, template, conditions and seed give the same table on any machine.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from judgerisk.extract._prompts import (
    Template,
    build_prompts,
    item_chunks,
    load_template,
    read_items,
)
from judgerisk.families import ORIGINAL, parse_condition
from judgerisk.options import DEFAULT_TEMPLATE, PERTURB_CONDITIONS

__all__ = [
    "PERTURB_CONDITIONS",
    "PERTURBED_COLUMNS",
    "CHUNK_ITEMS",
    "perturb_items",
    "perturb_chunks",
]

#: Items read, rendered and written at a time by :func:`perturb_chunks` (``judgerisk perturb``):
#: its memory is set by this, not by the file's size.
CHUNK_ITEMS = 500


#: The columns of :func:`perturb_items`, before the items' own extra columns.
PERTURBED_COLUMNS: tuple[str, ...] = (
    "item",
    "condition",
    "family",
    "variant",
    "swapped",
    "label_first",
    "label_second",
    "verdict_first",
    "verdict_second",
    "system",
    "user",
    "prefill",
    "answer_a",
    "answer_b",
    "perturbation",
)


def perturb_items(
    items: Any,
    conditions: Sequence[str] = PERTURB_CONDITIONS,
    *,
    template: str | Path | dict = DEFAULT_TEMPLATE,
    seed: int = 0,
) -> pd.DataFrame:
    """The items under each condition, as the judge is shown them.

    Parameters
    ----------
    items : DataFrame or path
        ``item, prompt, answer_a, answer_b[, gold, ...]`` (what
        :func:`judgerisk.extract._prompts.read_items` reads).
    conditions : sequence of str, default :data:`PERTURB_CONDITIONS`
        Condition names (the template's own, or any a perturbation family declares).
    template : str, path or dict, default :data:`judgerisk.options.DEFAULT_TEMPLATE`
        The prompt template (:func:`judgerisk.extract._prompts.load_template`).
    seed : int, default 0
        Perturbation seed of the families that draw (format, verbosity).

    Returns
    -------
    pandas.DataFrame
        One row per item and condition (items in input order, conditions in the given order):
        ``item, condition``, ``family`` and ``variant`` (empty / 0 for ``original`` and
        ``swap``), ``swapped`` (answer B shown first), ``label_first, label_second`` (the
        labels of the first and second shown answer), ``verdict_first, verdict_second`` (the
        verdict strings to read: the first one's probability is that of the first shown
        answer), ``system, user`` (the messages), ``prefill`` (the start of the assistant turn),
        ``answer_a, answer_b`` (the original answers A and B as shown, after the perturbation),
        ``perturbation`` (what changed, in words), then the items' other columns (``gold``, ...).

    Notes
    -----
    The canonical probability that the original answer A wins is the first verdict's
    probability when ``swapped`` is false and the second's when it is true (Methods reference
    §1): a label variant only renames the verdicts.

    Examples
    --------
    >>> from judgerisk.testing import tiny_items
    >>> table = perturb_items(tiny_items(2), ["original", "label1", "verbosity2"])
    >>> table.loc[table["item"] == 0, ["condition", "label_first", "perturbation"]].values.tolist()
    [['original', 'A', ''], ['label1', '1', 'labels A/B -> 1/2'], ['verbosity2', 'A', "B + 'Let me know if you have any other questions.'"]]
    """
    tmpl = load_template(template)
    return _perturb(read_items(items), tmpl, _conditions(conditions), seed)


def perturb_chunks(
    items: Any,
    conditions: Sequence[str] = PERTURB_CONDITIONS,
    *,
    template: str | Path | dict = DEFAULT_TEMPLATE,
    seed: int = 0,
    chunk_items: int | None = None,
) -> Iterator[pd.DataFrame]:
    """:func:`perturb_items` ``chunk_items`` items at a time: the same rows, in the same order.

    The items are read chunk by chunk (:func:`judgerisk.extract._prompts.item_chunks`), so
    the memory is that of one chunk whatever the file's size; concatenated, the chunks are
    :func:`perturb_items`'s table (each item's rows depend on the item, the condition and the
    seed only). ``chunk_items`` defaults to :data:`CHUNK_ITEMS`.
    """
    tmpl = load_template(template)
    conds = _conditions(conditions)
    for chunk in item_chunks(items, CHUNK_ITEMS if chunk_items is None else chunk_items):
        yield _perturb(chunk, tmpl, conds, seed)


def _conditions(conditions: Sequence[str]) -> tuple[str, ...]:
    conditions = tuple(conditions)
    if ORIGINAL not in conditions:
        raise ValueError(f"conditions must include {ORIGINAL!r}, got {list(conditions)}")
    return conditions


def _perturb(
    items: pd.DataFrame, tmpl: Template, conditions: tuple[str, ...], seed: int
) -> pd.DataFrame:
    """The perturbed rows of checked items (:func:`perturb_items`'s table)."""
    prompts = build_prompts(items, tmpl, conditions, seed=seed)
    parsed = {c: parse_condition(c) for c in conditions}
    out = pd.DataFrame(
        {
            "item": prompts["item"],
            "condition": prompts["condition"],
            "family": prompts["condition"].map(lambda c: _family(parsed.get(c))),
            "variant": prompts["condition"].map(lambda c: _variant(parsed.get(c))),
            "swapped": prompts["swapped"].astype(bool),
            "label_first": prompts["label_first"],
            "label_second": prompts["label_second"],
            "verdict_first": prompts["verdict_a"],
            "verdict_second": prompts["verdict_b"],
            "system": prompts["messages"].map(lambda m: m[0]["content"]),
            "user": prompts["messages"].map(lambda m: m[1]["content"]),
            "prefill": prompts["prefill"],
            "answer_a": prompts["answer_a"],
            "answer_b": prompts["answer_b"],
            "perturbation": prompts["perturbation"],
        }
    )
    extra = [c for c in items.columns if c not in ("item", "prompt", "answer_a", "answer_b")]
    if extra:
        out = out.merge(items[["item", *extra]], on="item", how="left", validate="many_to_one")
    return out.reset_index(drop=True)


def _family(spec: Any) -> str:
    if spec is None:
        return ""
    return spec.family or ("order" if spec.swapped else "")


def _variant(spec: Any) -> int:
    return int(spec.variant) if spec is not None and spec.variant is not None else 0
