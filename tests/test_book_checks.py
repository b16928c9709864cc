"""The page checks that every book build runs (judgerisk._book.checks) find what they look for."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook, new_output

from judgerisk._book.checks import check_book, notebook_problems, page_problems

GLUE = "application/papermill.record/"


def _glue(name: str, plain: str, markdown: str | None = None) -> dict:
    data = {GLUE + "text/plain": plain}
    if markdown is not None:
        data[GLUE + "text/markdown"] = markdown
    meta = {"scrapbook": {"name": name, "mime_prefix": GLUE}}
    return new_output("display_data", data=data, metadata=meta)


def _notebook(*outputs: dict, tags: tuple[str, ...] = ()) -> nbformat.NotebookNode:
    cell = new_code_cell("x = 1", metadata={"tags": list(tags)})
    cell.outputs = list(outputs)
    return new_notebook(cells=[cell])


def test_a_clean_notebook_has_no_problem():
    nb = _notebook(
        new_output("stream", name="stdout", text="fitted 3 judges\n"),
        _glue("ch01_n", "2000"),
        _glue("ch01_judge", "<IPython.core.display.Markdown object>", "`GPT-4`"),
        new_output("display_data", data={"text/html": "<p><strong>Note:</strong> ties.</p>"}),
    )
    assert notebook_problems(nb) == []


def test_each_problem_is_found_and_named():
    cases = {
        "stderr output": new_output("stream", name="stderr", text="something\n"),
        "a raw warning": new_output(
            "display_data", data={"text/plain": "panel.py:818: UserWarning: judge 'Falcon'"}
        ),
        "an absolute path": new_output("stream", name="stdout", text="wrote /work/x/out.csv\n"),
        "is empty": _glue("ch11_verdict", "''"),
        "error": new_output("error", ename="ValueError", evalue="bad", traceback=[]),
    }
    for what, output in cases.items():
        problems = notebook_problems(_notebook(output), "11_certified")
        assert len(problems) == 1 and what in problems[0], (what, problems)
        assert problems[0].startswith("11_certified, cell 0")
    empty_md = _glue("ch11_real", "<IPython.core.display.Markdown object>", "  ")
    assert "'ch11_real' is empty" in notebook_problems(_notebook(empty_md))[0]


def test_injected_parameters_may_name_paths():
    """papermill's folded cell holds the parameters the run was given, a path among them."""
    out = new_output("stream", name="stdout", text="panel_path = '/home/me/panel.csv'\n")
    assert notebook_problems(_notebook(out, tags=("injected-parameters",))) == []


def test_built_pages_are_checked_for_notes_paths_and_warnings(tmp_path):
    html = tmp_path / "html"
    (html / "notebooks").mkdir(parents=True)
    (html / "book").mkdir()
    article = '<article class="bd-article">{}</article>'
    (html / "book" / "intro.html").write_text(article.format("<p>Welcome.</p>"))
    bad = html / "notebooks" / "11_x.html"
    bad.write_text(article.format("<pre>/usr/lib/x.py:3: RuntimeWarning: overflow</pre> TODO"))
    problems = page_problems(bad)
    assert [p.split(":")[1].strip().split("(")[0] for p in problems] == [
        "developer note",
        "absolute path",
        "raw warning",
    ]
    nb_path = tmp_path / "11_x.ipynb"
    nbformat.write(_notebook(new_output("stream", name="stderr", text="w\n")), nb_path)
    found = check_book([nb_path], html)
    assert len(found) == 4 and found[0].startswith("11_x, cell 0: stderr output")
    glued = tmp_path / "12_x.html"
    glued.write_text(article.format("<p>Done.</p><pre>/root/x.py failed</pre>"))
    assert "absolute path" in page_problems(glued)[0]  # the tag before it ends the word


def test_a_warning_a_chapter_expects_becomes_a_note_admonition(monkeypatch):
    """The report's mechanism, in a book page's form: escaped, capitalised, no path."""
    import warnings

    import IPython.display

    from judgerisk.report._content import note_html, warnings_as_notes

    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda obj: shown.append(obj.data))
    before = warnings.showwarning
    with warnings_as_notes(), warnings.catch_warnings():
        warnings.simplefilter("always")
        for _ in range(2):  # found again each time the panel is scored: one note
            warnings.warn("judge '<Falcon>' looks unflipped", UserWarning, stacklevel=1)
    assert warnings.showwarning is before
    assert shown == [note_html("judge '<Falcon>' looks unflipped", admonition=True)]
    assert shown[0].startswith('<div class="admonition note"><p class="admonition-title">Note')
    assert "Judge &#x27;&lt;Falcon&gt;&#x27; looks unflipped." in shown[0]
    assert note_html("x") == "<p><strong>Note:</strong> X.</p>"  # the report's form


