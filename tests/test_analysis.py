"""Tests of judgerisk.engine.analysis: evaluate_risk, risk_table, summarize_risk."""

import matplotlib
import numpy as np
import pandas as pd
import pytest
from joblib import parallel_config

from judgerisk._book.figures.risk import (
    plot_auroc_by_method,
    plot_matched_group_auroc,
    plot_vote_patterns,
)
from judgerisk._plots.style import label
from judgerisk._splits import split_items
from judgerisk.engine.analysis import (
    METHODS,
    SUBSETS,
    aggregate_errors,
    evaluate_risk,
    risk_table,
    summarize_risk,
)
from judgerisk.panel import PanelError, gold_labels, verdicts
from judgerisk.risk.metrics import high_consensus, matched_vote_groups
from judgerisk.simulate import simulate_panel

BASELINES_ONLY = ("pe", "ve", "msp", "ds_entropy")


@pytest.fixture(scope="module")
def small_panel():
    return simulate_panel(n_items=400, seed=11).data


@pytest.fixture(scope="module")
def small_result(small_panel):
    return evaluate_risk(small_panel, seeds=[0, 1])


def test_result_is_tidy(small_result, small_panel):
    r = small_result
    assert list(r.columns) == ["seed", "method", "subset", "auroc", "n_errors", "n_items"]
    assert len(r) == 2 * len(METHODS) * len(SUBSETS)
    assert set(r["method"]) == set(METHODS) and set(r["subset"]) == set(SUBSETS)
    all_rows = r[r["subset"] == "all"]
    assert (all_rows["n_items"] == 80).all()  # 20 % of 400 items
    # every method sees the same items and errors within a (seed, subset)
    assert (r.groupby(["seed", "subset"])[["n_items", "n_errors"]].nunique() == 1).all().all()
    for subset in ("hc", "prob_hc", "matched"):
        sub = r[r["subset"] == subset].set_index(["seed", "method"])["n_items"]
        assert (sub <= all_rows.set_index(["seed", "method"])["n_items"]).all()
    assert r["auroc"].dropna().between(0, 1).all()


def test_matched_votes_give_exactly_half_for_ve_and_ds(small_result):
    matched = small_result[small_result["subset"] == "matched"].set_index(["method", "seed"])
    assert (matched.loc["ve", "auroc"] == 0.5).all()
    assert (matched.loc["ds_entropy", "auroc"] == 0.5).all()
    # the other scores do vary within vote patterns
    assert (matched.loc["pe", "auroc"] != 0.5).all()


def test_risk_table_matches_split_and_masks(small_panel):
    table = risk_table(small_panel, seed=3)
    split = split_items(np.sort(small_panel["item"].unique()), 3)
    assert sorted(table.index) == sorted(split.index[split == "evaluation"])
    assert list(table.columns) == ["error", "hc", "prob_hc", "matched", *METHODS]
    votes = verdicts(small_panel).loc[table.index]
    pd.testing.assert_series_equal(
        table["hc"], high_consensus(votes).rename("hc"), check_names=False
    )
    majority_a = (votes.mean(axis=1) > 0.5).astype(int)
    clear = votes.mean(axis=1) != 0.5
    gold = gold_labels(small_panel).loc[table.index]
    assert (table["error"][clear] == (majority_a != gold)[clear]).all()


def test_scrambling_gold_leaves_every_score_unchanged(small_panel):
    rng = np.random.default_rng(5)
    items = np.sort(small_panel["item"].unique())
    flipped = pd.Series(rng.choice(["A", "B"], size=len(items)), index=items)
    scrambled = small_panel.assign(gold=small_panel["item"].map(flipped))
    a = risk_table(small_panel, seed=2)
    b = risk_table(scrambled, seed=2)
    pd.testing.assert_frame_equal(a[list(METHODS)], b[list(METHODS)])
    pd.testing.assert_frame_equal(a[["hc", "prob_hc"]], b[["hc", "prob_hc"]])
    assert (a["error"] != b["error"]).any()


def test_deterministic_and_parallel_equal(small_panel):
    one = evaluate_risk(small_panel, seeds=[4, 5], methods=BASELINES_ONLY)
    again = evaluate_risk(small_panel, seeds=[4, 5], methods=BASELINES_ONLY)
    # fork-based workers start in ~1 s; loky (the default) re-imports scipy/sklearn per worker
    with parallel_config(backend="multiprocessing"):
        par = evaluate_risk(small_panel, seeds=[4, 5], methods=BASELINES_ONLY, n_jobs=2)
    pd.testing.assert_frame_equal(one, again)
    pd.testing.assert_frame_equal(one, par)
    assert (
        not one.set_index(["seed", "method", "subset"])
        .loc[4]
        .equals(one.set_index(["seed", "method", "subset"]).loc[5])
    )


