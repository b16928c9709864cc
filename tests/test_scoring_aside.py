"""A report scores its panel in a forked process while it imports what its notebook needs, and
has its page rendered by another while it runs the notebook.

:func:`judgerisk.report.build._scored_aside` forks on Linux with two cores; these tests hold the
child to what scoring here gives (the same files, the same warnings), check that its error comes
back as the same error, and that a report that fails first leaves no child behind.
"""

from __future__ import annotations

import functools
import os
import re
import time

import pandas as pd
import pytest

import judgerisk.report.build as build
from judgerisk.options import ReportSettings
from judgerisk.panel import PanelError

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="forks on POSIX only")


def _scored(panel, folder, aside: bool, monkeypatch) -> tuple[dict, pd.DataFrame, bytes]:
    monkeypatch.setattr(build, "_scoring_aside_possible", lambda: aside)
    params = ReportSettings(n_seeds=1).as_parameters()
    pq, csv = folder / f"s{int(aside)}.parquet", folder / f"s{int(aside)}.csv"
    score = functools.partial(build._score_to_files, panel, params, False, pq, csv)
    with build._scored_aside(score) as scoring:
        assert scoring.forked is aside
        attrs = scoring.result()
    return attrs, pd.read_parquet(pq), csv.read_bytes()


def test_the_child_scores_as_this_process_does(tmp_path, simulated_panel, monkeypatch):
    panel = simulated_panel(n_items=80, n_judges=4, seed=3)
    # items seen in one condition only: no S value, which the scoring warns about
    panel = panel[~((panel["condition"] != "original") & (panel["item"] < 20))]
    here = _scored(panel, tmp_path, False, monkeypatch)
    aside = _scored(panel, tmp_path, True, monkeypatch)
    assert here[0]["warnings"] and aside[0] == here[0]  # seeds and warnings
    pd.testing.assert_frame_equal(aside[1], here[1])
    assert aside[2] == here[2]


def test_the_childs_error_is_raised_here(tmp_path, simulated_panel, monkeypatch):
    def bad(*args, **kwargs):
        raise PanelError("p.csv, row 3, column judge: ''")

    monkeypatch.setattr(build, "report_table", bad)  # the child inherits it
    with pytest.raises(PanelError, match="row 3, column judge") as caught:
        _scored(simulated_panel(n_items=40, n_judges=3), tmp_path, True, monkeypatch)
    assert "scoring process" in "".join(getattr(caught.value, "__notes__", []))


def test_a_report_that_fails_first_leaves_no_child(
    tmp_path, simulated_panel, monkeypatch, forked_pids
):
    src = tmp_path / "panel.csv"
    simulated_panel(n_items=60, n_judges=3).to_csv(src, index=False)
    children = forked_pids

    def slow(*args, **kwargs):
        time.sleep(60)

    def broken(nb):
        raise RuntimeError("no module for the notebook")

    monkeypatch.setattr(build, "_scoring_aside_possible", lambda: True)
    monkeypatch.setattr(build, "report_table", slow)
    monkeypatch.setattr(build, "_warm_up", broken)
    started = time.monotonic()
    with pytest.raises(RuntimeError, match="no module for the notebook"):
        build.render_report(src, tmp_path / "r.html", parameters={"n_seeds": 1})
    assert time.monotonic() - started < 30 and len(children) == 1  # not waited for: ended
    with pytest.raises(ChildProcessError):
        os.waitpid(children[0], os.WNOHANG)  # and reaped
    assert [p.name for p in tmp_path.iterdir()] == ["panel.csv"]


def test_the_page_is_the_same_with_the_certification_checked_aside(
    tmp_path, simulated_panel, monkeypatch
):
    src = tmp_path / "panel.csv"
    panel = simulated_panel(n_items=90, n_judges=4, seed=5)
    panel["gold"] = panel["gold"].where(panel["item"] % 2 == 0)  # the check warns: a note
    panel.to_csv(src, index=False)
    pages = []
    for aside in (False, True):
        monkeypatch.setattr(build, "_scoring_aside_possible", lambda aside=aside: aside)
        out = build.render_report(
            src, tmp_path / f"r{int(aside)}.html", parameters={"n_splits": 20, "n_seeds": 1}
        )
        page = re.sub(r"T_[0-9a-f]{5}", "T_x", out.read_text(encoding="utf-8"))
        pages.append(page[: page.index("This report was produced by")])
    assert "are left out of the comparison" in pages[0]  # certify_panel's warning, as a note
    assert pages[1] == pages[0]


# ------------------------------------------------------------------ the page rendered aside
def _doubler():  # what serve_aside's child prepares: a function of the later argument
    return lambda arg: {"pid": os.getpid(), "twice": arg * 2}


@pytest.mark.parametrize("fork", [False, True])
def test_serve_aside_answers_the_one_call(fork, forked_pids):
    from judgerisk._util.aside import serve_aside

    with serve_aside(_doubler, fork, what="the doubling process") as ask:
        answer = ask([1, 2])
    assert answer["twice"] == [1, 2, 1, 2]
    assert (answer["pid"] != os.getpid()) is fork and len(forked_pids) == int(fork)
    for pid in forked_pids:  # ended and reaped
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)


@pytest.mark.parametrize("where", ["prepare", "answer"])
def test_serve_asides_error_is_raised_here(where):
    from judgerisk._util.aside import serve_aside

    def prepare():
        if where == "prepare":
            raise PanelError("no exporter")
        return lambda arg: 1 / arg

    with serve_aside(prepare, True, what="the page-rendering process") as ask:
        with pytest.raises((PanelError, ZeroDivisionError)) as caught:
            ask(0)
    assert "page-rendering process" in "".join(getattr(caught.value, "__notes__", []))


def test_a_block_that_never_asks_leaves_no_child(forked_pids):
    from judgerisk._util.aside import serve_aside

    with pytest.raises(RuntimeError, match="the notebook failed"):
        with serve_aside(_doubler, True) as _:
            raise RuntimeError("the notebook failed")
    assert len(forked_pids) == 1
    with pytest.raises(ChildProcessError):
        os.waitpid(forked_pids[0], os.WNOHANG)


def test_the_page_is_rendered_aside(tmp_path, simulated_panel):
    """Two children (the scoring, then the page's renderer), and the page theirs: nbconvert is
    never imported here."""
    import subprocess
    import sys

    src = tmp_path / "panel.csv"
    simulated_panel(n_items=60, n_judges=3, seed=2).to_csv(src, index=False)
    code = (
        "import sys, judgerisk.report.build as b\n"
        "b._scoring_aside_possible = lambda: True\n"
        f"b.render_report({str(src)!r}, {str(tmp_path / 'r.html')!r}, {{'n_splits': 20}})\n"
        "print('nbconvert' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False"]
    assert "judgerisk report: panel.csv" in (tmp_path / "r.html").read_text(encoding="utf-8")


def test_a_forked_child_never_collects_what_it_inherited():
    """The inherited objects are frozen in the child: a collection there would write to each of
    them, copying the pages it shares with this process."""
    import gc

    from judgerisk._util.aside import run_aside

    with run_aside(gc.get_freeze_count, True) as aside:
        frozen = aside.result()
    assert frozen >= len(gc.get_objects()) // 2
