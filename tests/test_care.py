"""Tests of CARE-style label-free aggregation and its robust-PCA solver."""

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

from judgerisk.aggregators._care import CARE, robust_pca
from judgerisk.aggregators.aggregate import aggregate


def confounded_probs(n=2000, seed=0):
    """J1-J3: noisy views of the latent preference q; J4, J5: mostly a shared confounder c."""
    rng = np.random.default_rng(seed)
    q = rng.normal(0, 2, n)
    c = rng.normal(0, 2, n)
    cols = [q + rng.normal(0, 1.5, n) for _ in range(3)]
    cols += [0.3 * q + 2 * c + rng.normal(0, 1, n) for _ in range(2)]
    p = pd.DataFrame(expit(np.stack(cols, axis=1)), columns=[f"J{j}" for j in range(1, 6)])
    return p, pd.Series((q > 0).astype(int))


def test_robust_pca_recovers_planted_low_rank_plus_sparse():
    rng = np.random.default_rng(1)
    u = rng.normal(size=(40, 1))
    low = u @ u.T
    sparse = np.zeros_like(low)
    mask = rng.random(low.shape) < 0.05
    sparse[mask] = rng.normal(0, 5, mask.sum())
    l_hat, s_hat, n_iter = robust_pca(low + sparse)
    np.testing.assert_allclose(l_hat + s_hat, low + sparse, atol=1e-5)
    assert np.abs(l_hat - low).max() < 1e-3
    assert np.linalg.matrix_rank(l_hat, tol=1e-3) == 1
    assert 0 < n_iter < 1000
    z, zs, it = robust_pca(np.zeros((3, 3)))
    assert it == 0 and not z.any() and not zs.any()


def test_care_downweights_confounded_judges_and_beats_plain_mean():
    p, truth = confounded_probs()
    care = CARE().fit(p)
    w = care.weights_
    assert w.sum() == pytest.approx(1.0)
    assert w[["J4", "J5"]].max() < w[["J1", "J2", "J3"]].min()
    # The sparse part absorbs part of the J4-J5 confounding: their weights fall below what the
    # leading eigenvector of the raw correlation matrix would give them.
    vec = np.abs(np.linalg.eigh(care.correlation_.to_numpy())[1][:, -1])
    pca_w = pd.Series(vec / vec.sum(), index=p.columns)
    assert (w[["J4", "J5"]] < pca_w[["J4", "J5"]] - 0.02).all()
    assert care.sparse_.loc["J4", "J5"] > 0.1
    np.testing.assert_allclose(care.low_rank_ + care.sparse_, care.correlation_, atol=1e-5)
    acc_care = ((care.posterior(p) > 0.5).astype(int) == truth).mean()
    acc_mean = ((p.mean(axis=1) > 0.5).astype(int) == truth).mean()
    assert acc_care > acc_mean + 0.03
    assert care.lam_ == pytest.approx(1 / np.sqrt(5))


def test_care_posterior_is_the_weighted_mean_over_observed_judges():
    p, _ = confounded_probs(n=300, seed=2)
    care = CARE().fit(p)
    new = pd.DataFrame({"J1": [0.9, np.nan], "J4": [0.2, 0.3]}, index=["x", "y"])
    post = care.posterior(new)
    w = care.weights_
    assert post["x"] == pytest.approx((w["J1"] * 0.9 + w["J4"] * 0.2) / (w["J1"] + w["J4"]))
    assert post["y"] == pytest.approx(0.3)
    with pytest.raises(ValueError, match="not seen in fit"):
        care.posterior(pd.DataFrame({"J9": [0.5]}))
    with pytest.raises(ValueError, match="outside"):
        care.posterior(pd.DataFrame({"J1": [1.5]}))


def test_care_constant_judge_warns_and_gets_no_weight():
    p, _ = confounded_probs(n=300, seed=3)
    p["J6"] = 0.7
    with pytest.warns(UserWarning, match="J6"):
        care = CARE().fit(p)
    assert care.weights_["J6"] == 0.0


def test_aggregate_care_verdicts():
    p, truth = confounded_probs(n=400, seed=4)
    long = p.rename_axis(index="item", columns="judge").stack().rename("p").reset_index()
    long["condition"] = "original"
    out = aggregate(long, "care")
    care = CARE().fit(p)
    np.testing.assert_allclose(out["posterior"], care.posterior(p).to_numpy(), atol=1e-12)
    assert (out["verdict"].eq("A") == (out["posterior"] > 0.5)).all()
    fit = p.index[:200]
    part = aggregate(long, "care", fit_items=fit)
    w_fit = CARE().fit(p.loc[fit]).posterior(p)
    np.testing.assert_allclose(part["posterior"], w_fit.to_numpy(), atol=1e-12)
