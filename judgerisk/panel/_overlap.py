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

from judgerisk.options import ORIGINAL

__all__ = ["judge_groups", "no_shared_items", "distinct_patterns"]


def judge_groups(panel: pd.DataFrame, condition: str = ORIGINAL) -> list[list[str]]:
    """The judges of ``condition``, grouped by shared items (each group sorted, largest first).

    Two judges are in one group when a chain of items, each judged by two of them, links them;
    a panel is scorable as one only if there is one group.
    """
    cells = panel.loc[(panel["condition"] == condition).to_numpy(), ["item", "judge"]]
    if cells.empty:
        return []
    j_code, judges = pd.factorize(cells["judge"], sort=True)
    i_code, items = pd.factorize(cells["item"], sort=True)
    n_j = len(judges)
    # each (item, judge) cell once, by its integer key (not a drop_duplicates on the ids)
    i_code, j_code = np.divmod(np.unique(i_code.astype(np.int64) * n_j + j_code), n_j)
    if (np.bincount(i_code, minlength=len(items)) == n_j).any():
        # one item judged by every judge links them all (a dense panel): one group, and no
        # graph to build (scipy.sparse.csgraph alone takes about 0.05 s to import)
        return [sorted(str(judge) for judge in judges)]
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    # bipartite graph: judges 0..n_j-1, items n_j..; its components are the groups
    graph = coo_matrix(
        (np.ones(len(i_code)), (j_code, n_j + i_code)), shape=(n_j + len(items),) * 2
    )
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

    Two judges with hard verdicts (three values each: A, B, tie) give at most nine. Counted on
    the observed cells, never on the table itself (a crowd's table is items x judges x
    conditions, nearly all of it missing): an item's pattern is its sequence of
    (judge, condition, logit) cells in one fixed column order, and the items of each pattern
    length are compared as the rows of an items x length array (memory linear in the cells).

    >>> import pandas as pd
    >>> cells = pd.DataFrame({"item": [0, 0, 1, 1, 2], "judge": ["a", "b", "a", "b", "a"],
    ...                       "condition": "original", "logit": [1.0, -1.0, 1.0, -1.0, 1.0]})
    >>> distinct_patterns(cells)  # items 0 and 1 alike; item 2 lacks judge b's cell
    2
    """
    sub = panel.loc[panel["logit"].notna(), ["item", "judge", "condition", "logit"]]
    if sub.empty:
        return 0
    item, _ = pd.factorize(sub["item"])
    judge, judges = pd.factorize(sub["judge"])
    cond, conds = pd.factorize(sub["condition"])
    value, values = pd.factorize(sub["logit"])  # one code per distinct logit (as pivot_table)
    col = judge.astype(np.int64) * len(conds) + cond
    order = np.lexsort((col, item))
    item, col, value = item[order], col[order], value[order]
    first = np.ones(len(item), dtype=bool)  # one cell per item and column (the first given)
    first[1:] = (item[1:] != item[:-1]) | (col[1:] != col[:-1])
    item, key = item[first], col[first] * np.int64(len(values)) + value[first]
    length = np.bincount(item)
    start = np.concatenate(([0], np.cumsum(length)[:-1]))
    total = 0
    for n_cells in np.unique(length[length > 0]):
        rows = start[length == n_cells][:, None] + np.arange(n_cells)
        total += len(np.unique(key[rows], axis=0))
    return int(total)
