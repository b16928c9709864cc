"""FastChat MT-Bench pairwise judgments (``data/<bench>/model_judgment/<judge>_pair.jsonl``).

FastChat's ``gen_judgment.py`` (``play_a_match_pair`` in ``fastchat/llm_judge/common.py``) judges
each pair twice: game 1 shows ``model_1`` as answer A, game 2 shows ``model_2`` as answer A, and
both winners are written already mapped to model names (``model_1``, ``model_2``, ``tie``,
``error``). The original order is game 1's, so the canonical A is ``model_1`` in both games.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from judgerisk.importers.base import (
    DEFAULT_EPSILON,
    DROP,
    TIE,
    WHERE,
    A,
    B,
    Imported,
    check_epsilon,
    hard_p,
    read_jsonl_records,
    require,
)
from judgerisk.panel import PanelError

__all__ = ["read_fastchat"]

_WINNER = {"model_1": A, "model_2": B, "tie": TIE}
_FIELDS = ("question_id", "model_1", "model_2", "g1_winner", "g2_winner", "judge")


_JUDGE_BY = ("model", "model+prompt")


def _judge_name(judge: object, where: str, judge_by: str) -> tuple[str, str]:
    if (
        isinstance(judge, list | tuple)
        and len(judge) == 2
        and all(isinstance(j, str) for j in judge)
    ):
        return (judge[0] if judge_by == "model" else "/".join(judge)), judge[1]
    raise PanelError(f"{where}: field 'judge' must be [model, prompt name], got {judge!r}")


def read_fastchat(
    paths: Sequence[str | Path], epsilon: float = DEFAULT_EPSILON, judge_by: str = "model"
) -> Imported:
    """Read FastChat pairwise judgment files into panel rows.

    Parameters
    ----------
    paths : sequence of path
        ``*_pair.jsonl`` files (one per judge model, any number).
    epsilon : float, default 0.05
        Hard verdicts become ``1 - ε`` / ``ε``; a ``tie`` is ``p = 1/2``.
    judge_by : {"model", "model+prompt"}, default "model"
        What names a judge. MT-Bench judges math, reasoning and coding questions with a
        reference-guided prompt (``pair-math-v1``) and the others with ``pair-v2``: by
        ``"model+prompt"`` they become two judges on disjoint items. The prompt is kept in the
        column ``judge_prompt`` either way.

    Returns
    -------
    Imported
        Item ``"<question_id>|<model_1>|<model_2>|turn<turn>"``, judge (see ``judge_by``),
        condition ``original`` (game 1) and ``swap`` (game 2). ``error`` games are dropped and
        counted.
    """
    check_epsilon(epsilon)
    if judge_by not in _JUDGE_BY:
        raise PanelError(f"judge_by must be one of {_JUDGE_BY}, got {judge_by!r}")
    rows: list[dict] = []
    no_turn = 0
    for path in paths:
        for n, rec in read_jsonl_records(path):
            where = f"{path}, line {n}"
            if "score" in rec and "g1_winner" not in rec:
                raise PanelError(
                    f"{where}: a single-answer grading record (a 1-10 score of one answer): it "
                    "compares no pair, so it cannot become a panel; import the *_pair.jsonl files"
                )
            require(rec, _FIELDS, where)
            judge, prompt = _judge_name(rec["judge"], where, judge_by)
            turn = rec.get("turn", 1)
            no_turn += "turn" not in rec
            item = f"{rec['question_id']}|{rec['model_1']}|{rec['model_2']}|turn{turn}"
            for game, cond in (("g1_winner", "original"), ("g2_winner", "swap")):
                winner = rec[game]
                if winner != "error" and (not isinstance(winner, str) or winner not in _WINNER):
                    raise PanelError(
                        f"{where}: unknown {game} {winner!r}; FastChat writes one of "
                        f"{[*_WINNER, 'error']}"
                    )
                rows.append(
                    {
                        "item": item,
                        "judge": judge,
                        "condition": cond,
                        "p": float("nan")
                        if winner == "error"
                        else hard_p(_WINNER[winner], epsilon),
                        "question_id": rec["question_id"],
                        "model_1": rec["model_1"],
                        "model_2": rec["model_2"],
                        "turn": turn,
                        "judge_prompt": prompt,
                        WHERE: where,
                        DROP: f"{game} = error" if winner == "error" else None,
                    }
                )
    assumptions = {
        "epsilon": epsilon,
        "hard verdict -> p": f"model_1 wins: {1 - epsilon}, model_2 wins: {epsilon}, tie: 0.5",
        "orientation": "answer A = model_1 in both games (FastChat maps game 2 back itself); "
        "game 1 -> original, game 2 -> swap",
        "item id": "<question_id>|<model_1>|<model_2>|turn<turn>",
        "judge": "the judge model of the 'judge' field (prompt in column judge_prompt)"
        if judge_by == "model"
        else "<judge model>/<prompt name> of the 'judge' field",
    }
    if no_turn:
        assumptions["turn"] = f"{no_turn} record(s) carry no 'turn': taken as turn 1"
    return Imported(pd.DataFrame(rows), assumptions, Counter())
