"""The 1,000-split protocol: vectorised == plain loop, and SCOPE's guarantee empirically.

Monte-Carlo tolerance
---------------------
Given the data, the splits are drawn independently, so the per-split FDPs are i.i.d. with some
standard deviation sigma, and their mean over B splits has Monte-Carlo standard error
sigma / sqrt(B). SCOPE's guarantee holds for the random split of this fixed set (exchangeability
given the multiset of items), so the *expected* FDP over splits is <= alpha exactly and the only
slack needed is Monte-Carlo error: we assert mean FDP <= alpha + Z * sd / sqrt(B) with Z = 4
(one-sided normal tail 3.2e-5 per check; < 1e-3 over every check in this file by Bonferroni).
"""

import tracemalloc

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judgerisk.selective.confidence import bpe
from judgerisk.selective.protocol import (
    METHODS,
    _mask_blocks,
    _max_feasible_errors,
    _smallest_mask,
    split_masks,
    split_protocol,
    summarize_protocol,
)
from judgerisk.selective.scope import (
    naive_feasible,
    scope_feasible,
    toe_certified,
    toe_max_errors,
)
from judgerisk.simulate import simulate_pairs

Z = 4.0


def _mc_ok(summary: pd.DataFrame, method: str = "scope") -> pd.Series:
    s = summary.loc[method]
    return s["risk_mean"] <= s.index.to_numpy() + Z * s["risk_se"].fillna(0.0)


def test_split_masks_are_seeded_and_balanced():
    m = split_masks(11, n_splits=4, cal_frac=0.5, seed=3)
    assert m.shape == (4, 11) and (m.sum(axis=1) == 6).all()
    np.testing.assert_array_equal(m, split_masks(11, 4, 0.5, seed=3))
    assert not np.array_equal(m, split_masks(11, 4, 0.5, seed=4))
    with pytest.raises(ValueError, match="empty half"):
        split_masks(2, cal_frac=0.1)


def _argpartition_masks(n, n_splits, cal_frac, seed):
    """The masks as drawn before the blocked protocol (whole matrix, argpartition)."""
    n_cal = int(round(cal_frac * n))
    keys = np.random.default_rng(seed).random((n_splits, n))
    first = np.argpartition(keys, n_cal - 1, axis=1)[:, :n_cal]
    mask = np.zeros(keys.shape, dtype=bool)
    np.put_along_axis(mask, first, True, axis=1)
    return mask


@pytest.mark.parametrize(
    ("n", "n_splits", "cal_frac", "seed"),
    [(11, 4, 0.5, 3), (2, 3, 0.5, 0), (500, 37, 0.3, 1), (3001, 20, 0.5, 2), (40000, 3, 0.8, 5)],
)
def test_split_masks_equal_the_argpartition_masks_in_any_block_size(n, n_splits, cal_frac, seed):
    ref = _argpartition_masks(n, n_splits, cal_frac, seed)
    np.testing.assert_array_equal(split_masks(n, n_splits, cal_frac, seed), ref)
    for block in (1, 3, n_splits):
        blocks = list(_mask_blocks(n, n_splits, cal_frac, seed, block))
        assert [s0 for s0, _ in blocks] == list(range(0, n_splits, block))
        np.testing.assert_array_equal(np.concatenate([m for _, m in blocks]), ref)


def test_smallest_mask_falls_back_on_tied_and_outlying_keys():
    rng = np.random.default_rng(0)
    keys = rng.random((6, 50))
    keys[0] = np.round(keys[0], 1)  # ties at the k-th key
    keys[1] = 0.999 - keys[1] / 1000  # every key outside the bracket around the median
    keys[2] = 0.0  # all tied
    mask = _smallest_mask(keys, 25)
    assert (mask.sum(axis=1) == 25).all()
    ref = np.zeros_like(mask)
    np.put_along_axis(ref, np.argpartition(keys, 24, axis=1)[:, :25], True, axis=1)
    np.testing.assert_array_equal(mask, ref)


@pytest.mark.parametrize("method", ["scope", "naive"])
@pytest.mark.parametrize("alpha", [0.05, 0.1, 0.3, 0.7])
def test_feasibility_table_matches_the_rule(method, alpha):
    rule = {"scope": scope_feasible, "naive": naive_feasible}[method]
    table = _max_feasible_errors(method, 300, alpha)
    e, n = np.meshgrid(np.arange(301), np.arange(301), indexing="ij")
    feasible = rule(e, n, alpha) & (e <= n)
    np.testing.assert_array_equal(feasible, (e <= table[n]) & (e <= n))