def test_other_aggregator_changes_error_labels(small_panel):
    maj = aggregate_errors(small_panel, "majority")
    ds = evaluate_risk(small_panel, seeds=[0], methods=("pe",), aggregator="dawid_skene")
    ds_all = evaluate_risk(
        small_panel, seeds=[0], methods=("pe",), aggregator="dawid_skene", aggregator_fit="all"
    )
    assert len(ds) == len(ds_all) == len(SUBSETS)
    assert maj.isin([0, 1]).all() and maj.index.equals(gold_labels(small_panel).index)
    with pytest.raises(ValueError, match="aggregator_fit"):
        evaluate_risk(small_panel, seeds=[0], methods=("pe",), aggregator_fit="some")


def test_original_only_panel_with_missing_cells():
    panel = simulate_panel(n_items=300, seed=2, conditions=("original",)).data
    panel = panel.drop(index=panel.index[::7])  # every 7th cell missing; no item loses all five
    result = evaluate_risk(panel, seeds=[0], subsets=("all", "matched"))
    matched = result[result["subset"] == "matched"].set_index("method")["auroc"]
    assert matched["ve"] == 0.5 and matched["ds_entropy"] == 0.5
    assert result["auroc"].notna().all()


def test_bad_arguments(small_panel):
    with pytest.raises(ValueError, match="unknown method"):
        evaluate_risk(small_panel, seeds=[0], methods=("bpe",))
    with pytest.raises(ValueError, match="unknown subset"):
        evaluate_risk(small_panel, seeds=[0], subsets=("low",))
    with pytest.raises(ValueError, match="seeds is empty"):
        evaluate_risk(small_panel, seeds=[])
    with pytest.raises(PanelError, match="gold"):
        evaluate_risk(small_panel.drop(columns="gold"), seeds=[0], methods=("pe",))


def test_summarize_risk(small_result):
    s = summarize_risk(small_result)
    assert list(s.columns) == [
        "subset",
        "method",
        "mean",
        "std",
        "n_seeds",
        "mean_n_errors",
        "mean_n_items",
    ]
    assert len(s) == len(METHODS) * len(SUBSETS)
    row = s[(s["subset"] == "all") & (s["method"] == "pe")].iloc[0]
    vals = small_result.query("subset == 'all' and method == 'pe'")["auroc"]
    assert row["mean"] == pytest.approx(vals.mean()) and row["std"] == pytest.approx(vals.std())
    with pytest.raises(ValueError, match="lacks columns"):
        summarize_risk(small_result.drop(columns="auroc"))


def test_plots(small_result, small_panel):
    matplotlib.use("Agg")
    fig = plot_auroc_by_method(small_result, subsets=["all", "hc"])
    assert len(fig.axes) == 2
    ax = fig.axes[0]
    ticks = [t.get_text() for t in ax.get_xticklabels()]
    assert ticks == [label(m) for m in METHODS]
    assert ticks[:5] == ["SCUR", "PE", "VE", "MSP", "DS entropy"]
    with pytest.raises(ValueError, match="no rows"):
        plot_auroc_by_method(small_result, subsets=["nothing"])
    table = risk_table(small_panel, seed=0, methods=("pe", "ve"))
    votes = verdicts(small_panel).loc[table.index]
    groups = matched_vote_groups(votes, table["error"])
    ax = plot_vote_patterns(groups, top=5)
    assert len(ax.get_yticklabels()) == 5
    per = pd.concat(
        matched_vote_groups(votes, table["error"], scores=table[m]).assign(method=m)
        for m in ("pe", "ve")
    )
    ax = plot_matched_group_auroc(per[per["usable"]])
    assert [t.get_text() for t in ax.get_yticklabels()] == ["VE", "PE"]
    matplotlib.pyplot.close("all")


def test_scur_beats_baselines_on_high_consensus_default_panel():
    """Mechanics check on data *built* to have these effects (not evidence about real panels).

    The default simulated panel contains high-consensus items whose majority is wrong and that are
    order- or rubric-sensitive or ambiguous in the latent model; SCUR should rank them above the
    correct high-consensus items better than PE, VE, MSP and DS entropy, averaged over seeds.
    """
    panel = simulate_panel(seed=0).data  # default: 2,000 items x 5 judges x 6 conditions
    result = evaluate_risk(panel, seeds=range(8), subsets=("hc",))
    mean = result.groupby("method")["auroc"].mean()
    for baseline in ("pe", "ve", "msp", "ds_entropy"):
        assert mean["scur"] > mean[baseline], mean.round(3).to_dict()
