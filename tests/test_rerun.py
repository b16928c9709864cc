"""`judgerisk run`: a chapter reruns on the reader's file from any directory."""

from __future__ import annotations

import nbformat
import pytest

from judgerisk import cli
from judgerisk._book import rerun, runbook
from judgerisk.simulate import simulate_panel


def test_find_chapter_by_number_and_name():
    assert rerun.find_chapter("4").stem == "04_scur_signals"
    assert rerun.find_chapter("04").stem == "04_scur_signals"
    assert rerun.find_chapter("scur_signals").stem == "04_scur_signals"
    with pytest.raises(ValueError, match="unknown chapter"):
        rerun.find_chapter("99")


def test_parse_assignment_reads_literals_and_strings():
    assert rerun.parse_assignment("n_items=500") == ("n_items", 500)
    assert rerun.parse_assignment("verdict=dawid_skene") == ("verdict", "dawid_skene")
    assert rerun.parse_assignment("x=(1, 2)") == ("x", (1, 2))
    with pytest.raises(ValueError, match="NAME=VALUE"):
        rerun.parse_assignment("500")


def test_every_chapter_has_parameters():
    for path in rerun.chapter_sources():
        names = [p.name for p in rerun.chapter_parameters(path)]
        assert names, path.stem


def test_run_chapter_on_a_relative_file_from_another_directory(tmp_path, monkeypatch):
    work = tmp_path / "elsewhere"
    work.mkdir()
    simulate_panel(n_items=120, seed=3).data.to_csv(work / "mine.csv", index=False)
    before = (work / "mine.csv").read_bytes()
    monkeypatch.chdir(work)
    code = cli.main(["run", "01", "--small", "--param", "panel_path=mine.csv", "-o", "out.ipynb"])
    assert code == 0
    nb = nbformat.read(work / "out.ipynb", as_version=4)
    # the visible parameters cell shows what ran (papermill's injected copy is folded into it)
    assert not [c for c in nb.cells if "injected-parameters" in c.metadata.get("tags", [])]
    shown = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    assert f"panel_path = {str(work / 'mine.csv')!r}" in shown.source  # made absolute
    assert "(default: None)" in shown.source and "n_items = 300" in shown.source
    assert (work / "mine.csv").read_bytes() == before  # the input is untouched
    assert not list(work.glob(".judgerisk-*"))  # no temporary left behind
    # never over an existing file, never over an input, never an unknown parameter
    assert cli.main(["run", "01", "--small", "-o", "out.ipynb"]) == cli.EXIT_USAGE
    assert cli.main(["run", "01", "--param", "nope=1", "-o", "x.ipynb"]) == cli.EXIT_USAGE
    assert cli.main(["run", "01", "--param", "panel_path=missing.csv", "-o", "x.ipynb"]) == 2
    assert not (work / "x.ipynb").exists()


def test_parameters_that_ran_keeps_the_default_in_words():
    source = "n_items = 2000  # items in the panel\npanel_path = None\nseed = 0  # seed\n"
    shown = runbook.parameters_that_ran(source, {"n_items": 300, "panel_path": "a.csv", "seed": 0})
    assert shown == (
        "n_items = 300  # items in the panel; (default: 2000)\n"
        "panel_path = 'a.csv'  # (default: None)\nseed = 0  # seed\n"
    )


def test_run_list_prints_the_parameters(capsys):
    assert cli.main(["run", "11", "--list"]) == 0
    out = capsys.readouterr().out
    assert "n_splits = 1000" in out and "panel_path = None" in out