@pytest.mark.parametrize(("alpha", "delta"), [(0.05, 0.1), (0.25, 0.1), (0.5, 0.01), (0.9, 0.3)])
def test_toe_max_errors_is_the_largest_certified_count(alpha, delta):
    kmax = toe_max_errors(400, alpha, delta)
    k, n = np.meshgrid(np.arange(401), np.arange(401), indexing="ij")
    certified = toe_certified(k, n, alpha, delta) & (k <= n)
    largest = np.where(certified.any(axis=0), 400 - np.argmax(certified[::-1], axis=0), -1)
    np.testing.assert_array_equal(kmax, largest)


def test_vectorised_equals_plain_loop_with_ties():
    rng = np.random.default_rng(1)
    n = 160
    score = np.round(rng.random(n), 1)  # heavy ties
    conf = np.round(1 - score / 2, 2)
    err = rng.random(n) < score * 0.4
    gold = np.where(err, "B", "A")
    kw = dict(confidence=conf, n_splits=6, n_grid=300, min_accepted=10, seed=5)
    fast = split_protocol(score, np.ones(n, int), gold, **kw)
    slow = split_protocol(score, np.ones(n, int), gold, loop=True, **kw)
    pd.testing.assert_frame_equal(fast, slow, check_exact=True)
    for budget in (1e-6, 0.02):  # one split per block; blocks of a few splits
        tiny = split_protocol(score, np.ones(n, int), gold, memory_budget_mb=budget, **kw)
        pd.testing.assert_frame_equal(tiny, slow, check_exact=True)
    assert list(fast["method"].cat.categories) == list(METHODS)
    assert len(fast) == len(METHODS) * 5 * 6  # 5 alphas, 6 splits
    # the case is not degenerate: some selectors abstain, some accept part of the test half
    assert (fast["n_accepted"] == 0).any() and fast["coverage"].between(0.05, 0.95).any()


def test_vectorised_equals_loop_on_simulated_pairs():
    d = simulate_pairs(n=200, seed=2)
    s = bpe(d.logit_fwd, d.logit_rev)
    kw = dict(confidence=s.confidence, n_splits=2, n_grid=5000, seed=1, alphas=(0.1, 0.25))
    fast = split_protocol(s.score, s.pred, d.gold, **kw)
    pd.testing.assert_frame_equal(fast, split_protocol(s.score, s.pred, d.gold, loop=True, **kw))


@pytest.mark.parametrize("methods", [("vanilla", "heuristic", "naive", "scope"), ("toe",)])
def test_working_memory_stays_within_the_budget(methods):
    d = simulate_pairs(n=20_000, seed=0)
    s = bpe(d.logit_fwd, d.logit_rev)
    kw = dict(confidence=s.confidence, methods=methods, n_splits=200, seed=0)
    split_protocol(s.score, s.pred, d.gold, **dict(kw, n_splits=2))  # caches, imports
    tracemalloc.start()
    try:
        split_protocol(s.score, s.pred, d.gold, memory_budget_mb=4, **kw)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # the keys of all splits at once would take 32 MB
    assert peak <= 4 * 2**20, peak / 2**20


@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(8, 90),
    decimals=st.integers(0, 3),
    n_splits=st.integers(1, 7),
    budget=st.sampled_from([1e-6, 0.01, 256.0]),
    seed=st.integers(0, 2**16),
)
def test_blocked_protocol_equals_loop_property(n, decimals, n_splits, budget, seed):
    rng = np.random.default_rng(seed)
    score = np.round(rng.random(n), decimals)
    conf = np.round(rng.random(n), decimals)
    gold = np.where(rng.random(n) < 0.3, "B", "A")
    kw = dict(confidence=conf, n_splits=n_splits, n_grid=50, min_accepted=3, seed=seed)
    fast = split_protocol(score, np.ones(n, int), gold, memory_budget_mb=budget, **kw)
    slow = split_protocol(score, np.ones(n, int), gold, loop=True, **kw)
    pd.testing.assert_frame_equal(fast, slow, check_exact=True)


