"""CONTRIBUTING.md's recipes, followed literally, pass the project's gates and reach the report.

Every recipe's Python is written, as given, into a scratch plug-in package (one module per
recipe, declared through the entry points CONTRIBUTING.md describes) beside a ``.dist-info``,
then checked as the project checks its own code: ``ruff check``, ``ruff format --check``,
``mypy``, the contract tests (``tests/test_common.py``) on the recipes' methods, and in fresh
processes: ``score`` and ``report`` show the aggregator and the risk scores (the report's
certification included), the selector reaches the certification, ``import`` reads the
importer's files, ``extract --help`` lists the backend's option and ``load_dataset`` finds the
data set.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TEXT = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
SECTIONS = re.findall(r"^## (\d+)\. (.+?)\n(.*?)(?=^## |\Z)", TEXT, re.S | re.M)
#: Recipe title -> the scratch module it is written into.
MODULES = {
    "Add an aggregator": "aggregator",
    "Add a risk score": "risk_score",
    "Add a data set": "dataset",
    "Add a selector (single judge)": "selector",
    "Add a judge backend": "backend",
    "Add an importer": "importer",
    "Add a perturbation family": "family",
}
PACKAGE = "jr_recipes"
ENTRY_POINTS = f"""
[judgerisk.aggregators]
my_rule = {PACKAGE}.aggregator:MyRule

[judgerisk.risk_scores]
judge_spread = {PACKAGE}.risk_score:judge_spread
order_flips = {PACKAGE}.risk_score:order_flips

[judgerisk.selectors]
cal_median = {PACKAGE}.selector:calibration_median_reference

[judgerisk.datasets]
my_bench = {PACKAGE}.dataset:load_my_bench_panel

[judgerisk.judge_backends]
tempered = {PACKAGE}.backend:TemperedJudge

[judgerisk.importers]
my_tool = {PACKAGE}.importer:read_my_tool

[judgerisk.families]
tone = {PACKAGE}.family:ToneFamily
"""


def _python_blocks(body: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", body, re.S)


#: Each recipe's one block, by its module name.
BLOCKS = {MODULES[t]: _python_blocks(b)[0] for _, t, b in SECTIONS if t in MODULES}


def _tool(name: str) -> str:
    path = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not installed")
    return path


def test_recipes_are_numbered_one_to_n_and_each_has_its_code():
    numbers = [int(n) for n, _, _ in SECTIONS]
    assert numbers == list(range(1, len(numbers) + 1)), numbers
    titles = [t for _, t, _ in SECTIONS]
    assert titles == list(MODULES), titles
    for _, title, body in SECTIONS:
        assert len(_python_blocks(body)) == 1, f"{title}: one complete Python module"


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("recipes")
    package = root / PACKAGE
    package.mkdir()
    (package / "__init__.py").write_text('"""CONTRIBUTING.md\'s recipes, as written."""\n')
    for module, block in BLOCKS.items():
        (package / f"{module}.py").write_text(block)
    info = root / f"{PACKAGE}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: jr-recipes\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    return root


@pytest.fixture(scope="module")
def env(site) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(site)])}


def _run(argv: list[str], env: dict, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, env=env, cwd=cwd)


