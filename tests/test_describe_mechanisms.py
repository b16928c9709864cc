"""The simulator's mechanisms behind the majority vote's errors (chapter 01)."""

from __future__ import annotations

import numpy as np

from judgerisk.describe import MECHANISMS, error_mechanisms, judge_parameters
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
