"""The commands on the short path import no study and no plotting module (issue 42, item 3).

``judgerisk score``, ``import``, ``select``, ``bpe``, ``estimate``, ``extract`` and ``verify`` each run, end to
end on a small input, under ``python -X importtime``; the modules it lists must include none of
the book's own code (``judgerisk._book``: the studies, the chapters' figures) and no plotting
module (``judgerisk._plots``, matplotlib, seaborn). The engine they need lives in
:mod:`judgerisk.engine`.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
FORBIDDEN = ("judgerisk._book", "judgerisk._plots", "matplotlib", "seaborn")
#: ``extract`` runs a tiny transformers judge: without torch (Python 3.12/3.13 in CI install no
#: ``extract`` extra) that one command is skipped, saying why; the others still run.
HAS_TORCH = all(importlib.util.find_spec(m) for m in ("torch", "transformers"))
FASTCHAT = sorted((ROOT / "tests" / "data" / "importers" / "fastchat").rglob("*_pair.jsonl"))


def imported_modules(args: list[str], cwd: Path) -> set[str]:
    """The modules ``python -X importtime args...`` imports (it must exit 0)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}
    done = subprocess.run(
        [sys.executable, "-X", "importtime", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [ln for ln in done.stderr.splitlines() if ln.startswith("import time:")]
    return {ln.rsplit("|", 1)[-1].strip() for ln in lines} - {"imported package"}


def offending(modules: set[str]) -> list[str]:
    """The modules of ``modules`` that are a study, a figure or a plotting library."""
    return sorted(m for m in modules if any(m == f or m.startswith(f + ".") for f in FORBIDDEN))


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> Path:
    """A simulated panel, its scores and labels, one judge in both orders, a FastChat file."""
    from judgerisk.cli import main
    from judgerisk.testing import short_template, tiny_items, tiny_judge

    root = tmp_path_factory.mktemp("commands")
    argv = ["simulate", "-o", str(root / "panel.csv"), "--n-items", "60", "--seed", "1"]
    assert main([*argv, "--labels", str(root / "labels.csv")]) == 0
    assert main(["score", str(root / "panel.csv"), "-o", str(root / "scores.csv")]) == 0
    panel = pd.read_csv(root / "panel.csv")
    judge = sorted(panel["judge"].unique())[0]
    one = panel[(panel["judge"] == judge) & panel["condition"].isin(["original", "swap"])]
    one.to_csv(root / "one.csv", index=False)
    labels = pd.read_csv(root / "labels.csv")
    labels.sample(frac=0.5, random_state=0).to_csv(root / "cal.csv", index=False)
    shutil.copy(FASTCHAT[0], root / "games.jsonl")
    tiny_items(2).to_json(root / "items.jsonl", orient="records", lines=True)
    (root / "short.json").write_text(json.dumps(short_template()))
    if HAS_TORCH:
        tiny_judge(root / "tiny")
    return root


#: Each command as a user runs it, on the inputs of :func:`inputs`.
COMMANDS = {
    "score": ["score", "panel.csv", "-o", "scored.csv"],
    "select": ["select", "scores.csv", "--calibration", "cal.csv", "-o", "decisions.csv"],
    "bpe": ["bpe", "one.csv", "-o", "bpe.csv"],
    "estimate": ["estimate", "panel.csv", "--plan", "10", "-o", "plan.csv"],
    "import": ["import", "fastchat", "games.jsonl", "-o", "imported.csv"],
    "verify": ["verify", "scores.csv"],
    "extract": [
        *("extract", "--model", "tiny", "--items", "items.jsonl", "--out", "run"),
        *("--conditions", "original", "swap", "--judge", "tiny", "--template", "short.json"),
        "--no-progress",
    ],
}


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_short_path_command_imports_no_study_and_no_plotting(inputs, command):
    if command == "extract" and not HAS_TORCH:
        pytest.skip("judgerisk extract needs torch and transformers (the extract extra)")
    modules = imported_modules(["-m", "judgerisk.cli", *COMMANDS[command]], inputs)
    assert "judgerisk.cli" in modules
    assert offending(modules) == [], f"judgerisk {command} imports {offending(modules)}"


def test_the_check_sees_a_study_and_a_figure(tmp_path):
    """What ``judgerisk score`` loaded before the engine left the book's studies."""
    code = "import judgerisk._book.studies.paired, judgerisk._book.figures.risk"
    modules = imported_modules(["-c", code], tmp_path)
    found = offending(modules)
    assert "judgerisk._book.studies.paired" in found
    assert "judgerisk._book.figures.risk" in found and "matplotlib" in found
    assert offending({"judgerisk.engine.certified", "judgerisk.plotsy"}) == []


#: Libraries that cost ``judgerisk score`` most of a second to load and that scoring a panel
#: never calls (issue 43: the 20k-item score's time): scikit-learn (its metrics serve AUROCs and
#: the chapters), scipy.stats (certificates, intervals) and scipy.optimize (GLAD, the LMM's
#: "lbfgs" solver). They load where they are used.
SLOW = ("sklearn", "scipy.stats", "scipy.optimize")


def test_score_loads_no_slow_library_it_does_not_use(inputs):
    args = ["score", "panel.csv", "-o", "scored-slow.csv"]  # its own output: none is overwritten
    modules = imported_modules(["-m", "judgerisk.cli", *args], inputs)
    slow = sorted(m for m in modules if any(m == s or m.startswith(s + ".") for s in SLOW))
    assert slow == [], f"judgerisk score imports {slow[:8]}"