def test_table_shape_summary_and_input_checks():
    d = simulate_pairs(n=100, seed=0)
    s = bpe(d.logit_fwd, d.logit_rev)
    tab = split_protocol(s.score, s.pred, d.gold, n_splits=7)  # no confidence -> 3 methods
    from judgerisk.selective.registry import SELECTORS, get_selector

    # the built-ins first, then any selector added by the recipe that needs no confidence
    without = [m for m in SELECTORS if get_selector(m).needs in (None, "uncertainty")]
    assert without[:3] == ["vanilla", "naive", "scope"]
    assert list(tab["method"].cat.categories) == without
    assert list(tab.columns) == [
        "method",
        "alpha",
        "split",
        "coverage",
        "risk",
        "n_accepted",
        "n_errors",
        "threshold",
    ]
    summ = summarize_protocol(tab)
    v = summ.loc["vanilla"]
    np.testing.assert_allclose(v["coverage_mean"], 1.0)
    err = (s.pred != (d.gold == "A").to_numpy()).astype(float)
    assert v["risk_mean"].iloc[0] == pytest.approx(
        tab.query("method == 'vanilla' and alpha == .05")["risk"].mean()
    )
    assert 0 < v["risk_mean"].iloc[0] < 1 and abs(v["risk_mean"].iloc[0] - err.mean()) < 0.1
    assert (summ["n_splits"] == 7).all()
    with pytest.raises(ValueError, match="needs confidence"):
        split_protocol(s.score, s.pred, d.gold, methods=("toe",), n_splits=2)
    with pytest.raises(ValueError, match="unknown (method|selector)"):
        split_protocol(s.score, s.pred, d.gold, methods=("oracle",), n_splits=2)
    with pytest.raises(ValueError, match="confidence has 3 entries"):
        split_protocol(s.score, s.pred, d.gold, confidence=[0.5, 0.6, 0.7], n_splits=2)


@pytest.mark.slow
@pytest.mark.parametrize(("n", "seed"), [(2000, 0), (400, 1)])
def test_scope_guarantee_on_simulated_pairs(n, seed):
    d = simulate_pairs(n=n, seed=seed)
    s = bpe(d.logit_fwd, d.logit_rev)
    summ = summarize_protocol(
        split_protocol(s.score, s.pred, d.gold, methods=("scope",), n_splits=1000, seed=seed)
    )
    assert _mc_ok(summ).all(), summ
    # and it is not vacuous: SCOPE accepts a real share at alpha = .25
    assert summ.loc[("scope", 0.25), "coverage_mean"] > 0.5


@pytest.mark.slow
def test_naive_and_heuristic_fail_where_scope_holds():
    # uninformative scores, 20% errors, small calibration sets, over-confident confidences
    rng = np.random.default_rng(7)
    n = 120
    err = rng.random(n) < 0.2
    gold = np.where(err, "B", "A")
    score = rng.random(n)
    conf = np.full(n, 0.97)
    summ = summarize_protocol(
        split_protocol(
            score,
            np.ones(n, int),
            gold,
            confidence=conf,
            alphas=(0.1,),
            n_splits=1000,
            methods=("heuristic", "naive", "scope"),
        )
    )
    se = summ["risk_se"]
    assert summ.loc[("heuristic", 0.1), "risk_mean"] > 0.1 + Z * se.loc[("heuristic", 0.1)]
    assert summ.loc[("naive", 0.1), "risk_mean"] > 0.1 + Z * se.loc[("naive", 0.1)]
    assert _mc_ok(summ).all(), summ


def test_pooled_risk_se_is_the_ratio_estimators_delta_method_error():
    # four splits of one method: errors V_b among accepted R_b; r = sum V / sum R
    v, r = np.array([1.0, 0.0, 3.0, 2.0]), np.array([10.0, 0.0, 20.0, 10.0])
    tab = pd.DataFrame(
        {
            "method": "scope",
            "alpha": 0.1,
            "split": range(4),
            "coverage": r / 40,
            "risk": np.where(r > 0, v / np.maximum(r, 1), 0.0),
            "n_accepted": r,
            "n_errors": v,
            "threshold": 0.5,
        }
    )
    row = summarize_protocol(tab).loc[("scope", 0.1)]
    ratio = v.sum() / r.sum()
    assert row["pooled_risk"] == pytest.approx(ratio)
    want = np.std(v - ratio * r, ddof=1) / (np.sqrt(4) * r.mean())
    assert row["pooled_risk_se"] == pytest.approx(want)
    assert row["risk_mean"] == pytest.approx(np.mean([0.1, 0.0, 0.15, 0.2]))
