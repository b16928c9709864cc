"""Tests of judgerisk.risk.baselines: PE, VE, MSP (by hand) and DS entropy (frozen Dawid–Skene)."""

import math

import numpy as np
import pandas as pd
import pytest

from judgerisk.aggregators.dawid_skene import DawidSkene
from judgerisk.panel import verdicts
from judgerisk.risk.baselines import (
    BASELINES,
    baseline_scores,
    binary_entropy,
    ds_entropy,
    mean_probability,
    msp,
    pe,
    ve,
)
from judgerisk.simulate import simulate_panel

# 3 items x 3 judges x 2 conditions; the swap condition must be ignored by every baseline.
P_ORIG = {"i1": [0.9, 0.8, 0.3], "i2": [0.6, 0.4, 0.5], "i3": [0.1, 0.2, 0.05]}
P_SWAP = {"i1": [0.2, 0.5, 0.7], "i2": [0.99, 0.01, 0.3], "i3": [0.6, 0.6, 0.6]}


def _tiny(p_swap=P_SWAP, gold=("A", "B", "B")):
    rows = []
    for (item, po), g in zip(P_ORIG.items(), gold, strict=True):
        for j in range(3):
            rows.append(
                {"item": item, "judge": f"J{j + 1}", "condition": "original", "p": po[j], "gold": g}
            )
            rows.append(
                {
                    "item": item,
                    "judge": f"J{j + 1}",
                    "condition": "swap",
                    "p": p_swap[item][j],
                    "gold": g,
                }
            )
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def sim_panel():
    return simulate_panel(n_items=300, seed=3).data


def _h2(p):
    return 0.0 if p in (0.0, 1.0) else -(p * math.log2(p) + (1 - p) * math.log2(1 - p))


def test_binary_entropy_values():
    np.testing.assert_allclose(binary_entropy([0.0, 0.5, 1.0, 0.8]), [0, 1, 0, _h2(0.8)])
    assert binary_entropy(0.5, base=math.e) == pytest.approx(math.log(2))
    assert not np.signbit(binary_entropy([0.0, 1.0])).any()


def test_tiny_panel_by_hand():
    panel = _tiny()
    # PE: entropy of the mean probability
    expected_pe = [_h2((0.9 + 0.8 + 0.3) / 3), _h2((0.6 + 0.4 + 0.5) / 3), _h2(0.35 / 3)]
    np.testing.assert_allclose(pe(panel).loc[["i1", "i2", "i3"]], expected_pe, rtol=1e-9)
    assert pe(panel)["i2"] == pytest.approx(1.0)
    # VE: i1 votes A,A,B; i2 votes A,B,tie (p = .5 -> logit 0 -> half a vote each: share 1/2);
    # i3 votes B,B,B
    np.testing.assert_allclose(ve(panel).loc[["i1", "i2", "i3"]], [_h2(2 / 3), 1.0, 0.0])
    # MSP: mean over judges of 1 - max(p, 1 - p)
    expected_msp = [(0.1 + 0.2 + 0.3) / 3, (0.4 + 0.4 + 0.5) / 3, (0.1 + 0.2 + 0.05) / 3]
    np.testing.assert_allclose(msp(panel).loc[["i1", "i2", "i3"]], expected_msp, rtol=1e-9)
    np.testing.assert_allclose(mean_probability(panel), [2 / 3, 0.5, 0.35 / 3])


def test_only_the_original_condition_counts():
    other = {k: [1 - p for p in v] for k, v in P_SWAP.items()}
    a, b = _tiny(), _tiny(p_swap=other)
    for f in (pe, ve, msp):
        pd.testing.assert_series_equal(f(a), f(b))


def test_missing_judge_averages_over_available_judges():
    panel = _tiny()
    drop = (panel["item"] == "i1") & (panel["judge"] == "J3")
    panel = panel.loc[~drop]
    assert pe(panel)["i1"] == pytest.approx(_h2(0.85))
    assert ve(panel)["i1"] == 0.0
    assert msp(panel)["i1"] == pytest.approx(0.15)


