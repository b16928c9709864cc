"""crowd-kit's ``(task, worker, label)`` tables (the input of its aggregators' ``fit``).

crowd-kit reads a table with one row per label: ``task`` (the item), ``worker`` (the labeller)
and ``label``. Pairwise labels become the panel's hard verdicts; a label naming neither side is a
tie only when ``label_tie`` names it. A table whose columns are named otherwise (the truth
inference benchmark's ``question, worker, answer``) is read with ``columns`` naming them.

Tables are csv, tsv (tab-separated), parquet or jsonl, by extension. A ``.txt`` file is read in
Get-Another-Label's header-less layout (Ipeirotis, Provost & Wang 2010, the ``labels.txt`` of its
data sets): one label per line, ``worker object label``, separated by a tab or, on a line with
no tab, by spaces; a folder is searched for its ``labels.txt`` (its other ``.txt`` files, the
categories, costs and gold, are no labels).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from judgerisk.importers.base import (
    DEFAULT_EPSILON,
    TIE,
    WHERE,
    A,
    B,
    Imported,
    check_epsilon,
    hard_p,
    parse_pairs,
    read_text,
)
from judgerisk.panel import PanelError, read_table

__all__ = ["read_crowdkit"]


#: The columns crowd-kit reads, and ``gold`` (optional).
_ROLES = ("task", "worker", "label", "gold")
#: Column names other tables use for each role, to suggest ``--columns``.
_SYNONYMS = {
    "task": ("question", "item", "task_id", "example", "image"),
    "worker": ("annotator", "labeler", "labeller", "rater", "worker_id", "judge"),
    "label": ("answer", "response", "vote", "annotation"),
    "gold": ("truth", "true_label", "ground_truth"),
}
_EXAMPLE = "--columns task=question,worker=worker,label=answer"


#: Get-Another-Label's labels file: its three fields, in their order, named by their roles.
_GAL_FIELDS = ("worker", "task", "label")


def _read_gal(path: Path) -> pd.DataFrame:
    """A Get-Another-Label labels file (``worker object label`` per line, no header) as a table
    of ``worker, task, label`` (text, as written); a line of other than three fields is an
    error naming it."""
    rows = []
    for n, line in enumerate(read_text(path).splitlines(), start=1):
        if not line.strip():
            continue
        fields = line.strip("\r\n").split("\t") if "\t" in line else line.split()
        fields = [f.strip() for f in fields]
        if len(fields) != 3 or not all(fields):
            raise PanelError(
                f"{path}, line {n}: {len(fields)} field(s) {fields[:4]}; a Get-Another-Label "
                "labels file (.txt) has three per line: worker, object, label (its gold and "
                "categories files are not labels: pass labels.txt)"
            )
        rows.append(fields)
    if not rows:
        raise PanelError(f"{path}: the file holds no label (an empty file, or only blank lines)")
    return pd.DataFrame(rows, columns=list(_GAL_FIELDS))


def _read(path: str | Path) -> pd.DataFrame:
    """A crowd table: Get-Another-Label's layout for ``.txt``, else :func:`read_table`."""
    path = Path(path)
    return _read_gal(path) if path.suffix.lower() == ".txt" else read_table(path)


def _columns_hint(columns: list[str]) -> str:
    """What to pass: a ``--columns`` value naming the table's own columns when they can be
    guessed (``question, worker, answer``), else the form to fill in."""
    named = {}
    for role in ("task", "worker", "label"):
        hit = [c for c in columns if c == role or str(c).lower() in _SYNONYMS[role]]
        if not hit:
            return "name them with --columns task=<column>,worker=<column>,label=<column>"
        named[role] = hit[0]
    return "name them with --columns " + ",".join(f"{r}={c}" for r, c in named.items())


def _renamed(table: pd.DataFrame, columns: dict[str, str], path: object) -> pd.DataFrame:
    """``table`` with the columns ``columns`` names (role -> column) renamed to their roles."""
    unknown = sorted(set(columns) - set(_ROLES))
    if unknown:
        raise PanelError(f"--columns: unknown role(s) {unknown}; the roles are {list(_ROLES)}")
    absent = [c for c in columns.values() if c not in table.columns]
    if absent:
        raise PanelError(
            f"{path}: --columns names column(s) {absent} the table does not have; it has "
            f"{list(table.columns)}"
        )
    clash = [r for r, c in columns.items() if r != c and r in table.columns]
    if clash:
        raise PanelError(
            f"{path}: --columns renames another column to {clash}, but the table has "
            f"column(s) {clash} already; name the one to use with --columns {clash[0]}={clash[0]}"
        )
    return table.rename(columns={v: k for k, v in columns.items()})


