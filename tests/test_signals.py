"""Tests of the SCUR risk signals, their frozen reference ECDFs and the noisy-OR (METHODS §3–4)."""

import math
import warnings

import numpy as np
import pandas as pd
import pytest

from judgerisk.panel import validate_panel
from judgerisk.risk._ecdf import FrozenECDF
from judgerisk.risk.explain import explain, riskiest
from judgerisk.risk.scur import ScurResult, scur_scores
from judgerisk.risk.signals import (
    Z_FLOOR,
    binary_entropy,
    combine_scur,
    signal_c,
    signal_s,
    signal_u,
)
from judgerisk.simulate import simulate_panel

L3 = math.log(3.0)  # logit of .75
L9 = math.log(9.0)  # logit of .9
LN2 = math.log(2.0)


def _logit(p):
    return math.log(p / (1 - p))


# --------------------------------------------------------------------------- a stand-in LMM
class FixedLMM:
    """The LMM's leave-one-judge-out formulas (METHODS §3) with fixed, given parameters.

    ``fit`` only records the fit items, so the pipeline can be checked against values
    computed by hand, independently of the real estimator.
    """

    def __init__(self, a, b, delta, kappa, sigma, lambda_q=1.0):
        self.a, self.b, self.delta, self.kappa, self.sigma = a, b, delta, kappa, sigma
        self.lambda_q = lambda_q
        self.fit_calls = 0

    def fit(self, panel):
        self.fit_calls += 1
        self.q_ = pd.Series(0.0, index=pd.Index(sorted(pd.unique(panel["item"]))))
        self.a_ = pd.Series(self.a, dtype=float)
        self.b_ = pd.Series(self.b, dtype=float)
        self.delta_ = pd.Series(self.delta, dtype=float)
        self.kappa_ = pd.DataFrame(self.kappa).astype(float)
        self.sigma_ = pd.Series(self.sigma, dtype=float)
        return self

    def _offset(self, j, c):
        return self.b[j] + self.delta.get(c, 0.0) + self.kappa.get(c, {}).get(j, 0.0)

    def predict_loo(self, panel):
        panel = validate_panel(panel, conditions=None)
        q, logit_hat = [], []
        for _, row in panel.iterrows():
            others = panel.loc[(panel["item"] == row["item"]) & (panel["judge"] != row["judge"])]
            num = sum(
                self.a[r.judge] * (r.logit - self._offset(r.judge, r.condition))
                for r in others.itertuples()
            )
            den = sum(self.a[r.judge] ** 2 for r in others.itertuples()) + self.lambda_q
            qi = num / den
            q.append(qi)
            logit_hat.append(
                self.a[row["judge"]] * qi + self._offset(row["judge"], row["condition"])
            )
        logit_hat = np.array(logit_hat)
        return panel.assign(q_loo=q, logit_hat=logit_hat, p_hat=1 / (1 + np.exp(-logit_hat)))


def _plain_lmm(judges, conditions):
    return FixedLMM(
        a=dict.fromkeys(judges, 1.0),
        b=dict.fromkeys(judges, 0.0),
        delta=dict.fromkeys(conditions, 0.0),
        kappa={c: dict.fromkeys(judges, 0.0) for c in conditions},
        sigma=dict.fromkeys(judges, 1.0),
    )


# --------------------------------------------------------------------------- the tiny panel
# 3 items x 3 judges x 2 conditions: observed p and hand-made LOO predictions p_hat.
_P = {  # item -> condition -> (J1, J2, J3)
    1: {"original": (0.75, 0.75, 0.5), "swap": (0.25, 0.75, 0.5)},
    2: {"original": (0.9, 0.9, 0.9), "swap": (0.9, 0.9, 0.9)},
    3: {"original": (0.25, 0.5, 0.75), "swap": (0.75, 0.5, 0.25)},
}
_P_HAT = {
    1: {"original": (0.5, 0.5, 0.5), "swap": (0.5, 0.5, 0.5)},
    2: {"original": (0.9, 0.9, 0.9), "swap": (0.7, 0.7, 0.7)},
    3: {"original": (0.2, 0.2, 0.5), "swap": (0.5, 0.5, 0.5)},
}


@pytest.fixture
def tiny_predictions():
    rows = []
    for item in (3, 1, 2):  # unsorted on purpose
        for c in ("swap", "original"):
            for k, judge in enumerate(("J1", "J2", "J3")):
                p, ph = _P[item][c][k], _P_HAT[item][c][k]
                rows.append(
                    dict(
                        item=item,
                        judge=judge,
                        condition=c,
                        logit=_logit(p),
                        p=p,
                        logit_hat=_logit(ph),
                        p_hat=ph,
                    )
                )
    return pd.DataFrame(rows)


