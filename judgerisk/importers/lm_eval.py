"""lm-evaluation-harness logged samples (``--log_samples``: ``samples_<task>_<time>.jsonl``).

For a two-choice (multiple-choice) task each line holds ``doc_id``, ``target`` (the gold choice's
index) and ``filtered_resps``: one ``[log-likelihood, is_greedy]`` per choice (the harness writes
them as strings). The contract's logit is ``ll(choice 0) - ll(choice 1)`` (choice 0 = answer A).
A task whose name ends in the swap suffix is the same documents with the two answers exchanged:
its choice 0 is the original B, its logit is negated, and it is aligned by ``doc_id``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from judgerisk.importers.base import Imported, read_jsonl_records, require
from judgerisk.panel import PanelError

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


def _gold(target: object, where: str) -> str:
    if target in (0, "0"):
        return "A"
    if target in (1, "1"):
        return "B"
    raise PanelError(f"{where}: target {target!r} is not a choice index 0 or 1")


def read_lm_eval(
    paths: Sequence[str | Path], judge: str | None = None, swap_suffix: str = "_swap"
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

    Returns
    -------
    Imported
        Item ``"<task>:<doc_id>"`` (the unswapped task's name), judge, condition ``original`` or
        ``swap``, canonical ``logit`` and ``gold`` from ``target``. A task with other than two
        choices is refused.
    """
    rows: list[dict] = []
    for path in paths:
        path = Path(path)
        task = _task_of(path)
        swapped = bool(swap_suffix) and task.endswith(swap_suffix)
        base = task.removesuffix(swap_suffix) if swapped else task
        name = judge or path.parent.name
        for n, rec in read_jsonl_records(path):
            where = f"{path}, line {n}"
            require(rec, ("doc_id", "target", "filtered_resps"), where)
            resps = rec["filtered_resps"]
            if not isinstance(resps, list) or len(resps) != 2:
                raise PanelError(
                    f"{where}: {len(resps) if isinstance(resps, list) else 'no'} choices in "
                    "filtered_resps; only a two-choice task (answer A vs answer B) is a pairwise "
                    "verdict that can become a panel"
                )
            margin = _loglik(resps[0], where) - _loglik(resps[1], where)
            gold = _gold(rec["target"], where)
            if swapped:
                margin, gold = -margin, {"A": "B", "B": "A"}[gold]
            rows.append(
                {
                    "item": f"{base}:{rec['doc_id']}",
                    "judge": name,
                    "condition": "swap" if swapped else "original",
                    "logit": margin,
                    "gold": gold,
                }
            )
    assumptions = {
        "logit": "ll(choice 0) - ll(choice 1) from filtered_resps (no smoothing)",
        "gold": "target 0 -> A, 1 -> B (swap tasks mapped back)",
        "orientation": f"a task named <task>{swap_suffix} is the swap of <task>: its logit is "
        "negated and its gold exchanged; aligned by doc_id",
        "item id": "<task>:<doc_id>",
        "judge": judge or "the folder holding the file (the harness names it after the model)",
    }
    return Imported(pd.DataFrame(rows), assumptions, Counter())
