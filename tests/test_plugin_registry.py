"""White-box tests of the shared registry: entry-point loading (simulated) and ordering."""

from __future__ import annotations

import json
import warnings
from importlib import metadata

import pytest

from judgerisk import plugins


def test_entry_point_loading_in_process(monkeypatch):
    """load_entry_points hands each loaded object to the registry's adopt hook."""
    from importlib import metadata

    from judgerisk import plugins

    seen = {}
    ep = metadata.EntryPoint(name="toy", value="json:dumps", group="judgerisk.importers")
    monkeypatch.setattr(metadata, "entry_points", lambda group: [ep] if group == ep.group else [])
    assert plugins.load_entry_points("judgerisk.importers", seen.__setitem__) == ["toy"]
    assert seen == {"toy": json.dumps}
    reg = plugins.Registry(
        "importer", group="judgerisk.importers", adopt=lambda n, o: reg.add(n, o)
    )
    assert list(reg.names()) == ["toy"]


def test_builtins_come_first_in_their_listed_order():
    reg = plugins.Registry("thing", builtins={"b": "json", "a": "json"})
    reg.add("late", 3)
    reg.add("a", 1)
    reg.add("b", 2)
    assert list(reg.names()) == ["b", "a", "late"]
    with pytest.raises(ValueError, match="already registered"):
        reg.add("a", 5)


def test_a_failing_plugin_is_skipped_with_a_warning(monkeypatch):
    ep = metadata.EntryPoint(name="bad", value="no_such_module_xyz:f", group="judgerisk.selectors")
    monkeypatch.setattr(metadata, "entry_points", lambda group: [ep])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert plugins.load_entry_points("judgerisk.selectors") == []
    assert any("'bad'" in str(w.message) for w in caught)


def test_a_selector_registered_at_run_time_runs_in_the_protocol_and_certified_decisions():
    import numpy as np
    import pandas as pd

    from judgerisk.engine.certified import score_selectors
    from judgerisk.selective.protocol import split_protocol
    from judgerisk.selective.registry import (
        REPORTED_SELECTORS,
        SELECTORS,
        get_selector,
        register_selector,
        unregister_selector,
    )

    class MedianKernel:
        """Accept the test items at or below the calibration median of the uncertainty."""

        cells = 0

        def __init__(self, inputs, errors, alphas, n_cal, settings):
            self.u, self.e, self.n_alphas = inputs["uncertainty"], errors, len(alphas)

        def block(self, cal):
            u = np.where(cal, self.u, np.nan)
            thr = np.nanmedian(u, axis=1)
            acc = (~cal) & (self.u[None, :] <= thr[:, None])
            return [(acc.sum(1), (acc & self.e).sum(1), thr)] * self.n_alphas

    def reference(x_cal, e_cal, x_test, alpha, settings):
        thr = float(np.median(x_cal))
        return thr, x_test <= thr

    register_selector(
        "median", needs="uncertainty", kernel=MedianKernel, reference=reference, label="Median"
    )
    try:
        assert "median" in SELECTORS and "median" in score_selectors()
        rng = np.random.default_rng(0)
        u = rng.random(80)
        gold = rng.integers(0, 2, 80)
        pred = np.where(rng.random(80) < 0.8, gold, 1 - gold)
        fast = split_protocol(u, pred, gold, n_splits=20)
        slow = split_protocol(u, pred, gold, n_splits=20, loop=True)
        assert "median" in set(fast["method"])
        cols = ["n_accepted", "n_errors", "threshold"]
        m_fast = fast[fast["method"] == "median"][cols].to_numpy()
        m_slow = slow[slow["method"] == "median"][cols].to_numpy()
        np.testing.assert_allclose(m_fast, m_slow)
        # ... and reaches the certified table and figure of the report and chapter 11
        from judgerisk._plots.certified import certified_table, plot_certified_summary
        from judgerisk.engine.certified import certify_panel, summarize_certified
        from judgerisk.simulate import simulate_panel

        panel = simulate_panel(n_items=120, n_judges=3, seed=2).data
        summary = summarize_certified(certify_panel(panel, n_splits=10, n_seeds=1))
        table = certified_table(summary)
        shown = list(pd.unique(table.index.get_level_values("selector")))
        # SCOPE first, then the other reported selectors, the one registered last at the end
        assert shown == [get_selector(name).label for name in REPORTED_SELECTORS]
        assert shown[0] == "SCOPE" and shown[-1] == "Median"
        assert table.xs("Median", level="selector")["guarantee met"].isna().all()
        assert certified_table(summary, "scope").index.names == ["score", "α"]
        legend = plot_certified_summary(summary).legends[0]
        assert "Median" in [t.get_text() for t in legend.get_texts()]
    finally:
        unregister_selector("median")
    assert "median" not in SELECTORS


def test_unregistered_instances_are_accepted_where_names_are(simulated_panel):
    import pandas as pd

    from judgerisk.aggregators import AGGREGATORS, aggregate
    from judgerisk.aggregators._majority import MajorityVote
    from judgerisk.engine.analysis import evaluate_risk
    from judgerisk.engine.retention import retention_analysis
    from judgerisk.risk.registry import RISK_SCORES, RiskScore

    def spread(probs, votes, fit_items, items):
        return probs.loc[items].std(axis=1, ddof=0).fillna(0.0)

    score = RiskScore("spread_local", "baseline", spread)
    panel = simulated_panel(n_items=120, n_judges=4, seed=5)
    result = evaluate_risk(panel, seeds=[0], methods=["ve", score], subsets=("all",))
    assert set(result["method"]) == {"ve", "spread_local"}
    ret = retention_analysis(panel, seeds=[0], aggregators=[MajorityVote()], methods=[score])
    assert set(ret["method"]) == {"spread_local"} and set(ret["aggregator"]) == {"majority"}
    by_name = aggregate(panel, "majority")
    pd.testing.assert_frame_equal(aggregate(panel, MajorityVote()), by_name)
    assert "spread_local" not in RISK_SCORES and len(AGGREGATORS) >= 5  # nothing registered
