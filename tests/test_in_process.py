"""A report's notebook runs in this process (no kernel) and gives the kernel's page.

``render_report`` runs the template in IPython's in-process kernel
(:mod:`judgerisk.report._in_process`) when no IPython shell runs here. These tests hold it to the
kernel's page, cell for cell, on both templates; check that the caller's warning filters,
``showwarning`` and matplotlib settings come back unchanged; that a cell's bad-input error and a
cell past its time limit give one-line errors; and that inside an IPython shell the report still
starts a kernel.
"""

from __future__ import annotations

import builtins
import gc
import os
import re
import sys
import warnings

import matplotlib
import matplotlib.pyplot as plt
import nbformat
import pytest
from IPython.core.interactiveshell import InteractiveShell

import judgerisk.report._in_process as _in_process
import judgerisk.report.build as build
from judgerisk.panel import PanelError

_RANDOM_IDS = re.compile(r"T_[0-9a-f]{5}")  # pandas' Styler draws a table id per run


def _no_shell() -> bool:
    """No IPython shell in this process: the next report runs in-process."""
    return not InteractiveShell.initialized()


def _page_body(path) -> str:
    """The page without what differs between any two runs: table ids, the record, the command."""
    page = _RANDOM_IDS.sub("T_x", path.read_text(encoding="utf-8"))
    cut = page.index("This report was produced by")
    return page[:cut]


def _with_kernel(monkeypatch) -> None:
    real = build.run_notebook

    def kernel(*args, **kwargs):
        kwargs["in_process"] = False
        return real(*args, **kwargs)

    monkeypatch.setattr(build, "run_notebook", kernel)


@pytest.mark.parametrize("one_judge", [False, True], ids=["panel", "one-judge"])
def test_the_in_process_page_is_the_kernels(tmp_path, simulated_panel, monkeypatch, one_judge):
    panel = simulated_panel(n_items=120, n_judges=4, seed=7)
    if one_judge:
        panel = panel[(panel["judge"] == "J1") & panel["condition"].isin(["original", "swap"])]
    src = tmp_path / "panel.csv"
    panel.to_csv(src, index=False)
    params = {"n_seeds": 1} if not one_judge else {}
    here = build.render_report(src, tmp_path / "here.html", parameters=params, progress=False)
    assert "<img" in here.read_text(encoding="utf-8")  # figures are images, not their repr
    with monkeypatch.context() as m:
        _with_kernel(m)
        kernel = build.render_report(
            src, tmp_path / "kernel.html", parameters=params, progress=False
        )
    assert _page_body(here) == _page_body(kernel)
    again = build.render_report(src, tmp_path / "again.html", parameters=params, progress=False)
    assert _page_body(again) == _page_body(here)  # a second run in one process: the same page


def test_the_callers_warnings_and_matplotlib_settings_come_back(tmp_path, simulated_panel):
    src = tmp_path / "panel.csv"
    panel = simulated_panel(n_items=90, n_judges=4, seed=5)
    panel["gold"] = panel["gold"].where(panel["item"] % 2 == 0)  # a note says so on the page
    panel.to_csv(src, index=False)
    params = {"n_splits": 20, "n_seeds": 1}
    pages = []
    for quiet in (False, True):
        with warnings.catch_warnings():
            if quiet:  # a caller that silences warnings (verify recomputes so) ...
                warnings.simplefilter("ignore")

            def mine(*args, **kwargs):
                raise AssertionError("the notebook's warnings reached the caller's showwarning")

            warnings.showwarning = mine
            filters = list(warnings.filters)
            backend = plt.get_backend()
            mine_open = plt.figure()  # the caller's open figure: not on the page, left open
            open_before = plt.get_fignums()  # with any an earlier test left open
            rc = dict(matplotlib.rcParams)
            environ = dict(os.environ)  # a kernel's shell sets FORCE_COLOR, TERM, the pagers
            main, names = sys.modules["__main__"], set(vars(builtins))
            out = tmp_path / f"r{int(quiet)}.html"
            build.render_report(src, out, parameters=params, progress=False)
            assert warnings.filters == filters and warnings.showwarning is mine
            assert dict(matplotlib.rcParams) == rc and plt.get_backend() == backend
            assert dict(os.environ) == environ
            assert sys.modules["__main__"] is main and set(vars(builtins)) == names
            assert plt.get_fignums() == open_before
            plt.close(mine_open)
            assert _no_shell()  # the in-process shell is gone
            pages.append(_page_body(out))
    assert pages[0] == pages[1]  # ... gets the same notes on its page
    assert pages[0].count("<img") == 2  # the report's two figures, none of the caller's
    assert "Note:" in pages[0]


