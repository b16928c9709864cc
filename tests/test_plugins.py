"""Third-party methods through entry points: a plug-in package on the path, no edit to judgerisk.

The test writes a tiny installed distribution (a module and its ``.dist-info`` with
``entry_points.txt``) into a temporary folder, puts it on ``PYTHONPATH`` and checks, in fresh
processes, that its aggregator and its risk score appear wherever the built-ins do: the
registries, the figure style, the scored table of the certified decisions (what the report
shows) and the command line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests._plugin_site import plugin_site, run_python

ROOT = Path(__file__).resolve().parents[1]

PLUGIN = '''
import numpy as np
import pandas as pd

from judgerisk.aggregators._base import BaseAggregator


class FirstJudge(BaseAggregator):
    """Verdict of the first judge (an unregistered class: the entry point registers it)."""

    has_parameters = False
    display_name = "First judge"
    color = "#123456"

    def _fit(self, arr, table):
        return self._posterior(arr)

    def _posterior(self, arr):
        return np.where(np.isnan(arr[:, 0]), 0.5, arr[:, 0])


def flip_share(probs, votes, fit_items, items, panel):
    """Share of a judge's perturbed verdicts that differ from its original one: every condition."""
    wide = panel.assign(v=(panel["p"] > 0.5).astype(float)).pivot_table(
        index=["item", "judge"], columns="condition", values="v"
    )
    flips = wide.drop(columns="original").ne(wide["original"], axis=0)
    flips = flips.where(wide.drop(columns="original").notna())
    return flips.mean(axis=1).groupby("item").mean().reindex(items)
'''

ENTRY_POINTS = """
[judgerisk.aggregators]
first_judge = jr_toy_plugin:FirstJudge

[judgerisk.risk_scores]
flip_share = jr_toy_plugin:flip_share
"""


@pytest.fixture(scope="module")
def plugin_env(tmp_path_factory):
    return plugin_site(tmp_path_factory.mktemp("site"), "jr_toy_plugin", PLUGIN, ENTRY_POINTS)


def test_plugin_appears_wherever_the_builtins_do(plugin_env, tmp_path):
    out = run_python(
        """
        import json
        from judgerisk.aggregators import AGGREGATORS, aggregate
        from judgerisk.engine.certified import score_panel
        from judgerisk._plots import style
        from judgerisk.risk.registry import BASELINES, COMPARED, get_risk_score
        from judgerisk.engine.analysis import risk_table
        from judgerisk.simulate import simulate_panel

        panel = simulate_panel(n_items=60, n_judges=3, seed=0).data
        scored = score_panel(panel, n_seeds=1, aggregators=["majority", "first_judge"],
                             scur_options={"lmm_params": {"n_restarts": 1}})
        table = risk_table(panel, seed=0, methods=["ve", "flip_share"])
        print(json.dumps({
            "aggregators": list(AGGREGATORS),
            "baselines": list(BASELINES),
            "compared": list(COMPARED),
            "label": style.label("first_judge"),
            "color": style.color("first_judge"),
            "score_label": get_risk_score("flip_share").label,
            "uses_panel": get_risk_score("flip_share").uses_panel,
            "columns": list(scored.columns),
            "flip_range": [float(scored["flip_share"].min()), float(scored["flip_share"].max())],
            "first_judge_verdicts": sorted(set(scored["first_judge"].dropna())),
            "risk_table": list(table.columns),
        }))
        """,
        plugin_env,
        tmp_path,
    )
    got = json.loads(out)
    assert got["aggregators"][:5] == ["majority", "dawid_skene", "mace", "glad", "care"]
    assert got["aggregators"][-1] == "first_judge"  # after every built-in, whatever they are
    assert got["baselines"][-1] == "flip_share" and "flip_share" in got["compared"]
    assert (got["label"], got["color"]) == ("First judge", "#123456")
    assert got["score_label"] == "flip_share" and got["uses_panel"] is True
    assert {"flip_share", "first_judge", "first_judge_posterior"} <= set(got["columns"])
    assert 0.0 <= got["flip_range"][0] <= got["flip_range"][1] <= 1.0
    assert got["flip_range"][1] > 0  # the swap and rubric conditions were seen
    assert set(got["first_judge_verdicts"]) <= {"A", "B"}
    assert "flip_share" in got["risk_table"]


def test_plugin_in_the_command_line_and_the_report(plugin_env, tmp_path):
    """With no option, a plug-in's aggregator and score reach ``score``, ``report`` and the
    report's certification (their defaults are the registries' reported sets)."""
    panel, scores = tmp_path / "panel.csv", tmp_path / "scores.csv"
    report = tmp_path / "report.html"
    run = [sys.executable, "-m", "judgerisk.cli"]
    kw = dict(capture_output=True, text=True, env=plugin_env, cwd=tmp_path)
    sim = subprocess.run([*run, "simulate", "-o", str(panel), "--n-items", "60"], **kw)
    assert sim.returncode == 0, sim.stderr
    proc = subprocess.run([*run, "score", str(panel), "-o", str(scores), "--n-seeds", "1"], **kw)
    assert proc.returncode == 0, proc.stderr
    header = scores.read_text().splitlines()[0].split(",")
    assert {"flip_share", "majority", "first_judge", "first_judge_posterior"} <= set(header)
    record = json.loads(scores.with_name(scores.name + ".provenance.json").read_text())
    assert record["parameters"]["aggregators"] is None  # the default: the reported set
    argv = [*run, "report", str(panel), "-o", str(report), "--n-seeds", "1", "--n-splits", "20"]
    proc = subprocess.run(argv, **kw)
    assert proc.returncode == 0, proc.stderr
    page = report.read_text()
    assert "First judge" in page  # the aggregators' table and the riskiest items
    assert "flip_share (panel)" in page  # its certified decisions


def test_a_broken_plugin_warns_and_leaves_the_builtins(tmp_path):
    site = tmp_path / "site"
    info = site / "jr_broken-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: jr-broken\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[judgerisk.aggregators]\nbroken = jr_missing:Rule\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(site)])}
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "from judgerisk.aggregators import AGGREGATORS; print(list(AGGREGATORS))",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert "'broken'" in proc.stderr and "was not loaded" in proc.stderr
    assert "majority" in proc.stdout and "broken" not in proc.stdout