def test_u_hand_computed(tiny_predictions):
    u = signal_u(tiny_predictions)
    assert list(u.index) == [1, 2, 3]
    # p_bar = .5, .9, .3 (original condition only)
    np.testing.assert_allclose(u.to_numpy(), [1.0, 0.4689955935892812, 0.8812908992306927])
    u_all = signal_u(tiny_predictions, conditions="all")
    # p_bar over both conditions = .5, .8, .4
    np.testing.assert_allclose(u_all.to_numpy(), [1.0, 0.7219280948873623, 0.9709505944546686])


def test_c_xent_hand_computed(tiny_predictions):
    c = signal_c(tiny_predictions)
    # item 1: every p_hat = .5, so every cell's cross-entropy is ln 2
    h_99 = -(0.9 * math.log(0.9) + 0.1 * math.log(0.1))
    h_97 = -(0.9 * math.log(0.7) + 0.1 * math.log(0.3))
    h_252 = -(0.25 * math.log(0.2) + 0.75 * math.log(0.8))
    h_52 = -(0.5 * math.log(0.2) + 0.5 * math.log(0.8))
    expected = [LN2, (h_99 + h_97) / 2, (4 * LN2 + h_252 + h_52) / 6]
    np.testing.assert_allclose(c.to_numpy(), expected, rtol=1e-12)
    assert c.name == "C"


def test_c_residual_hand_computed(tiny_predictions):
    sigma = pd.Series({"J1": 1.0, "J2": 2.0, "J3": 1.0})
    c = signal_c(tiny_predictions, kind="residual", sigma=sigma)
    # item 1, logit p_hat = 0: residuals L3, L3/2, 0 in both conditions
    assert c[1] == pytest.approx(2 * (L3**2 + L3**2 / 4) / 6)
    # item 2 original: exact prediction; swap: (L9 - logit .7)^2, sigma 2 for J2
    r = L9 - _logit(0.7)
    assert c[2] == pytest.approx((r**2 + r**2 / 4 + r**2) / 6)
    with pytest.raises(ValueError, match="sigma"):
        signal_c(tiny_predictions, kind="residual")
    with pytest.raises(ValueError, match="J3"):
        signal_c(tiny_predictions, kind="residual", sigma=sigma.drop("J3"))


def test_s_prob_hand_computed(tiny_predictions):
    s = signal_s(tiny_predictions)
    assert list(s.columns) == ["S_order", "S_rubric"]
    np.testing.assert_allclose(s["S_order"].to_numpy(), [1 / 6, 0.0, 1 / 3])
    assert s["S_rubric"].isna().all()  # no rubric pair in the panel: the family is absent


def test_s_debiased_hand_computed(tiny_predictions):
    judges = ("J1", "J2", "J3")
    lmm = FixedLMM(
        a=dict.fromkeys(judges, 1.0),
        b=dict.fromkeys(judges, 0.0),
        delta={"original": 0.0, "swap": 0.4},
        kappa={"original": dict.fromkeys(judges, 0.0), "swap": {"J1": -0.2, "J2": 0.1, "J3": 0.1}},
        sigma={"J1": 1.0, "J2": 2.0, "J3": 1.0},
    ).fit(tiny_predictions)
    s = signal_s(tiny_predictions, kind="debiased", lmm=lmm)
    # item 1: J1 |-L3 - L3 - .2| / 1, J2 |0 - .5| / 2, J3 |0 - .5| / 1
    assert s.loc[1, "S_order"] == pytest.approx((2 * L3 + 0.2 + 0.25 + 0.5) / 3)
    # item 2: no change of the responses, only the offsets: (.2 + .5 / 2 + .5) / 3
    assert s.loc[2, "S_order"] == pytest.approx((0.2 + 0.25 + 0.5) / 3)
    with pytest.raises(ValueError, match="lmm"):
        signal_s(tiny_predictions, kind="debiased")


def test_signal_errors_name_the_problem(tiny_predictions):
    with pytest.raises(ValueError, match="p_hat"):
        signal_u(tiny_predictions.drop(columns="p_hat"))
    with pytest.raises(ValueError, match="conditions"):
        signal_u(tiny_predictions, conditions="swap")
    with pytest.raises(ValueError, match="kind"):
        signal_c(tiny_predictions, kind="brier")
    with pytest.raises(ValueError, match="kind"):
        signal_s(tiny_predictions, kind="rank")


