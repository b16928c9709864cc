"""Real-judge diagnostics on hand-made panels: first-position rate, accuracy, order pairs, conflict."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judgerisk._book.diagnostics import (
    accuracy_by_group,
    always_first,
    first_position_rate,
    order_pairs,
    verdict_mass_by_condition,
)
from judgerisk._book.judges import judge_conflict
from judgerisk.panel import CONDITIONS


def _panel(n=8, seed=0):
    rng = np.random.default_rng(seed)
    rows = []
    gold = rng.choice(["A", "B"], n)
    for i in range(n):
        for c in CONDITIONS:
            rows.append(
                {
                    "item": f"i{i}",
                    "judge": "j",
                    "condition": c,
                    "logit": rng.normal(),
                    "gold": gold[i],
                    "subset": "S1" if i < n // 2 else "S2",
                    "swapped": c.startswith("swap"),
                    "verdict_mass": rng.uniform(0.5, 1.0),
                }
            )
    return pd.DataFrame(rows)


def test_always_first_judge_flips_with_every_swap_and_scores_the_gold_a_share():
    panel = _panel()
    first = always_first(panel)
    np.testing.assert_array_equal(first_position_rate(first).to_numpy(), 1.0)
    acc = accuracy_by_group(first, "subset")
    share_a = (panel.drop_duplicates("item")["gold"] == "A").mean()
    assert acc.loc["original", "all"] == pytest.approx(share_a)
    assert acc.loc["swap", "all"] == pytest.approx(1 - share_a)
    pairs = order_pairs(first)
    assert (pairs["logit_fwd"] == -pairs["logit_rev"]).all() and len(pairs) == 8


def test_first_position_rate_and_accuracy_by_hand():
    panel = pd.DataFrame(
        {
            "item": ["a", "a", "b", "b"],
            "judge": "j",
            "condition": ["original", "swap"] * 2,
            "logit": [2.0, 1.0, -1.0, -3.0],
            "gold": ["A", "A", "B", "B"],
            "subset": ["x", "x", "y", "y"],
            "swapped": [False, True] * 2,
        }
    )
    # original: a picks A (first), b picks B (second); swap: a picks A = second, b picks B = first
    np.testing.assert_allclose(first_position_rate(panel), [0.5, 0.5])
    acc = accuracy_by_group(panel, "subset")
    np.testing.assert_allclose(acc["all"], [1.0, 1.0])
    with pytest.raises(ValueError, match="swapped"):
        first_position_rate(panel.drop(columns="swapped"))


def test_verdict_mass_by_condition_is_the_median():
    panel = _panel()
    got = verdict_mass_by_condition(panel)
    want = panel.groupby("condition")["verdict_mass"].median()
    np.testing.assert_allclose(got["all"], want.reindex(got.index))
    assert list(got.index) == list(CONDITIONS)


def test_judge_conflict_is_the_mean_cross_entropy():
    pred = pd.DataFrame({"judge": ["x", "x", "y"], "p": [0.9, 0.2, 0.5], "p_hat": [0.6, 0.7, 0.5]})
    got = judge_conflict(pred)
    x = -np.mean([0.9 * np.log(0.6) + 0.1 * np.log(0.4), 0.2 * np.log(0.7) + 0.8 * np.log(0.3)])
    assert got.loc["x", "conflict"] == pytest.approx(x)
    assert got.loc["x", "disagreement"] == pytest.approx(0.5)
    assert got.loc["y", "conflict"] == pytest.approx(np.log(2))
