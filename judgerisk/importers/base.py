"""The importers' building blocks: reading records, naming the line, recording assumptions.

Every importer returns an :class:`Imported`: the panel rows (data contract of
:mod:`judgerisk.panel`) and what was assumed to make them (book page "Importing your judges").
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from judgerisk._util import json_text
from judgerisk._util.files import check_regular
from judgerisk._util.hashing import sha256_text
from judgerisk.datasets.judgebench import VERDICT_STRENGTH
from judgerisk.datasets.llmbar import smooth_verdicts
from judgerisk.panel import PanelError, PanelFileNotFoundError

__all__ = [
    "DEFAULT_EPSILON",
    "DEFAULT_WEAK",
    "DROP",
    "WHERE",
    "Imported",
    "check_epsilon",
    "graded_p",
    "hard_p",
    "item_id",
    "parse_pairs",
    "read_json_records",
    "read_jsonl_records",
    "read_text",
    "require",
]

#: Default ε of a hard verdict: the winner gets ``1 - ε`` (:func:`~judgerisk.datasets.llmbar.smooth_verdicts`).
DEFAULT_EPSILON = 0.05
#: Default P(A) of a weak graded verdict ``A>B`` (``B>A`` gets ``1 -`` it).
DEFAULT_WEAK = 0.75
#: A hard verdict's label: the original A wins, the original B wins, or a tie.
A, B, TIE = "A", "B", "tie"
#: Optional row columns of a reader's output: where the cell's record is (``"<file>, line 4"``),
#: and why the cell is left out (``"g1_winner = error"``; ``None`` keeps it).
#: :func:`judgerisk.importers.import_judgments` resolves repeated cells with ``WHERE`` (the
#: duplicates policy), then drops and counts the ``DROP`` cells, then removes both columns.
WHERE, DROP = "_where", "_drop"


@dataclass
class Imported:
    """Rows of a panel and the record of how they were made.

    Attributes
    ----------
    rows : pandas.DataFrame
        ``item, judge, condition, p`` (canonical), optionally ``gold`` and extra columns, and
        the bookkeeping columns :data:`WHERE` and :data:`DROP` (a dropped cell's ``p`` is NaN).
    assumptions : dict
        Name -> the value chosen (ε, level map, tie policy, id rule, orientation, ...).
    dropped : collections.Counter
        Reason -> number of judgements left out (errors, nulls).
    """

    rows: pd.DataFrame
    assumptions: dict = field(default_factory=dict)
    dropped: Counter = field(default_factory=Counter)


def check_epsilon(epsilon: float, weak: float | None = None) -> None:
    """Refuse an ε outside (0, 0.5) or a weak level outside (0.5, 1 - ε)."""
    if not 0.0 < float(epsilon) < 0.5:
        raise PanelError(f"epsilon must be in (0, 0.5), got {epsilon}")
    if weak is not None and not 0.5 < float(weak) < 1.0 - float(epsilon):
        raise PanelError(f"weak must be in (0.5, 1 - epsilon) = (0.5, {1 - epsilon}), got {weak}")


def hard_p(label: str, epsilon: float) -> float:
    """Canonical P(A) of a hard verdict: ``1 - ε`` (A), ``ε`` (B), ``1/2`` (tie)."""
    if label == TIE:
        return 0.5
    return float(smooth_verdicts(np.array([label == A]), epsilon)[0])


def graded_p(level: str, epsilon: float, weak: float) -> float:
    """Canonical P(A) of a five-level verdict (:data:`~judgerisk.datasets.judgebench.VERDICT_STRENGTH`).

    ``A>>B`` -> ``1 - ε``, ``A>B`` -> ``weak``, ``A=B`` -> 1/2, ``B>A`` -> ``1 - weak``,
    ``B>>A`` -> ``ε``.
    """
    s = VERDICT_STRENGTH[level]
    mag = {0: 0.5, 1: weak, 2: 1.0 - epsilon}[abs(s)]
    return mag if s >= 0 else 1.0 - mag


def level_map(epsilon: float, weak: float) -> dict[str, float]:
    """The five-level map of :func:`graded_p`, for the record."""
    return {lv: round(graded_p(lv, epsilon, weak), 6) for lv in VERDICT_STRENGTH}


def item_id(*parts: object) -> str:
    """A stable 12-hex id from the parts (sha256 of their JSON list)."""
    text = json.dumps([str(p) for p in parts], ensure_ascii=False)
    return sha256_text(text)[:12]


def parse_pairs(
    value: str | Sequence[str] | dict | None, name: str, example: str
) -> dict[str, str]:
    """``"a=x,b=y"`` or ``["a=x", "b=y"]`` (the command line's forms) or a mapping ->
    ``{"a": "x", "b": "y"}``.

    ``name`` is the option's name and ``example`` a well-formed value, for the error on a part
    without ``=``.
    """
    if value is None:
        return {}
    if isinstance(value, dict):
        return {str(k): str(v) for k, v in value.items()}
    text = value if isinstance(value, str) else ",".join(map(str, value))
    out = {}
    for part in text.split(","):
        key, sep, val = part.partition("=")
        if not sep or not key.strip() or not val.strip():
            raise PanelError(f"{name}: {part!r} is not KEY=VALUE; write it as e.g. {example}")
        out[key.strip()] = val.strip()
    return out


def _open_text(path: Path) -> str:
    check_regular(path)
    if path.is_dir():
        raise PanelError(f"{path}: is a folder; pass the files in it, or the folder to import")
    if not path.is_file():
        raise PanelFileNotFoundError(f"{path}: file not found")
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PanelError(f"{path}: cannot read it ({exc})") from None


def read_text(path: str | Path) -> str:
    """The whole text of a file (UTF-8); a folder, a missing or unreadable file is a ``PanelError``."""
    return _open_text(Path(path))


def read_jsonl_records(path: str | Path) -> Iterator[tuple[int, dict]]:
    """``(line number, record)`` of every non-blank line; a broken line is a ``PanelError``."""
    path = Path(path)
    for n, line in enumerate(json_text.split_lines(_open_text(path)), start=1):
        if not line.strip():
            continue
        try:
            rec = json_text.loads(line)
        except json.JSONDecodeError as exc:
            raise PanelError(
                f"{path}, line {n}: not a JSON record (truncated or malformed: {exc.msg})"
            ) from None
        except ValueError as exc:  # a key given twice, nesting too deep
            raise PanelError(f"{path}, line {n}: {json_text.problem(exc)}") from None
        if not isinstance(rec, dict):
            raise PanelError(f"{path}, line {n}: a JSON object expected, got {type(rec).__name__}")
        yield n, rec


def read_json_records(path: str | Path) -> list[dict]:
    """The records of a JSON file holding a list of objects (alpaca_eval's ``annotations.json``)."""
    path = Path(path)
    try:
        data = json_text.loads(_open_text(path))
    except json.JSONDecodeError as exc:
        raise PanelError(
            f"{path}, line {exc.lineno}: not valid JSON (truncated or malformed: {exc.msg})"
        ) from None
    except ValueError as exc:  # a key given twice, nesting too deep
        raise PanelError(f"{path}: {json_text.problem(exc)}") from None
    if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
        raise PanelError(f"{path}: a JSON list of records expected")
    return data


def require(rec: dict, keys: tuple[str, ...], where: str) -> None:
    """Refuse a record lacking any of ``keys`` (the message names the file and line)."""
    missing = [k for k in keys if k not in rec]
    if missing:
        raise PanelError(f"{where}: missing field(s) {missing}; the record has {sorted(rec)}")