def test_binary_entropy():
    np.testing.assert_allclose(binary_entropy([0.0, 0.5, 1.0]), [0.0, 1.0, 0.0])
    assert binary_entropy(0.5, base=math.e) == pytest.approx(LN2)


# --------------------------------------------------------------------------- ECDF
def test_ecdf_hand_values_and_range():
    F = FrozenECDF().fit([0.1, 0.2, 0.2, 0.9])
    np.testing.assert_allclose(
        F.transform([-5.0, 0.1, 0.15, 0.2, 0.5, 0.9, 7.0]), [0.0, 0.25, 0.25, 0.75, 0.75, 1.0, 1.0]
    )
    assert not F.is_constant_
    assert F.n_ref_ == 4


def test_ecdf_in_unit_interval_and_monotone():
    rng = np.random.default_rng(0)
    F = FrozenECDF().fit(rng.normal(size=257))
    x = np.sort(rng.normal(scale=3, size=2000))
    z = F.transform(x)
    assert np.all((z >= 0) & (z <= 1))
    assert np.all(np.diff(z) >= 0)
    assert z[0] == 0.0 and z[-1] == 1.0


def test_ecdf_is_frozen():
    rng = np.random.default_rng(1)
    ref = rng.uniform(size=50)
    F = FrozenECDF().fit(ref)
    alone = F.transform([0.37])[0]
    with_others = F.transform(np.r_[rng.uniform(size=500), 0.37, -1, 2])[500]
    assert alone == with_others == np.mean(ref <= 0.37)
    assert F.n_ref_ == 50  # transforming added nothing to the reference set
    with pytest.raises(ValueError):
        F.values_[0] = 3.0  # the frozen values are read-only


def test_ecdf_nan_constant_and_errors():
    F = FrozenECDF().fit([2.0, 2.0, 2.0])
    assert F.is_constant_
    z = F.transform([1.0, np.nan, 2.0])
    assert z[0] == 0.0 and np.isnan(z[1]) and z[2] == 1.0
    with pytest.raises(ValueError, match="NaN"):
        FrozenECDF().fit([1.0, np.nan])
    with pytest.raises(ValueError, match="at least one"):
        FrozenECDF().fit([])
    with pytest.raises(ValueError, match="not fitted"):
        FrozenECDF().transform([1.0])


# --------------------------------------------------------------------------- noisy-OR
def test_combine_scur_hand_values_and_floor():
    z = pd.DataFrame(
        {
            "z_U": [0.5, 1.0, 1.0, 1.0, 0.2, np.nan],
            "z_C": [0.5, 0.0, 0.5, 1.0, np.nan, np.nan],
            "z_S": [0.5, 0.0, 0.0, 1.0, 0.5, 0.4],
        },
        index=list("abcdef"),
    )
    s = combine_scur(z)
    assert s["a"] == pytest.approx(1 - 0.125)
    # the floor: z_U = 1 does not saturate SCUR, the other signals still rank the items
    assert s["b"] == 1 - Z_FLOOR
    assert s["c"] == 1 - 0.5 * Z_FLOOR
    assert s["b"] < s["c"] < 1.0
    assert s["d"] == 1 - Z_FLOOR**3
    # a NaN signal contributes no evidence (factor 1)
    assert s["e"] == pytest.approx(1 - 0.8 * 0.5)
    assert s["f"] == pytest.approx(0.4)
    # only the columns present enter; other columns are ignored
    pd.testing.assert_series_equal(
        combine_scur(z[["z_S"]].assign(other=9.0)),
        z["z_S"].fillna(0).rename("scur"),
        check_exact=False,
    )
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        combine_scur(pd.DataFrame({"z_U": [1.5]}))
    with pytest.raises(ValueError, match="none of the columns"):
        combine_scur(pd.DataFrame({"U": [0.5]}))


# --------------------------------------------------------------------------- the pipeline
def _small_panel(n_items=12, conditions=("original", "swap", "rubric1"), seed=0):
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n_items):
        q = rng.normal(scale=1.5)
        for j in ("J1", "J2", "J3"):
            for c in conditions:
                rows.append(
                    dict(
                        item=i,
                        judge=j,
                        condition=c,
                        logit=q + rng.normal(),
                        gold=rng.choice(["A", "B"]),
                    )
                )
    return pd.DataFrame(rows)


