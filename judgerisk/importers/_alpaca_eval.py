"""alpaca_eval annotations (``results/<model>/<annotator>/annotations.json``).

alpaca_eval writes a JSON list of records with ``instruction``, ``output_1``/``generator_1``,
``output_2``/``generator_2``, ``annotator`` and ``preference``: 1 means output 1 is preferred, 2
output 2, 1.5 a tie (also written as 0 by older versions), a value strictly between 1 and 2 a
weighted (logprob-based) preference, ``null`` no annotation. alpaca_eval un-switches the
randomised presentation order itself, so every record is in the original order: answer A =
``output_1``.

A *weighted* annotator (one that wrote any preference strictly between 1 and 2 other than 1.5)
writes ``1 + P(output 2)``: every one of its preferences, ``1`` and ``2`` included, is that
probability (``1.0`` is a probability that rounded to 1 in the file, not a hard verdict), so
``p = 2 - w`` for all of them and the map is monotone. A hard annotator's 1 and 2 are verdicts.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from judgerisk.importers.base import (
    DEFAULT_EPSILON,
    WHERE,
    A,
    B,
    Imported,
    check_epsilon,
    hard_p,
    item_id,
    read_json_records,
    require,
)
from judgerisk.panel import LOGIT_CLIP, PanelError

__all__ = ["read_alpaca_eval"]

_FIELDS = ("instruction", "generator_1", "generator_2", "annotator", "preference")


def _hard_logit(pref: float, epsilon: float) -> float:
    if pref in (0.0, 1.5):  # a tie (0 in older versions)
        return 0.0
    p = hard_p(A if pref == 1.0 else B, epsilon)
    return math.log(p) - math.log1p(-p)


def _weighted_logit(pref: float) -> float:
    r"""``log((2 - w) / (w - 1))``, the log-odds of ``p = 2 - w``, in the panel's ±20.

    For ``w`` in [1, 2] both ``2 - w`` and ``w - 1`` are exact in floating point, so the
    log-odds is exact too; ``w = 1`` (``2``) is the most certain end, +20 (-20).
    """
    if pref in (0.0, 1.5):
        return 0.0
    if pref == 1.0:
        return LOGIT_CLIP
    if pref == 2.0:
        return -LOGIT_CLIP
    return min(max(math.log(2.0 - pref) - math.log(pref - 1.0), -LOGIT_CLIP), LOGIT_CLIP)


def _is_weighted(pref: float) -> bool:
    return 1.0 < pref < 2.0 and pref != 1.5


def _preference(rec: dict, where: str) -> float | None:
    pref = rec["preference"]
    if pref is None or (isinstance(pref, float) and math.isnan(pref)):
        return None
    if isinstance(pref, bool) or not isinstance(pref, int | float):
        raise PanelError(f"{where}: preference must be a number in [1, 2], got {pref!r}")
    if not (1.0 <= pref <= 2.0 or pref == 0.0):
        raise PanelError(f"{where}: preference {pref!r} outside [1, 2]")
    return float(pref)


def _not_annotations(path: Path) -> None:
    """Refuse, in one line, a file of alpaca_eval's that holds no annotations."""
    if path.suffix.lower() in (".csv", ".tsv"):
        raise PanelError(
            f"{path}: a table (an alpaca_eval leaderboard?), not annotations; pass the "
            "annotations.json that alpaca_eval writes beside it: "
            "results/<model>/<annotator>/annotations.json"
        )


def read_alpaca_eval(paths: Sequence[str | Path], epsilon: float = DEFAULT_EPSILON) -> Imported:
    """Read alpaca_eval ``annotations.json`` files into panel rows.

    Parameters
    ----------
    paths : sequence of path
        ``annotations.json`` files; each annotator becomes a judge.
    epsilon : float, default 0.05
        A hard annotator's preferences 1 / 2 become ``1 - ε`` / ``ε``; 1.5 (and 0) a tie,
        ``p = 1/2``. A weighted annotator's preference ``w`` in [1, 2] becomes ``p = 2 - w``
        (kept inside the panel's logit range, ±20).

    Returns
    -------
    Imported
        Item: a 12-hex hash of (instruction, generator_1, generator_2), with the instruction's
        text in column ``instruction``; judge ``annotator``; condition ``original``. ``null``
        preferences are dropped and counted.
    """
    check_epsilon(epsilon)
    records: list[tuple[str, dict, float]] = []
    weighted: defaultdict[str, bool] = defaultdict(bool)
    dropped: Counter[str] = Counter()
    for path in map(Path, paths):
        _not_annotations(path)
        for k, rec in enumerate(read_json_records(path)):
            where = f"{path}, record {k}"
            require(rec, _FIELDS, where)
            pref = _preference(rec, where)
            if pref is None:
                dropped["preference = null"] += 1
                continue
            annotator = str(rec["annotator"])
            weighted[annotator] |= _is_weighted(pref)
            records.append((where, rec, pref))
    rows = [
        {
            "item": item_id(rec["instruction"], rec["generator_1"], rec["generator_2"]),
            "judge": str(rec["annotator"]),
            "condition": "original",
            "logit": _weighted_logit(pref)
            if weighted[str(rec["annotator"])]
            else _hard_logit(pref, epsilon),
            "instruction": rec["instruction"],
            "generator_1": rec["generator_1"],
            "generator_2": rec["generator_2"],
            "dataset": rec.get("dataset"),
            WHERE: where,
        }
        for where, rec, pref in records
    ]
    kinds = {
        "weighted": sorted(a for a, w in weighted.items() if w),
        "hard": sorted(a for a, w in weighted.items() if not w),
    }
    assumptions = {
        "epsilon": epsilon,
        "preference -> p": "; ".join(
            part
            for part, who in (
                (
                    f"hard annotators {kinds['hard']}: 1 -> {1 - epsilon}, 2 -> {epsilon}, "
                    "1.5 (or 0) -> 0.5 (tie)",
                    kinds["hard"],
                ),
                (
                    f"weighted annotators {kinds['weighted']} (a preference strictly between 1 "
                    "and 2 other than 1.5): every w in [1, 2] -> p = 2 - w, log-odds "
                    f"log((2 - w) / (w - 1)) kept within ±{LOGIT_CLIP:g} (w = 1 -> "
                    f"+{LOGIT_CLIP:g}, the most certain end)",
                    kinds["weighted"],
                ),
            )
            if who
        ),
        "orientation": "answer A = output_1 (alpaca_eval un-switches the shown order itself); "
        "no swap condition",
        "item id": "sha256 of [instruction, generator_1, generator_2], first 12 hex digits "
        "(the instruction's text in column instruction)",
        "judge": "the 'annotator' field",
    }
    return Imported(pd.DataFrame(rows), assumptions, dropped)