def _ok(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 0, f"{proc.args}\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


@pytest.mark.parametrize(
    "gate",
    [
        ["ruff", "check", "--no-cache"],
        ["ruff", "format", "--check", "--no-cache"],
        ["mypy", "--no-error-summary"],
    ],
    ids=["ruff-check", "ruff-format", "mypy"],
)
def test_recipes_pass_the_lint_gates(gate, site, env):
    config = ["--config-file" if gate[0] == "mypy" else "--config", str(ROOT / "pyproject.toml")]
    argv = [_tool(gate[0]), *gate[1:], *config, str(site / PACKAGE)]
    _ok(_run(argv, env, ROOT))  # from the root: mypy reuses the project's cache


def test_recipes_pass_the_contract_tests(env):
    selected = "my_rule or judge_spread or order_flips"
    argv = [sys.executable, "-m", "pytest", "tests/test_common.py", "-q", "-p", "no:cacheprovider"]
    out = _ok(_run([*argv, "-k", selected], env, ROOT))
    # 2 aggregator tests for my_rule, one risk-score test for each of the two scores
    assert re.search(r"\b4 passed", out), out


def test_recipes_reach_score_and_report(env, tmp_path):
    cli = [sys.executable, "-m", "judgerisk.cli"]
    panel, scores, page = tmp_path / "panel.csv", tmp_path / "scores.csv", tmp_path / "r.html"
    _ok(
        _run(
            [*cli, "simulate", "-o", str(panel), "--n-items", "80", "--n-judges", "3"],
            env,
            tmp_path,
        )
    )
    _ok(_run([*cli, "score", str(panel), "-o", str(scores), "--n-seeds", "1"], env, tmp_path))
    header = scores.read_text().splitlines()[0].split(",")
    assert {"my_rule", "my_rule_posterior", "judge_spread", "order_flips"} <= set(header)
    argv = [*cli, "report", str(panel), "-o", str(page), "--n-seeds", "1", "--n-splits", "20"]
    _ok(_run(argv, env, tmp_path))
    html = page.read_text(encoding="utf-8")
    # the aggregators' table, the certified scores and the certified selectors
    for shown in ("My rule", "Judge spread (panel)", "Order flips (panel)", "Calibration median"):
        assert shown in html, shown


def test_risk_score_recipe_is_finite_on_a_one_condition_panel(env, tmp_path):
    code = """
        import json
        import numpy as np
        from judgerisk.risk.baselines import baseline_scores
        from judgerisk.simulate import simulate_panel
        from judgerisk.engine.certified import score_selectors

        assert "cal_median" in score_selectors()  # the selector recipe: certify_panel runs it

        panel = simulate_panel(n_items=40, n_judges=3, seed=1).data
        original = panel[panel["condition"] == "original"]
        scores = baseline_scores(original, methods=("judge_spread", "order_flips"))
        print(json.dumps(bool(np.isfinite(scores.to_numpy()).all())))
    """
    out = _ok(_run([sys.executable, "-c", _dedent(code)], env, tmp_path))
    assert json.loads(out) is True


def test_importer_recipe_reaches_import_and_score(env, tmp_path):
    lines = []
    for item in range(30):
        for j, judge in enumerate(("j1", "j2", "j3")):
            winner = "A" if (item + j) % 3 else "B"
            lines.append({"id": f"q{item}", "judge": judge, "winner": winner})
            flipped = {"A": "B", "B": "A"}[winner]
            lines.append({"id": f"q{item}", "judge": judge, "winner": flipped, "swapped": True})
    lines.append({"id": "q_failed", "judge": "j1", "winner": "error"})  # dropped, counted
    source = tmp_path / "judgments.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in lines))
    cli = [sys.executable, "-m", "judgerisk.cli"]
    panel, scores = tmp_path / "panel.csv", tmp_path / "scores.csv"
    _ok(_run([*cli, "import", "my_tool", str(source), "-o", str(panel)], env, tmp_path))
    record = json.loads(panel.with_name(panel.name + ".provenance.json").read_text())
    assert "my_tool" in json.dumps(record) and "winner = 'error'" in json.dumps(record)
    _ok(_run([*cli, "score", str(panel), "-o", str(scores), "--n-seeds", "1"], env, tmp_path))
    assert len(scores.read_text().splitlines()) == 31


def test_backend_recipe_reaches_extract(env, tmp_path):
    pytest.importorskip("torch")
    out = _ok(_run([sys.executable, "-m", "judgerisk.cli", "extract", "--help"], env, tmp_path))
    assert "options of --backend tempered" in out and "--temperature" in out


def test_dataset_recipe_is_found(env, tmp_path):
    code = f"""
        from judgerisk.datasets import available, load_dataset
        from judgerisk.simulate import simulate_panel

        (root := __import__("pathlib").Path({str(tmp_path)!r}) / "my_bench").mkdir()
        simulate_panel(n_items=20, n_judges=2, seed=0).data.to_csv(root / "judgments.csv", index=False)
        panel = load_dataset("my_bench", root.parent)
        print(available("my_bench", root.parent), panel["item"].nunique())
    """
    out = _ok(_run([sys.executable, "-c", _dedent(code)], env, tmp_path))
    assert out.split() == ["True", "20"]


def _dedent(code: str) -> str:
    import textwrap

    return textwrap.dedent(code)


def test_perturbation_family_recipe_runs():
    from judgerisk.extract.perturb import perturb_items
    from judgerisk.families import (
        FAMILIES,
        family_pairs,
        get_family,
        register_family,
        unregister_family,
    )
    from judgerisk.testing import tiny_items

    # where recipe 7 was applied in the package, "tone" is a built-in: run the block in its place
    built_in = get_family("tone") if "tone" in FAMILIES else None
    if built_in is not None:
        unregister_family("tone")
    try:
        exec(compile(BLOCKS["family"], "recipe_family", "exec"), {})
        assert "tone" in FAMILIES
        assert family_pairs(["original", "swap", "tone1", "swap_tone1"])["order"] == [
            ("swap", "original"),
            ("swap_tone1", "tone1"),
        ]
        shown = perturb_items(tiny_items(1), ["original", "tone1"])
        assert shown.loc[1, "perturbation"].startswith("prompt prefixed with")
    finally:
        unregister_family("tone")
        if built_in is not None:
            register_family(built_in)
