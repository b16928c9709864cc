"""CONTRIBUTING.md's perturbation-family recipe, installed as a plug-in, reaches ``score``.

The test takes the recipe's code block as written in CONTRIBUTING.md ("Add a perturbation
family"), installs it as a tiny distribution whose entry point (group ``judgerisk.families``)
names its ``Family`` subclass, and checks in fresh processes that the family defined outside
judgerisk validates, renders into perturbed items, simulates with known truth, and scores with
``S_tone`` and ``z_S_tone`` through the API and the command line, where ``verify`` reproduces
the scores.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from tests._plugin_site import ROOT, plugin_site, run_python

BLOCKS = re.findall(r"```python\n(.*?)```", (ROOT / "CONTRIBUTING.md").read_text(), re.S)
#: The recipe as a reader copies it into their own package.
PLUGIN = next(b for b in BLOCKS if "register_family(" in b)
CLASS = re.search(r"^class (\w+)\(Family\)", PLUGIN, re.M).group(1)
NAME = re.search(r'^    name = "(\w+)"', PLUGIN, re.M).group(1)
LABEL = re.search(r'^    signal_label = "(.+)"', PLUGIN, re.M).group(1)
COLOR = re.search(r'^    signal_color = "(.+)"', PLUGIN, re.M).group(1)
ENTRY_POINTS = f"""
[judgerisk.families]
{NAME} = jr_tone_plugin:{CLASS}
"""


def test_the_recipe_is_the_tone_family():
    assert (NAME, LABEL) == ("tone", "S (tone)")  # the assertions below name its conditions


@pytest.fixture(scope="module")
def plugin_env(tmp_path_factory):
    return plugin_site(tmp_path_factory.mktemp("site"), "jr_tone_plugin", PLUGIN, ENTRY_POINTS)


def test_plugin_family_reaches_score(plugin_env, tmp_path):
    code = """
        import json, warnings
        warnings.simplefilter("ignore")
        from judgerisk.engine.certified import score_panel
        from judgerisk.extract.perturb import perturb_items
        from judgerisk.families import FAMILIES, family_pairs
        from judgerisk.panel import validate_panel
        from judgerisk._plots import style
        from judgerisk.risk.metrics import auroc
        from judgerisk.simulate import simulate_panel
        from judgerisk.testing import tiny_items

        conds = ("original", "swap", "tone1", "tone2", "swap_tone1")
        sim = simulate_panel(n_items=150, n_judges=3, seed=0, conditions=conds, tone_sensitivity=4.0,
                             judge_noise_low=0.5, judge_noise_high=1.0)
        panel = validate_panel(sim.data)
        scored = score_panel(panel, n_seeds=1, aggregators=("majority",),
                             scur_options={"lmm_params": {"n_restarts": 1}})
        items = perturb_items(tiny_items(1), ["original", "tone2"])
        print(json.dumps({
            "families": list(FAMILIES),
            "pairs": family_pairs(conds)["tone"],
            "columns": list(scored.columns),
            "auroc": auroc(scored["S_tone"], sim.truth.items["tone_sensitive"].astype(int)),
            "label": style.label("S_tone"), "color": style.color("S_tone"),
            "prompt": items.loc[1, "user"], "note": items.loc[1, "perturbation"],
        }))
        """
    got = json.loads(run_python(code, plugin_env, tmp_path))
    assert got["families"][-1] == "tone"
    assert got["pairs"] == [["tone1", "original"], ["tone2", "original"], ["swap_tone1", "swap"]]
    assert {"S_tone", "z_S_tone"} <= set(got["columns"])
    assert got["columns"].index("S_tone") < got["columns"].index("S")
    assert got["auroc"] > 0.6  # the simulated tone-sensitive items rank high on S_tone
    assert (got["label"], got["color"]) == (LABEL, COLOR)
    assert re.search(r"(Please,|Kindly,|If you would,) \S", got["prompt"]), got["prompt"]
    assert got["note"].startswith("prompt prefixed with")


def test_plugin_family_in_the_command_line(plugin_env, tmp_path):
    panel, scores = tmp_path / "panel.csv", tmp_path / "scores.csv"
    run = [sys.executable, "-m", "judgerisk.cli"]
    kw = dict(capture_output=True, text=True, env=plugin_env, cwd=tmp_path)
    sim = subprocess.run(
        [
            *run,
            "simulate",
            "-o",
            str(panel),
            "--n-items",
            "60",
            "--conditions",
            "original,swap,tone1",
        ],  # fmt: skip
        **kw,
    )
    assert sim.returncode == 0, sim.stderr
    proc = subprocess.run(
        [*run, "score", str(panel), "-o", str(scores), "--aggregators", "majority"], **kw
    )
    assert proc.returncode == 0, proc.stderr
    header = scores.read_text().splitlines()[0].split(",")
    assert {"S_tone", "z_S_tone"} <= set(header)
    verify = subprocess.run([*run, "verify", str(scores)], **kw)
    assert verify.returncode == 0, verify.stderr


def test_verify_without_the_plugin_names_it(plugin_env, tmp_path):
    """An output made with a plug-in family, verified where it is not installed: the refusal
    names the plug-in (issue 44; main said "not a valid judgerisk command")."""
    import os

    panel = tmp_path / "panel.csv"
    run = [sys.executable, "-m", "judgerisk.cli"]
    made = subprocess.run(
        [*run, "simulate", "-o", str(panel), "--n-items", "40", "--conditions", "original,tone1"],
        capture_output=True,
        text=True,
        env=plugin_env,
        cwd=tmp_path,
    )
    assert made.returncode == 0, made.stderr
    bare = {**os.environ, "PYTHONPATH": plugin_env["PYTHONPATH"].split(os.pathsep)[0]}
    proc = subprocess.run(
        [*run, "verify", str(panel)], capture_output=True, text=True, env=bare, cwd=tmp_path
    )
    assert proc.returncode != 0
    assert f"perturbation family {NAME!r} from jr_tone_plugin" in proc.stderr
    assert "not installed here" in proc.stderr and "install the package" in proc.stderr
