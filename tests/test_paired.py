"""Paired AUROC comparisons: a hand-computed case, a known difference, coverage, one fit per seed."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binom
from sklearn.metrics import roc_auc_score

from judgerisk._book.figures import text as text_
from judgerisk._book.studies import paired
from judgerisk._book.studies.paired import (
    compare_scores,
    paired_auroc_difference,
    verdict,
    weighted_auroc,
)
from judgerisk._book.studies.pooled import ABLATION, OPTIONS, pooled_scores
from judgerisk.engine.analysis import SUBSET_NAMES
from judgerisk.risk.lmm import LatentMeasurementModel
from judgerisk.risk.metrics import matched_vote_auroc
from judgerisk.risk.registry import BASELINES
from judgerisk.simulate import simulate_panel


def test_weighted_auroc_by_hand():
    # errors at scores 3 and 1; correct items at 2, 1 and 0
    scores = np.array([3.0, 1.0, 2.0, 1.0, 0.0])
    errors = np.array([1, 1, 0, 0, 0])
    # pairs: (3>2, 3>1, 3>0) = 3; (1<2, 1=1, 1>0) = 0 + .5 + 1 -> 4.5 / 6
    assert weighted_auroc(scores, errors) == pytest.approx(4.5 / 6)
    # weights = a resample's counts: item 0 twice, item 1 never, item 3 never
    w = np.array([2, 0, 1, 0, 2])
    # pairs of item 0 (weight 2) with 2 (w 1) and 4 (w 2): all wins -> 2*1 + 2*2 = 6 of 6
    assert weighted_auroc(scores, errors, weights=w) == pytest.approx(1.0)
    dup = np.repeat(np.arange(5), w)
    assert weighted_auroc(scores, errors, weights=w) == roc_auc_score(errors[dup], scores[dup])
    # groups: only pairs within a group; group x = items 0, 2; group y = items 1, 3, 4
    groups = np.array(["x", "y", "x", "y", "y"])
    # x: (3 > 2) = 1; y: (1 = 1) .5, (1 > 0) 1 -> (1 + 1.5) / 3
    assert weighted_auroc(scores, errors, groups=groups) == pytest.approx(2.5 / 3)
    votes = pd.DataFrame({"j1": [1, 0, 1, 0, 0]})
    assert weighted_auroc(scores, errors, groups=votes["j1"]) == pytest.approx(
        matched_vote_auroc(pd.Series(scores), pd.Series(errors), votes)
    )


def test_paired_difference_by_hand_and_resample_count():
    scores_a = np.array([3.0, 1.0, 2.0, 1.0, 0.0])
    scores_b = np.array([0.0, 1.0, 2.0, 1.0, 3.0])  # (0<2,0<1,0<3)=0; (1<2,=1 .5,1<3)=.5
    errors = np.array([1, 1, 0, 0, 0])
    with pytest.warns(UserWarning, match="no \\(error, correct\\) pair"):  # 5 items: some lack one
        d = paired_auroc_difference(scores_a, scores_b, errors, n_boot=500, random_state=1)
    assert d.auroc_a == pytest.approx(4.5 / 6)
    assert d.auroc_b == pytest.approx(0.5 / 6)
    assert d.diff == pytest.approx(4.0 / 6)
    assert d.low <= d.diff <= d.high
    assert (d.n_items, d.n_errors, d.n_pairs) == (5, 2, 6)
    assert d.n_boot < 500  # resamples without an error or a correct item are left out
    # the same seed gives the same interval; identical scores give a zero-width interval
    with pytest.warns(UserWarning):
        again = paired_auroc_difference(scores_a, scores_b, errors, n_boot=500, random_state=1)
    assert (again.low, again.high) == (d.low, d.high)
    with pytest.warns(UserWarning):
        same = paired_auroc_difference(scores_a, scores_a, errors, n_boot=200)
    assert same.low == same.high == 0.0
    assert same.verdict == "ties with"


def test_bootstrap_matches_explicit_resampling():
    rng = np.random.default_rng(3)
    errors = rng.integers(0, 2, 30)
    a, b = rng.normal(size=30) + errors, rng.normal(size=30)
    d = paired_auroc_difference(a, b, errors, n_boot=300, random_state=7)
    # recompute the same resamples item by item
    draws = np.random.default_rng(7).integers(0, 30, size=(300, 30))
    diffs = []
    for idx in draws:
        if errors[idx].min() == errors[idx].max():
            continue
        diffs.append(roc_auc_score(errors[idx], a[idx]) - roc_auc_score(errors[idx], b[idx]))
    low, high = np.quantile(diffs, [0.025, 0.975])
    assert d.low == pytest.approx(low, abs=1e-5)
    assert d.high == pytest.approx(high, abs=1e-5)


def test_known_difference_is_detected():
    rng = np.random.default_rng(0)
    n = 400
    errors = rng.binomial(1, 0.3, n)
    good = errors * 1.5 + rng.normal(size=n)  # population AUROC Phi(1.5 / sqrt 2) = .855
    useless = rng.normal(size=n)  # AUROC .5
    d = paired_auroc_difference(good, useless, errors, n_boot=1000, random_state=0)
    assert d.verdict == "beats"
    assert d.low > 0
    assert d.low < 0.855 - 0.5 < d.high
    rev = paired_auroc_difference(useless, good, errors, n_boot=1000, random_state=0)
    assert rev.verdict == "trails"


def test_coverage_under_equal_scores():
    """Two equally good scores: the 95 % interval excludes 0 in about 5 % of panels."""
    rng = np.random.default_rng(2024)
    reps, n = 200, 120
    excluded = 0
    for r in range(reps):
        errors = rng.binomial(1, 0.3, n)
        latent = errors + rng.normal(size=n)  # shared item difficulty: correlated scores
        a = latent + rng.normal(size=n)
        b = latent + rng.normal(size=n)
        d = paired_auroc_difference(a, b, errors, n_boot=400, random_state=r)
        excluded += verdict(d.low, d.high) != "ties with"
    # two-sided 99.9 % binomial band around 5 % of 200 panels
    lo, hi = binom.ppf(0.0005, reps, 0.05), binom.ppf(0.9995, reps, 0.05)
    assert lo <= excluded <= hi, f"{excluded} of {reps} intervals exclude 0"


def test_pooled_scores_one_fit_per_seed_and_columns(monkeypatch):
    panel = simulate_panel(n_items=200, seed=1).data
    calls = []
    original_fit = LatentMeasurementModel.fit

    def counting_fit(self, *args, **kwargs):
        calls.append(1)
        return original_fit(self, *args, **kwargs)

    monkeypatch.setattr(LatentMeasurementModel, "fit", counting_fit)
    seeds = range(3)
    pooled = pooled_scores(panel, seeds=seeds, options=OPTIONS, ablation=True)
    assert len(calls) == 5 * len(seeds)  # options and ablation reuse each fold's fit
    for col in ("error", "hc", "prob_hc", "pattern", "n_seeds", "scur", *ABLATION, *OPTIONS):
        assert col in pooled.columns
    # repeated 5-fold cross-fitting: every item is evaluated exactly once per repetition
    assert len(pooled) == 200
    assert (pooled["n_seeds"] == 3).all()
    paper = pooled_scores(panel, seeds=seeds, protocol="paper")
    assert paper["n_seeds"].between(1, 3).all() and len(paper) < 200
    assert pooled["U+C+S"].equals(pooled["scur"])
    assert pooled[["scur", "pe", "ve"]].stack().between(0, 1).all()
    # VE is ranked among all items, the same in every seed: constant within a vote pattern
    assert (pooled.groupby("pattern")["ve"].nunique() == 1).all()


def test_compare_scores_table_and_matched_ve_is_half():
    panel = simulate_panel(n_items=300, seed=2).data
    pooled = pooled_scores(panel, seeds=range(4))
    table = compare_scores(pooled, subsets=("all", "hc", "matched"), n_boot=300)
    assert list(table.columns) == [
        "subset",
        "method",
        "auroc_ref",
        "auroc",
        "diff",
        "low",
        "high",
        "verdict",
        "n_items",
        "n_errors",
        "n_boot",
    ]
    others = [m for m in BASELINES if m in pooled.columns]  # compare_scores' default
    assert others[:4] == ["pe", "ve", "msp", "ds_entropy"]
    assert len(table) == 3 * len(others)
    ve = table[(table["subset"] == "matched") & (table["method"] == "ve")].iloc[0]
    assert ve["auroc"] == 0.5
    assert (table["low"] <= table["diff"]).all() and (table["diff"] <= table["high"]).all()
    hc = table[table["subset"] == "hc"].iloc[0]
    assert hc["n_items"] == int(pooled["hc"].sum())
    with pytest.raises(ValueError, match="no column"):
        compare_scores(pooled, others=["nope"])


def test_rule_and_errors():
    assert verdict(0.01, 0.2) == "beats"
    assert verdict(-0.2, -0.01) == "trails"
    assert verdict(-0.1, 0.1) == "ties with"
    assert "95 %" in paired.BEATS_RULE
    with pytest.raises(ValueError, match="NaN"):
        paired_auroc_difference([0.1, np.nan], [0.2, 0.3], [0, 1])
    with pytest.raises(ValueError, match="0/1"):
        weighted_auroc([0.1, 0.2], [0, 2])


def test_reporting_helpers():
    table = pd.DataFrame(
        {
            "subset": ["all", "all", "hc", "hc"],
            "method": ["pe", "ve", "pe", "ve"],
            "auroc_ref": [0.7, 0.7, 0.6, 0.6],
            "auroc": [0.65, 0.55, 0.62, 0.5],
            "diff": [0.05, 0.15, -0.02, 0.1],
            "low": [-0.01, 0.1, -0.08, 0.02],
            "high": [0.11, 0.2, 0.04, 0.18],
            "verdict": ["ties with", "beats", "ties with", "beats"],
            "n_items": [100, 100, 40, 40],
            "n_errors": [30, 30, 8, 8],
        }
    )
    assert text_.format_interval(0.05, -0.01, 0.11) == "+0.050 [-0.010, +0.110]"
    text = text_.interval_table(table, label=str.upper)
    assert text.loc["VE", SUBSET_NAMES["hc"]] == "+0.100 [+0.020, +0.180]"
    assert paired.best_rows(table).loc["all", "method"] == "pe"
    lines = text_.comparison_sentences(table, label=str.upper)
    assert lines[0].startswith("all evaluation items (100 items, 30 errors): SCUR 0.700 ties with")
    assert "PE 0.650" in lines[0] and "beats 1 and trails 0 of the 2" in lines[0]


def test_ablation_and_option_tables():
    from judgerisk._book.studies.ablation import (
        ablation_table,
        family_table,
        gain_carrier,
        option_table,
    )

    panel = simulate_panel(n_items=300, seed=4).data
    pooled = pooled_scores(panel, seeds=range(3), options=OPTIONS, ablation=True)
    abl = ablation_table(pooled, subsets=("all",), n_boot=200)
    assert set(abl["method"]) == {"U", "C", "S", "U+C", "U+S", "C+S"}
    carrier = gain_carrier(abl)
    rows = abl.set_index("method")
    pairs = {"U": "C+S", "C": "U+S", "S": "U+C"}
    assert carrier["signal"] == max(pairs, key=lambda s: rows.loc[pairs[s], "diff"])
    assert carrier["best_alone"] == rows.loc[["U", "C", "S"], "auroc"].idxmax()
    opts = option_table(pooled, subsets=("all", "hc"), n_boot=200)
    assert len(opts) == len(OPTIONS) * 2
    assert (opts["survives"] == (opts["changed"] == 0)).all()
    assert (opts["reversed"] <= opts["changed"]).all()
    fam = family_table(pooled, subsets=("all",), n_boot=200)
    assert set(fam["family"]) == {"order", "rubric"}


def test_compare_pairs_reports_left_out_resamples_in_n_boot_without_a_warning():
    rng = np.random.default_rng(0)
    n = 40
    errors = np.zeros(n, int)
    errors[:2] = 1  # two errors: some resamples hold none
    pooled = pd.DataFrame(
        {
            "error": errors,
            "a": rng.random(n),
            "b": rng.random(n),
            "pattern": "AAAAA",
            "hc": True,
            "prob_hc": True,
        },
        index=pd.RangeIndex(n, name="item"),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        table = paired.compare_pairs(pooled, [("a", "b")], ("all",), n_boot=300)
    assert 0 < table.loc[0, "n_boot"] < 300