def _brute_force_ecdf(ref_values, x):
    ref_values = [v for v in ref_values if not math.isnan(v)]
    return sum(r <= x for r in ref_values) / len(ref_values)


def test_scur_scores_matches_hand_pipeline():
    panel = _small_panel()
    lmm = _plain_lmm(("J1", "J2", "J3"), ("original", "swap", "rubric1"))
    res = scur_scores(panel, seed=4, splits=(0.25, 0.5, 0.25), lmm=lmm)
    assert isinstance(res, ScurResult)
    assert lmm.fit_calls == 1
    t = res.table
    assert list(t.columns) == [
        "item",
        "split",
        "U",
        "C",
        "S_order",
        "S_rubric",
        "S",
        "z_U",
        "z_C",
        "z_S_order",
        "z_S_rubric",
        "z_S",
        "scur",
    ]
    assert sorted(t["split"].value_counts().items()) == [("evaluation", 3), ("reference", 6)]
    assert set(res.split.index) == set(range(12))
    assert set(t["item"]) == set(res.split[res.split != "fit"].index)
    # the LMM was fitted on the fit items only
    assert list(lmm.q_.index) == sorted(res.split[res.split == "fit"].index)
    # raw signals = the signal functions on the LOO predictions of the scored items
    preds = res.predictions
    pd.testing.assert_series_equal(t.set_index("item")["U"], signal_u(preds), check_names=False)
    pd.testing.assert_series_equal(t.set_index("item")["C"], signal_c(preds), check_names=False)
    # z's and SCUR recomputed by brute force from the reference items
    ref = t.loc[t["split"] == "reference"]
    for _, row in t.iterrows():
        for comp in ("U", "C", "S_order", "S_rubric"):
            assert row[f"z_{comp}"] == pytest.approx(_brute_force_ecdf(ref[comp], row[comp]))
        assert row["S"] == pytest.approx(max(row["z_S_order"], row["z_S_rubric"]))
        z_s = _brute_force_ecdf(
            [max(a, b) for a, b in zip(ref["z_S_order"], ref["z_S_rubric"], strict=True)],
            row["S"],
        )
        assert row["z_S"] == pytest.approx(z_s)
        expected = 1 - math.prod(max(1 - row[k], 1e-12) for k in ("z_U", "z_C", "z_S"))
        assert row["scur"] == pytest.approx(expected)
    assert res.kept == ("U", "C", "S_order", "S_rubric") and res.dropped == {}
    assert res.combined == ("z_U", "z_C", "z_S")
    # S_rubric has one pair here (rubric1, original): check its raw value by hand for one item
    item = t["item"].iloc[0]
    rows = panel.loc[panel["item"] == item].pivot(
        index="judge", columns="condition", values="logit"
    )
    p = 1 / (1 + np.exp(-rows))
    assert t["S_rubric"].iloc[0] == pytest.approx(np.mean(np.abs(p["rubric1"] - p["original"])))


def test_constant_component_is_dropped():
    panel = _small_panel()
    # rubric1 repeats the original responses exactly: S_rubric = 0 for every item
    orig = panel.loc[panel["condition"] == "original"].set_index(["item", "judge"])["logit"]
    is_r1 = panel["condition"] == "rubric1"
    panel.loc[is_r1, "logit"] = orig.reindex(
        pd.MultiIndex.from_frame(panel.loc[is_r1, ["item", "judge"]])
    ).to_numpy()
    lmm = _plain_lmm(("J1", "J2", "J3"), ("original", "swap", "rubric1"))
    res = scur_scores(panel, seed=4, splits=(0.25, 0.5, 0.25), lmm=lmm)
    assert (res.table["S_rubric"] == 0).all()
    assert res.dropped == {"S_rubric": "constant on the reference split"}
    assert res.kept == ("U", "C", "S_order")
    assert res.table["z_S_rubric"].isna().all()
    # the max then uses S_order alone, re-normalised: equal to z_S_order
    np.testing.assert_allclose(res.table["S"], res.table["z_S_order"])
    np.testing.assert_allclose(res.table["z_S"], res.table["z_S_order"])


def test_reference_split_empty_or_uninformative_raises():
    panel = _small_panel(n_items=4)
    lmm = _plain_lmm(("J1", "J2", "J3"), ("original", "swap", "rubric1"))
    with pytest.raises(ValueError, match="reference split is empty"):
        scur_scores(panel, seed=0, splits=(0.5, 0.0, 0.5), lmm=lmm)
    with pytest.raises(ValueError, match="no risk signal varies"):
        scur_scores(panel, seed=0, splits=(0.5, 0.25, 0.25), lmm=lmm)  # one reference item


