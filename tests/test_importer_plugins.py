"""Importer plug-ins: a format declared through an entry point works in ``judgerisk import``.

As in ``tests/test_plugins.py``, a tiny installed distribution (a module and its ``.dist-info``
with ``entry_points.txt``) is written into a temporary folder and put on ``PYTHONPATH``; fresh
processes then run the command line. The built-ins' static declaration is checked against the
readers it names.
"""

from __future__ import annotations

import importlib
import inspect
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest

from judgerisk.importers import (
    BUILTIN_FORMATS,
    IMPORTERS,
    Imported,
    Importer,
    get_importer,
    import_judgments,
)
from judgerisk.panel import PanelError
from tests._plugin_site import plugin_site

PLUGIN = '''
"""A toy tool's verdict files: one ``item judge winner`` line per verdict (winner A, B or tie)."""

import pandas as pd

from judgerisk.importers import Imported, Importer


def read_votes(paths, epsilon=0.05):
    p_of = {"A": 1 - epsilon, "B": epsilon, "tie": 0.5}
    rows = []
    for path in paths:
        for line in open(path, encoding="utf-8").read().split("\\n"):
            if line.strip():
                item, judge, winner = line.split()
                rows.append(
                    {"item": item, "judge": judge, "condition": "original", "p": p_of[winner]}
                )
    return Imported(pd.DataFrame(rows), {"epsilon": epsilon, "item id": "first field"})


VOTES = Importer("votes", read_votes, files="votes.txt", options=("epsilon",))
'''

ENTRY_POINTS = """
[judgerisk.importers]
votes = jr_toy_importer:VOTES
votes_fn = jr_toy_importer:read_votes
"""

VOTES = "q1 j1 A\nq1 j2 B\nq2 j1 tie\nq2 j2 A\n"


@pytest.fixture(scope="module")
def plugin_env(tmp_path_factory):
    return plugin_site(tmp_path_factory.mktemp("site"), "jr_toy_importer", PLUGIN, ENTRY_POINTS)


def _judgerisk(args: list[str], env: dict, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "judgerisk.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
    )


@pytest.mark.parametrize("fmt", ["votes", "votes_fn"])
def test_plugin_format_in_judgerisk_import_and_verify(plugin_env, tmp_path, fmt):
    (tmp_path / "votes.txt").write_text(VOTES)
    out = tmp_path / "panel.csv"
    proc = _judgerisk(
        ["import", fmt, "votes.txt", "-o", str(out), "--epsilon", "0.1"], plugin_env, tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    assert f"judgerisk import: {fmt}: assumed" in proc.stderr and "epsilon: 0.1" in proc.stderr
    panel = pd.read_csv(out, comment="#").sort_values(["item", "judge"])
    assert panel["p"].round(6).tolist() == [0.9, 0.1, 0.5, 0.9]
    assert "1 of 4 cells" in proc.stderr  # the tie was counted
    ver = _judgerisk(["verify", str(out)], plugin_env, tmp_path)
    assert ver.returncode == 0, ver.stdout + ver.stderr
    # an option the plug-in does not take: one clear error, exit 2, nothing written
    bad = _judgerisk(
        ["import", fmt, "votes.txt", "-o", "other.csv", "--weak", "0.7"], plugin_env, tmp_path
    )
    assert bad.returncode == 2 and "takes no --weak" in bad.stderr
    assert "Traceback" not in bad.stderr and not (tmp_path / "other.csv").exists()


def test_plugin_listed_at_run_time_but_not_loaded_by_the_parser(plugin_env, tmp_path):
    code = textwrap.dedent(
        """
        import sys
        from judgerisk.cli import build_parser
        build_parser(extract=False)
        print("jr_toy_importer" in sys.modules)
        from judgerisk.importers import IMPORTERS
        print(" ".join(IMPORTERS))
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=plugin_env, cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    loaded, names = proc.stdout.splitlines()
    assert loaded == "False"
    assert names.split() == [imp.name for imp in BUILTIN_FORMATS] + ["votes", "votes_fn"]
    unknown = _judgerisk(["import", "nope", "votes.txt", "-o", "x.csv"], plugin_env, tmp_path)
    assert unknown.returncode == 2 and "'votes'" in unknown.stderr  # the error lists plug-ins
    helped = _judgerisk(["import", "--help"], plugin_env, tmp_path)
    assert "judgerisk.importers" in helped.stdout and "fastchat" in helped.stdout


@pytest.mark.parametrize("imp", BUILTIN_FORMATS, ids=lambda imp: imp.name)
def test_builtin_declaration_names_its_reader_and_its_options(imp):
    assert imp.name in IMPORTERS and get_importer(imp.name) is imp
    module, _, attr = str(imp.reader).partition(":")
    reader = getattr(importlib.import_module(module), attr)
    params = list(inspect.signature(reader).parameters)[1:]
    assert tuple(params) == imp.options


def test_an_importer_object_is_taken_in_place_of_a_name(tmp_path):
    def reader(paths, scale=1.0):
        rows = {"item": [1, 1], "judge": ["a", "b"], "condition": "original", "logit": [scale, 0.0]}
        return Imported(pd.DataFrame(rows), {"scale": scale})

    imp = Importer("unregistered", reader, files="x", options=("scale",))
    assert get_importer(imp) is imp and "unregistered" not in IMPORTERS
    (tmp_path / "x").write_text("")
    panel, record = import_judgments(imp, tmp_path / "x", scale=3.0)
    assert panel["logit"].tolist() == [3.0, 0.0] and record["format"] == "unregistered"
    with pytest.raises(PanelError, match="takes no option"):
        import_judgments(imp, tmp_path / "x", epsilon=0.1)
