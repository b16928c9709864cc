"""Tests of the latent measurement model (judgerisk.risk.lmm, METHODS.md §2-3)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize
from sklearn.exceptions import ConvergenceWarning

from judgerisk._book.studies.drift import sweep_drift
from judgerisk.datasets import data_root
from judgerisk.datasets.llmbar import load_llmbar_panel
from judgerisk.panel import CONDITIONS, PanelError, encode_panel, validate_panel
from judgerisk.risk._lmm_solver import (
    BLOCKS,
    Design,
    Params,
    Penalties,
    Sweeper,
    margins,
    start_point,
    state_mask,
)
from judgerisk.risk.lmm import LatentMeasurementModel, align_to_reference
from judgerisk.simulate import simulate_panel
from judgerisk.validation import DEFAULT_ACCELERATE

_DATA = data_root(required=False)
needs_llmbar = pytest.mark.skipif(
    _DATA is None or not (_DATA / "llmbar" / "verdicts_long.csv").is_file(),
    reason="shared LLMBar data not found (set JUDGERISK_DATA or place it in ../shared/data/llmbar)",
)

LAM = Penalties(q=1.0, a=1.0, b=1.0, delta=5.0, kappa=10.0)


# --------------------------------------------------------------------------------------
# an independent, cell-by-cell implementation of F and its gradient (no sufficient stats)
# --------------------------------------------------------------------------------------
class LongObjective:
    """F over the long cells, with the analytic gradient, written from METHODS §2 directly."""

    def __init__(self, panel: pd.DataFrame, lam: Penalties = LAM):
        arr = encode_panel(validate_panel(panel, conditions=None))
        self.arr, self.lam = arr, lam
        self.I, self.J, self.C = arr.n_items, arr.n_judges, arr.n_conditions

    def unpack(self, x):
        I, J, C = self.I, self.J, self.C
        q, a, b = x[:I], x[I : I + J], x[I + J : I + 2 * J]
        d = np.concatenate([[0.0], x[I + 2 * J : I + 2 * J + C - 1]])
        k = np.hstack([np.zeros((J, 1)), x[I + 2 * J + C - 1 :].reshape(J, C - 1)])
        return q, a, b, d, k

    def pack(self, q, a, b, d, k):
        return np.concatenate([q, a, b, d[1:], k[:, 1:].ravel()])

    def margins(self, x):
        q, a, b, d, k = self.unpack(x)
        i, j, c = self.arr.item_idx, self.arr.judge_idx, self.arr.cond_idx
        return a[j] * q[i] + b[j] + d[c] + k[j, c]

    def __call__(self, x):
        lam, arr = self.lam, self.arr
        q, a, b, d, k = self.unpack(x)
        i, j, c = arr.item_idx, arr.judge_idx, arr.cond_idx
        r = arr.logit - self.margins(x)
        f = (
            r @ r
            + lam.q * q @ q
            + lam.a * np.sum((a - 1) ** 2)
            + lam.b * b @ b
            + lam.delta * d @ d
            + lam.kappa * np.sum(k**2)
        )
        I, J, C = self.I, self.J, self.C
        gq = -2 * np.bincount(i, weights=a[j] * r, minlength=I) + 2 * lam.q * q
        ga = -2 * np.bincount(j, weights=q[i] * r, minlength=J) + 2 * lam.a * (a - 1)
        gb = -2 * np.bincount(j, weights=r, minlength=J) + 2 * lam.b * b
        gd = -2 * np.bincount(c, weights=r, minlength=C) + 2 * lam.delta * d
        gk = -2 * np.bincount(j * C + c, weights=r, minlength=J * C).reshape(J, C)
        gk = gk + 2 * lam.kappa * k
        return f, self.pack(gq, ga, gb, gd, gk)

    def of_model(self, lmm: LatentMeasurementModel):
        return self.pack(
            lmm.q_.to_numpy(),
            lmm.a_.to_numpy(),
            lmm.b_.to_numpy(),
            lmm.delta_.to_numpy(),
            lmm.kappa_.to_numpy(),
        )

    def minimise(self, x0=None):
        I, J = self.I, self.J
        if x0 is None:
            x0 = np.zeros(I + 2 * J + (self.C - 1) * (J + 1))
            x0[I : I + J] = 1.0
        bounds = [(None, None)] * len(x0)
        bounds[I : I + J] = [(0.05, 20.0)] * J
        res = minimize(
            self,
            x0,
            jac=True,
            method="L-BFGS-B",
            bounds=bounds,
            options={"maxiter": 50_000, "ftol": 1e-15, "gtol": 1e-9, "maxcor": 30},
        )
        return res


def hand_panel(n_items=40, n_judges=3, conditions=CONDITIONS, seed=0, missing=0.0):
    """A small hand-made panel drawn from the LMM itself (no simulator mechanisms)."""
    rng = np.random.default_rng(seed)
    q = rng.normal(0, 2, n_items)
    a = np.exp(rng.normal(0, 0.3, n_judges))
    b = rng.normal(0, 0.5, n_judges)
    d = np.concatenate([[0], rng.normal(0, 0.3, len(conditions) - 1)])
    k = np.hstack([np.zeros((n_judges, 1)), rng.normal(0, 0.2, (n_judges, len(conditions) - 1))])
    ii, jj, cc = np.meshgrid(
        np.arange(n_items), np.arange(n_judges), np.arange(len(conditions)), indexing="ij"
    )
    ii, jj, cc = ii.ravel(), jj.ravel(), cc.ravel()
    m = a[jj] * q[ii] + b[jj] + d[cc] + k[jj, cc] + rng.normal(0, 1, ii.size)
    keep = (rng.random(ii.size) >= missing) | ((cc == 0) & (jj == 0))
    df = pd.DataFrame(
        {
            "item": ii[keep],
            "judge": np.array([f"J{x + 1}" for x in range(n_judges)], dtype=object)[jj[keep]],
            "condition": np.array(conditions, dtype=object)[cc[keep]],
            "logit": m[keep],
        }
    )
    return validate_panel(df, conditions=None)


def fit(panel, **kw):
    """Fit quietly; Anderson-accelerated unless ``accelerate`` is given (it is much faster
    on the small hand-made panels, where the plain sweeps need the 2,100-sweep extension)."""
    kw.setdefault("random_state", 0)
    kw.setdefault("accelerate", "anderson")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return LatentMeasurementModel(**kw).fit(panel)


# --------------------------------------------------------------------------------------
# sufficient statistics agree with the cell-by-cell objective
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("missing", [0.0, 0.3])
def test_objective_matches_cellwise(missing):
    panel = hand_panel(missing=missing)
    lmm = fit(panel, n_restarts=1, max_iter=100, max_iter_extended=100)
    obj = LongObjective(panel)
    f, _ = obj(obj.of_model(lmm))
    assert lmm.objective_ == pytest.approx(f, rel=1e-10)
    r = panel["logit"].to_numpy() - obj.margins(obj.of_model(lmm))
    q, b = lmm.q_.to_numpy(), lmm.b_.to_numpy()
    assert lmm.criterion_ == pytest.approx((r @ r + q @ q + b @ b) / len(panel), rel=1e-9)
    sigma = np.sqrt(pd.Series(r**2).groupby(panel["judge"].to_numpy()).mean())
    np.testing.assert_allclose(lmm.sigma_.to_numpy(), sigma.to_numpy(), rtol=1e-10)


# --------------------------------------------------------------------------------------
# each block update is the exact minimiser of F given the others
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("missing", [0.0, 0.3])
def test_block_updates_are_exact_minimisers(missing):
    """After each block update the gradient of F w.r.t. that block is 0 (to 1e-8 x scale).

    The a update is checked before its scale fix and the kappa update before its
    judge-centring, since those two identifiability steps are not minimisers of F.
    """
    panel = hand_panel(missing=missing, seed=3)
    obj = LongObjective(panel)
    d = Design.from_arrays(obj.arr)
    rng = np.random.default_rng(1)
    I, J, C = obj.I, obj.J, obj.C
    p = Params(
        rng.normal(0, 1, I),
        np.exp(rng.normal(0, 0.3, J)),
        rng.normal(0, 1, J),
        np.concatenate([[0], rng.normal(0, 1, C - 1)]),
        np.hstack([np.zeros((J, 1)), rng.normal(0, 1, (J, C - 1))]),
    )
    sw = Sweeper(d, LAM, ("q", "a", "b", "delta", "kappa"))
    sl = {
        "q": slice(0, I),
        "a": slice(I, I + J),
        "b": slice(I + J, I + 2 * J),
        "delta": slice(I + 2 * J, I + 2 * J + C - 1),
        "kappa": slice(I + 2 * J + C - 1, None),
    }
    scale = np.abs(panel["logit"]).sum()
    for block in ("q", "a", "b", "delta", "kappa"):
        _, g0 = obj(obj.pack(p.q, p.a, p.b, p.delta, p.kappa))
        assert np.abs(g0[sl[block]]).max() > 1e-3 * scale / I  # not trivially at an optimum
        if block == "a":
            sw.update_a(p, rescale=False)
        elif block == "kappa":
            sw.update_kappa(p, centre=False)
        else:
            getattr(sw, f"update_{block}")(p)
        _, g = obj(obj.pack(p.q, p.a, p.b, p.delta, p.kappa))
        assert np.abs(g[sl[block]]).max() < 1e-8 * scale, block


def test_identifiability_steps_preserve_margins():
    panel = hand_panel(seed=4)
    obj = LongObjective(panel)
    d = Design.from_arrays(obj.arr)
    sw = Sweeper(d, LAM, ("q", "a", "b", "delta", "kappa"))
    p = Params(
        np.ones(obj.I), np.ones(obj.J), np.zeros(obj.J), np.zeros(obj.C), np.zeros((obj.J, obj.C))
    )
    sw.update_q(p)
    raw, fixed = p.copy(), p.copy()
    sw.update_a(raw, rescale=False)
    sw.update_a(fixed, rescale=True)
    assert np.exp(np.mean(np.log(fixed.a))) == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(np.outer(fixed.q, fixed.a), np.outer(raw.q, raw.a), rtol=1e-12)
    raw, fixed = p.copy(), p.copy()
    sw.update_kappa(raw, centre=False)
    sw.update_kappa(fixed, centre=True)
    np.testing.assert_allclose(fixed.kappa[:, 1:].sum(axis=0), 0.0, atol=1e-12)
    np.testing.assert_allclose(fixed.offsets(), raw.offsets(), atol=1e-12)


def test_gradient_at_fitted_point():
    """At the converged sweeps' fixed point the gradient of F w.r.t. b is ~0 and w.r.t.
    q, delta, kappa is small; what remains is what the scale fix and the kappa centring
    leave (they are not minimisers of F). Measured here (max |grad| / sum |m|): b ~ 2e-16,
    q ~ 6e-3, delta ~ 1e-3, kappa ~ 6e-5; the bounds are b < 1e-6 and the others < 2e-2."""
    panel = hand_panel(n_items=60, seed=5)
    lmm = fit(panel, accelerate="anderson", tol_rms=1e-10, tol_max=1e-9, tol_obj=1e-13)
    assert lmm.converged_
    obj = LongObjective(panel)
    _, g = obj(obj.of_model(lmm))
    I, J, C = obj.I, obj.J, obj.C
    scale = np.abs(panel["logit"]).sum()
    gb = g[I + J : I + 2 * J]
    assert np.abs(gb).max() < 1e-6 * scale
    for part in (g[:I], g[I + 2 * J : I + 2 * J + C - 1], g[I + 2 * J + C - 1 :]):
        assert np.abs(part).max() < 2e-2 * scale


# --------------------------------------------------------------------------------------
# independent optimiser: scipy L-BFGS over all parameters of the same F
# --------------------------------------------------------------------------------------
def test_scipy_lbfgs_independent_check():
    """scipy's minimiser of F (cell-by-cell code) against the sweeps and the lbfgs mode.

    The lbfgs mode must reach the same F (rel 1e-7). The paper's sweeps stop at their
    fixed point, whose F is higher because the scale fix keeps prod a_j = 1 while F alone
    would trade q's penalty for a larger a (measured: +9 % F here); the fitted margins
    agree to < 0.1 logit (measured ~0.03).
    """
    panel = hand_panel(n_items=80, n_judges=4, seed=6)
    obj = LongObjective(panel)
    res = obj.minimise()
    assert res.success, res.message
    f_star = res.fun
    mu_star = obj.margins(res.x)

    polished = fit(panel, accelerate="lbfgs")
    assert polished.converged_
    f_pol, _ = obj(obj.of_model(polished))
    assert f_pol == pytest.approx(f_star, rel=1e-7)
    assert np.abs(obj.margins(obj.of_model(polished)) - mu_star).max() < 1e-3

    als = fit(panel, accelerate=None)
    f_als, _ = obj(obj.of_model(als))
    assert f_als >= f_star * (1 - 1e-9)
    assert (f_als - f_star) / f_star < 0.15
    assert np.abs(obj.margins(obj.of_model(als)) - mu_star).max() < 0.1


# --------------------------------------------------------------------------------------
# recovery on simulated panels
# --------------------------------------------------------------------------------------
def test_recovery_against_simulator_truth():
    """Recovery at the default size (2,000 items x 5 judges x 6 conditions).

    Identifiability fix before comparing: the LMM's scale is prod a_j = 1 and its location
    comes from the ridge on q and b, the simulator's are its own; ``align_to_reference``
    maps q -> s q + t, a -> a / s, b -> b - a t / s with (s, t) the least-squares fit of
    the true q on the fitted q (all margins a_j q_i + b_j unchanged). Correlations of q
    and a are invariant to that map; b's is not.
    """
    sim = simulate_panel(n_items=2000, seed=0)
    lmm = fit(sim.data, accelerate=None)
    assert lmm.converged_
    q, a, b = align_to_reference(lmm.q_, lmm.a_, lmm.b_, sim.truth.q)
    t = sim.truth
    assert np.corrcoef(q, t.q.loc[q.index])[0, 1] >= 0.95
    assert np.corrcoef(a, t.a.loc[a.index])[0, 1] >= 0.9
    assert np.corrcoef(b, t.b.loc[b.index])[0, 1] >= 0.9


# --------------------------------------------------------------------------------------
# leave-one-judge-out predictions
# --------------------------------------------------------------------------------------
def test_predict_loo_matches_formula_cell_by_cell():
    panel = hand_panel(n_items=60, seed=7, missing=0.2)
    items = panel["item"].unique()
    fit_part = panel[panel["item"].isin(items[:40])]
    new_part = panel[panel["item"].isin(items[40:])]
    lmm = fit(fit_part)
    out = lmm.predict_loo(new_part)
    assert {"q_loo", "logit_hat", "p_hat"} <= set(out.columns)
    assert len(out) == len(new_part)
    a, b, d, k = lmm.a_, lmm.b_, lmm.delta_, lmm.kappa_
    for row in out.sample(25, random_state=0).itertuples():
        others = new_part[(new_part["item"] == row.item) & (new_part["judge"] != row.judge)]
        ak = a.loc[others["judge"]].to_numpy()
        res = (
            others["logit"].to_numpy()
            - b.loc[others["judge"]].to_numpy()
            - d.loc[others["condition"]].to_numpy()
            - k.to_numpy()[
                k.index.get_indexer(others["judge"]), k.columns.get_indexer(others["condition"])
            ]
        )
        q_loo = (ak @ res) / (ak @ ak + 1.0) if len(others) else 0.0
        assert row.q_loo == pytest.approx(q_loo, abs=1e-10)
        lh = (
            a[row.judge] * q_loo + b[row.judge] + d[row.condition] + k.loc[row.judge, row.condition]
        )
        assert row.logit_hat == pytest.approx(lh, abs=1e-10)
        assert row.p_hat == pytest.approx(1 / (1 + np.exp(-lh)), abs=1e-12)


def test_predict_loo_ignores_the_held_out_judge():
    panel = hand_panel(n_items=30, seed=8)
    lmm = fit(panel)
    before = lmm.predict_loo(panel)
    changed = panel.drop(columns=["p", "verdict"])
    changed.loc[changed["judge"] == "J2", "logit"] += 5.0
    after = lmm.predict_loo(changed)
    j2 = (before["judge"] == "J2").to_numpy()
    np.testing.assert_allclose(after.loc[j2, "q_loo"], before.loc[j2, "q_loo"], atol=1e-12)
    assert not np.allclose(after.loc[~j2, "q_loo"], before.loc[~j2, "q_loo"])


def test_item_seen_by_one_judge_gets_the_prior():
    panel = hand_panel(n_items=30, seed=9)
    lmm = fit(panel)
    lonely = pd.DataFrame(
        {
            "item": [999, 999],
            "judge": ["J1", "J1"],
            "condition": ["original", "swap"],
            "logit": [3.0, -1.0],
        }
    )
    out = lmm.predict_loo(lonely)
    assert (out["q_loo"] == 0.0).all()
    expect = (
        lmm.b_["J1"]
        + lmm.delta_.loc[["original", "swap"]].to_numpy()
        + lmm.kappa_.loc["J1", ["original", "swap"]].to_numpy()
    )
    np.testing.assert_allclose(out["logit_hat"], expect)


def test_unknown_judge_or_condition_raises():
    panel = hand_panel(n_items=20, conditions=("original", "swap"), seed=10)
    lmm = fit(panel)
    bad = pd.DataFrame(
        {"item": [1, 1], "judge": ["J1", "Jx"], "condition": ["original"] * 2, "logit": [1.0, 2.0]}
    )
    with pytest.raises(PanelError, match="Jx"):
        lmm.predict_loo(bad)
    bad = pd.DataFrame(
        {
            "item": [1, 1],
            "judge": ["J1", "J2"],
            "condition": ["original", "rubric1"],
            "logit": [1.0, 2.0],
        }
    )
    with pytest.raises(PanelError, match="rubric1"):
        lmm.predict_loo(bad)
    with pytest.raises(PanelError, match="not in the fit"):
        lmm.fitted(
            pd.DataFrame(
                {"item": [12345], "judge": ["J1"], "condition": ["original"], "logit": [0.5]}
            )
        )


def test_fitted_reproduces_margins():
    panel = hand_panel(n_items=30, seed=11, missing=0.2)
    lmm = fit(panel)
    out = lmm.fitted(panel)
    obj = LongObjective(panel)
    np.testing.assert_allclose(out["logit_hat"], obj.margins(obj.of_model(lmm)), atol=1e-12)
    np.testing.assert_allclose(out["q"], lmm.q_.loc[out["item"]].to_numpy())


# --------------------------------------------------------------------------------------
# edge cases
# --------------------------------------------------------------------------------------
def test_one_judge():
    panel = hand_panel(n_items=30, n_judges=1, seed=12)
    lmm = fit(panel)
    assert lmm.a_.iloc[0] == pytest.approx(1.0)
    np.testing.assert_allclose(lmm.kappa_.to_numpy(), 0.0, atol=1e-12)
    assert np.isfinite(lmm.q_).all()
    out = lmm.predict_loo(panel)
    assert (out["q_loo"] == 0.0).all()  # no other judge: prior only


def test_two_judges_and_original_only():
    panel = hand_panel(n_items=50, n_judges=2, conditions=("original",), seed=13)
    lmm = fit(panel)
    assert lmm.converged_
    assert list(lmm.delta_.index) == ["original"] and (lmm.delta_ == 0).all()
    assert lmm.kappa_.shape == (2, 1) and (lmm.kappa_ == 0).all().all()
    assert np.prod(lmm.a_) == pytest.approx(1.0)
    assert np.corrcoef(lmm.q_, panel.groupby("item")["logit"].mean())[0, 1] > 0.9


def test_judge_with_constant_logits_and_extreme_values():
    panel = hand_panel(n_items=40, n_judges=4, seed=14).drop(columns=["p", "verdict"])
    panel.loc[panel["judge"] == "J4", "logit"] = 2.5
    panel.loc[panel.index[:7], "logit"] = 20.0
    panel.loc[panel.index[7:14], "logit"] = -20.0
    lmm = fit(panel)
    assert np.isfinite(lmm.q_).all() and np.isfinite(lmm.a_).all()
    assert lmm.a_["J4"] < 0.5 * lmm.a_.drop("J4").min()  # ignores the item
    assert lmm.sigma_["J4"] < 0.5
    assert np.isfinite(lmm.predict_loo(panel)["p_hat"]).all()


def test_missing_cells_and_sparse_judge_condition():
    panel = hand_panel(n_items=60, n_judges=3, seed=15, missing=0.4)
    # J3 keeps a single swap cell
    drop = (panel["judge"] == "J3") & (panel["condition"] == "swap")
    panel = panel.drop(panel.index[drop][1:]).reset_index(drop=True)
    lmm = fit(panel, accelerate="anderson")
    assert lmm.converged_
    assert np.isfinite(lmm.kappa_.to_numpy()).all()
    obj = LongObjective(panel)
    assert lmm.objective_ == pytest.approx(obj(obj.of_model(lmm))[0], rel=1e-10)


def test_no_convergence_warns_and_flags():
    panel = hand_panel(n_items=30, seed=16)
    with pytest.warns(ConvergenceWarning, match="no restart met"):
        lmm = LatentMeasurementModel(max_iter=3, max_iter_extended=5, random_state=0).fit(panel)
    assert not lmm.converged_
    assert lmm.n_iter_ == 5 and bool(lmm.restarts_["extended"].all())
    assert lmm.restarts_["kept"].sum() == 1


def test_determinism_and_restarts():
    panel = hand_panel(n_items=40, seed=17)
    one = fit(panel, random_state=3, accelerate=None, max_iter=100, max_iter_extended=300)
    two = fit(panel, random_state=3, accelerate=None, max_iter=100, max_iter_extended=300)
    three = fit(panel, random_state=4, accelerate=None, max_iter=50, max_iter_extended=50)
    pd.testing.assert_series_equal(one.q_, two.q_)
    pd.testing.assert_frame_equal(one.restarts_, two.restarts_)
    assert len(one.restarts_) == 3 and len(one.histories_) == 3
    # restart 0 is the fixed start; the later restarts depend on the seed
    np.testing.assert_array_equal(one.histories_[0][:50], three.histories_[0])
    assert not np.array_equal(one.histories_[1][:50], three.histories_[1])
    r = three.restarts_
    pool = r[r["converged"]] if r["converged"].any() else r
    assert r.loc[r["kept"], "criterion"].iloc[0] == pool["criterion"].min()
    assert one.history_.iloc[-1] == pytest.approx(one.criterion_)


def test_restarts_start_from_different_points():
    """Corrected restarts (METHODS §2): later restarts draw log a_j and b_j, the blocks the
    first q update reads, so their first-sweep parameters differ from restart 0's."""
    panel = hand_panel(n_items=40, seed=21)
    d = Design.from_arrays(encode_panel(panel))
    q0 = d.item_means()
    rng = np.random.default_rng(0)
    starts = [start_point(q0, d.n_judges, d.n_cond, g) for g in (None, rng, rng)]
    sw = Sweeper(d, Penalties(1.0, 1.0, 1.0, 5.0, 10.0), BLOCKS)
    firsts = []
    for p in starts:
        sw.set_wo(None)
        firsts.append(sw.sweep(p).to_vector())
    for k in (1, 2):
        assert np.abs(firsts[k] - firsts[0]).max() > 1e-3
    assert np.abs(firsts[1] - firsts[2]).max() > 1e-3
    lmm = fit(panel, accelerate=None, max_iter=3, max_iter_extended=3)
    first = [lmm.histories_[r].iloc[0] for r in range(3)]
    assert len(set(first)) == 3