def test_bad_arguments():
    panel = _small_panel(n_items=4)
    with pytest.raises(ValueError, match="c_kind"):
        scur_scores(panel, seed=0, c_kind="brier")
    with pytest.raises(ValueError, match="not both"):
        scur_scores(panel, seed=0, lmm=_plain_lmm(("J1",), ("original",)), lmm_params={"a": 1})


# --------------------------------------------------------------------------- with the real LMM
@pytest.fixture(scope="module")
def sim():
    return simulate_panel(n_items=300, seed=1)


@pytest.fixture(scope="module")
def sim_result(sim):
    return scur_scores(sim.data, seed=0)


def test_real_lmm_result_shape_and_determinism(sim, sim_result):
    res = sim_result
    t = res.table
    assert len(t) == 150 and (t["split"] == "reference").sum() == 90
    assert res.kept == ("U", "C", "S_order", "S_rubric")
    assert t[["U", "C", "S_order", "S_rubric", "S", "scur"]].notna().all().all()
    for col in ("z_U", "z_C", "z_S", "scur"):
        assert t[col].between(0, 1).all()
    # the reference items' z's are their own ECDF ranks: the max is exactly 1
    assert t.loc[t["split"] == "reference", "z_U"].max() == 1.0
    again = scur_scores(sim.data, seed=0)
    pd.testing.assert_frame_equal(again.table, t)
    other = scur_scores(sim.data, seed=1, lmm=None)
    assert not other.split.equals(res.split)
    # a fitted model is reused as is, giving the same numbers
    reused = scur_scores(sim.data, seed=0, lmm=res.lmm)
    assert reused.lmm is res.lmm
    pd.testing.assert_frame_equal(reused.table, t)
    with pytest.raises(ValueError, match="fit items"):
        scur_scores(sim.data, seed=1, lmm=res.lmm)


def test_scrambling_gold_leaves_every_score_unchanged(sim, sim_result):
    panel = sim.data.copy()
    gold = panel.drop_duplicates("item").set_index("item")["gold"]
    flipped = gold.map({"A": "B", "B": "A"})
    panel["gold"] = panel["item"].map(flipped)
    res = scur_scores(panel, seed=0)
    pd.testing.assert_frame_equal(res.table, sim_result.table)
    # a gold column that would not even validate is never read
    panel["gold"] = "not a label"
    pd.testing.assert_frame_equal(scur_scores(panel, seed=0).table, sim_result.table)
    pd.testing.assert_frame_equal(
        scur_scores(sim.data.drop(columns="gold"), seed=0).table, sim_result.table
    )


def test_evaluation_z_frozen_against_other_evaluation_items(sim, sim_result):
    """Changing the responses of evaluation items changes nothing for the other items."""
    ev = sim_result.table.loc[sim_result.table["split"] == "evaluation", "item"].to_numpy()
    changed = ev[:10]
    panel = sim.data.copy()
    hit = panel["item"].isin(changed)
    panel.loc[hit, "logit"] = -panel.loc[hit, "logit"] * 1.7 + 0.3
    panel = panel.drop(columns="p")
    res = scur_scores(panel, seed=0)
    keep = ~res.table["item"].isin(changed)
    pd.testing.assert_frame_equal(res.table.loc[keep], sim_result.table.loc[keep])
    assert not np.allclose(res.table.loc[~keep, "C"], sim_result.table.loc[~keep, "C"])


def test_original_only_panel_gives_scur_from_u_and_c():
    sim = simulate_panel(n_items=300, seed=2, conditions=("original",))
    res = scur_scores(sim.data, seed=0)
    assert res.kept == ("U", "C")
    assert res.dropped == {"S_order": "absent", "S_rubric": "absent"}
    assert res.combined == ("z_U", "z_C")
    t = res.table
    assert t[["S_order", "S_rubric", "S", "z_S"]].isna().all().all()
    expected = 1 - (1 - t["z_U"]).clip(lower=1e-12) * (1 - t["z_C"]).clip(lower=1e-12)
    np.testing.assert_allclose(t["scur"], expected)


