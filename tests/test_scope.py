"""SCOPE, naive, heuristic, vanilla and Trust-or-Escalate thresholds computed by hand."""

import numpy as np
import pytest
from scipy.stats import binom

from judgerisk.selective.protocol import toe_threshold_loop
from judgerisk.selective.scope import (
    Heuristic,
    Naive,
    Scope,
    TrustOrEscalate,
    Vanilla,
    clopper_pearson_upper,
    naive_threshold,
    scope_threshold,
    toe_certified,
    toe_threshold,
)


def test_all_correct_needs_enough_items():
    # sum S (E - .1) = -0.1 k <= -1 iff k >= 10
    assert scope_threshold(np.arange(1.0, 11.0), np.zeros(10), 0.1) == 10.0
    assert scope_threshold(np.arange(1.0, 10.0), np.zeros(9), 0.1) == -np.inf
    assert naive_threshold(np.arange(1.0, 10.0), np.zeros(9), 0.1) == 9.0


def test_all_wrong_abstains():
    s, e = np.arange(50.0), np.ones(50)
    assert scope_threshold(s, e, 0.25) == -np.inf
    assert naive_threshold(s, e, 0.25) == -np.inf
    sel = Scope(0.25).calibrate(s, e)
    assert not sel.feasible_ and not sel.accept([0.0, -5.0]).any()


def test_boundary_alpha_is_exact():
    # 30 items, 2 errors at the lowest scores: 2 - 0.1 * 30 = -1 is feasible (float 0.1*30 > 3)
    e = np.r_[np.ones(2), np.zeros(28)]
    assert scope_threshold(np.arange(30.0), e, 0.1) == 29.0
    # with 3 errors no prefix satisfies n_err + 1 <= 0.1 n_acc: nothing is feasible
    e3 = np.r_[np.ones(3), np.zeros(27)]
    assert scope_threshold(np.arange(30.0), e3, 0.1) == -np.inf
    assert naive_threshold(np.arange(30.0), e3, 0.1) == 29.0


def test_ties_enter_as_a_block():
    s = np.array([1, 1, 1, 1, 2, 2, 2], float)
    e = np.array([0, 0, 0, 0, 0, 1, 1])
    # after block 1: -1.0 (feasible); mid-block 2 would reach -1.25, block end +0.25 (not)
    assert scope_threshold(s, e, 0.25) == 1.0
    rng = np.random.default_rng(0)
    for _ in range(5):  # the input order inside a tie block does not matter
        p = rng.permutation(7)
        assert scope_threshold(s[p], e[p], 0.25) == 1.0
    assert naive_threshold(s, e, 0.25) == 1.0  # 2/7 > .25 at the end of block 2


def test_feasibility_is_not_monotone_largest_wins():
    s = np.array([1, 1, 2, 2, 3, 3, 4], float)
    e = np.array([0, 0, 1, 1, 0, 0, 0])
    # cumulative sums at block ends (alpha .5): -1, 0, -1, -1.5 -> feasible at 1, 3, 4
    assert scope_threshold(s, e, 0.5) == 4.0
    e2 = np.array([0, 0, 1, 1, 0, 0, 1])  # last block: -1 + .5 = -.5 -> largest feasible is 3
    assert scope_threshold(s, e2, 0.5) == 3.0


def test_scope_selector_accepts_at_or_below_threshold():
    sel = Scope(alpha=0.5).fit([1, 1, 2, 2, 3, 3, 4], [0, 0, 1, 1, 0, 0, 1])
    assert sel.threshold_ == 3.0 and sel.n_calibration_ == 7
    np.testing.assert_array_equal(sel.accept([0.5, 3.0, 3.0001]), [True, True, False])
    with pytest.raises(RuntimeError, match="not calibrated"):
        Scope(0.1).accept([1.0])
    with pytest.raises(ValueError, match="alpha must be in"):
        Scope(1.5).calibrate([1.0], [0])
    assert Naive(0.25).calibrate([1, 2, 3, 4], [1, 0, 0, 0]).threshold_ == 4.0


def test_heuristic_and_vanilla():
    h = Heuristic(0.1).calibrate()
    np.testing.assert_array_equal(h.accept([0.95, 0.9, 0.85]), [True, True, False])
    assert Vanilla().calibrate().accept([0.0, 0.5]).all()


def test_clopper_pearson_upper():
    n = np.array([30, 40, 100])
    np.testing.assert_allclose(clopper_pearson_upper(0, n, 0.1), 1 - 0.1 ** (1 / n), rtol=1e-10)
    assert clopper_pearson_upper(5, 5, 0.1) == 1.0
    # duality with the exact binomial test used for certification
    k, m = 7, 100
    u = clopper_pearson_upper(k, m, 0.1)
    assert binom.cdf(k, m, u) == pytest.approx(0.1)
    assert toe_certified(k, m, u + 1e-6, 0.1) and not toe_certified(k, m, u - 1e-6, 0.1)


def _toe_case():
    conf = np.r_[np.full(40, 0.95), np.full(40, 0.705)]
    err = np.r_[np.zeros(40), np.r_[np.ones(20), np.zeros(20)]]
    return conf, err


def test_trust_or_escalate_by_hand():
    conf, err = _toe_case()
    # thresholds in (.705, .95] accept the 40 clean items: UCB = 1 - .1^(1/40) = .056 <= .1;
    # at .70 (and below) the 80 items with 20 errors fail, so the sequence stops; last certified = .71
    thr = toe_threshold(conf, err, 0.1, delta=0.1, n_grid=101, min_accepted=30)
    assert thr == pytest.approx(0.71)
    sel = TrustOrEscalate(0.1, n_grid=101).calibrate(conf, err)
    np.testing.assert_array_equal(sel.accept([0.95, 0.705]), [True, False])
    # with >= 50 accepted items required, the first kept threshold (80 items) fails: abstain
    assert toe_threshold(conf, err, 0.1, n_grid=101, min_accepted=50) == np.inf
    # alpha .05: 40 clean items give UCB .056 > .05: abstain
    assert toe_threshold(conf, err, 0.05, n_grid=101) == np.inf
    # all correct and enough items: everything certified down to threshold 0
    assert toe_threshold(np.full(60, 0.8), np.zeros(60), 0.1, n_grid=101) == 0.0


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_trust_or_escalate_matches_plain_loop(seed):
    rng = np.random.default_rng(seed)
    conf = np.round(rng.uniform(0.5, 1.0, 300), 2)
    err = rng.random(300) < (1 - conf) * 0.6
    for a in (0.05, 0.1, 0.2):
        assert toe_threshold(conf, err, a, n_grid=1000) == toe_threshold_loop(
            conf, err, a, n_grid=1000
        )
