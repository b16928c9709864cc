"""The simulator: determinism, the data contract, and realised figures near the knobs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judgerisk.engine.describe import consensus, flip_rates, judge_accuracy, panel_overview
from judgerisk.panel import CONDITIONS, validate_panel
from judgerisk.simulate import DEFAULT_KNOBS, simulate_pairs, simulate_panel


@pytest.fixture(scope="module")
def default_panel():
    return simulate_panel(seed=0)


def test_same_seed_identical_different_seed_different():
    a = simulate_panel(n_items=200, seed=3).data
    b = simulate_panel(n_items=200, seed=3).data
    c = simulate_panel(n_items=200, seed=4).data
    pd.testing.assert_frame_equal(a, b)
    assert not np.allclose(a["logit"], c["logit"])


def test_shape_and_contract(default_panel):
    data = default_panel.data
    assert len(data) == 2000 * 5 * 6
    assert set(data["condition"]) == set(CONDITIONS)
    pd.testing.assert_frame_equal(validate_panel(data), data)
    truth = default_panel.truth
    assert truth.q.shape == (2000,) and truth.a.shape == (5,)
    assert truth.delta["original"] == 0 and (truth.kappa["original"] == 0).all()
    assert np.isclose(np.log(truth.a).sum(), 0.0)


def test_default_panel_looks_like_the_papers(default_panel):
    data = default_panel.data
    acc = judge_accuracy(data)
    assert acc.between(0.70, 0.86).all(), acc
    overview = panel_overview(data)
    assert 0.65 <= overview["high-consensus share"] <= 0.9
    assert 0.03 <= overview["error rate at high consensus"] <= 0.15
    assert overview["high-consensus errors"] >= 50


def test_realised_mechanism_rates_near_knobs(default_panel):
    items = default_panel.truth.items
    n = len(items)
    tol = 4 * np.sqrt(0.25 / n)  # four binomial standard errors
    assert abs(items["ambiguous"].mean() - DEFAULT_KNOBS["ambiguous_rate"]) < tol
    assert abs(items["consensus_wrong"].mean() - DEFAULT_KNOBS["consensus_wrong_rate"]) < tol
    assert abs((items["gold"] == "A").mean() - DEFAULT_KNOBS["gold_a_rate"]) < tol
    # hard items are boosted: the realised sensitive share exceeds the base rate
    assert items["order_sensitive"].mean() > DEFAULT_KNOBS["order_sensitive_rate"] - tol
    # consensus-wrong items: the latent preference points away from gold
    wrong = items["consensus_wrong"]
    q_sign_a = default_panel.truth.q > 0
    gold_a = items["gold"] == "A"
    assert (q_sign_a[wrong] != gold_a[wrong]).all()
    assert (q_sign_a[~wrong] == gold_a[~wrong]).all()


def test_knobs_move_the_figures():
    base = simulate_panel(n_items=1500, seed=1)
    noisy = simulate_panel(n_items=1500, seed=1, judge_noise_low=4.0, judge_noise_high=5.0)
    assert judge_accuracy(noisy.data).mean() < judge_accuracy(base.data).mean() - 0.05
    no_order = simulate_panel(
        n_items=1500, seed=1, order_sensitive_rate=0.0, position_bias_mean=0.0, position_bias_sd=0.0
    )
    f_base = flip_rates(base.data).query("family == 'order'")["flip_rate"].mean()
    f_none = flip_rates(no_order.data).query("family == 'order'")["flip_rate"].mean()
    assert f_none < f_base - 0.03
    wrong = simulate_panel(n_items=1500, seed=1, consensus_wrong_rate=0.3)
    assert (
        panel_overview(wrong.data)["majority accuracy"]
        < panel_overview(base.data)["majority accuracy"] - 0.1
    )


def test_spammers_and_missing_cells():
    sim = simulate_panel(n_items=400, n_judges=6, seed=2, n_spammers=2, missing_rate=0.3)
    assert sim.truth.spammers == ("J5", "J6")
    assert (sim.truth.a[["J5", "J6"]] == 0).all()
    acc = judge_accuracy(sim.data)
    assert acc[["J5", "J6"]].max() < 0.62 < acc[["J1", "J2", "J3", "J4"]].min()
    n_cells = 400 * 6 * 6
    assert 0.25 < 1 - len(sim.data) / n_cells < 0.35
    # every item keeps an original-condition cell
    assert sim.data.query("condition == 'original'")["item"].nunique() == 400
    assert (consensus(sim.data)["n_judges"] >= 1).all()


def test_condition_subsets_and_bad_knobs():
    sim = simulate_panel(n_items=50, conditions=("original",), seed=0)
    assert set(sim.data["condition"]) == {"original"}
    with pytest.raises(TypeError, match="unknown simulation knob"):
        simulate_panel(n_items=10, noise=1.0)
    with pytest.raises(ValueError, match="must include 'original'"):
        simulate_panel(n_items=10, conditions=("swap",))
    with pytest.raises(ValueError, match="missing_rate"):
        simulate_panel(n_items=10, missing_rate=1.5)


def test_pairs():
    pairs = simulate_pairs(n=3000, seed=5)
    assert list(pairs.columns) == ["item", "logit_fwd", "logit_rev", "gold"]
    assert len(pairs) == 3000 and set(pairs["gold"]) == {"A", "B"}
    gold_a = pairs["gold"] == "A"
    acc_fwd = ((pairs["logit_fwd"] > 0) == gold_a).mean()
    acc_rev = ((pairs["logit_rev"] > 0) == gold_a).mean()
    assert 0.7 < acc_fwd < 0.9 and 0.7 < acc_rev < 0.9
    # position bias favours the first-shown answer: canonical fwd logits sit above rev
    assert (pairs["logit_fwd"] - pairs["logit_rev"]).mean() > 0
    pd.testing.assert_frame_equal(pairs, simulate_pairs(n=3000, seed=5))


def test_every_knob_is_documented():
    from judgerisk.simulate import KNOB_DOCS, knob_table

    assert set(KNOB_DOCS) == set(DEFAULT_KNOBS)
    for knob in DEFAULT_KNOBS:
        assert f"``{knob}``" in simulate_panel.__doc__, knob
    table = knob_table(missing_rate=0.2)
    assert table.loc["missing_rate", "used"] == 0.2
    assert table.loc["missing_rate", "default"] == 0.0
