"""alpaca_eval annotations (``results/<model>/<annotator>/annotations.json``).

alpaca_eval writes a JSON list of records with ``instruction``, ``output_1``/``generator_1``,
``output_2``/``generator_2``, ``annotator`` and ``preference``: 1 means output 1 is preferred, 2
output 2, 1.5 a tie (also written as 0 by older versions), a value strictly between 1 and 2 a
weighted (logprob-based) preference, ``null`` no annotation. alpaca_eval un-switches the
randomised presentation order itself, so every record is in the original order: answer A =
``output_1``.
"""

from __future__ import annotations

import math
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
    item_id,
    read_json_records,
    require,
)
from judgerisk.panel import PanelError

__all__ = ["read_alpaca_eval"]

_FIELDS = ("instruction", "generator_1", "generator_2", "annotator", "preference")


def _p(pref: float, epsilon: float) -> float:
    if pref == 1.0:
        return hard_p(A, epsilon)
    if pref == 2.0:
        return hard_p(B, epsilon)
    if pref in (0.0, 1.5):
        return hard_p(TIE, epsilon)
    return 2.0 - pref


def read_alpaca_eval(paths: Sequence[str | Path], epsilon: float = DEFAULT_EPSILON) -> Imported:
    """Read alpaca_eval ``annotations.json`` files into panel rows.

    Parameters
    ----------
    paths : sequence of path
        ``annotations.json`` files; each annotator becomes a judge.
    epsilon : float, default 0.05
        Hard preferences 1 / 2 become ``1 - ε`` / ``ε``; 1.5 (and 0) a tie, ``p = 1/2``; a
        weighted preference ``w`` in (1, 2) becomes ``p = 2 - w``.

    Returns
    -------
    Imported
        Item: a 12-hex hash of (instruction, generator_1, generator_2); judge ``annotator``;
        condition ``original``. ``null`` preferences are dropped and counted.
    """
    check_epsilon(epsilon)
    rows: list[dict] = []
    dropped: Counter[str] = Counter()
    for path in paths:
        for k, rec in enumerate(read_json_records(path)):
            where = f"{path}, record {k}"
            require(rec, _FIELDS, where)
            pref = rec["preference"]
            if pref is None or (isinstance(pref, float) and math.isnan(pref)):
                dropped["preference = null"] += 1
                continue
            if isinstance(pref, bool) or not isinstance(pref, int | float):
                raise PanelError(f"{where}: preference must be a number in [1, 2], got {pref!r}")
            if not (1.0 <= pref <= 2.0 or pref == 0.0):
                raise PanelError(f"{where}: preference {pref!r} outside [1, 2]")
            rows.append(
                {
                    "item": item_id(rec["instruction"], rec["generator_1"], rec["generator_2"]),
                    "judge": str(rec["annotator"]),
                    "condition": "original",
                    "p": _p(float(pref), epsilon),
                    "generator_1": rec["generator_1"],
                    "generator_2": rec["generator_2"],
                    "dataset": rec.get("dataset"),
                }
            )
    assumptions = {
        "epsilon": epsilon,
        "preference -> p": f"1: {1 - epsilon}, 2: {epsilon}, 1.5 (or 0): 0.5 (tie), "
        "w in (1, 2): 2 - w",
        "orientation": "answer A = output_1 (alpaca_eval un-switches the shown order itself); "
        "no swap condition",
        "item id": "sha256 of [instruction, generator_1, generator_2], first 12 hex digits",
        "judge": "the 'annotator' field",
    }
    return Imported(pd.DataFrame(rows), assumptions, dropped)
