"""Majority vote gives one verdict per item through every API (a hypothesis property test).

``MajorityVote.labels_``, ``MajorityVote.predict``, ``majority_vote`` and ``aggregate`` given the
same votes and probabilities must agree item by item, ties included (one tie rule,
``majority_tie_rule``), whatever the judge order and whichever items fit the aggregator.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judgerisk.aggregators import MajorityVote, aggregate, majority_vote
from judgerisk.aggregators._majority import majority_tie_rule
from judgerisk.panel import to_wide, validate_panel, verdicts

# logits with exact ties (0: half a vote) and pairs whose mean probability is exactly 1/2
_LOGITS = st.sampled_from([-3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 3.0, np.nan])


@st.composite
def panels(draw):
    n_items = draw(st.integers(1, 7))
    n_judges = draw(st.integers(1, 5))
    rows = []
    for i in range(n_items):
        cells = draw(st.lists(_LOGITS, min_size=n_judges, max_size=n_judges))
        if all(np.isnan(c) for c in cells):
            cells[draw(st.integers(0, n_judges - 1))] = draw(st.sampled_from([-1.0, 0.0, 1.0]))
        rows += [(f"i{i}", f"J{j}", m) for j, m in enumerate(cells) if not np.isnan(m)]
    long = pd.DataFrame(rows, columns=["item", "judge", "logit"]).assign(condition="original")
    fit = draw(st.lists(st.sampled_from([f"i{i}" for i in range(n_items)]), unique=True))
    return validate_panel(long), fit


@settings(max_examples=150, deadline=None)
@given(panels(), st.randoms(use_true_random=False))
def test_one_verdict_per_item_through_every_api(drawn, rnd):
    panel, fit = drawn
    votes = verdicts(panel)
    probs = to_wide(panel, value="p")
    est = MajorityVote().fit(votes, probs)
    via_labels = est.labels_
    via_predict = est.predict(votes, probs)
    via_function = majority_vote(votes, probs)["verdict"]
    via_aggregate = aggregate(panel, "majority").set_index("item")["verdict"]
    fit_items = fit or None
    via_split = aggregate(panel, "majority", fit_items=fit_items).set_index("item")["verdict"]
    order = list(votes.columns)
    rnd.shuffle(order)
    via_shuffled = MajorityVote().fit(votes[order], probs[order[::-1]]).labels_
    expected = via_labels.to_dict()
    for other in (via_predict, via_function, via_aggregate, via_split, via_shuffled):
        assert other.to_dict() == expected
    # and the verdict is the documented rule
    share = votes.mean(axis=1)
    pbar = probs.where(votes.notna()).mean(axis=1).round(12)
    rule = np.where(share == 0.5, pbar > 0.5, share > 0.5)
    assert [v == "A" for v in via_labels] == rule.tolist()


def test_predict_without_probs_is_the_votes_only_rule():
    votes = pd.DataFrame({"J1": [1.0, 0.0], "J2": [0.0, 0.0]}, index=["tie", "b"])
    probs = pd.DataFrame({"J1": [0.9, 0.2], "J2": [0.4, 0.3]}, index=votes.index)
    est = MajorityVote().fit(votes, probs)
    assert est.predict(votes, probs).tolist() == est.labels_.tolist() == ["A", "B"]
    with pytest.warns(UserWarning, match="1 item.s. tie in the majority vote"):
        assert est.predict(votes).tolist() == ["B", "B"]
    with pytest.warns(UserWarning, match="tie in the majority vote"):
        assert majority_tie_rule([0.5, 1.0]).tolist() == ["B", "A"]


def test_probs_missing_where_a_vote_is_observed_is_an_error():
    votes = pd.DataFrame({"J1": [1.0], "J2": [0.0]}, index=["x"])
    probs = pd.DataFrame({"J1": [0.9]}, index=["x"])
    for call in (
        lambda: MajorityVote().fit(votes, probs),
        lambda: MajorityVote().fit(votes).predict(votes, probs),
        lambda: majority_vote(votes, probs),
    ):
        with pytest.raises(ValueError, match="judge 'J2'"):
            call()