def test_options_run_and_differ(sim, sim_result):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = scur_scores(
            sim.data,
            seed=0,
            c_kind="residual",
            s_kind="debiased",
            u_conditions="all",
            lmm=sim_result.lmm,
        )
    t, t0 = res.table, sim_result.table
    for col in ("U", "C", "S_order", "S_rubric"):
        assert not np.allclose(t[col], t0[col]), col
    np.testing.assert_allclose(t["C"], signal_c(res.predictions, "residual", res.lmm.sigma_))
    assert res.settings["s_kind"] == "debiased"


def test_explain_and_riskiest(sim, sim_result):
    res = sim_result
    top = riskiest(res, n=5)
    assert len(top) == 5
    assert top["scur"].is_monotonic_decreasing
    assert set(top.index) <= set(res.table.loc[res.table["split"] == "evaluation", "item"])
    assert {"z_U", "z_C", "z_S", "scur", "votes_A", "p_bar", "reason"} <= set(top.columns)
    item = top.index[0]
    e = explain(res, item)
    assert e.split == "evaluation"
    assert e.scores["scur"] == top.loc[item, "scur"]
    assert e.reason == top.loc[item, "reason"]
    cells = sim.data.loc[sim.data["item"] == item].pivot(
        index="judge", columns="condition", values="p"
    )
    pd.testing.assert_frame_equal(
        e.responses,
        cells[list(e.responses.columns)],
        check_names=False,
        check_column_type=False,
        check_index_type=False,
    )
    assert e.predicted.shape == e.responses.shape
    assert list(e.responses.columns)[0] == "original"
    # votes_A counts the original-condition A votes
    n_a = int((cells["original"] > 0.5).sum())
    assert top.loc[item, "votes_A"] == f"{n_a}/{len(cells)}"
    fit_item = res.split[res.split == "fit"].index[0]
    with pytest.raises(ValueError, match="fit item"):
        explain(res, fit_item)


def test_item_without_a_family_pair_gets_nan_and_a_warning():
    from judgerisk._splits import split_items

    panel = _small_panel()
    split = split_items(range(12), seed=4, fractions=(0.25, 0.5, 0.25))
    ref_item = split[split == "reference"].index[0]
    panel = panel.loc[~((panel["item"] == ref_item) & (panel["condition"] == "swap"))]
    lmm = _plain_lmm(("J1", "J2", "J3"), ("original", "swap", "rubric1"))
    with pytest.warns(UserWarning, match="1 of 6 reference items have no S_order"):
        res = scur_scores(panel, seed=4, splits=(0.25, 0.5, 0.25), lmm=lmm)
    row = res.scores().loc[ref_item]
    assert np.isnan(row["S_order"]) and np.isnan(row["z_S_order"])
    # its S is the max over the components it has
    assert row["S"] == row["z_S_rubric"]
    assert res.kept == ("U", "C", "S_order", "S_rubric")


def test_plots_draw(sim, sim_result):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from judgerisk._book.figures.signals import (
        plot_item_walkthrough,
        plot_risk_reasons,
        plot_scur_by_outcome,
        plot_signal_distributions,
    )

    res = sim_result
    top = riskiest(res, n=4)
    fig = plot_item_walkthrough(explain(res, top.index[0]))
    assert len(fig.axes) == 3
    table = res.table.assign(S_rubric=np.nan)
    fig = plot_signal_distributions(table)
    assert any("absent" in t.get_text() for ax in fig.axes for t in ax.texts)
    ax = plot_risk_reasons(top)
    assert len(ax.get_yticklabels()) == 4
    ev = res.scores("evaluation")
    errors = pd.Series(np.arange(len(ev)) % 2, index=ev.index)
    ax = plot_scur_by_outcome(ev["scur"], errors, rank=True)
    assert "percentile rank" in ax.get_xlabel()
    with pytest.raises(ValueError, match="errors has no value"):
        plot_scur_by_outcome(ev["scur"], errors.iloc[1:])
    plt.close("all")


def test_s_norm_max_uses_the_raw_maximum_of_the_families():
    panel = simulate_panel(n_items=300, seed=3).data
    res = scur_scores(panel, seed=0)
    raw = scur_scores(panel, seed=0, s_norm="max", lmm=res.lmm)
    t = raw.table
    expected = t[["z_S_order", "z_S_rubric"]].max(axis=1)
    np.testing.assert_allclose(t["z_S"], expected)
    assert "S" not in raw.ecdfs and "S" in res.ecdfs
    assert raw.settings["s_norm"] == "max"
    # U and C are untouched by the option
    np.testing.assert_array_equal(t["z_U"], res.table["z_U"])
    with pytest.raises(ValueError, match="s_norm"):
        scur_scores(panel, seed=0, s_norm="mean")
