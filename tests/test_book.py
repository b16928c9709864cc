"""Every chapter runs with its small parameters, the book builds, and a browser renders it.

The notebooks are executed once per session (module fixture) with papermill into a
temporary folder; the Jupyter Book is then built from those executed copies with warnings
as errors, and headless Chromium opens the pages to check that MathJax typeset every
formula and that every figure loaded.
"""

from __future__ import annotations

import json
import shutil

import nbformat
import pytest

from judgerisk import runbook

NOTEBOOKS = runbook.notebook_paths()


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    out = tmp_path_factory.mktemp("executed")
    failures = {}
    for path in NOTEBOOKS:
        try:
            runbook.execute(path, out, profile="small")
        except Exception as exc:  # reported per notebook by test_notebook_runs
            failures[path.stem] = f"{type(exc).__name__}: {str(exc)[-3000:]}"
    return out, failures


def test_executed_notebooks_carry_provenance_and_a_footer(executed):
    out, failures = executed
    for path in NOTEBOOKS:
        if path.stem in failures:
            continue
        nb = nbformat.read(out / f"{path.stem}.ipynb", as_version=4)
        record = nb.metadata["judgerisk"]["provenance"]
        assert record["parameters"]["profile"] == "small" and record["judgerisk"]["version"]
        footer = nb.cells[-1]
        assert footer.cell_type == "markdown" and "Computed with judgerisk" in footer.source
        assert "/" not in footer.source.split("parameters:")[0].replace("</small>", "")


@pytest.fixture(scope="module")
def built_book(executed, tmp_path_factory):
    out, failures = executed
    if failures:
        pytest.fail(f"cannot build the book: notebooks failed: {sorted(failures)}")
    html = tmp_path_factory.mktemp("html")
    index = runbook.build_book(out, html / "site")
    return index.parent


def test_every_toc_chapter_has_a_source():
    toc = (runbook.REPO_ROOT / "_toc.yml").read_text()
    for path in NOTEBOOKS:
        assert f"notebooks/{path.stem}" in toc, f"{path.name} is not in _toc.yml"
    for line in toc.splitlines():
        if "file: notebooks/" in line:
            stem = line.split("notebooks/")[1].strip()
            assert (runbook.REPO_ROOT / "notebooks" / f"{stem}.md").exists(), stem


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_has_parameters_cell_and_test_parameters(path):
    nb = runbook._read(path)
    tagged = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1, f"{path.name}: exactly one cell must be tagged 'parameters'"
    params = runbook.test_parameters(path)
    for name in params:
        assert name in tagged[0].source, f"{path.name}: test parameter {name!r} not in the cell"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs(executed, path):
    out, failures = executed
    assert path.stem not in failures, failures.get(path.stem)
    nb = nbformat.read(out / f"{path.stem}.ipynb", as_version=4)
    errors = [
        o
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.get("outputs", [])
        if o.output_type == "error"
    ]
    assert not errors
    images = [
        o
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.get("outputs", [])
        if "image/png" in o.get("data", {})
    ]
    assert images, f"{path.name} produced no figure"


def test_sources_are_not_modified_by_execution():
    assert not list((runbook.REPO_ROOT / "notebooks").glob("*.ipynb"))


def test_book_builds_with_every_chapter(built_book):
    html = built_book
    assert (html / "index.html").exists()
    for path in NOTEBOOKS:
        assert (html / "notebooks" / f"{path.stem}.html").exists(), path.stem
    assert (html / "_static" / "mathjax" / "tex-chtml.js").exists()
    index = (html / "index.html").read_text()
    assert "cdn.jsdelivr.net/npm/mathjax" not in index, "MathJax must be local"


@pytest.mark.skipif(
    shutil.which("chromium") is None,
    reason="chromium not installed (make test installs it with apt-get)",
)
def test_browser_typesets_math_and_loads_figures(built_book):
    from tests._browser import inspect_pages

    pages = [built_book / "book" / "intro.html"] + [
        built_book / "notebooks" / f"{p.stem}.html" for p in NOTEBOOKS
    ]
    results = inspect_pages(pages)
    report = json.dumps(results, indent=1)[:4000]
    total_math = 0
    for page in results:
        assert page["mathjax_loaded"], f"MathJax did not load on {page['url']}"
        assert not page["raw_math"], f"raw TeX left on {page['url']}: {page['raw_math'][:3]}"
        assert page["n_typeset"] >= page["n_math"]
        broken = [i["src"] for i in page["images"] if not i["ok"]]
        assert not broken, f"figures that did not load on {page['url']}: {broken}"
        total_math += page["n_math"]
    assert total_math > 0, report
    chapter_images = sum(len(p["images"]) for p in results[1:])
    assert chapter_images >= len(NOTEBOOKS), report
