"""crowd-kit's ``(task, worker, label)`` tables (the input of its aggregators' ``fit``).

crowd-kit reads a table with one row per label: ``task`` (the item), ``worker`` (the labeller)
and ``label``. Pairwise labels become the panel's hard verdicts; a label naming neither side is a
tie only when ``label_tie`` names it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from judgerisk.importers.base import (
    DEFAULT_EPSILON,
    TIE,
    A,
    B,
    Imported,
    check_epsilon,
    hard_p,
)
from judgerisk.panel import PanelError, read_table

__all__ = ["read_crowdkit"]


def _default_labels(labels: set[str]) -> tuple[str, str]:
    """(A, B) of A/B or 1/0 labels, whichever of the two the table uses (all 0 are all B)."""
    if labels <= {"A", "B"}:
        return "A", "B"
    if labels <= {"0", "1"}:
        return "1", "0"
    raise PanelError(
        f"labels {sorted(map(str, labels))[:10]} are not A/B or 1/0: say which label means the "
        "original answer A (label_a=..., --label-a on the command line)"
    )


def _gold(table: pd.DataFrame, path, a: str, b: str | None, tie: str | None) -> pd.Series:
    """The ``gold`` column as "A"/"B"/None; a value that is no label is an error naming its row.

    A gold equal to ``label_tie`` is no gold (the panel's gold is "A" or "B"); the caller counts
    those.
    """
    given = table["gold"].notna() & (table["gold"].astype(str).str.strip() != "")
    text = table["gold"].astype(str)
    known = {a: A, **({b: B} if b is not None else {}), **({tie: None} if tie is not None else {})}
    bad = given & ~text.isin(list(known))
    if bad.any():
        row = int(bad.to_numpy().nonzero()[0][0])
        raise PanelError(
            f"{path}, row {row + 1}, column 'gold': {text.iloc[row]!r} is not a label "
            f"({', '.join(repr(k) for k in known)}); {int(bad.sum())} such row(s)"
        )
    return text.where(given).map(known)


def read_crowdkit(
    paths: Sequence[str | Path],
    epsilon: float = DEFAULT_EPSILON,
    label_a: object | None = None,
    label_tie: object | None = None,
) -> Imported:
    """Read crowd-kit ``task, worker, label`` tables (csv, parquet or jsonl) into panel rows.

    Parameters
    ----------
    paths : sequence of path
        Tables with columns ``task``, ``worker``, ``label`` (optionally ``gold``).
    epsilon : float, default 0.05
        Hard labels become ``1 - ε`` (A) / ``ε`` (B); a tie ``1/2``.
    label_a : optional
        The label meaning "the original answer A wins" (default ``"A"`` for A/B labels, ``1`` for
        1/0 labels); every other label is B, except ``label_tie``.
    label_tie : optional
        A label meaning a tie (default: none; any third label is an error).

    Returns
    -------
    Imported
        Item ``task``, judge ``worker``, condition ``original``.
    """
    check_epsilon(epsilon)
    frames, sources = [], []
    for path in paths:
        table = read_table(path)
        missing = [c for c in ("task", "worker", "label") if c not in table.columns]
        if missing:
            raise PanelError(f"{path}: missing column(s) {missing}; got {list(table.columns)}")
        bad = table["label"].isna() | table["task"].isna() | table["worker"].isna()
        if bad.any():
            row = int(bad.to_numpy().nonzero()[0][0])
            raise PanelError(f"{path}, row {row + 1}: missing task, worker or label")
        frames.append(table)
        sources.append(path)
    table = pd.concat(frames, ignore_index=True)
    # labels compared as text: a csv's 1 and a command line's "1" are the same label
    table["label"] = table["label"].astype(str)
    label_tie = None if label_tie is None else str(label_tie)
    labels = set(table["label"].tolist()) - ({label_tie} if label_tie is not None else set())
    if label_a is None:  # the A/B or 1/0 convention, even when one label never occurs
        a, b_default = _default_labels(labels)
    else:
        a, b_default = str(label_a), None
        if a not in labels:
            raise PanelError(f"label_a {a!r} is not among the labels {sorted(labels)[:10]}")
    others = labels - {a}
    if len(others) > 1:
        raise PanelError(
            f"labels {sorted(map(str, labels))[:10]}: more than two (A = {a!r}); a pairwise panel "
            "needs two labels (and label_tie for a tie)"
        )
    b = next(iter(others), b_default)
    side = table["label"].map(lambda v: A if v == a else TIE if v == label_tie else B)
    rows = pd.DataFrame(
        {
            "item": table["task"],
            "judge": table["worker"].astype(str),
            "condition": "original",
            "p": [hard_p(s, epsilon) for s in side],
        }
    )
    dropped: Counter = Counter()
    if "gold" in table.columns:
        gold = pd.concat(  # a file without a gold column: its rows are unlabelled
            [
                _gold(f, p, a, b, label_tie) if "gold" in f.columns else pd.Series([None] * len(f))
                for f, p in zip(frames, sources, strict=True)
            ],
            ignore_index=True,
        )
        ties = table["gold"].notna() & (table["gold"].astype(str) == str(label_tie))
        if label_tie is not None and ties.any():
            dropped["gold labels that are a tie (kept as unlabelled)"] += int(ties.sum())
        rows["gold"] = gold.to_numpy()
    assumptions = {
        "epsilon": epsilon,
        "label -> p": f"{a!r}: {1 - epsilon}, {b!r}: {epsilon}"
        + (f", {label_tie!r}: 0.5 (tie)" if label_tie is not None else ""),
        "orientation": f"label {a!r} = the original answer A; no swap condition",
        "item id": "the 'task' column as given",
        "judge": "the 'worker' column",
    }
    return Imported(rows, assumptions, dropped)
