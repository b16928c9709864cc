"""lm-evaluation-harness logged samples (``--log_samples``: ``samples_<task>_<time>.jsonl``).

For a two-choice (multiple-choice) task each line holds ``doc_id``, ``target``, ``arguments``
(each choice's context and continuation), ``filtered_resps``: one ``[log-likelihood, is_greedy]``
per choice (the harness writes them as strings), and the per-document metrics (``acc``). The
contract's logit is ``ll(choice 0) - ll(choice 1)`` (choice 0 = answer A). A task whose name ends
in the swap suffix is the same documents with the two answers exchanged: its choice 0 is the
original B, its logit is negated, and it is aligned by ``doc_id``.

``target`` is what the task's ``doc_to_target`` returned: most tasks give the gold choice's index,
but WinoGrande gives the shared continuation's text (its two choices are two partial contexts
before the same continuation), and a task whose ``doc_to_target`` renders the choice's text
(as older QNLI logs have it) gives ``"yes"`` / ``"no"``. The gold is read, in this order,
from a choice index, from a text equal to exactly one choice's continuation, or from ``acc``:
with two choices, ``acc = 1`` means the choice of larger log-likelihood (the harness's
``argmax``, the first on a tie) is gold and ``acc = 0`` that the other is.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from judgerisk.importers.base import WHERE, Imported, read_jsonl_records, require
from judgerisk.panel import LOGIT_CLIP, PanelError

__all__ = ["read_lm_eval"]

_NAME = re.compile(r"^samples_(?P<task>.+?)_(?P<time>\d{4}-\d{2}-\d{2}T[\d\-.:]+)\.jsonl$")


def _task_of(path: Path) -> str:
    m = _NAME.match(path.name)
    return m.group("task") if m else path.stem.removeprefix("samples_")


def _loglik(resp: object, where: str) -> float:
    # the harness writes (loglikelihood, is_greedy) tuples, stringified
    value = resp[0] if isinstance(resp, list | tuple) and resp else resp
    try:
        out = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise PanelError(
            f"{where}: a log-likelihood expected in filtered_resps, got {resp!r}"
        ) from None
    return out


#: The gold rules: ``auto`` tries the index, the choice text, then ``acc``; ``none`` imports
#: the log-likelihoods without gold.
GOLD_RULES = ("auto", "target", "acc", "none")
_RULE_TEXT = {
    "index": "target is a choice index",
    "text": "target is the text of one choice",
    "acc": "from acc (two choices: acc 1 -> the argmax choice is gold, acc 0 -> the other)",
}


def _continuations(rec: dict) -> list[str] | None:
    """Each choice's continuation text from ``arguments`` (a dict of ``gen_args_<k>`` with
    ``arg_1``, harness >= 0.4.3; a list of ``[context, continuation]`` before), if readable."""
    args = rec.get("arguments")
    if isinstance(args, dict):
        args = [args[k] for k in sorted(args, key=lambda k: int(str(k).rsplit("_", 1)[-1]))]
        conts = [a.get("arg_1") if isinstance(a, dict) else None for a in args]
    elif isinstance(args, list):
        conts = [a[1] if isinstance(a, list | tuple) and len(a) > 1 else None for a in args]
    else:
        return None
    return (
        [c for c in conts if isinstance(c, str)] if all(isinstance(c, str) for c in conts) else None
    )


def _other_choices(path: Path, records: list[tuple[int, dict]]) -> int | None:
    """The number of choices of a file that is not a two-choice task (``None`` when every
    record has two).

    A file whose records all hold the same other number of choices (a four-choice task logged
    beside two-choice ones) is skipped with that reason; one whose records differ is refused
    at the first record that is not two-choice.
    """
    counts = []
    for n, rec in records:
        where = f"{path}, line {n}"
        require(rec, ("doc_id", "target", "filtered_resps"), where)
        resps = rec["filtered_resps"]
        counts.append(len(resps) if isinstance(resps, list) else None)
    if all(c == 2 for c in counts):
        return None
    if len(set(counts)) == 1 and counts[0] is not None:
        return counts[0]
    k = next(i for i, c in enumerate(counts) if c != 2)
    raise PanelError(
        f"{path}, line {records[k][0]}: {counts[k] if counts[k] is not None else 'no'} choices "
        "in filtered_resps; only a two-choice task (answer A vs answer B) is a pairwise verdict "
        "that can become a panel"
    )


def _gold_from_target(target: object, rec: dict) -> tuple[int, str] | None:
    if target in (0, 1, "0", "1") and not isinstance(target, bool):
        return int(target), "index"
    conts = _continuations(rec)
    if isinstance(target, str) and conts is not None:
        hits = [k for k, c in enumerate(conts) if c.strip() == target.strip()]
        if len(hits) == 1:
            return hits[0], "text"
    return None


def _gold_from_acc(rec: dict, ll: tuple[float, float]) -> tuple[int, str] | None:
    acc = rec.get("acc")
    if isinstance(acc, bool) or acc not in (0, 1):
        return None
    argmax = 0 if ll[0] >= ll[1] else 1  # np.argmax: the first on a tie
    return (argmax if acc == 1 else 1 - argmax), "acc"


def _gold(rec: dict, ll: tuple[float, float], rule: str, where: str) -> tuple[int, str] | None:
    """``(gold choice, how it was read)``, or ``None`` with ``rule == "none"``."""
    if rule == "none":
        return None
    found = _gold_from_target(rec["target"], rec) if rule in ("auto", "target") else None
    if found is None and rule in ("auto", "acc"):
        found = _gold_from_acc(rec, ll)
    if found is None:
        raise PanelError(
            f"{where}: target {rec['target']!r} is neither a choice index (0 or 1) nor the text "
            "of exactly one choice"
            + (
                ", and the record has no acc of 0 or 1 to read the gold from; import without "
                "gold with --gold none (gold='none' in Python)"
                if rule != "target"
                else "; read the gold from acc with --gold auto, or import without gold with "
                "--gold none (gold='none' in Python)"
            )
        )
    return found


def read_lm_eval(
    paths: Sequence[str | Path],
    judge: str | None = None,
    swap_suffix: str = "_swap",
    gold: str = "auto",
) -> Imported:
    """Read lm-evaluation-harness ``samples_*.jsonl`` files into panel rows.

    Parameters
    ----------
    paths : sequence of path
        Logged-sample files of two-choice tasks, one or more models (judges).
    judge : str, optional
        The judge's name for every file (default: the file's folder, which the harness names
        after the model).
    swap_suffix : str, default ``"_swap"``
        A task ``<task><swap_suffix>`` is the order swap of ``<task>``.
    gold : {"auto", "target", "acc", "none"}, default "auto"
        Where the gold comes from: ``"target"`` (a choice index, or the text of exactly one
        choice), ``"acc"`` (two choices: ``acc = 1`` -> the argmax choice, ``0`` -> the other),
        ``"auto"`` (the target, else ``acc``; which rule served how many records is recorded),
        or ``"none"`` (no gold column).

    Returns
    -------
    Imported
        Item ``"<task>:<doc_id>"`` (the unswapped task's name), judge, condition ``original`` or
        ``swap``, canonical ``logit`` (the panel clips it to ±20: the assumptions count the
        cells clipped) and, unless ``gold="none"``, ``gold``. A file of a task with other than
        two choices (every record the same number) is skipped, named with its reason in the
        assumptions and counted in ``dropped``; when no file is left, or a file's records
        differ in their number of choices, the import is refused.
    """
    if gold not in GOLD_RULES:
        raise PanelError(f"gold must be one of {list(GOLD_RULES)}, got {gold!r}")
    rows: list[dict] = []
    used: Counter[str] = Counter()
    skipped: dict[str, str] = {}
    dropped: Counter[str] = Counter()
    for path in map(Path, paths):
        records = list(read_jsonl_records(path))
        choices = _other_choices(path, records)
        if choices is not None:
            skipped[str(path)] = f"{choices} choices per record, not a pairwise verdict"
            dropped[f"records of {path} ({choices} choices: file skipped)"] += len(records)
            continue
        task = _task_of(path)
        swapped = bool(swap_suffix) and task.endswith(swap_suffix)
        base = task.removesuffix(swap_suffix) if swapped else task
        name = judge or path.parent.name
        for n, rec in records:
            where = f"{path}, line {n}"
            resps = rec["filtered_resps"]
            ll = (_loglik(resps[0], where), _loglik(resps[1], where))
            margin = ll[0] - ll[1]
            row = {
                "item": f"{base}:{rec['doc_id']}",
                "judge": name,
                "condition": "swap" if swapped else "original",
                "logit": -margin if swapped else margin,
                WHERE: where,
            }
            found = _gold(rec, ll, gold, where)
            if found is not None:
                choice, how = found
                used[how] += 1
                # the swapped task's choice 0 is the original B
                row["gold"] = "AB"[1 - choice if swapped else choice]
            rows.append(row)
    if skipped and not rows:
        raise PanelError(
            "; ".join(f"{p}: {why}" for p, why in skipped.items())
            + ": only a two-choice task (answer A vs answer B) is a pairwise verdict that can "
            "become a panel; pass the samples files of two-choice tasks"
        )
    rules = "; ".join(f"{_RULE_TEXT[k]}: {n} record(s)" for k, n in sorted(used.items()))
    clipped = sum(abs(r["logit"]) > LOGIT_CLIP for r in rows)
    assumptions = {
        "logit": "ll(choice 0) - ll(choice 1) from filtered_resps, no smoothing",
        "logit clipping": f"{clipped} of {len(rows)} cell(s) beyond ±{LOGIT_CLIP:g} clipped to "
        f"±{LOGIT_CLIP:g} (the panel's logit range: P(A) within 2.1e-9 of 0 or 1)",
        "gold": "none imported (--gold none)"
        if gold == "none"
        else f"choice 0 -> A, choice 1 -> B (swap tasks mapped back); {rules}",
        "orientation": f"a task named <task>{swap_suffix} is the swap of <task>: its logit is "
        "negated and its gold exchanged; aligned by doc_id",
        "item id": "<task>:<doc_id>",
        "judge": judge or "the folder holding the file (the harness names it after the model)",
    }
    if skipped:
        assumptions["skipped files"] = "; ".join(f"{p}: {why}" for p, why in skipped.items())
    return Imported(pd.DataFrame(rows), assumptions, dropped)
