"""What a real judge does at the verdict slot, and what its panel says about position bias.

* :func:`verdict_slot_top_tokens`: where the probability at the verdict slot goes (the most likely
  next tokens per condition), the check that chooses a template or an assistant prefill;
* :func:`verdict_mass_by_condition`: median ``P("A") + P("B")`` per condition;
* :func:`accuracy_by_group`: accuracy against gold per condition and item group (e.g. subset);
* :func:`first_position_rate`: how often the judge picks the answer it was shown first;
* :func:`order_pairs`: the two answer orders side by side (the input of BPE, chapter 8);
* :func:`extraction_agreement`: two engines' extractions of one judge compared cell by cell.

References
----------
The instance-level panel reliability paper (six prompt conditions, verdict-token probabilities);
the SCOPE paper (Bidirectional Preference Entropy over both answer orders).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from judgerisk.options import DEFAULT_TEMPLATE
from judgerisk.panel import (
    CONDITIONS,
    order_pairs,  # re-exported: the one-judge view
    validate_panel,
)

__all__ = [
    "extraction_agreement",
    "verdict_slot_top_tokens",
    "verdict_mass_by_condition",
    "accuracy_by_group",
    "first_position_rate",
    "order_pairs",
    "always_first",
]


def verdict_slot_top_tokens(
    model: Any,
    tokenizer: Any,
    items: Any,
    conditions: Sequence[str] = CONDITIONS,
    *,
    template: Any = DEFAULT_TEMPLATE,
    k: int = 5,
) -> pd.DataFrame:
    """The most likely next tokens at the verdict slot, averaged over items, per condition.

    Parameters
    ----------
    model, tokenizer
        The judge.
    items : DataFrame or path
        Items (see :func:`judgerisk.extract.read_items`); keep it small, one forward pass each.
    conditions : sequence of str
    template : str, Path, dict or Template
    k : int, default 5
        Tokens kept per prompt before averaging.

    Returns
    -------
    pandas.DataFrame
        ``condition, token, mean_prob, is_verdict`` sorted by condition and decreasing mean
        probability, where ``mean_prob`` is :math:`\\frac1n\\sum_i P_i(t)` over the prompts of the
        condition (counting 0 for prompts where ``t`` is not in the top ``k``) and
        ``is_verdict`` marks the template's two verdict tokens.
    """
    import torch

    from judgerisk.extract._extract import prepare_prompts
    from judgerisk.extract._forward import input_device

    _, prompts, vt, _ = prepare_prompts(tokenizer, items, conditions, template=template)
    device = input_device(model)
    rows = []
    for cond, ids in zip(prompts["condition"], prompts["input_ids"], strict=True):
        with torch.inference_mode():
            out = model(input_ids=torch.tensor([ids], device=device), logits_to_keep=1)
        probs = torch.softmax(out.logits[0, -1].float(), dim=-1)
        top = torch.topk(probs, k)
        for tid, pr in zip(top.indices.tolist(), top.values.tolist(), strict=True):
            rows.append((cond, tid, pr))
    n = prompts["condition"].value_counts()
    table = pd.DataFrame(rows, columns=["condition", "id", "prob"])
    table = table.groupby(["condition", "id"], as_index=False)["prob"].sum()
    table["mean_prob"] = table["prob"] / table["condition"].map(n)
    table["token"] = tokenizer.convert_ids_to_tokens(table["id"].tolist())
    table["is_verdict"] = table["id"].isin([vt.id_a, vt.id_b])
    order = {c: i for i, c in enumerate(conditions)}
    table = table.assign(_o=table["condition"].map(order))
    table = table.sort_values(["_o", "mean_prob"], ascending=[True, False])
    return table[["condition", "token", "mean_prob", "is_verdict"]].reset_index(drop=True)


def verdict_mass_by_condition(panel: pd.DataFrame, by: str | None = None) -> pd.DataFrame:
    """Median verdict mass ``P("A") + P("B")`` per condition (columns: ``by`` groups or "all").

    Parameters
    ----------
    panel : DataFrame
        Extraction output with ``verdict_mass`` (several templates or judges may be stacked).
    by : str, optional
        Column whose values become the columns (e.g. ``"template"``).
    """
    if "verdict_mass" not in panel.columns:
        raise ValueError("panel has no 'verdict_mass' column (not an extraction output?)")
    conds = list(pd.unique(panel["condition"]))
    if by is None:
        out = panel.groupby("condition")["verdict_mass"].median().to_frame("all")
    else:
        out = panel.pivot_table(
            index="condition", columns=by, values="verdict_mass", aggfunc="median"
        )
    return out.reindex(conds)


def accuracy_by_group(panel: pd.DataFrame, group: str = "subset") -> pd.DataFrame:
    """Accuracy against gold per condition (rows) and group (columns), plus "all".

    A verdict is right when it names the gold answer; the verdict is the panel's ``verdict``
    column, :math:`1[m > 0]` on the canonical log-odds (a tie counts as B).
    """
    panel = validate_panel(panel, conditions=None)
    if "gold" not in panel.columns:
        raise ValueError("accuracy needs a gold column")
    right = (panel["verdict"].to_numpy() == (panel["gold"] == "A").to_numpy()).astype(float)
    right = pd.Series(right, index=panel.index)
    conds = list(pd.unique(panel["condition"]))
    table = right.groupby([panel["condition"], panel[group]]).mean().unstack(group)
    table["all"] = right.groupby(panel["condition"]).mean()
    return table.reindex(conds)


def first_position_rate(panel: pd.DataFrame) -> pd.Series:
    """Share of prompts, per condition, where the judge chose the answer it saw first.

    In the original order the first answer is the original A (canonical log-odds ``m > 0``, the
    panel's verdict rule); after a swap it is the original B. A judge that always picks the first answer scores 1
    in every condition and its canonical verdict flips with every swap.
    """
    if "swapped" not in panel.columns:
        raise ValueError("panel has no 'swapped' column (not an extraction output?)")
    chose_a = panel["logit"].to_numpy(float) > 0
    first = np.where(panel["swapped"].to_numpy(bool), ~chose_a, chose_a)
    conds = list(pd.unique(panel["condition"]))
    return pd.Series(first, index=panel.index).groupby(panel["condition"]).mean().reindex(conds)


def always_first(
    panel: pd.DataFrame, margin: float = 3.0, judge: str = "always-first"
) -> pd.DataFrame:
    """A hypothetical judge that always picks the answer shown first, on the same prompts.

    Its canonical log-odds are :math:`+m` in the unswapped conditions and :math:`-m` after a
    swap, so its verdict flips with every swap and its accuracy in the original order is just
    the share of items whose gold is A.

    Parameters
    ----------
    panel : DataFrame
        A panel with ``swapped`` (one judge's extraction output); its items, conditions and gold
        are reused.
    margin : float, default 3.0
        The judge's (constant) log-odds for the first answer.
    judge : str
        Name in the ``judge`` column.
    """
    if "swapped" not in panel.columns:
        raise ValueError("panel has no 'swapped' column (not an extraction output?)")
    keep = [c for c in ("item", "condition", "gold", "swapped", "subset") if c in panel]
    out = panel[keep].drop_duplicates(["item", "condition"]).copy()
    out["judge"] = judge
    out["logit"] = np.where(out["swapped"].to_numpy(bool), -margin, margin)
    return validate_panel(out, conditions=None)


def extraction_agreement(panel_a: pd.DataFrame, panel_b: pd.DataFrame) -> dict:
    """How closely two extractions of the same judge on the same prompts agree.

    Used to compare engines (in-process transformers against a server, book chapter
    "Extracting log-probabilities"): cells are matched on ``(item, condition)``.

    Returns
    -------
    dict
        ``cells``; ``verdict_agreement`` (share of cells whose canonical logit has the same
        sign); ``logit_r`` (Pearson correlation of the logits); ``max_abs_logit_diff``,
        ``median_abs_logit_diff``; ``max_abs_logprob_diff`` over ``logprob_a`` and
        ``logprob_b``; ``bounded`` (cells marked as top-k bounds in either).

    Notes
    -----
    .. math:: r = \\operatorname{corr}(m^{(a)}, m^{(b)}), \\qquad
              \\Delta = \\max_{ic} |m^{(a)}_{ic} - m^{(b)}_{ic}|.
    """
    cols = ["item", "condition", "logit", "logprob_a", "logprob_b"]
    both = panel_a[cols + (["bounded"] if "bounded" in panel_a else [])].merge(
        panel_b[cols + (["bounded"] if "bounded" in panel_b else [])],
        on=["item", "condition"],
        suffixes=("_a", "_b"),
        validate="one_to_one",
    )
    if len(both) == 0:
        raise ValueError("the two panels share no (item, condition) cell")
    la, lb = both["logit_a"].to_numpy(float), both["logit_b"].to_numpy(float)
    lp = np.abs(
        both[["logprob_a_a", "logprob_b_a"]].to_numpy(float)
        - both[["logprob_a_b", "logprob_b_b"]].to_numpy(float)
    )
    bounded = np.zeros(len(both), bool)
    for col in ("bounded_a", "bounded_b", "bounded"):
        if col in both:
            bounded |= both[col].to_numpy(bool)
    return {
        "cells": int(len(both)),
        "verdict_agreement": float(np.mean(np.sign(la) == np.sign(lb))),
        "logit_r": float(np.corrcoef(la, lb)[0, 1]) if len(both) > 1 else float("nan"),
        "max_abs_logit_diff": float(np.max(np.abs(la - lb))),
        "median_abs_logit_diff": float(np.median(np.abs(la - lb))),
        "max_abs_logprob_diff": float(lp.max()),
        "bounded": int(bounded.sum()),
    }
