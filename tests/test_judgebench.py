"""JudgeBench loaders (reward pairs, reward panel, LLM verdicts) and SCOPE on real labels."""

import numpy as np
import pandas as pd
import pytest

from judgerisk.datasets import data_root
from judgerisk.panel import validate_panel
from judgerisk.selective.confidence import bpe, predictive_probability, swap_and_aggregate
from judgerisk.selective.protocol import split_protocol, summarize_protocol

ROOT = data_root(required=False)
HAVE = ROOT is not None and (ROOT / "judgebench" / "judgments_long.csv").is_file()
pytestmark = [
    pytest.mark.data,
    pytest.mark.skipif(
        not HAVE,
        reason="JudgeBench data not found under the data folder "
        "($JUDGERISK_DATA or ../shared/data/judgebench)",
    ),
]

if HAVE:
    from judgerisk.datasets.judgebench import (
        LLM_JUDGES,
        REWARD_MODELS,
        judgebench_reward_judges,
        load_judgebench_judgments,
        load_judgebench_panel,
        load_judgebench_reward_pairs,
        load_judgebench_verdicts,
        model_name,
    )

Z = 4.0  # Monte-Carlo tolerance, derived in tests/test_protocol.py


def test_reward_pairs_orientation_and_gold():
    raw = load_judgebench_judgments()
    assert sorted(REWARD_MODELS) == judgebench_reward_judges()
    pairs = load_judgebench_reward_pairs(REWARD_MODELS[0])
    assert list(pairs.columns) == ["item", "logit_fwd", "logit_rev", "gold", "source"]
    assert len(pairs) == 350 and pairs["item"].is_unique and set(pairs["gold"]) == {"A", "B"}
    one = raw[(raw.judge_model == REWARD_MODELS[0]) & (raw.pair_id == pairs.item[0])]
    g1, g2 = one[one.game == 1].iloc[0], one[one.game == 2].iloc[0]
    assert pairs.logit_fwd[0] == g1.score_first_shown - g1.score_second_shown
    # game 2 shows B first: canonical = second shown (A) - first shown (B)
    assert pairs.logit_rev[0] == g2.score_second_shown - g2.score_first_shown
    with pytest.raises(ValueError, match="unknown reward model"):
        load_judgebench_reward_pairs("o1-mini-2024-09-12")


def test_rewards_are_order_invariant_so_bpe_equals_predictive_probability():
    pairs = load_judgebench_reward_pairs("internlm_internlm2-20b-reward")
    np.testing.assert_array_equal(pairs.logit_fwd, pairs.logit_rev)
    b, p = bpe(pairs.logit_fwd, pairs.logit_rev), predictive_probability(pairs.logit_fwd)
    np.testing.assert_array_equal(b.score, p.score)
    np.testing.assert_array_equal(b.pred, p.pred)
    assert (swap_and_aggregate(pairs.logit_fwd, pairs.logit_rev).confidence == 1).all()
    acc = (b.pred == (pairs.gold == "A")).mean()
    assert 0.55 < acc < 0.75  # PROVENANCE: game-1 accuracy .63


def test_reward_panel_is_valid():
    panel = load_judgebench_panel()
    assert len(panel) == 5 * 350 * 2
    assert set(panel["condition"]) == {"original", "swap"}
    pd.testing.assert_frame_equal(panel, validate_panel(panel))
    assert panel["logit"].abs().max() <= 20
    sub = load_judgebench_panel(judges=[REWARD_MODELS[1]])
    assert set(sub["judge"]) == {"Skywork-Reward-Llama-3.1-8B"}  # the model name, no org
    assert set(panel["judge"]) == {model_name(k) for k in REWARD_MODELS}
    by_name = load_judgebench_panel(judges=["Skywork-Reward-Llama-3.1-8B"])
    pd.testing.assert_frame_equal(sub, by_name)
    pairs = load_judgebench_reward_pairs("internlm2-20b-reward")
    pd.testing.assert_frame_equal(
        pairs, load_judgebench_reward_pairs("internlm_internlm2-20b-reward")
    )
    assert model_name("o1-mini-2024-09-12") == "o1-mini-2024-09-12"


def test_llm_verdicts_mapped_to_original_frame():
    v = load_judgebench_verdicts()
    assert set(v["judge"]) == set(LLM_JUDGES) and len(v) == 2 * (350 + 270)
    swap = v[v.condition == "swap"]
    flips = {"A>>B": "B>>A", "A>B": "B>A", "A=B": "A=B", "B>A": "A>B", "B>>A": "A>>B"}
    assert (swap["verdict"] == swap["verdict_presented"].map(flips)).all()
    orig = v[v.condition == "original"]
    assert (orig["verdict"] == orig["verdict_presented"]).all()
    assert set(v["strength"].dropna().unique()) <= {-2, -1, 0, 1, 2}
    assert ((v["strength"] > 0) == (v["winner"] == "A")).all()
    o1 = orig[orig.judge == "o1-mini-2024-09-12"]
    assert (o1["winner"] == o1["gold"]).mean() == pytest.approx(0.71, abs=0.01)


@pytest.mark.slow
@pytest.mark.parametrize(
    "judge",
    [
        "Skywork_Skywork-Reward-Gemma-2-27B",
        "internlm_internlm2-20b-reward",
        "Ray2333_GRM-Gemma-2B-rewardmodel-ft",
    ],
)
def test_scope_guarantee_on_judgebench_rewards(judge):
    pairs = load_judgebench_reward_pairs(judge)
    s = bpe(pairs.logit_fwd, pairs.logit_rev)
    summ = summarize_protocol(
        split_protocol(s.score, s.pred, pairs.gold, methods=("scope",), n_splits=1000)
    ).loc["scope"]
    assert (summ["risk_mean"] <= summ.index + Z * summ["risk_se"].fillna(0)).all(), summ
    assert summ.loc[0.25, "coverage_mean"] > 0.1
