"""The simulator's mechanisms behind the majority vote's errors (chapter 01)."""

from __future__ import annotations

import numpy as np

from judgerisk.engine.describe import MECHANISMS, error_mechanisms, judge_parameters
from judgerisk.simulate import simulate_panel


def test_error_mechanisms_match_a_direct_count():
    sim = simulate_panel(n_items=400, seed=2)
    table = error_mechanisms(sim.data, sim.truth)
    assert list(table.index) == list(MECHANISMS)
    flags = sim.truth.items["consensus_wrong"].astype(bool)
    assert np.isclose(table.loc["consensus_wrong", "share of items"], flags.mean())
    # consensus-wrong items are where the whole panel leans the wrong way
    assert table.loc["consensus_wrong", "majority error rate"] > 0.5
    assert ((table >= 0) & (table <= 1)).all().all()


def test_judge_parameters_has_one_row_per_judge():
    sim = simulate_panel(n_items=200, n_judges=4, seed=0)
    table = judge_parameters(sim.data, sim.truth)
    assert list(table.columns) == ["accuracy", "a", "sigma"]
    assert len(table) == 4


def test_judge_accuracy_counts_only_labelled_items_and_ties_half():
    """Unlabelled items are not errors; a tie is half right (the half-vote rule)."""
    import pandas as pd

    from judgerisk.engine.describe import judge_accuracy
    from judgerisk.panel import validate_panel

    rows = [
        # item 0: gold A, J1 right, J2 a tie; item 1: gold B, both right; item 2: no gold
        (0, "J1", 2.0, "A"),
        (0, "J2", 0.0, "A"),
        (1, "J1", -1.0, "B"),
        (1, "J2", -1.0, "B"),
        (2, "J1", -3.0, None),
        (2, "J2", 3.0, None),
    ]
    panel = pd.DataFrame(rows, columns=["item", "judge", "logit", "gold"])
    panel["condition"] = "original"
    acc = judge_accuracy(validate_panel(panel))
    assert acc["J1"] == 1.0 and acc["J2"] == 0.75
