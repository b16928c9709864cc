"""Arena-Hard judgments (``data/<bench>/model_judgment/<judge>/<model>.jsonl``), v0.1 and v2.0.

arena-hard-auto's ``gen_judgment.py`` writes one record per question and model with two
``games``: game 1 shows the baseline as answer A and the model as B, game 2 the reverse. Each
game's ``score`` is a five-level verdict *in the order that game showed* (``A>>B`` … ``B>>A``;
v2.0 also accepts the mirrored spellings ``A<B``, ``A<<B``, ``B=A``, ``B<A``, ``B<<A``) or
``null`` when the judge's answer could not be parsed; v2.0 writes a whole game as ``null`` when
the judge call returned nothing. The original order is game 1's (A = baseline); game 2's score
is mapped back (``A>B`` of game 2 means the model, the original B, won).

v0.1 records carry ``question_id`` and no baseline (it is in the run's config); v2.0 records
carry ``uid``, ``category`` and their ``baseline`` (one per category).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from judgerisk.datasets.judgebench import VERDICT_STRENGTH
from judgerisk.importers.base import (
    DEFAULT_EPSILON,
    DEFAULT_WEAK,
    DROP,
    WHERE,
    Imported,
    check_epsilon,
    graded_p,
    level_map,
    read_jsonl_records,
    require,
)
from judgerisk.panel import PanelError

__all__ = ["read_arena_hard"]

#: The mirrored spellings arena-hard v2.0 accepts (its ``show_result.py``), in the five levels.
ALIASES = {"A<B": "B>A", "A<<B": "B>>A", "B=A": "A=B", "B<A": "A>B", "B<<A": "A>>B"}
#: A game-2 verdict mapped back to the original order (answer A = baseline).
_FLIP = {"A>>B": "B>>A", "A>B": "B>A", "A=B": "A=B", "B>A": "A>B", "B>>A": "A>>B"}

#: ``--baseline`` as given: one model for every file, or ``PATH=MODEL`` for the files at or
#: under ``PATH``.
Baseline = str | Sequence[str] | Mapping[str, str] | None


def _baselines(baseline: Baseline) -> tuple[str | None, dict[Path, str]]:
    """The default baseline and the per-path ones (``PATH=MODEL`` whose ``PATH`` exists)."""
    if baseline is None:
        return None, {}
    if isinstance(baseline, Mapping):
        items = [f"{k}={v}" for k, v in baseline.items()]
    else:
        items = [baseline] if isinstance(baseline, str) else list(baseline)
    default, per_path = None, {}
    for value in map(str, items):
        path, sep, model = value.rpartition("=")
        if sep and path and model:
            if not Path(path).exists():
                raise PanelError(
                    f"--baseline {value!r}: {path!r} is no file or folder; give MODEL for every "
                    "file, or PATH=MODEL with an existing PATH"
                )
            per_path[Path(path).absolute()] = model
        elif default is not None and default != value:
            raise PanelError(
                f"--baseline given twice as a model ({default!r}, {value!r}); give one model "
                "for every file, or PATH=MODEL for the files at or under PATH"
            )
        else:
            default = value
    return default, per_path


def _baseline_of(path: Path, default: str | None, per_path: dict[Path, str]) -> str | None:
    """The ``--baseline`` that applies to ``path``: the deepest ``PATH=MODEL`` above it, else
    the one model given for every file."""
    full = path.absolute()
    for p in (full, *full.parents):
        if p in per_path:
            return per_path[p]
    return default


def _level(score: object, where: str, k: int) -> str:
    if isinstance(score, str) and score in ALIASES:
        return ALIASES[score]
    if isinstance(score, str) and score in VERDICT_STRENGTH:
        return score
    raise PanelError(
        f"{where}: unknown score {score!r} in game {k}; Arena-Hard writes one of "
        f"{[*VERDICT_STRENGTH, *ALIASES]} or null"
    )


class _Tally:
    """Where the baseline and the judge of each record came from, for the assumptions."""

    def __init__(self) -> None:
        self.baseline: Counter[tuple[str, str]] = Counter()
        self.judge_from_folder: Counter[str] = Counter()
        self.judge_from_record = 0

    def text(self) -> dict[str, str]:
        parts = [
            f"{model} for {n} record(s) ({source})"
            for (source, model), n in sorted(self.baseline.items())
        ]
        out = {"baseline (answer A of game 1)": "; ".join(parts)}
        judge = f"the record's 'judge' field ({self.judge_from_record} record(s))"
        if self.judge_from_folder:
            folders = ", ".join(f"{j!r} ({n})" for j, n in sorted(self.judge_from_folder.items()))
            judge += f"; records without one: the folder's name, {folders}"
        out["judge"] = judge
        return out


def read_arena_hard(
    paths: Sequence[str | Path],
    epsilon: float = DEFAULT_EPSILON,
    weak: float = DEFAULT_WEAK,
    baseline: Baseline = None,
) -> Imported:
    """Read Arena-Hard judgment files (v0.1 and v2.0) into panel rows.

    Parameters
    ----------
    paths : sequence of path
        ``model_judgment/<judge>/<model>.jsonl`` files (several judges and models at once).
    epsilon : float, default 0.05
        ``A>>B`` -> ``1 - ε`` and ``B>>A`` -> ``ε``.
    weak : float, default 0.75
        ``A>B`` -> ``weak`` and ``B>A`` -> ``1 - weak``; ``A=B`` -> 1/2.
    baseline : str, sequence of str or mapping, optional
        The baseline model for records that carry none (v0.1 keeps it in its config): one
        model for every file, or ``"PATH=MODEL"`` items (a mapping ``{PATH: MODEL}``) for the
        files at or under ``PATH``. A record's own ``baseline`` (v2.0) is read per record; a
        ``baseline`` given here that contradicts it is an error.

    Returns
    -------
    Imported
        Item ``"<question id>|<baseline>|<model>"``, judge from the record's ``judge`` (else the
        folder name, said in the assumptions), condition ``original`` (game 1) and ``swap``
        (game 2, mapped back). ``null`` scores and ``null`` games are dropped and counted.
    """
    check_epsilon(epsilon, weak)
    default, per_path = _baselines(baseline)
    rows: list[dict] = []
    tally = _Tally()
    for path in map(Path, paths):
        given = _baseline_of(path, default, per_path)
        for n, rec in read_jsonl_records(path):
            where = f"{path}, line {n}"
            qid = rec.get("question_id", rec.get("uid"))
            if qid is None:
                raise PanelError(f"{where}: missing field 'question_id' (or 'uid')")
            require(rec, ("model", "games"), where)
            base = rec.get("baseline")
            if base is not None and given is not None and str(base) != given:
                raise PanelError(
                    f"{where}: the record's baseline is {base!r} but --baseline says {given!r}; "
                    "drop --baseline for these files (Arena-Hard v2.0 records carry their own)"
                )
            if base is None and given is None:
                raise PanelError(
                    f"{where}: the record names no baseline (Arena-Hard v0.1 keeps it in its "
                    "config, e.g. gpt-4-0314); pass --baseline MODEL (baseline=MODEL in Python)"
                )
            source = "the records" if base is not None else "--baseline"
            base = str(base if base is not None else given)
            tally.baseline[(source, base)] += 1
            games = rec["games"]
            if not isinstance(games, list) or len(games) != 2:
                raise PanelError(f"{where}: 'games' must hold two games, got {games!r:.80}")
            if rec.get("judge"):
                judge = str(rec["judge"])
                tally.judge_from_record += 1
            else:
                judge = path.parent.name
                tally.judge_from_folder[judge] += 1
            for k, (game, cond) in enumerate(zip(games, ("original", "swap"), strict=True), 1):
                drop, level, score = None, None, None
                if game is None:
                    drop = f"game {k} = null (the judge call returned nothing)"
                elif not isinstance(game, dict) or "score" not in game:
                    raise PanelError(f"{where}: game {k} has no 'score'")
                elif (score := game["score"]) is None:
                    drop = f"game {k} score = null"
                else:
                    level = _level(score, where, k)
                    level = level if cond == "original" else _FLIP[level]
                rows.append(
                    {
                        "item": f"{qid}|{base}|{rec['model']}",
                        "judge": judge,
                        "condition": cond,
                        "p": float("nan") if level is None else graded_p(level, epsilon, weak),
                        "question_id": qid,
                        **({"category": rec["category"]} if "category" in rec else {}),
                        "baseline": base,
                        "model": rec["model"],
                        "score_as_shown": score,
                        WHERE: where,
                        DROP: drop,
                    }
                )
    assumptions = {
        "epsilon": epsilon,
        "weak": weak,
        "level -> p (original order)": level_map(epsilon, weak),
        "labels": "v2.0's mirrored spellings read as the five levels: "
        + ", ".join(f"{a} = {b}" for a, b in ALIASES.items()),
        "orientation": "answer A = the baseline; game 1 -> original, game 2 -> swap with its "
        "score mapped back (A>B <-> B>A, A>>B <-> B>>A)",
        "item id": "<question_id or uid>|<baseline>|<model>",
        **tally.text(),
    }
    return Imported(pd.DataFrame(rows), assumptions, Counter())