def _default_labels(labels: set[str], files: str) -> tuple[str, str]:
    """(A, B) of A/B or 1/0 labels, whichever of the two the table uses (all 0 are all B)."""
    if labels <= {"A", "B"}:
        return "A", "B"
    if labels <= {"0", "1"}:
        return "1", "0"
    shown = sorted(map(str, labels))[:10]
    raise PanelError(
        f"{files}: labels {shown} are not A/B or 1/0: say which label means the original "
        f"answer A, e.g. --label-a {shown[0]} (label_a={shown[0]!r} in Python); every other "
        "label is then B"
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


def _check_two(labels: set[str], label_tie: str | None, files: str) -> None:
    """Refuse, in one line, a table of more than two labels (a tie label aside)."""
    if len(labels) <= 2:
        return
    shown = sorted(map(str, labels))[:10]
    tie = (
        "; if one of them means a tie, pass --label-tie LABEL"
        if len(labels) == 3 and label_tie is None
        else ""
    )
    raise PanelError(
        f"{files}: {len(labels)} labels {shown}: a pairwise panel takes two (which answer won)"
        f"{tie}; a table of more classes is not a pairwise judgement: aggregate it with "
        "crowd-kit itself, or map its labels to two before importing"
    )


def read_crowdkit(
    paths: Sequence[str | Path],
    epsilon: float = DEFAULT_EPSILON,
    label_a: object | None = None,
    label_tie: object | None = None,
    columns: str | dict | None = None,
) -> Imported:
    """Read crowd-kit ``task, worker, label`` tables into panel rows.

    Parameters
    ----------
    paths : sequence of path
        Tables (csv, tsv, parquet or jsonl) with columns ``task``, ``worker``, ``label``
        (optionally ``gold``), or Get-Another-Label labels files (``.txt``: ``worker object
        label`` per line, no header; module docstring).
    epsilon : float, default 0.05
        Hard labels become ``1 - ε`` (A) / ``ε`` (B); a tie ``1/2``.
    label_a : optional
        The label meaning "the original answer A wins" (default ``"A"`` for A/B labels, ``1`` for
        1/0 labels); every other label is B, except ``label_tie``.
    label_tie : optional
        A label meaning a tie (default: none; any third label is an error).
    columns : str or dict, optional
        The table's own names of the roles, ``"task=question,worker=worker,label=answer"`` (or
        ``{"task": "question", ...}``; roles ``task``, ``worker``, ``label``, ``gold``).

    Returns
    -------
    Imported
        Item ``task``, judge ``worker``, condition ``original``.
    """
    check_epsilon(epsilon)
    names = parse_pairs(columns, "--columns", _EXAMPLE)
    frames, sources = [], []
    for path in paths:
        table = _read(path)
        if names:
            table = _renamed(table, names, path)
        missing = [c for c in ("task", "worker", "label") if c not in table.columns]
        if missing:
            raise PanelError(
                f"{path}: missing column(s) {missing}; got {list(table.columns)}: "
                + _columns_hint(list(table.columns))
            )
        bad = table["label"].isna() | table["task"].isna() | table["worker"].isna()
        if bad.any():
            row = int(bad.to_numpy().nonzero()[0][0])
            raise PanelError(f"{path}, row {row + 1}: missing task, worker or label")
        frames.append(table.assign(**{WHERE: [f"{path}, row {k + 1}" for k in range(len(table))]}))
        sources.append(path)
    table = pd.concat(frames, ignore_index=True)
    # labels compared as text: a csv's 1 and a command line's "1" are the same label
    table["label"] = table["label"].astype(str)
    label_tie = None if label_tie is None else str(label_tie)
    labels = set(table["label"].tolist()) - ({label_tie} if label_tie is not None else set())
    files = ", ".join(map(str, paths))
    _check_two(labels, label_tie, files)
    if label_a is None:  # the A/B or 1/0 convention, even when one label never occurs
        a, b_default = _default_labels(labels, files)
    else:
        a, b_default = str(label_a), None
        if a not in labels:
            raise PanelError(
                f"{files}: label_a {a!r} is not among the labels {sorted(labels)[:10]}; pass "
                "one of them as --label-a (label_a= in Python)"
            )
    b = next(iter(labels - {a}), b_default)
    side = table["label"].map(lambda v: A if v == a else TIE if v == label_tie else B)
    rows = pd.DataFrame(
        {
            "item": table["task"],
            "judge": table["worker"].astype(str),
            "condition": "original",
            "p": [hard_p(s, epsilon) for s in side],
            WHERE: table[WHERE],
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
    gal = [str(p) for p in paths if Path(p).suffix.lower() == ".txt"]
    if gal:
        assumptions["layout"] = (
            f"Get-Another-Label labels file(s) {gal}: worker, object (the task), label per line, "
            "no header"
        )
    if names:
        assumptions["columns"] = ", ".join(f"{k} = column {v!r}" for k, v in names.items())
    return Imported(rows, assumptions, dropped)
