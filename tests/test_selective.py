"""BPE, its uncertainty baselines, and the selection metrics (METHODS §7)."""

import numpy as np
import pytest
from scipy.special import expit
from sklearn.metrics import average_precision_score, roc_auc_score

from judgerisk.selective.confidence import (
    bpe,
    compare_uncertainty,
    predictive_probability,
    self_consistency,
    swap_and_aggregate,
    verbalized_confidence,
)
from judgerisk.selective.metrics import (
    accuracy,
    as_binary,
    auprc_correct,
    auroc_correct,
    coverage,
    ece,
    errors_of,
    fdp,
    reliability_table,
    uncertainty_metrics,
)


def _naive_bpe(a, b):
    p = (expit(a) + expit(b)) / 2
    return -(p * np.log(p) + (1 - p) * np.log(1 - p)), p


def test_bpe_matches_formula_in_moderate_range():
    rng = np.random.default_rng(0)
    a, b = rng.normal(0, 3, 200), rng.normal(0, 3, 200)
    s = bpe(a, b)
    ref, p = _naive_bpe(a, b)
    np.testing.assert_allclose(s.score, ref, rtol=1e-10, atol=1e-13)
    np.testing.assert_array_equal(s.pred, (p >= 0.5).astype(np.int8))
    np.testing.assert_allclose(s.confidence, np.maximum(p, 1 - p), rtol=1e-12)
    assert s.score.dtype == np.float64 and s.score.max() <= np.log(2) + 1e-15


def test_bpe_confident_items_do_not_tie():
    a = np.array([30.0, 35.0, 40.0, 45.0])
    s = bpe(a, a)
    # the naive formula collapses these to exactly the same value (0 or nan)
    assert np.unique(s.score).size == 4
    assert np.all(np.diff(s.score) < 0) and np.all(s.score > 0)
    np.testing.assert_allclose(s.score[2], np.exp(-40.0) * (1 + 40.0), rtol=1e-6)


def test_swapping_answer_names_keeps_score_and_flips_prediction():
    rng = np.random.default_rng(1)
    a, b = rng.normal(0, 4, 500), rng.normal(0, 4, 500)
    s, t = bpe(a, b), bpe(-b, -a)
    np.testing.assert_array_equal(s.score, t.score)
    np.testing.assert_array_equal(s.confidence, t.confidence)
    np.testing.assert_array_equal(t.pred, 1 - s.pred)


def test_tie_rule_and_order_disagreement():
    s = bpe([0.0, 2.0], [0.0, -2.0])
    np.testing.assert_array_equal(s.pred, [1, 1])  # p̄ = .5 -> A
    np.testing.assert_allclose(s.score, np.log(2))
    np.testing.assert_allclose(s.confidence, 0.5)
    # disagreement raises uncertainty above either single pass
    assert bpe([3.0], [-1.0]).score[0] > predictive_probability([3.0]).score[0]


def test_predictive_probability_and_swap_and_aggregate():
    pp = predictive_probability([2.0, -1.0, 0.0])
    np.testing.assert_array_equal(pp.pred, [1, 0, 1])
    np.testing.assert_allclose(pp.confidence, [expit(2.0), expit(1.0), 0.5])
    sa = swap_and_aggregate([2.0, 2.0, -3.0], [1.0, -3.0, -0.5])
    np.testing.assert_array_equal(sa.confidence, [1.0, 0.5, 1.0])
    np.testing.assert_array_equal(sa.pred, bpe([2.0, 2.0, -3.0], [1.0, -3.0, -0.5]).pred)
    np.testing.assert_array_equal(sa.pred, [1, 0, 0])
    np.testing.assert_allclose(sa.score, [0.0, np.log(2), 0.0])


def test_verbalized_and_self_consistency():
    v = verbalized_confidence(["A", "B"], [0.9, 0.3])
    np.testing.assert_array_equal(v.pred, [1, 0])
    np.testing.assert_allclose(v.score, [0.1, 0.7])
    with pytest.raises(ValueError, match="confidence"):
        verbalized_confidence(["A"], [1.2])
    sc = self_consistency([[1, 1, 0, 1, 1], [0, 0, 0, 0, 0], [1, 0, 1, 0, 0]])
    np.testing.assert_array_equal(sc.pred, [1, 0, 0])
    np.testing.assert_allclose(sc.confidence, [0.8, 1.0, 0.6])
    np.testing.assert_allclose(sc.score[1], 0.0)
    np.testing.assert_allclose(sc.score[0], -(0.8 * np.log(0.8) + 0.2 * np.log(0.2)))


def test_bad_inputs_are_named():
    with pytest.raises(ValueError, match="logit_rev has NaN at rows \\[1\\]"):
        bpe([1.0, 2.0], [0.0, np.nan])
    with pytest.raises(ValueError, match="gold must be 'A'/'B' or 0/1; bad values at rows 1"):
        errors_of(["A", "A"], ["A", "tie"])
    np.testing.assert_array_equal(as_binary([True, False]), [1, 0])