def _notebook(*sources: str):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(s) for s in sources]
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    return nb


def test_a_cells_bad_input_error_stays_a_panel_error(tmp_path):
    nb = _notebook(
        "x = 1",
        "from judgerisk.panel import PanelError\nraise PanelError('p.csv, row 3: no judge')",
    )
    with pytest.raises(PanelError, match="row 3: no judge"):
        build.run_notebook(nb, tmp_path / "o.ipynb", {}, tmp_path, progress=False, in_process=True)


def test_a_cell_past_its_time_limit_fails_with_one_line(tmp_path):
    nb = _notebook("import time", "time.sleep(30)")
    with pytest.raises(RuntimeError, match=r"^cell \d+ of the notebook failed: TimeoutError"):
        build.run_notebook(
            nb, tmp_path / "o.ipynb", {}, tmp_path, timeout=1, progress=False, in_process=True
        )
    assert _no_shell()


def test_outputs_come_back_in_order(tmp_path):
    nb = _notebook(
        "print('a')\nprint('b')",
        "from IPython.display import HTML, display\ndisplay(HTML('<b>x</b>'))\n41 + 1",
    )
    done = build.run_notebook(
        nb, tmp_path / "o.ipynb", {}, tmp_path, progress=False, in_process=True
    )
    code = [c for c in done.cells if c.cell_type == "code"]
    assert code[-2].outputs[0]["text"] == "a\nb\n"  # one stream output, not one per print
    kinds = [o["output_type"] for o in code[-1].outputs]
    assert kinds == ["display_data", "execute_result"]
    assert code[-1].outputs[1]["data"]["text/plain"] == "42"


def test_the_collector_is_left_as_it_was(tmp_path):
    """What the cells import is frozen while they run (kept out of the collections) and unfrozen
    at the end; objects the caller froze stay frozen."""
    nb = _notebook("import fractions\nx = [fractions.Fraction(1, 3)]", "y = x * 2")
    own = _in_process._FROZEN_AT_IMPORT  # what the interpreter froze itself (Python 3.12)
    assert gc.get_freeze_count() <= own
    build.run_notebook(nb, tmp_path / "o.ipynb", {}, tmp_path, progress=False, in_process=True)
    assert gc.get_freeze_count() <= own
    gc.freeze()  # the caller's, e.g. before forking workers
    try:
        frozen = gc.get_freeze_count()
        build.run_notebook(nb, tmp_path / "o.ipynb", {}, tmp_path, progress=False, in_process=True)
        assert gc.get_freeze_count() > frozen * 0.9  # not unfrozen (a few were freed meanwhile)
    finally:
        gc.unfreeze()


def test_inside_an_ipython_shell_the_report_starts_a_kernel(tmp_path):
    shell = InteractiveShell.instance()
    try:
        assert not _no_shell()
        nb = _notebook("import os\nos.getpid()")
        done = build.run_notebook(
            nb, tmp_path / "o.ipynb", {}, tmp_path, progress=False, in_process=True
        )
        pid = int(done.cells[-1].outputs[0]["data"]["text/plain"])
        assert pid != os.getpid()  # ran in a kernel of its own
    finally:
        shell.clear_instance()
    assert _no_shell()