def test_ds_entropy_is_frozen_dawid_skene(sim_panel):
    panel = sim_panel
    items = np.sort(panel["item"].unique())
    fit = items[: len(items) // 2]
    score = ds_entropy(panel, fit)
    assert score.index.tolist() == items[len(items) // 2 :].tolist()
    votes = verdicts(panel)
    ds = DawidSkene().fit(votes.loc[fit])
    rho = ds.posterior(votes.loc[score.index])
    np.testing.assert_allclose(score, binary_entropy(rho), atol=1e-12)
    # identical vote vectors give bit-identical values
    key = votes.loc[score.index].astype(str).agg("".join, axis=1)
    assert (score.groupby(key).nunique() == 1).all()
    # explicit items may include fit items; fit split must not be empty
    assert len(ds_entropy(panel, fit, items=items[:5])) == 5
    with pytest.raises(ValueError, match="empty"):
        ds_entropy(panel, [])
    with pytest.raises(ValueError, match="not in the panel"):
        ds_entropy(panel, [-1])


def test_ranges_on_simulated_panel(sim_panel):
    items = np.sort(sim_panel["item"].unique())
    table = baseline_scores(sim_panel, fit_items=items[::2])
    assert list(table.columns) == list(BASELINES)
    assert len(table) == len(items) - len(items[::2])
    for col in ("pe", "ve", "ds_entropy"):
        assert table[col].between(0, 1).all()
    assert table["msp"].between(0, 0.5).all()
    assert table["pe"].nunique() > 10
    with pytest.raises(ValueError, match="unknown baseline"):
        baseline_scores(sim_panel, methods=("entropy",))
    with pytest.raises(ValueError, match="fit_items"):
        baseline_scores(sim_panel, methods=("ds_entropy",))


def test_scrambling_gold_leaves_baselines_unchanged(sim_panel):
    rng = np.random.default_rng(1)
    items = np.sort(sim_panel["item"].unique())
    new_gold = pd.Series(rng.choice(["A", "B"], size=len(items)), index=items)
    scrambled = sim_panel.assign(gold=sim_panel["item"].map(new_gold))
    no_gold = sim_panel.drop(columns="gold")
    fit = items[: len(items) // 2]
    ref = baseline_scores(sim_panel, fit_items=fit)
    pd.testing.assert_frame_equal(baseline_scores(scrambled, fit_items=fit), ref)
    pd.testing.assert_frame_equal(baseline_scores(no_gold, fit_items=fit), ref)


def test_equal_vote_multisets_give_exactly_equal_scores():
    # smoothed 0/1 verdicts (as in LLMBar): the same multiset in another judge order must tie
    eps = 0.05
    rows = []
    patterns = {0: [1, 1, 0, 1, 0, 0], 1: [0, 0, 1, 1, 1, 0], 2: [1, 0, 1, 0, 1, 0]}
    for item, votes in patterns.items():
        for j, v in enumerate(votes):
            rows.append((item, f"J{j}", "original", 1 - eps if v else eps))
    panel = pd.DataFrame(rows, columns=["item", "judge", "condition", "p"])
    for score in (pe(panel), msp(panel), mean_probability(panel)):
        assert score.nunique() == 1, score.to_dict()


def test_pe_ties_unanimous_a_and_unanimous_b_like_ve():
    # smoothed verdicts: p = 1 - eps (A) or eps (B); 5 or 6 judges, some items unanimous each way
    eps = 0.05
    rows = []
    patterns = {
        "i0": [1] * 6,
        "i1": [0] * 6,
        "i2": [0] * 5,
        "i3": [1] * 5,
        "i4": [1, 0, 1, 1, 1, 1],
    }
    for item, ys in patterns.items():
        for j, y in enumerate(ys):
            p = eps + (1 - 2 * eps) * y
            rows.append(
                {
                    "item": item,
                    "judge": f"j{j}",
                    "condition": "original",
                    "logit": math.log(p / (1 - p)),
                    "p": p,
                }
            )
    panel = pd.DataFrame(rows)
    scores_pe, scores_ve = pe(panel), ve(panel)
    assert scores_pe[["i0", "i1", "i2", "i3"]].nunique() == 1
    assert (scores_pe.rank() == scores_ve.rank()).all()
