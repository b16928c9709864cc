"""The estimators of judgerisk.estimate: formulas, the ppi_py reference, plans, the panel table."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judgerisk.estimate import (
    abstention_floor,
    active_ppi_mean,
    classical_mean,
    cross_ppi_mean,
    crossfit_predictions,
    draw_plan,
    effective_labels,
    exchangeability_test,
    inclusion_probabilities,
    ppi_mean,
    quantile_strata,
    stratified_ppi_mean,
)
from judgerisk.options import EstimateSettings, OptionError


def _data(n=80, big_n=400, seed=0):
    rng = np.random.default_rng(seed)
    f = rng.uniform(0.3, 1.0, n + big_n)
    y = (rng.random(n + big_n) < f).astype(float)
    return y[:n], f[:n], f[n:]


def test_ppi_with_lambda_zero_is_classical_and_one_is_plain_ppi():
    y, f, fu = _data()
    c, p0 = classical_mean(y), ppi_mean(y, f, fu, lam=0.0)
    assert p0.estimate == pytest.approx(c.estimate) and p0.se == pytest.approx(c.se)
    p1 = ppi_mean(y, f, fu, lam=1.0)
    assert p1.estimate == pytest.approx(fu.mean() + (y - f).mean())
    tuned = ppi_mean(y, f, fu)
    assert 0.0 <= tuned.lam <= 1.0
    assert tuned.lower < tuned.estimate < tuned.upper


def test_ppi_matches_ppi_py():
    ppi_py = pytest.importorskip("ppi_py", reason="ppi-python is not installed")
    for seed in range(5):
        y, f, fu = _data(seed=seed)
        for lam in (None, 0.0, 1.0, 0.4):
            lo, hi = ppi_py.ppi_mean_ci(y, f, fu, alpha=0.1, lam=lam)
            ours = ppi_mean(y, f, fu, level=0.9, lam=lam)
            assert ours.lower == pytest.approx(float(np.ravel(lo)[0]), rel=1e-9)
            assert ours.upper == pytest.approx(float(np.ravel(hi)[0]), rel=1e-9)
        lo, hi = ppi_py.classical_mean_ci(y, alpha=0.1)
        assert classical_mean(y, 0.9).lower == pytest.approx(float(np.ravel(lo)[0]), rel=1e-9)
        pred_unl = np.column_stack([fu, np.clip(fu + 0.05, 0, 1)])
        lo, hi = ppi_py.crossppi_mean_ci(y, f, pred_unl, alpha=0.1)
        ours = cross_ppi_mean(y, f, pred_unl, 0.9)
        assert ours.lower == pytest.approx(float(np.ravel(lo)[0]), rel=1e-9)
        assert ours.upper == pytest.approx(float(np.ravel(hi)[0]), rel=1e-9)


def test_stratified_with_one_stratum_is_ppi():
    y, f, fu = _data()
    one = stratified_ppi_mean(y, f, fu, np.zeros(y.size), np.zeros(fu.size))
    plain = ppi_mean(y, f, fu)
    assert one.estimate == pytest.approx(plain.estimate)
    assert one.se == pytest.approx(plain.se * np.sqrt(y.size / (y.size - 1)))  # ddof=1


def test_quantile_strata_rule():
    rng = np.random.default_rng(1)
    score = rng.random(1000)
    lab = np.zeros(1000, dtype=bool)
    lab[rng.choice(1000, 100, replace=False)] = True
    strata = quantile_strata(score, lab, 10)
    assert np.unique(strata).size <= 10
    assert all(((strata == g) & lab).sum() >= 2 for g in np.unique(strata))
    # 30 labels, 10 per stratum: at most 30 // 10 = 3 strata, ordered by the score
    few = quantile_strata(score, lab & (np.cumsum(lab) <= 30), 10, min_labelled=10)
    assert np.unique(few).size <= 3
    order = np.argsort(score)
    assert np.all(np.diff(few[order]) >= 0)


def test_crossfit_predictions_are_out_of_fold_and_in_unit_interval():
    y, f, fu = _data()
    pred, pred_unl = crossfit_predictions(y, f[:, None], fu[:, None], n_folds=5, seed=0)
    assert pred.shape == y.shape and pred_unl.shape == (fu.size, 5)
    assert np.all((pred > 0) & (pred < 1))
    again, _ = crossfit_predictions(y, f[:, None], fu[:, None], n_folds=5, seed=0)
    np.testing.assert_array_equal(pred, again)


def test_active_with_uniform_inclusion_and_lambda_one():
    rng = np.random.default_rng(2)
    f = rng.uniform(0.2, 1.0, 500)
    y = (rng.random(500) < f).astype(float)
    pi = np.full(500, 0.2)
    xi = draw_plan(pi, seed=3)
    est = active_ppi_mean(np.where(xi, y, np.nan), f, xi, pi, lam=1.0)
    z = f + (y - f) * xi / pi
    assert est.estimate == pytest.approx(z.mean())
    assert est.se == pytest.approx(z.std() / np.sqrt(500))
    with pytest.raises(ValueError):
        active_ppi_mean(y, f, xi, np.where(xi, 0.0, pi))


def test_inclusion_probabilities_rule():
    risk = np.random.default_rng(4).random(300)
    pi = inclusion_probabilities(risk, 60, floor=0.2)
    assert pi.sum() == pytest.approx(60)
    order = np.argsort(risk)
    assert np.all(np.diff(pi[order]) >= -1e-12)
    lo, hi = 0.2 + 0.8 * 0.5 / 300, 0.2 + 0.8 * 299.5 / 300  # the weights' mid-rank ends
    assert pi.min() / pi.max() == pytest.approx(lo / hi, rel=1e-6)
    big = inclusion_probabilities(risk, 290, floor=0.2)  # capped at 1, still summing to n
    assert big.max() == pytest.approx(1.0) and big.sum() == pytest.approx(290)
    with pytest.raises(OptionError):
        inclusion_probabilities(risk, 0)


def test_effective_labels():
    assert effective_labels(100, 0.2, 0.1) == pytest.approx(400)


def test_exchangeability_and_floor():
    s = np.random.default_rng(5).random(400)
    assert not exchangeability_test(s, np.arange(400) % 4 == 0).rejects
    easy = exchangeability_test(s, s < np.quantile(s, 0.25))
    assert easy.rejects and easy.labelled_percentile < easy.unlabelled_percentile
    assert "not exchangeable" in easy.reason("scur") and "safer" in easy.reason("scur")
    assert abstention_floor(0.3, 0.1) == pytest.approx(2 / 9)
    assert abstention_floor(0.05, 0.1) == 0.0


def test_a_permutation_p_value_reads_as_people_report_it():
    """p = (1 + #{T_b >= T})/(1 + B) bottoms out at 1/(B + 1): "p < 0.001", never 0.000999."""
    s = np.random.default_rng(5).random(400)
    easy = s < np.quantile(s, 0.25)
    for b, said in ((1000, "p < 0.001"), (199, "p = 0.005, the smallest they can give")):
        text = exchangeability_test(s, easy, n_permutations=b).reason("scur")
        assert f"reached by none of the {b} permutations: {said}, at most the level 0.05" in text
        assert "0.000999" not in text and "<=" not in text, text
    random = exchangeability_test(s, np.arange(400) % 4 == 0)
    text = random.reason("scur")
    assert f"T = {random.statistic:.3f}, p = {random.p_value:.3f}, above the level 0.05" in text
    assert "reached by none" not in text, text


def test_settings_checks():
    with pytest.raises(OptionError):
        EstimateSettings(level=1.0)
    with pytest.raises(OptionError):
        EstimateSettings(floor=0.0)


@pytest.fixture(scope="module")
def labelled_panel():
    from judgerisk.simulate import simulate_panel

    sim = simulate_panel(n_items=300, n_judges=4, seed=3)
    panel = sim.data.copy()
    items = pd.unique(panel["item"])
    lab = set(np.random.default_rng(0).choice(items, 60, replace=False).tolist())
    panel.loc[~panel["item"].isin(lab), "gold"] = np.nan
    return panel


def test_estimate_panel_table(labelled_panel):
    from judgerisk.aggregators._base import aggregator_name, reported_aggregators
    from judgerisk.engine.estimates import COLUMNS, METHODS, estimate_panel

    out = estimate_panel(labelled_panel)
    assert tuple(out.columns) == COLUMNS
    judges = sorted(labelled_panel["judge"].unique())
    aggs = [aggregator_name(a) for a in reported_aggregators(None)]
    expected = {f"accuracy:{a}" for a in (*aggs, *judges)} | {"win_rate:A"}
    assert set(out["quantity"]) == expected
    assert set(out["method"]) == set(METHODS["random"])
    assert (out["n_labelled"] == 60).all() and (out["n_unlabelled"] == 240).all()
    lab = out[out["method"] == "labelled"]
    gold = labelled_panel.drop_duplicates("item").dropna(subset=["gold"])
    assert lab.set_index("quantity").loc["win_rate:A", "estimate"] == pytest.approx(
        (gold["gold"] == "A").mean()
    )
    assert np.allclose(lab["width_ratio"], 1.0) and np.allclose(lab["effective_labels"], 60)
    ok = out.dropna(subset=["width"])
    assert (ok["lower"] <= ok["estimate"]).all() and (ok["estimate"] <= ok["upper"]).all()


def test_plan_and_weighted_estimate(labelled_panel):
    from judgerisk.engine.estimates import METHODS, estimate_panel, plan_labels
    from judgerisk.panel import PanelError

    plan = plan_labels(labelled_panel, 50)
    assert list(plan.columns) == ["item", "inclusion_probability"]
    assert plan.attrs["drawn"] == len(plan) and 0 < plan.attrs["half_width_plan"]
    full = labelled_panel.copy()
    from judgerisk.simulate import simulate_panel

    gold = simulate_panel(n_items=300, n_judges=4, seed=3).data.drop_duplicates("item")
    gold = gold.set_index("item")["gold"]
    full["gold"] = np.where(full["item"].isin(plan["item"]), full["item"].map(gold), np.nan)
    pi = plan.set_index("item")["inclusion_probability"]
    out = estimate_panel(full, EstimateSettings(), inclusion=pi)
    assert set(out["method"]) == set(METHODS["plan"])
    with pytest.raises(PanelError, match="not in the plan"):
        estimate_panel(labelled_panel, inclusion=pi)


def test_certificate_check_html_says_when_it_does_not_apply():
    from judgerisk.estimate import check_certificate
    from judgerisk.report._estimates import certificate_check_html

    s = np.random.default_rng(6).random(200)
    errors = np.zeros(200)
    rejected = certificate_check_html(check_certificate(s, s < 0.3, errors, 0.1, "scur"), 0.1)
    assert rejected.startswith("<p><strong>The certificate does not apply:</strong> the labelled")
    assert "Per-item risk" in rejected and "Abstention floor" in rejected
    random = check_certificate(s, np.arange(200) % 5 == 0, errors, 0.1, "scur")
    assert random["applies"] and "<strong>Note:</strong>" in certificate_check_html(random, 0.1)
