"""Tests of judgerisk._book.studies.consensus: subset overview, per-method matched groups, ties."""

import numpy as np
import pandas as pd
import pytest

from judgerisk._book.studies.consensus import (
    consensus_overview,
    distinct_within_pattern,
    matched_groups_by_method,
)
from judgerisk.engine.analysis import aggregate_errors
from judgerisk.panel import verdicts
from judgerisk.risk.metrics import matched_vote_auroc, vote_patterns
from judgerisk.simulate import simulate_panel


@pytest.fixture(scope="module")
def panel():
    return simulate_panel(n_items=300, seed=3).data


def test_overview_counts_match_the_masks_by_hand(panel):
    table = consensus_overview(panel)
    errors = aggregate_errors(panel, "majority")
    votes = verdicts(panel)
    share = votes.mean(axis=1)
    hc = np.maximum(share, 1 - share) >= 0.8 - 1e-9
    assert table.loc["all items", "items"] == len(errors)
    assert table.loc["all items", "errors"] == int(errors.sum())
    assert table.loc["high consensus (votes)", "items"] == int(hc.sum())
    assert table.loc["high consensus (votes)", "errors"] == int(errors[hc].sum())
    assert table["items"].dtype.kind == "i" and table["errors"].dtype.kind == "i"
    rate = table["errors"] / table["items"]
    assert np.allclose(table["error rate"], rate)
    # a subset is never bigger than the whole
    assert (table["items"] <= table.loc["all items", "items"]).all()


def test_matched_groups_by_method_weighted_mean_is_the_matched_auroc(panel):
    errors = aggregate_errors(panel, "majority")
    votes = verdicts(panel)
    rng = np.random.default_rng(0)
    scores = pd.DataFrame(
        {"noise": rng.random(len(errors)), "tied": vote_patterns(votes).str.count("A")},
        index=errors.index,
    )
    long = matched_groups_by_method(votes, errors, scores)
    assert set(long["method"]) == {"noise", "tied"}
    for m in ("noise", "tied"):
        g = long[(long["method"] == m) & long["usable"]]
        mean = np.average(g["auroc"], weights=g["weight"])
        assert mean == pytest.approx(matched_vote_auroc(scores[m], errors, votes))
    tied = long[(long["method"] == "tied") & long["usable"]]
    assert np.allclose(tied["auroc"], 0.5)  # a function of the votes only: all ties
    with pytest.raises(ValueError, match="no column"):
        matched_groups_by_method(votes, errors, scores, methods=["nope"])


def test_distinct_within_pattern_is_one_for_vote_functions(panel):
    votes = verdicts(panel)
    scores = pd.DataFrame(
        {"votes": votes.sum(axis=1), "free": np.arange(len(votes), dtype=float)},
        index=votes.index,
    )
    distinct = distinct_within_pattern(scores, votes)
    assert distinct["votes"] == 1
    assert distinct["free"] == vote_patterns(votes).value_counts().max()
    with pytest.raises(ValueError, match="votes lack"):
        distinct_within_pattern(scores, votes.iloc[:10])