def test_restart_spread_is_reported():
    lmm = fit(hand_panel(n_items=60, seed=22))
    r = lmm.restarts_
    assert {"max_abs_dp_hat", "criterion_gap"} <= set(r.columns)
    assert r.loc[r["kept"], "max_abs_dp_hat"].iloc[0] == 0.0
    assert r.loc[r["kept"], "criterion_gap"].iloc[0] == 0.0
    spread = lmm.restart_spread_
    assert spread["max_abs_dp_hat"] >= r["max_abs_dp_hat"].max()
    assert spread["criterion_range"] == pytest.approx(r["criterion"].max() - r["criterion"].min())
    assert spread["max_abs_dp_hat"] < 1e-3  # the restarts find the same optimum here


def test_default_converges_with_missing_cells_within_budget():
    sim = simulate_panel(n_items=300, seed=2, missing_rate=0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        lmm = LatentMeasurementModel(random_state=0).fit(sim.data)
    assert lmm.accelerate == DEFAULT_ACCELERATE
    assert lmm.converged_ and bool(lmm.restarts_["converged"].all())
    assert lmm.restarts_["n_iter"].max() <= 300


def test_default_reaches_the_plain_sweeps_fixed_point():
    """Where the plain sweeps reach their fixed point (complete panel, run long), the
    default's predictions equal theirs to 1e-6, in-sample and leave-one-judge-out."""
    sim = simulate_panel(n_items=100, seed=1)
    tight = {"tol_rms": 1e-10, "tol_max": 1e-9, "tol_obj": 1e-13, "n_restarts": 1}
    plain = fit(sim.data, accelerate=None, max_iter=20_000, max_iter_extended=20_000, **tight)
    new = fit(sim.data, accelerate=DEFAULT_ACCELERATE, **tight)
    assert new.converged_ and new.n_iter_ <= 300
    for how in ("fitted", "predict_loo"):
        p_plain = getattr(plain, how)(sim.data)["p_hat"].to_numpy()
        p_new = getattr(new, how)(sim.data)["p_hat"].to_numpy()
        assert np.abs(p_plain - p_new).max() < 1e-6, how


@pytest.mark.data
@needs_llmbar
def test_no_convergence_warning_on_llmbar():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the loader's missing-cell report
        panel = load_llmbar_panel()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        lmm = LatentMeasurementModel(random_state=0).fit(panel)
    assert lmm.converged_ and lmm.restarts_["n_iter"].max() <= 300


def test_anderson_reaches_the_sweeps_fixed_point_faster():
    sim = simulate_panel(n_items=300, seed=1)
    plain = fit(sim.data, accelerate=None)
    fast = fit(sim.data, accelerate="anderson")
    assert fast.converged_ and plain.converged_
    assert fast.n_iter_ < plain.n_iter_ / 2
    obj = LongObjective(sim.data)
    mu_p = obj.margins(obj.of_model(plain))
    mu_f = obj.margins(obj.of_model(fast))
    assert np.abs(mu_p - mu_f).max() < 1e-3


def test_bad_parameters_raise():
    panel = hand_panel(n_items=10, seed=18)
    with pytest.raises(ValueError, match="update_order"):
        LatentMeasurementModel(update_order=("q", "a")).fit(panel)
    with pytest.raises(ValueError, match="accelerate"):
        LatentMeasurementModel(accelerate="newton").fit(panel)
    with pytest.raises(ValueError, match="lambda_q"):
        LatentMeasurementModel(lambda_q=-1).fit(panel)


def test_update_order_option():
    """The order [R] moves the fixed point a little, because the scale fix and the kappa
    centring are not minimisers of F (measured: F +-0.5 %, margins up to ~0.3 logit)."""
    panel = hand_panel(n_items=40, seed=19)
    a = fit(panel)
    b = fit(panel, update_order=("a", "q", "kappa", "delta", "b"))
    assert a.converged_ and b.converged_
    obj = LongObjective(panel)
    assert abs(a.objective_ - b.objective_) / a.objective_ < 0.02
    assert np.abs(obj.margins(obj.of_model(a)) - obj.margins(obj.of_model(b))).max() < 0.5


def test_sweep_drift_finds_the_location_symmetry():
    """The plain sweeps' slow direction, measured from the sweep map, is q + t, b - a t."""
    sim = simulate_panel(n_items=120, seed=3, missing_rate=0.1)
    drift = sweep_drift(sim.data, n_sweeps=400)
    v = drift.direction
    assert 0.99 < v["rho"] < 1.0
    assert v["share_q"] + v["share_b"] > 1 - 1e-4
    assert v["q_uniformity"] < 0.05
    assert v["b_over_minus_a_dq"] == pytest.approx(1.0, abs=0.02)
    tr = drift.trace
    assert list(tr.columns) == ["offset", "margin_error", "rel_criterion", "rms_change"]
    assert len(tr) == 400 and abs(tr["offset"].iloc[-1]) < abs(tr["offset"].iloc[10])
    with pytest.raises(ValueError, match="n_sweeps"):
        sweep_drift(sim.data, n_sweeps=2)


# --------------------------------------------------------------------------------------
# Anderson acceleration: fitted on the sweep map's state, robust where the fixed point lies
# far along the drift direction
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("order", [BLOCKS, ("a", "q", "kappa", "delta", "b")])
def test_the_sweep_map_depends_only_on_its_state(order):
    """The first block of a sweep is recomputed before anything reads it: changing it does not
    change the sweep's output, so Anderson's least squares leave it out (state_mask)."""
    panel = hand_panel(n_items=30, seed=23, missing=0.2)
    d = Design.from_arrays(encode_panel(panel))
    mask = state_mask(d, order)
    I, J, C = d.n_items, d.n_judges, d.n_cond
    assert mask.sum() == len(mask) - {"q": I, "a": J}[order[0]]
    p = start_point(d.item_means(), J, C, np.random.default_rng(1))
    moved = Params.from_vector(p.to_vector() + np.where(mask, 0.0, 0.7), I, J, C)
    sw = Sweeper(d, LAM, order)
    outs = []
    for start in (p, moved):
        sw.set_wo(None)
        outs.append(sw.sweep(start).to_vector())
    np.testing.assert_allclose(outs[0], outs[1], rtol=0, atol=1e-12)
    nudged = Params.from_vector(p.to_vector() + np.where(mask, 1e-3, 0.0), I, J, C)
    sw.set_wo(None)
    assert np.abs(sw.sweep(nudged).to_vector() - outs[0]).max() > 1e-6  # the state matters


#: The old solver (Anderson's least squares on every coordinate, q included) on these panels:
#: the sweeps of each restart, measured. Appendix A1's restart study fits the simulated
#: 2,000-item panel with 30 % missing cells at seeds 0-2 (random_state = seed, 3 restarts).
OLD_SOLVER_SWEEPS = {
    (2000, 0.3, 0): [25, 23, 25],
    (2000, 0.3, 1): [61, 48, 358],
    (2000, 0.3, 2): [33, 30, 33],
    (300, 0.5, 4): [159, 336, 86],
}
#: Every restart of these panels must meet the rule within this many sweeps: under a third of
#: the estimator's cap (max_iter=700) and 1.7x the most the current solver needed over 90
#: restarts of A1's 30 %-missing panel (seeds 0-29: at most 116, 95 % within 42, 54 on seeds
#: 0-2; the old solver at most 1100, 95 % within 258). The path of one restart depends on the
#: last bits of floating point (the old solver's 358 sweeps were 557 in another environment),
#: hence the margin; the old solver's 358 (336) sweeps still fail it.
SWEEPS_BOUND = 200


@pytest.mark.parametrize(
    "n_items, missing, seed",
    list(OLD_SOLVER_SWEEPS),
    ids=[
        "A1-30pc-missing-seed0",
        "A1-30pc-missing-seed1",
        "A1-30pc-missing-seed2",
        "300-items-50pc-missing",
    ],
)
def test_anderson_converges_where_the_fixed_point_lies_far_along_the_drift(n_items, missing, seed):
    """Appendix A1's restart study (and a smaller panel with half its cells missing): every
    restart meets the rule, without the extended budget, in well under the cap.

    On these panels the sweeps' fixed point sits up to about 2.8 units of t = mean q from every
    restart's start. Fitted on all coordinates, Anderson's coefficients (up to 1e3) followed
    the drift direction, and one restart of seed 1 (the third) was thrown to t = -6 while the
    fixed point lies at t = +2.8; there the sweep map contracts t by about 1e-5 per sweep, and
    the restart wandered for 358 sweeps (the others needed 23-61). Fitted on the sweep map's
    state (a, b, delta, kappa), every restart needs a few tens."""
    sim = simulate_panel(n_items=n_items, seed=seed, missing_rate=missing)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        lmm = LatentMeasurementModel(random_state=seed).fit(sim.data)
    r = lmm.restarts_
    assert bool(r["converged"].all()) and not r["extended"].any()
    assert r["n_iter"].max() <= SWEEPS_BOUND, r
    assert lmm.restart_spread_["max_abs_dp_hat"] < 1e-4  # the restarts agree


def test_the_restart_that_took_358_sweeps():
    """Regression: the third restart of A1's 30 %-missing panel at seed 1 took 358 sweeps with
    the old solver (its other restarts 61 and 48); it now meets the rule in a few tens, at the
    same fixed point as the restarts that never left it far behind."""
    sim = simulate_panel(n_items=2000, seed=1, missing_rate=0.3)
    lmm = LatentMeasurementModel(random_state=1).fit(sim.data)
    r = lmm.restarts_
    assert len(r) == 3 and bool(r["converged"].all())
    assert r["n_iter"].iloc[2] <= SWEEPS_BOUND < 358, r
    assert abs(lmm.q_.mean()) > 2  # the case described: the fixed point lies far along t
    assert lmm.restart_spread_["max_abs_dp_hat"] < 1e-4


def test_anderson_and_plain_sweeps_reach_one_fixed_point_with_missing_cells():
    """Run tight, the accelerated sweeps and the plain sweeps end at the same point, the
    drift direction included (mean q), on a panel with missing cells."""
    sim = simulate_panel(n_items=80, seed=4, missing_rate=0.3)
    tight = {"tol_rms": 1e-11, "tol_max": 1e-10, "tol_obj": 1e-14, "n_restarts": 1}
    plain = fit(sim.data, accelerate=None, max_iter=30_000, max_iter_extended=30_000, **tight)
    fast = fit(sim.data, accelerate="anderson", **tight)
    assert plain.converged_ and fast.converged_ and fast.n_iter_ <= 300
    assert fast.q_.mean() == pytest.approx(plain.q_.mean(), abs=1e-3)
    p_plain, p_fast = (m.fitted(sim.data)["p_hat"].to_numpy() for m in (plain, fast))
    assert np.abs(p_plain - p_fast).max() < 1e-6


def test_margins_of_a_complete_panel_equal_the_cell_by_cell_sums():
    """margins broadcasts over a complete, sorted panel: the same bits as gathering per cell."""
    panel = validate_panel(simulate_panel(n_items=40, seed=3).data)
    rng = np.random.default_rng(0)
    for rows in (panel, panel.iloc[::3], panel.sample(frac=1.0, random_state=1)):
        arr = encode_panel(rows)
        J, C = arr.n_judges, arr.n_conditions
        p = Params(
            rng.normal(size=arr.n_items),
            rng.random(J) + 0.5,
            rng.normal(size=J),
            rng.normal(size=C),
            rng.normal(size=(J, C)),
        )
        by_cell = p.a[arr.judge_idx] * p.q[arr.item_idx] + p.offsets()[arr.judge_idx, arr.cond_idx]
        assert np.array_equal(margins(arr, p).view(np.int64), by_cell.view(np.int64))
