"""The page checks that every book build runs (judgerisk.book_checks) find what they look for."""

from __future__ import annotations

import nbformat
from nbformat.v4 import new_code_cell, new_notebook, new_output

from judgerisk.book_checks import check_book, notebook_problems, page_problems

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


def test_a_warning_a_chapter_expects_becomes_a_note_admonition(monkeypatch):
    """The report's mechanism, in a book page's form: escaped, capitalised, no path."""
    import warnings

    import IPython.display

    from judgerisk.report_content import note_html, warnings_as_notes

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
