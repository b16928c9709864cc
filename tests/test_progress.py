"""Progress bars: the text bar on stderr outside a kernel, whatever ``tqdm.auto`` chose earlier."""

from __future__ import annotations

import io
import subprocess
import sys
import types

from tqdm.std import tqdm as text_bar

from judgerisk._util.progress import progress_bar


def test_a_bar_outside_a_kernel_is_the_text_bar_even_after_tqdm_auto_chose_the_notebook(
    monkeypatch,
):
    """``tqdm.auto`` binds its class once; a report run in this process could bind the notebook
    bar, which writes to stdout. The bar class is chosen at each call instead."""
    notebook = types.ModuleType("tqdm.auto")
    notebook.tqdm = None  # what a stale binding would hand out
    monkeypatch.setitem(sys.modules, "tqdm.auto", notebook)
    monkeypatch.setitem(sys.modules, "tqdm.autonotebook", notebook)
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    bar = progress_bar(range(3), enabled=True, desc="splits")
    assert isinstance(bar, text_bar) and type(bar).__name__ == "tqdm"
    list(bar)
    bar.close()
    assert "splits" in err.getvalue()


def test_a_disabled_bar_prints_nothing(capsys):
    list(progress_bar(range(3), enabled=False, desc="splits"))
    out, err = capsys.readouterr()
    assert out == err == ""


def test_a_bar_starts_no_thread():
    """tqdm's first bar starts a monitor thread, even a disabled bar; with a thread running a
    process may not fork, so score_panel would score its splits on one core only. In a fresh
    process (another test's bar may have started tqdm's monitor in this one)."""
    code = (
        "import io, threading\n"
        "from judgerisk._util.progress import progress_bar\n"
        "for on in (False, True):\n"
        "    list(progress_bar(range(3), enabled=on, file=io.StringIO()))\n"
        "print(threading.active_count())\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "1"
