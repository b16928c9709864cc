"""CONTRIBUTING.md's Python recipes pass the project's lint as written, and they run."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BLOCKS = re.findall(r"```python\n(.*?)```", (ROOT / "CONTRIBUTING.md").read_text(), re.S)


def test_contributing_has_recipes():
    assert len(BLOCKS) >= 3


@pytest.mark.parametrize("k", range(len(BLOCKS)))
def test_recipe_passes_ruff(k, tmp_path):
    ruff = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
    if not Path(ruff).exists():
        pytest.skip("ruff is not installed")
    path = tmp_path / f"recipe_{k}.py"
    path.write_text(BLOCKS[k])
    proc = subprocess.run(
        [ruff, "check", "--config", str(ROOT / "pyproject.toml"), "--no-cache", str(path)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, f"recipe {k}:\n{BLOCKS[k]}\n{proc.stdout}{proc.stderr}"


def test_aggregator_and_risk_score_recipes_run(registered, simulated_panel):
    from judgerisk.aggregators import AGGREGATORS, aggregate
    from judgerisk.risk.baselines import baseline_scores
    from judgerisk.risk.registry import BASELINES, get_risk_score

    agg_block = next(b for b in BLOCKS if "register_aggregator(" in b)
    score_block = next(b for b in BLOCKS if "register_risk_score(" in b)
    exec(compile(agg_block, "recipe_aggregator", "exec"), {})
    registered("aggregator", "my_rule")
    exec(compile(score_block, "recipe_risk_score", "exec"), {})
    registered("risk_score", "spread")
    registered("risk_score", "order_flips")
    assert "my_rule" in AGGREGATORS and {"spread", "order_flips"} <= set(BASELINES)
    panel = simulated_panel(n_items=40, n_judges=3, seed=1)
    assert aggregate(panel, "my_rule")["verdict"].isin(["A", "B"]).all()
    scores = baseline_scores(panel, methods=("spread", "order_flips"))
    assert scores.notna().all().all() and (scores >= 0).all().all()
    assert get_risk_score("order_flips").uses_panel and not get_risk_score("spread").uses_panel


def test_perturbation_family_recipe_runs():
    from judgerisk.extract.perturb import perturb_items
    from judgerisk.families import FAMILIES, family_pairs, unregister_family
    from judgerisk.testing import tiny_items

    block = next(b for b in BLOCKS if "register_family(" in b)
    try:
        exec(compile(block, "recipe_family", "exec"), {})
        assert "tone" in FAMILIES
        assert family_pairs(["original", "swap", "tone1", "swap_tone1"])["order"] == [
            ("swap", "original"),
            ("swap_tone1", "tone1"),
        ]
        shown = perturb_items(tiny_items(1), ["original", "tone1"])
        assert shown.loc[1, "perturbation"].startswith("prompt prefixed with")
    finally:
        unregister_family("tone")
