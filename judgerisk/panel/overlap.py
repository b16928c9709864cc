"""Who judged which item: the groups of judges that share items, and how varied their votes are.

A panel's consensus and conflict compare the judges *on the same item*. Judges that share no
item (one FastChat judge under two prompts split by ``--judge-by model+prompt``, two Arena-Hard
runs on different benchmarks, alpaca_eval's AlpacaEval 1 and 2 annotators, which compare
against different references) are not a panel: every item has one vote, and a panel page
would show perfect agreement that no item ever had the chance to lack. :func:`judge_groups`
finds the groups (the connected parts of the judge-item graph); :func:`no_shared_items` says,
in one line, why such a panel is refused and what to do instead.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from judgerisk.options import ORIGINAL

__all__ = ["judge_groups", "no_shared_items", "distinct_patterns"]


def judge_groups(panel: pd.DataFrame, condition: str = ORIGINAL) -> list[list[str]]:
    """The judges of ``condition``, grouped by shared items (each group sorted, largest first).

    Two judges are in one group when a chain of items, each judged by two of them, links them;
    a panel is scorable as one only if there is one group.
    """
    cells = panel.loc[panel["condition"] == condition, ["item", "judge"]].drop_duplicates()
    if cells.empty:
        return []
    j_code, judges = pd.factorize(cells["judge"], sort=True)
    i_code, items = pd.factorize(cells["item"], sort=True)
    n_j = len(judges)
    # bipartite graph: judges 0..n_j-1, items n_j..; its components are the groups
    graph = coo_matrix((np.ones(len(cells)), (j_code, n_j + i_code)), shape=(n_j + len(items),) * 2)
    _, label = connected_components(graph, directed=False)
    groups: dict[int, list[str]] = {}
    for k, judge in enumerate(judges):
        groups.setdefault(int(label[k]), []).append(str(judge))
    return sorted((sorted(g) for g in groups.values()), key=lambda g: (-len(g), g))


def no_shared_items(groups: list[list[str]]) -> str:
    """The one-line refusal of judges in more than one group, with what to do instead."""
    shown = "; ".join(
        "{" + ", ".join(repr(j) for j in g[:4]) + (", ..." if len(g) > 4 else "") + "}"
        for g in groups[:4]
    )
    more = f" and {len(groups) - 4} more" if len(groups) > 4 else ""
    return (
        f"the judges form {len(groups)} groups that share no item ({shown}{more}): no item was "
        "judged by judges of two groups, so they are not one panel (its agreement would count "
        "one vote per item); instead report on each group or judge on its own (import its "
        "files alone), or, for one FastChat judge under two prompts, import with --judge-by "
        "model (not model+prompt)"
    )


def distinct_patterns(panel: pd.DataFrame) -> int:
    """How many distinct rows the item x (judge, condition) logit table has (a missing cell is
    a value of its own): at most that many items any per-item score can tell apart.

    Two judges with hard verdicts (three values each: A, B, tie) give at most nine.
    """
    wide = panel.pivot_table(
        index="item", columns=["judge", "condition"], values="logit", aggfunc="first"
    )
    return int(len(wide.fillna(np.inf).drop_duplicates()))