# --------------------------------------------------------------------------------------
# make check-book: the book test on a book that make book built, run on a fixture book
# --------------------------------------------------------------------------------------
ROOT = Path(__file__).resolve().parents[1]
BAD = "11_certified_panel_decisions"
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
ARTICLE = '<html><body><article class="bd-article">{}</article></body></html>'


def _fixture_book(folder: Path, bad: bool) -> Path:
    """A folder laid out as ``make book`` leaves ``_build``: ``executed/default`` (every chapter,
    each with a figure) and ``html`` (its pages). With ``bad``, chapter 11 holds a stderr output
    and its page a raw warning with the build machine's path, as chapter 11 did at full
    parameters."""
    executed = folder / "executed" / "default"
    executed.mkdir(parents=True)
    (folder / "html" / "notebooks").mkdir(parents=True)
    (folder / "html" / "book").mkdir()
    (folder / "html" / "book" / "intro.html").write_text(ARTICLE.format("<p>Welcome.</p>"))
    for md in sorted((ROOT / "notebooks").glob("*.md")):
        outputs = [new_output("display_data", data={"image/png": PNG, "text/plain": "<Figure>"})]
        text = "<p>The panel has 2000 items.</p>"
        if bad and md.stem == BAD:
            warning = "/work/x/judgerisk/panel.py:818: UserWarning: judge 'Falcon' looks unflipped"
            outputs.append(new_output("stream", name="stderr", text=warning + "\n"))
            text += f"<pre>{warning}</pre>"
        nbformat.write(_notebook(*outputs), executed / f"{md.stem}.ipynb")
        (folder / "html" / "notebooks" / f"{md.stem}.html").write_text(ARTICLE.format(text))
    return folder


def _check_book_command(built: Path) -> str:
    """The command ``make check-book BUILT_BOOK=...`` runs (its prerequisites not run)."""
    proc = subprocess.run(
        ["make", "-n", "-s", "check-book", f"BUILT_BOOK={built}", f"PYTHON={sys.executable}"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("JUDGERISK_BUILT_BOOK=")]
    assert len(lines) == 1 and "tests/test_book.py" in lines[0], proc.stdout[-2000:]
    return lines[0]


@pytest.mark.parametrize("bad", [False, True], ids=["clean-book", "book-with-a-bad-page"])
def test_make_check_book_fails_on_a_page_with_stderr_a_warning_or_a_path(tmp_path, bad):
    """``make check-book``'s command, limited to its page checks (the executed chapters and the
    built pages; the other checks need a real book), passes on a clean fixture book and fails
    on one whose chapter 11 holds a stderr output and a raw warning with a path."""
    built = _fixture_book(tmp_path / "built", bad)
    command = _check_book_command(built).replace(" .venv/bin/python ", f" {sys.executable} ")
    command += " -rf -k 'test_notebook_runs or test_book_pages_have_no_developer_notes'"
    proc = subprocess.run(
        command, shell=True, capture_output=True, text=True, cwd=ROOT, timeout=600
    )
    out = proc.stdout + proc.stderr
    n_chapters = len(list((ROOT / "notebooks").glob("*.md")))
    if not bad:
        assert proc.returncode == 0, out[-3000:]
        assert f"{n_chapters + 1} passed" in out, out[-3000:]
        return
    assert proc.returncode == 1, out[-3000:]
    failed = sorted(re.findall(r"FAILED tests/test_book\.py::(\S+)", out))
    assert failed == [
        "test_book_pages_have_no_developer_notes_paths_or_raw_warnings",
        f"test_notebook_runs[{BAD}]",
    ], out[-3000:]
    assert "stderr output" in out and "raw warning" in out
    assert re.search(r"11_certified_panel_decisions\.html: absolute path", out), out[-3000:]


def test_ci_runs_make_book_and_check_book_right_after_make_test():
    """CI runs the README's two commands as written and checks the full book they built,
    first (each step timed), before the quick tests and the install checks."""
    steps = [
        line.split()[2]
        for line in (ROOT / ".ci" / "run").read_text().splitlines()
        if line.lstrip().startswith("timed make ")
    ]
    assert steps[:3] == ["test", "book", "check-book"], steps
    assert {"quick-test", "wheel-test", "oldest-test"} <= set(steps[3:]), steps
