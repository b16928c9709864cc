"""Tests of judgerisk.risk.metrics: AUROC, matched-vote AUROC, consensus masks, kept accuracy."""

import math

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from judgerisk.risk.metrics import (
    auroc,
    auroc_table,
    consensus_share,
    high_consensus,
    matched_vote_auroc,
    matched_vote_groups,
    matched_vote_mask,
    probability_high_consensus,
    retention_table,
    vote_patterns,
)


def test_auroc_by_hand_and_ties_count_half():
    assert auroc([0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1]) == pytest.approx(0.75)
    # error at 2 vs non-errors at 1 (win) and 2 (tie): (1 + 0.5) / 2
    assert auroc([1.0, 2.0, 2.0], [0, 1, 0]) == pytest.approx(0.75)
    assert auroc([3.0, 3.0, 3.0, 3.0], [0, 1, 0, 1]) == 0.5


def test_auroc_aligns_series_by_index_and_undefined_for_one_class():
    errors = pd.Series([0, 1, 0, 1], index=["a", "b", "c", "d"])
    scores = pd.Series([0.9, 0.2, 0.1, 0.5], index=["b", "a", "d", "c"])  # b=.9, d=.1
    # errors b (.9), d (.1); non-errors a (.2), c (.5): pairs b>a, b>c, d<a, d<c -> 2/4
    assert auroc(scores, errors) == pytest.approx(0.5)
    assert auroc(scores.reindex(["a", "b", "c", "d"]), errors) == pytest.approx(0.5)
    assert math.isnan(auroc([0.1, 0.2], [0, 0]))
    assert math.isnan(auroc([0.1, 0.2], [1, 1]))


def test_auroc_table_equals_auroc_per_column():
    rng = np.random.default_rng(2)
    errors = pd.Series((rng.random(60) < 0.3).astype(int))
    scores = pd.DataFrame({"a": rng.random(60), "b": rng.integers(0, 3, 60), "c": 1.0})
    table = auroc_table(scores, errors)
    for col in scores:
        assert table[col] == pytest.approx(auroc(scores[col], errors))
    assert table["c"] == 0.5
    assert auroc_table(scores, errors * 0).isna().all()
    with pytest.raises(ValueError, match="not finite in columns"):
        auroc_table(scores.assign(b=np.nan), errors)


def test_auroc_rejects_bad_input():
    with pytest.raises(ValueError, match="0/1"):
        auroc([0.1, 0.2], [0, 2])
    with pytest.raises(ValueError, match="not finite"):
        auroc([0.1, np.nan], [0, 1])
    with pytest.raises(ValueError, match="lack"):
        auroc(pd.Series([0.1], index=["a"]), pd.Series([0, 1], index=["a", "b"]))
    with pytest.raises(ValueError, match="missing"):
        auroc([0.1, 0.2], pd.Series([0, np.nan]))


@pytest.fixture
def matched_example():
    # judges J1..J3; three vote patterns
    votes = pd.DataFrame(
        {
            "J1": [1, 1, 1, 1, 0, 0, 0, 1, 1],
            "J2": [1, 1, 1, 1, 0, 0, 0, 0, 0],
            "J3": [0, 0, 0, 0, 0, 0, 0, np.nan, np.nan],
        },
        index=list("abcdefghi"),
        dtype=float,
    )
    errors = pd.Series([1, 0, 0, 1, 0, 0, 0, 1, 0], index=votes.index)
    scores = pd.Series([0.9, 0.5, 0.7, 0.6, 0.1, 0.2, 0.3, 0.4, 0.4], index=votes.index)
    return votes, errors, scores


def test_matched_vote_auroc_by_hand(matched_example):
    votes, errors, scores = matched_example
    # group AAB (a,b,c,d): errors a=.9, d=.6; non-errors b=.5, c=.7
    # -> pairs (a>b, a>c, d>b, d<c) = 3/4
    # group BBB (e,f,g): no error -> dropped
    # group AB. (h,i): error h=.4, non-error i=.4 -> tie -> 1/2
    expected = (4 * 0.75 + 1 * 0.5) / (4 + 1)
    assert matched_vote_auroc(scores, errors, votes) == pytest.approx(expected)
    # equals the n+ n- weighted mean of sklearn's per-group AUROC
    g1, g2 = list("abcd"), list("hi")
    sk = (4 * roc_auc_score(errors[g1], scores[g1]) + 1 * roc_auc_score(errors[g2], scores[g2])) / 5
    assert matched_vote_auroc(scores, errors, votes) == pytest.approx(sk)


def test_matched_vote_score_constant_within_groups_is_exactly_half(matched_example):
    votes, errors, _ = matched_example
    rng = np.random.default_rng(0)
    # any function of the vote vector is constant within a group
    const = votes.fillna(0.5).to_numpy() @ rng.normal(size=3)
    assert matched_vote_auroc(pd.Series(const, index=votes.index), errors, votes) == 0.5