def test_ece_by_hand():
    conf = np.array([0.55, 0.58, 0.95, 0.92, 1.0])
    correct = np.array([1, 0, 1, 1, 0], bool)
    # bins (.5,.6]: conf .565 acc .5; (.9,1]: conf .9567 acc 2/3
    expected = 2 / 5 * abs(0.5 - 0.565) + 3 / 5 * abs(2 / 3 - (0.95 + 0.92 + 1.0) / 3)
    assert ece(conf, correct) == pytest.approx(expected)
    tab = reliability_table(conf, correct, n_bins=10)
    assert tab["n"].tolist() == [0, 0, 0, 0, 0, 2, 0, 0, 0, 3]
    # boundary: 0.6 belongs to (.5, .6]; 15 bins puts .55 and .58 in different bins
    assert reliability_table([0.6], [True])["n"].iloc[5] == 1
    assert ece(conf, correct, n_bins=15) != pytest.approx(expected)


def test_auc_metrics_use_correctness_as_positive():
    conf = np.array([0.9, 0.8, 0.7, 0.6, 0.55])
    correct = np.array([1, 1, 0, 1, 0], bool)
    assert auroc_correct(conf, correct) == pytest.approx(5 / 6)
    assert auroc_correct(conf, correct) == roc_auc_score(correct, conf)
    assert auprc_correct(conf, correct) == average_precision_score(correct, conf)
    with pytest.warns(RuntimeWarning, match="undefined"):
        assert np.isnan(auroc_correct([0.6, 0.7], [1, 1]))


def test_selection_metrics():
    acc = np.array([1, 1, 0, 1, 0], bool)
    err = np.array([0, 1, 1, 0, 0], bool)
    assert coverage(acc) == 0.6
    assert fdp(acc, err) == pytest.approx(1 / 3)
    assert fdp(np.zeros(5, bool), err) == 0.0
    assert accuracy(["A", "B", "A"], ["A", "A", "A"]) == pytest.approx(2 / 3)


def test_compare_uncertainty_table():
    rng = np.random.default_rng(3)
    q = rng.normal(0, 2, 600)
    gold = np.where(q + rng.normal(0, 1, 600) > 0, "A", "B")
    a, b = q + 1.5 + rng.normal(0, 1, 600), q - 1.5 + rng.normal(0, 1, 600)  # position bias
    tab = compare_uncertainty(a, b, gold)
    assert list(tab.index) == ["predictive_probability", "swap_and_aggregate", "bpe"]
    assert tab.loc["bpe", "accuracy"] == tab.loc["swap_and_aggregate", "accuracy"]
    row = uncertainty_metrics(bpe(a, b).pred, gold, bpe(a, b).confidence)
    assert tab.loc["bpe"].to_dict() == pytest.approx(row)
    # the debiased signal is better calibrated than the biased single pass here
    assert tab.loc["bpe", "ece"] < tab.loc["predictive_probability", "ece"]
    rnd = compare_uncertainty(a, b, gold, randomize_order=True, seed=1)
    assert (
        rnd.loc["predictive_probability", "accuracy"]
        != tab.loc["predictive_probability", "accuracy"]
    )


def test_paired_metric_difference_is_the_difference_with_a_paired_interval():
    from sklearn.metrics import roc_auc_score

    from judgerisk.selective.metrics import ece, paired_metric_difference

    rng = np.random.default_rng(1)
    n = 400
    right = rng.random(n) < 0.7
    conf_a = np.clip(0.5 + 0.3 * right + rng.normal(0, 0.15, n), 0.5, 1.0)  # informative
    conf_b = np.clip(conf_a + rng.normal(0, 0.05, n), 0.5, 1.0)  # a noisier copy
    conf_b[:7] = conf_b[7]  # ties, counted as half as scikit-learn counts them
    d, lo, hi = paired_metric_difference(conf_a, right, conf_b, right, "auroc", seed=3)
    assert d == pytest.approx(roc_auc_score(right, conf_a) - roc_auc_score(right, conf_b))
    assert lo < d < hi
    # paired over items: the two close signals differ by a well-pinned amount
    assert hi - lo < 0.05
    assert paired_metric_difference(conf_a, right, conf_b, right, "auroc", seed=3) == (d, lo, hi)
    same = paired_metric_difference(conf_a, right, conf_a, right, "ece")
    assert same == (0.0, 0.0, 0.0)
    e, _, _ = paired_metric_difference(conf_a, right, conf_b, right, "ece", n_bins=15)
    assert e == pytest.approx(ece(conf_a, right, 15) - ece(conf_b, right, 15))
    with pytest.raises(ValueError, match="metric must be one of"):
        paired_metric_difference(conf_a, right, conf_b, right, "accuracy")
    with pytest.raises(ValueError, match="400 items but signal b has 10"):
        paired_metric_difference(conf_a, right, conf_b[:10], right[:10], "auroc")
