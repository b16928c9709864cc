"""`judgerisk run` writes a readable page: MyST resolved as the book resolves it."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import nbformat  # noqa: E402
import pytest  # noqa: E402

from judgerisk import cli  # noqa: E402
from judgerisk._book import render, rerun, runbook  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def _glue_output(name: str, plain: str, markdown: str | None = None) -> dict:
    data = {"application/papermill.record/text/plain": plain}
    if markdown is not None:
        data["application/papermill.record/text/markdown"] = markdown
    return nbformat.v4.new_output(
        "display_data", data=data, metadata={"scrapbook": {"name": name, "mime_prefix": ""}}
    )


def _png() -> str:
    fig, ax = plt.subplots(figsize=(1, 1))
    ax.plot([0, 1])
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode()


def _chapter() -> nbformat.NotebookNode:
    glue = nbformat.v4.new_code_cell("glue(...)", metadata={"tags": ["remove-cell"]})
    glue.outputs = [
        _glue_output("ch05_auroc", "0.81234"),
        _glue_output("ch05_judge", "'x'", "`GPT-4`"),
        _glue_output("ch05_ran", "False"),
    ]
    figure = nbformat.v4.new_code_cell(
        "plot()",
        metadata={
            "tags": ["hide-input"],
            "mystnb": {
                "figure": {
                    "name": "fig-ch05-bars",
                    "caption": "Bars of the AUROC per judge, as {numref}`fig-ch05-bars`.",
                },
                "image": {"alt": "A bar chart with one bar per judge."},
            },
        },
    )
    figure.outputs = [nbformat.v4.new_output("display_data", data={"image/png": _png()})]
    return nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_markdown_cell("# High consensus"),
            glue,
            nbformat.v4.new_markdown_cell(
                "The AUROC is {glue:text}`ch05_auroc:.3f` for {glue:md}`ch05_judge` "
                "({cite}`zeng2024llmbar`); see {numref}`fig-ch05-bars` and {eq}`eq-ch05-x`, "
                "a {term}`panel <Panel>` of {doc}`04_scur_signals`.\n\n"
                "$$\nx = 1\n$$ (eq-ch05-x)\n\n"
                ":::{admonition} Caveat\n:class: warning\n\nOnly *mechanics*.\n:::\n\n"
                "After the note."
            ),
            nbformat.v4.new_markdown_cell(
                "What the real panels say.", metadata={"tags": ["show-if:ch05_ran"]}
            ),
            figure,
        ]
    )


def test_render_resolves_glue_citations_admonitions_figures_and_conditions(tmp_path):
    src = tmp_path / "run.ipynb"
    nbformat.write(_chapter(), src)
    page = render.render_html(src, tmp_path / "run.html", chapter="05_high_consensus", book=ROOT)
    html = page.read_text()
    assert "{glue" not in html and "{cite}" not in html and ":::" not in html
    assert "0.812" in html and "0.81234" not in html  # formatted as the book formats it
    assert "GPT-4" in html and "Zeng et al. (2024)" in html.replace(", 2024", " (2024)")
    assert "Fig. 5.1" in html
    # the page links its own figures and equations (book review F18: reruns read like the book)
    page_html = html.replace('"', "'")  # nbconvert writes the attributes' quotes its own way
    assert "Bars of the AUROC per judge, as <a href='#fig-ch05-bars'>Fig. 5.1</a>." in page_html
    assert (
        "see <a href='#fig-ch05-bars'>Fig. 5.1</a> and <a href='#eq-ch05-x'>(5.1)</a>" in page_html
    )
    assert "<a id='eq-ch05-x'></a>" in page_html and "<figure id='fig-ch05-bars'>" in page_html
    assert "of chapter 4, “SCUR" in html  # another chapter: by its number and title
    assert "{numref}" not in html  # a caption's reference resolved too
    assert "A bar chart with one bar per judge." in html  # the alt text
    assert "(5.1)" in html and "\\tag{5.1}" in html  # the equation, numbered per chapter
    assert "admonition warning" in html and "Caveat" in html
    assert "<em>mechanics</em>" in html and "<p>After the note.</p>" in html
    assert "What the real panels say." not in html  # ch05_ran is False: not shown
    assert "panel" in html and "{term}" not in html
    assert ">5. High consensus<" in html  # numbered as in the book
    assert "max-width:56rem" in html  # the book's column width, not the window's
    assert json.loads(src.read_text())  # the executed notebook itself is left as it was
    assert "show-if:ch05_ran" in src.read_text() and "remove-cell" in src.read_text()


def test_the_page_carries_its_own_mathjax(tmp_path):
    """``run -o x.html``: MathJax inline (the SVG output, no font file), no ``file://`` URL into
    the installation (issue 44), so the page typesets wherever it is copied."""
    src = tmp_path / "run.ipynb"
    nbformat.write(_chapter(), src)
    html = render.render_html(src, tmp_path / "run.html", chapter="05_high_consensus").read_text()
    assert "file://" not in html and ".venv" not in html
    assert html.count("<script src=") == 0
    bundle = (render.mathjax_dir() / "tex-svg.js").read_text(encoding="utf-8")
    assert bundle[:200] in html and "MathJax" in html
    assert html.count("</script>") == html.count("<script")  # no early end inside the bundle


def test_apply_conditions_keeps_prose_whose_part_ran():
    nb = _chapter()
    nb.cells[1].outputs[2] = _glue_output("ch05_ran", "True")
    assert render.apply_conditions(nb) == 0
    nb.cells[1].outputs.pop(2)  # never glued: the part did not run
    assert render.apply_conditions(nb) == 1
    assert "remove-cell" in nb.cells[3].metadata["tags"]


def test_time_warning_for_slow_reruns(monkeypatch, tmp_path):
    times = tmp_path / "times.json"
    times.write_text(
        json.dumps(
            {
                "machine": "a test machine",
                "chapters": {"02_x": {"small": 130.0}, "01_y": {"small": 8.0, "default": 20}},
            }
        )
    )
    monkeypatch.setattr(render, "TIMES_FILE", times)
    assert render.time_warning("01_y", small=False) is None  # quick: no warning
    slow = render.time_warning("02_x", small=True)
    assert slow and "2.2 minutes" in slow and "a test machine" in slow
    untimed = render.time_warning("02_x", small=False)
    assert untimed and "130 s" in untimed and "longer" in untimed
    assert render.time_warning("99_z", small=False) is None  # nothing known


def test_judgerisk_run_writes_only_the_file_it_names(tmp_path, monkeypatch):
    """``-o x.ipynb`` writes the notebook alone (README: "and no other file"); ``-o x.html``
    writes the readable page alone (issue 33: a .ipynb run also wrote x.html)."""
    monkeypatch.chdir(tmp_path)
    assert cli.main(["run", "01", "--small", "-o", "first.ipynb"]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["first.ipynb"]
    # the page -o x.html writes (tests/test_hostile_pages.py runs one): as the book shows it
    page = render.render_html(tmp_path / "first.ipynb", tmp_path / "page.html", "01", ROOT)
    html = page.read_text()
    assert "Simulated judge panels" in html and "{glue" not in html
    assert "Fig. 1.1" in html
    # the page is an output too: never written over an existing file
    (tmp_path / "second.html").write_text("mine")
    assert cli.main(["run", "01", "--small", "-o", "second.html"]) == cli.EXIT_USAGE
    assert (tmp_path / "second.html").read_text() == "mine"


@pytest.mark.parametrize("key", ["A1", "a1", "lmm_numerics"])
def test_the_appendix_is_found_by_its_number_and_name(key):
    assert rerun.find_chapter(key).stem == "A1_lmm_numerics"


def test_downloadable_notebook_has_no_raw_myst_and_points_to_run():
    nb = _chapter()
    nb.cells[2].source += " Data: {ref}`getting-the-data`."
    out = render.downloadable_notebook(nb, "5", runbook.REPO_ROOT)
    prose = "\n".join(c.source for c in out.cells if c.cell_type == "markdown")
    assert not render.ROLE.search(prose) and "{admonition}" not in prose
    assert "0.812" in prose and "Getting the data" in prose  # glue and a section's heading
    assert "What the real panels say" not in prose  # its part did not run
    assert "<a " not in prose and "Fig. 5.1" in prose  # no link a notebook cannot follow
    assert "`judgerisk run 05 -o mine.html`" in out.cells[0].source
    assert [c.source for c in out.cells if c.cell_type == "code"] == ["glue(...)", "plot()"]


def test_with_a_book_url_references_link_into_the_built_book(tmp_path):
    chapter = _chapter()
    chapter.cells[2].source += (
        " The guarantee is in {ref}`Methods §7 <methods-guarantee>`; the data in "
        "{doc}`the contract <../book/data_contract>`; the caption's figure "
        "{numref}`fig-ch05-bars`."
    )
    src = tmp_path / "run.ipynb"
    nbformat.write(chapter, src)
    url = "https://example.org/judgerisk"
    page = render.render_html(
        src, tmp_path / "run.html", chapter="05_high_consensus", book=ROOT, book_url=url + "/"
    )
    html = page.read_text().replace('"', "'")
    assert f"<a href='{url}/notebooks/04_scur_signals.html'>chapter 4, “SCUR" in html
    assert f"<a href='{url}/book/methods.html#methods-guarantee'>Methods §7</a>" in html
    assert f"<a href='{url}/book/data_contract.html'>the contract</a>" in html
    assert "<a href='#fig-ch05-bars'>Fig. 5.1</a>" in html  # its own figures: on the page
    for target in ("notebooks/04_scur_signals.md", "book/methods.md", "book/data_contract.md"):
        assert (ROOT / target).is_file()  # each link names a page the book builds
    assert "(methods-guarantee)=" in (ROOT / "book" / "methods.md").read_text()
    plain = render.render_html(src, tmp_path / "plain.html", chapter="05", book=ROOT)
    assert "example.org" not in plain.read_text() and "of chapter 4, “SCUR" in plain.read_text()
    with pytest.raises(ValueError, match="http"):
        render.render_html(src, tmp_path / "x.html", book=ROOT, book_url="/home/me/book")


def test_judgerisk_run_takes_the_book_url_from_the_environment(monkeypatch):
    from judgerisk.cli._app import build_parser

    monkeypatch.setenv("JUDGERISK_BOOK_URL", "file:///srv/book")
    args = build_parser().parse_args(["run", "08", "-o", "x.html"])
    assert args.book_url == "file:///srv/book"
