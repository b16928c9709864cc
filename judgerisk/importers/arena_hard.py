"""Arena-Hard judgments (``data/<bench>/model_judgment/<judge>/<model>.jsonl``).

arena-hard-auto's ``gen_judgment.py`` writes one record per question and model with two
``games``: game 1 shows the baseline as answer A and the model as B, game 2 the reverse. Each
game's ``score`` is a five-level verdict *in the order that game showed* (``A>>B`` … ``B>>A``)
or ``null`` when the judge's answer could not be parsed. The original order is game 1's (A =
baseline); game 2's score is mapped back (``A>B`` of game 2 means the model, the original B, won).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from judgerisk.datasets.judgebench import VERDICT_STRENGTH
from judgerisk.importers.base import (
    DEFAULT_EPSILON,
    DEFAULT_WEAK,
    Imported,
    check_epsilon,
    graded_p,
    level_map,
    read_jsonl_records,
    require,
)
from judgerisk.panel import PanelError

__all__ = ["read_arena_hard"]

#: A game-2 verdict mapped back to the original order (answer A = baseline).
_FLIP = {"A>>B": "B>>A", "A>B": "B>A", "A=B": "A=B", "B>A": "A>B", "B>>A": "A>>B"}


def read_arena_hard(
    paths: Sequence[str | Path],
    epsilon: float = DEFAULT_EPSILON,
    weak: float = DEFAULT_WEAK,
    baseline: str | None = None,
) -> Imported:
    """Read Arena-Hard judgment files into panel rows.

    Parameters
    ----------
    paths : sequence of path
        ``model_judgment/<judge>/<model>.jsonl`` files (several judges and models at once).
    epsilon : float, default 0.05
        ``A>>B`` -> ``1 - ε`` and ``B>>A`` -> ``ε``.
    weak : float, default 0.75
        ``A>B`` -> ``weak`` and ``B>A`` -> ``1 - weak``; ``A=B`` -> 1/2.
    baseline : str, optional
        The baseline model's name, for records that do not carry a ``baseline`` field
        (arena-hard v0.1 keeps it in its config; v2 writes it into each record).

    Returns
    -------
    Imported
        Item ``"<question id>|<baseline>|<model>"``, judge from the record's ``judge`` (else the
        folder name), condition ``original`` (game 1) and ``swap`` (game 2, mapped back).
        ``null`` scores are dropped and counted.
    """
    check_epsilon(epsilon, weak)
    rows: list[dict] = []
    dropped: Counter[str] = Counter()
    for path in paths:
        path = Path(path)
        for n, rec in read_jsonl_records(path):
            where = f"{path}, line {n}"
            qid = rec.get("question_id", rec.get("uid"))
            if qid is None:
                raise PanelError(f"{where}: missing field 'question_id' (or 'uid')")
            require(rec, ("model", "games"), where)
            base = rec.get("baseline", baseline)
            if base is None:
                raise PanelError(
                    f"{where}: the record names no baseline; pass baseline=<model> "
                    "(--baseline on the command line)"
                )
            games = rec["games"]
            if not isinstance(games, list) or len(games) != 2:
                raise PanelError(f"{where}: 'games' must hold two games, got {games!r:.80}")
            judge = str(rec.get("judge") or path.parent.name)
            for k, (game, cond) in enumerate(zip(games, ("original", "swap"), strict=True)):
                score = game.get("score") if isinstance(game, dict) else None
                if not isinstance(game, dict) or "score" not in game:
                    raise PanelError(f"{where}: game {k + 1} has no 'score'")
                if score is None:
                    dropped[f"game {k + 1} score = null"] += 1
                    continue
                if not isinstance(score, str) or score not in VERDICT_STRENGTH:
                    raise PanelError(
                        f"{where}: unknown score {score!r} in game {k + 1}; Arena-Hard writes "
                        f"one of {list(VERDICT_STRENGTH)} or null"
                    )
                level = score if cond == "original" else _FLIP[score]
                rows.append(
                    {
                        "item": f"{qid}|{base}|{rec['model']}",
                        "judge": judge,
                        "condition": cond,
                        "p": graded_p(level, epsilon, weak),
                        "question_id": qid,
                        "baseline": base,
                        "model": rec["model"],
                        "score_as_shown": score,
                    }
                )
    assumptions = {
        "epsilon": epsilon,
        "weak": weak,
        "level -> p (original order)": level_map(epsilon, weak),
        "orientation": "answer A = the baseline; game 1 -> original, game 2 -> swap with its "
        "score mapped back (A>B <-> B>A, A>>B <-> B>>A)",
        "item id": "<question_id>|<baseline>|<model>",
        "judge": "the record's 'judge' field, else the folder name",
    }
    return Imported(pd.DataFrame(rows), assumptions, dropped)