def test_matched_vote_groups_table(matched_example):
    votes, errors, scores = matched_example
    table = matched_vote_groups(votes, errors, scores).set_index("pattern")
    assert table.loc["AAB", ["n_items", "n_errors", "n_correct", "weight"]].tolist() == [4, 2, 2, 4]
    assert table.loc["AB.", "weight"] == 1 and bool(table.loc["AB.", "usable"])
    assert not bool(table.loc["BBB", "usable"]) and np.isnan(table.loc["BBB", "auroc"])
    assert table.loc["AAB", "auroc"] == pytest.approx(0.75)
    assert vote_patterns(votes).tolist() == ["AAB"] * 4 + ["BBB"] * 3 + ["AB."] * 2
    mask = matched_vote_mask(votes, errors)
    assert mask[mask].index.tolist() == list("abcdhi")


def test_matched_vote_auroc_nan_without_usable_group():
    votes = pd.DataFrame({"J1": [1.0, 1.0, 0.0], "J2": [1.0, 1.0, 0.0]})
    errors = pd.Series([0, 0, 1])
    assert math.isnan(matched_vote_auroc(pd.Series([0.1, 0.2, 0.3]), errors, votes))
    with pytest.raises(ValueError, match="1.0/0.5/0.0/NaN"):
        matched_vote_auroc(pd.Series([0.1, 0.2, 0.3]), errors, votes.replace(1.0, 2.0))


def test_high_consensus_threshold_and_missing_votes():
    votes = pd.DataFrame(
        {
            "J1": [1, 1, 1, 0, 1],
            "J2": [1, 1, 1, 0, 1],
            "J3": [1, 1, 0, 0, 1],
            "J4": [1, 0, 0, 1, np.nan],
            "J5": [0, 0, 0, 0, 0],
        },
        dtype=float,
    )
    # shares: 4/5, 3/5, 3/5 (B), 4/5 (B), 3/4
    np.testing.assert_allclose(consensus_share(votes), [0.8, 0.6, 0.6, 0.8, 0.75])
    assert high_consensus(votes).tolist() == [True, False, False, True, False]
    assert high_consensus(votes, threshold=0.75).tolist() == [True, False, False, True, True]
    with pytest.raises(ValueError, match="no verdict"):
        high_consensus(pd.DataFrame({"J1": [np.nan]}))


def test_probability_high_consensus_equals_low_pe():
    probs = pd.DataFrame({"J1": [0.9, 0.7, 0.1, 0.5], "J2": [0.7, 0.88, 0.3, 0.95]})
    # p_bar = .8, .79, .2, .725
    assert probability_high_consensus(probs).tolist() == [True, False, True, False]
    pbar = probs.mean(axis=1)
    assert probability_high_consensus(pbar).tolist() == [True, False, True, False]
    h = -(0.8 * np.log2(0.8) + 0.2 * np.log2(0.2))
    pe = -(pbar * np.log2(pbar) + (1 - pbar) * np.log2(1 - pbar))
    assert probability_high_consensus(pbar).tolist() == (pe <= h + 1e-12).tolist()


def test_retention_table():
    risk = pd.Series([0.1, 0.9, 0.2, 0.8, 0.5, 0.3, 0.7, 0.4, 0.6, 0.05])
    errors = pd.Series([0, 1, 0, 1, 0, 1, 1, 0, 0, 0])
    table = retention_table(risk, errors, fractions=(1.0, 0.8, 0.5, 0.25))
    assert table["n_kept"].tolist() == [10, 8, 5, 3]
    # all: 6/10; lowest 5: .05,.1,.2,.3,.4 -> errors 0,0,0,1,0; lowest 3: all correct
    assert table["accuracy"].tolist() == pytest.approx([0.6, 0.75, 0.8, 1.0])
    assert table["gain"].iloc[0] == 0.0
    with pytest.raises(ValueError, match="fraction"):
        retention_table(risk, errors, (0.0,))
    with pytest.raises(ValueError, match="ties"):
        retention_table(risk, errors, ties="random")


def test_retention_ties_average_or_stable():
    """The issue's example: one tie rule gives 0.75, the other 0.667, and the caller chooses."""
    risk, err = [0, 0, 0, 0, 1], [1, 0, 0, 0, 0]
    assert retention_table(risk, err, (0.6,))["accuracy"].iloc[0] == pytest.approx(0.75)
    stable = retention_table(risk, err, (0.6,), ties="stable")
    assert stable["accuracy"].iloc[0] == pytest.approx(2 / 3)
    tied = pd.Series([0.5, 0.5, 0.5, 0.5])
    assert retention_table(tied, [1, 0, 0, 0], (0.5,), ties="stable")["accuracy"][0] == 0.5
    assert retention_table(tied, [0, 0, 1, 1], (0.5,), ties="stable")["accuracy"][0] == 1.0
    # "average" does not depend on the order of tied items
    assert retention_table(tied, [1, 0, 0, 0], (0.5,))["accuracy"][0] == pytest.approx(0.75)
    assert retention_table(tied, [0, 0, 0, 1], (0.5,))["accuracy"][0] == pytest.approx(0.75)
