"""Contract tests: every registered aggregator and risk score passes the same checks.

Like MAPIE's ``test_common.py``: the lists below are read from the registries, so a newly
registered rule or score is checked here without touching this file.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judgerisk._splits import split_items
from judgerisk.aggregators import AGGREGATORS, aggregate, get_aggregator, make_aggregator
from judgerisk.families import FAMILIES
from judgerisk.panel import ORIGINAL, to_wide, verdicts
from judgerisk.risk.registry import (
    COMPARED,
    COMPONENTS,
    RISK_SCORES,
    get_risk_score,
    risk_score_table,
)
from judgerisk.risk.scur import scur_scores
from judgerisk.simulate import simulate_panel

FAST_SCUR = {"lmm_params": {"max_iter": 60, "n_restarts": 1}}


@pytest.fixture(scope="module")
def panel():
    from judgerisk.simulate import simulate_panel

    return simulate_panel(n_items=120, n_judges=5, seed=7).data


def _table(panel, cls):
    return to_wide(panel, "p" if cls.uses == "p" else "verdict", ORIGINAL).astype(float)


# --------------------------------------------------------------------------- aggregators
@pytest.mark.parametrize("name", list(AGGREGATORS))
def test_aggregator_contract(name, panel):
    cls = get_aggregator(name)
    table = _table(panel, cls)
    est = make_aggregator(name, random_state=0)
    with pytest.raises(ValueError, match="not fitted"):
        est.posterior(table)
    assert est.fit(table) is est
    post = est.posterior_
    assert post.index.equals(table.index) and post.between(0, 1).all()
    assert set(est.labels_) <= {"A", "B"} and est.labels_.index.equals(table.index)
    assert est.fit_predict(table).equals(est.labels_)
    np.testing.assert_allclose(est.fit_posterior(table), post)
    again = make_aggregator(name, random_state=0).fit(table).posterior_
    np.testing.assert_array_equal(again.to_numpy(), post.to_numpy())  # deterministic
    new = est.posterior(table.iloc[:10])
    assert new.index.equals(table.index[:10]) and new.between(0, 1).all()
    assert est.predict(table.iloc[:10]).isin(["A", "B"]).all()
    extra = table.iloc[:5].assign(stranger=1.0)
    with pytest.raises(ValueError, match="not seen in fit"):
        est.posterior(extra)
    out = aggregate(panel, name, random_state=0)
    assert list(out.columns) == ["item", "verdict", "posterior"] and len(out) == len(table)


@pytest.mark.parametrize("name", list(AGGREGATORS))
def test_aggregator_fit_items(name, panel):
    items = verdicts(panel, ORIGINAL).index
    fit = items[::2]
    out = aggregate(panel, name, fit_items=fit, random_state=0)
    assert out["item"].tolist() == items.tolist() and out["posterior"].between(0, 1).all()
    if not get_aggregator(name).has_parameters:  # no parameters: the fit split changes nothing
        full = aggregate(panel, name)
        assert out["verdict"].tolist() == full["verdict"].tolist()


def test_unknown_aggregator():
    with pytest.raises(ValueError, match="unknown aggregation method"):
        get_aggregator("nope")


# --------------------------------------------------------------------------- risk scores
@pytest.fixture(scope="module")
def scur(panel):
    return scur_scores(panel, seed=0, **FAST_SCUR)


@pytest.fixture(scope="module")
def family_scur():
    """SCUR of a panel with a condition pair of every registered perturbation family."""
    conditions = ("original", "swap", *(f"{name}1" for name in FAMILIES if name != "order"))
    sim = simulate_panel(n_items=120, n_judges=4, seed=0, conditions=conditions)
    return scur_scores(sim.data, seed=0, **FAST_SCUR)


@pytest.mark.parametrize("name", list(RISK_SCORES))
def test_risk_score_contract(name, panel, scur, family_scur):
    score = get_risk_score(name)
    assert score.label and score.color.startswith("#")
    split = split_items(verdicts(panel, ORIGINAL).index, 0)
    fit = split.index[split.to_numpy() == "fit"]
    target = split.index[split.to_numpy() == "evaluation"]
    if score.compute is None:  # SCUR and its components come out of scur_scores
        table = scur.scores("evaluation")
        if name not in table.columns:  # a family the paper's panel lacks
            table = family_scur.scores("evaluation")
            target = table.index
        assert name in table.columns
        values = table[name].reindex(target)
        with pytest.raises(ValueError, match="scur_scores"):
            risk_score_table(pd.DataFrame(), pd.DataFrame(), fit, target, [name])
    else:
        probs = to_wide(panel, "p", ORIGINAL)
        votes = verdicts(panel, ORIGINAL)
        # the whole panel (every condition) goes to the scores that read it
        values = risk_score_table(probs, votes, fit, target, [name], panel=panel)[name]
        again = risk_score_table(probs, votes, fit, target, [name], panel=panel)[name]
        pd.testing.assert_series_equal(values, again)  # deterministic
        if score.needs_fit:
            with pytest.raises(ValueError, match="fit_items"):
                risk_score_table(probs, votes, None, target, [name], panel=panel)
    assert values.index.equals(target) and np.isfinite(values.to_numpy(float)).all()


def test_registry_views():
    shipped = ["S_order", "S_rubric", "S_label", "S_format", "S_verbosity"]
    # one S_ component per registered family: the shipped ones, then any a recipe adds
    assert COMPARED[0] == "scur" and list(COMPONENTS) == ["U", "C", *(f"S_{f}" for f in FAMILIES)]
    assert list(COMPONENTS)[2:7] == shipped
    assert set(COMPARED) | set(COMPONENTS) == set(RISK_SCORES)
    with pytest.raises(ValueError, match="unknown risk score"):
        get_risk_score("nope")
