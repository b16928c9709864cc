"""The CONTRIBUTING.md recipes work: a toy aggregator and a toy risk score, registered here and
nowhere else, flow through ``aggregate``, ``evaluate_risk``, the retention analysis and the
figures with no other change to the package."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from judgerisk import AGGREGATORS, aggregate, evaluate_risk, retention_analysis  # noqa: E402
from judgerisk._book.figures.aggregate import plot_retention_curves  # noqa: E402
from judgerisk._book.figures.risk import plot_auroc_by_method  # noqa: E402
from judgerisk.aggregators import BaseAggregator, register_aggregator  # noqa: E402
from judgerisk.engine.analysis import METHODS  # noqa: E402
from judgerisk.risk.registry import register_risk_score  # noqa: E402

FAST = {"lmm_params": {"max_iter": 60, "n_restarts": 1}}


def test_toy_aggregator_and_risk_score_flow_everywhere(registered, simulated_panel):
    # recipe 1: an aggregator is one class + its registration
    @register_aggregator("trimmed_mean", label="Trimmed mean", color="#17becf")
    class TrimmedMean(BaseAggregator):
        """Mean probability after dropping each item's most extreme judge."""

        uses = "p"
        has_parameters = False

        def _fit(self, arr: np.ndarray, table: pd.DataFrame) -> np.ndarray:
            return self._posterior(arr)

        def _posterior(self, arr: np.ndarray) -> np.ndarray:
            dev = np.abs(np.nan_to_num(arr, nan=0.5) - 0.5)
            worst = np.argmax(dev, axis=1)
            kept = arr.copy()
            kept[np.arange(len(arr)), worst] = np.nan
            return np.where(np.isnan(kept).all(1), np.nanmean(arr, 1), np.nanmean(kept, 1))

    registered("aggregator", "trimmed_mean")

    # recipe 2: a risk score is one function + its registration
    @register_risk_score("spread", label="Spread", color="#bcbd22")
    def spread(probs, votes, fit_items, items):
        return probs.loc[items].std(axis=1, ddof=0).fillna(0.0).rename("spread")

    registered("risk_score", "spread")

    panel = simulated_panel(n_items=200, n_judges=5, seed=3)
    assert AGGREGATORS[-1] == "trimmed_mean" and METHODS[-1] == "spread"

    out = aggregate(panel, "trimmed_mean")
    assert out["verdict"].isin(["A", "B"]).all() and out["posterior"].between(0, 1).all()

    risk = evaluate_risk(panel, seeds=[0], aggregator="trimmed_mean", scur_options=FAST)
    assert "spread" in set(risk["method"])
    assert risk.loc[risk["method"].eq("spread"), "auroc"].notna().any()

    ret = retention_analysis(panel, seeds=[0], scur_options=FAST)
    assert "trimmed_mean" in set(ret["aggregator"]) and "spread" in set(ret["method"])

    fig = plot_retention_curves(ret, method="spread")
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert "Trimmed mean" in labels
    fig2 = plot_auroc_by_method(risk)
    ticks = {t.get_text() for ax in fig2.axes for t in ax.get_xticklabels() + ax.get_yticklabels()}
    legend = fig2.axes[0].get_legend()
    names = ticks | ({t.get_text() for t in legend.get_texts()} if legend else set())
    assert "Spread" in names
    plt.close("all")


def test_the_toys_are_gone_after_the_test():
    assert "trimmed_mean" not in AGGREGATORS and "spread" not in METHODS


def test_toy_dataset_recipe(registered, tmp_path, monkeypatch, simulated_panel):
    from judgerisk.datasets import DATASETS, available, load_dataset, register_dataset
    from judgerisk.panel import save_panel

    # recipe 3: a data set is one loader + its registration (folder and marker file)
    @register_dataset("toy", markers=("panel.csv",))
    def load_toy_panel(root, n=None):
        frame = pd.read_csv(root / "toy" / "panel.csv")
        return frame if n is None else frame[frame["item"] < n]

    registered("dataset", "toy")
    assert "toy" in DATASETS
    monkeypatch.setenv("JUDGERISK_DATA", str(tmp_path))
    assert not available("toy")
    with pytest.raises(FileNotFoundError, match="JUDGERISK_DATA"):
        load_dataset("toy")
    (tmp_path / "toy").mkdir()
    save_panel(simulated_panel(n_items=20, n_judges=3, seed=1), tmp_path / "toy" / "panel.csv")
    assert available("toy")
    assert load_dataset("toy", n=5)["item"].nunique() == 5


def test_a_score_that_reads_the_panel_gets_the_contracts_text_columns(registered, simulated_panel):
    """score_panel compares the condition as a categorical; a plug-in reading ``panel=`` still
    gets text columns (a categorical's groupby would list absent conditions)."""
    from judgerisk.engine.certified import score_panel

    seen = []

    @register_risk_score("conditions_seen", label="Conditions seen", color="#17becf")
    def conditions_seen(probs, votes, fit_items, items, panel):
        seen.append({c: str(panel[c].dtype) for c in ("item", "judge", "condition")})
        counts = panel.groupby("item")["condition"].nunique()
        return counts.reindex(items).astype(float)

    registered("risk_score", "conditions_seen")
    panel = simulated_panel(n_items=60, n_judges=3, seed=1)
    out = score_panel(panel, n_seeds=1, baselines=("pe", "conditions_seen"), scur_options=FAST)
    assert seen and all(dtype != "category" for d in seen for dtype in d.values()), seen
    assert (out["conditions_seen"] == panel["condition"].nunique()).all()
