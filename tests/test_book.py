"""Every chapter runs with its small parameters, the book builds, and a browser renders it.

The notebooks are executed once per session (module fixture) with papermill into a
temporary folder; the Jupyter Book is then built from those executed copies with warnings
as errors, and headless Chromium opens the pages to check that MathJax typeset every
formula, that every figure loaded, and that nothing is wider than the text column.

By default the book checked is the small one this module builds. With
``JUDGERISK_BUILT_BOOK=_build`` it is the full-parameter book that ``make book`` built there
(``_build/executed/default`` and ``_build/html``): ``make check-book`` runs this module on it, so
the full book gets the same page and browser checks (CI runs it after ``make book``).

Two kinds of checks keep the book readable (see ``book/_authoring.md``):

* **global checks**, on every page: no stderr output, no absolute path, no developer note,
  no raw TeX, no display equation or table wider than the column, no ``$$`` inside a list
  item, every ``{cite}`` key in the bibliography;
* **structure checks**, on the chapters listed in :data:`CONVERTED`: learning objectives at
  the top, key takeaways and 2–3 exercises with folded solutions at the end (one of them a
  ``judgerisk run`` rerun), short code cells, documented parameters, and every figure
  numbered, captioned, with alt text and its code folded.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from judgerisk._book import rerun, runbook
from judgerisk._book.checks import (
    article_text,
    built_pages,
    notebook_problems,
    page_problems,
)
from tests import _browser

NOTEBOOKS = runbook.notebook_paths()
ROOT = runbook.REPO_ROOT
#: A book built by ``make book`` to check instead of building the small one (``make check-book``).
_BUILT = os.environ.get("JUDGERISK_BUILT_BOOK")
BUILT = Path(_BUILT).resolve() if _BUILT else None
PROFILE = "default" if BUILT else "small"

#: Chapters held to the learner's structure (every chapter: see the test below).
CONVERTED = [
    "01_simulated_panels",
    "02_extracting_logprobs",
    "03_latent_measurement_model",
    "04_scur_signals",
    "05_high_consensus",
    "06_matched_votes",
    "07_aggregators_retention",
    "08_bpe",
    "09_scope_validity",
    "10_real_panels",
    "11_certified_panel_decisions",
    "12_perturbation_families",
    "13_risk_to_estimates",
    "14_reproduced_results",
    "15_conclusion",
    "A1_lmm_numerics",
]

MAX_CODE_LINES = 15
MAX_LINE_CHARS = 80  # wider lines are cut in the book's code boxes


def _cells(stem: str):
    return runbook.read_notebook(ROOT / "notebooks" / f"{stem}.md").cells


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    if BUILT is not None:
        out = BUILT / "executed" / "default"
        missing = [p.stem for p in NOTEBOOKS if not (out / f"{p.stem}.ipynb").exists()]
        return out, dict.fromkeys(missing, f"not executed in {out} (run make book first)")
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
        assert record["parameters"]["profile"] == PROFILE and record["judgerisk"]["version"]
        footer = nb.cells[-1]
        assert footer.cell_type == "markdown" and "Computed with judgerisk" in footer.source
        assert "/" not in footer.source.split("parameters:")[0].replace("</small>", "")


def test_prose_of_parts_not_run_is_hidden(executed):
    """The small profile runs chapter 11 without real data: its real-data prose is removed
    (the full book, with the public data found, shows it)."""
    from judgerisk.datasets import available, data_root

    out, failures = executed
    stem = "11_certified_panel_decisions"
    assert stem not in failures, failures.get(stem)
    nb = nbformat.read(out / f"{stem}.ipynb", as_version=4)
    tagged = [c for c in nb.cells if "show-if:ch11_ran_real" in c.metadata.get("tags", [])]
    root = data_root(required=False)
    ran_real = BUILT is not None and all(available(k, root) for k in ("llmbar", "judgebench"))
    assert tagged and all(("remove-cell" in c.metadata["tags"]) != ran_real for c in tagged)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_conditional_prose_holds_no_section(path):
    """A ``show-if`` cell is removed whole when its part did not run: it must end before the
    next heading (a ``+++`` line), or a rerun without the data loses the sections after it."""
    for cell in runbook.read_notebook(path).cells:
        tags = cell.metadata.get("tags", [])
        if cell.cell_type == "markdown" and any(t.startswith("show-if:") for t in tags):
            headings = re.findall(r"^#{1,6} .*", cell.source, flags=re.M)
            assert not headings, f"{path.stem}: a show-if cell swallows {headings}"


@pytest.fixture(scope="module")
def built_book(executed, tmp_path_factory):
    """The built HTML folder: the book is staged and built as ``make book`` does it, by
    ``python -m judgerisk._book.runbook`` in a subprocess (a module whose ``__main__`` guard ran
    before its functions were defined stopped there, and only a run as a module shows it)."""
    out, failures = executed
    if failures:
        pytest.fail(f"cannot build the book: notebooks failed: {sorted(failures)}")
    if BUILT is not None:
        return BUILT / "html"
    html = tmp_path_factory.mktemp("html") / "site"
    cmd = [sys.executable, "-m", "judgerisk._book.runbook", "--skip-execute", "--build-book"]
    cmd += ["--out", str(out), "--html-out", str(html), "--root", str(ROOT)]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    assert "book built in" in proc.stdout and "book checked: no error" in proc.stdout
    return html


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
    nb = runbook.read_notebook(path)
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
    problems = notebook_problems(nb, path.stem)
    assert not problems, f"{path.name}: what a reader must not see: {problems[:3]}"
    images = [
        o
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.get("outputs", [])
        if "image/png" in o.get("data", {})
    ]
    assert images, f"{path.name} produced no figure"


def test_every_chapter_is_held_to_the_structure():
    """A new chapter cannot slip past the structure checks by staying off the list."""
    assert sorted(CONVERTED) == sorted(p.stem for p in NOTEBOOKS)


@pytest.mark.parametrize("stem", CONVERTED)
def test_converted_chapter_figures_are_numbered_captioned_and_folded(executed, stem):
    out, failures = executed
    assert stem not in failures, failures.get(stem)
    nb = nbformat.read(out / f"{stem}.ipynb", as_version=4)
    for cell in nb.cells:
        has_image = any("image/png" in o.get("data", {}) for o in cell.get("outputs", []))
        if not has_image:
            continue
        meta = cell.metadata.get("mystnb", {})
        figure, image = meta.get("figure", {}), meta.get("image", {})
        where = f"{stem}: figure cell {cell.source[:60]!r}"
        assert figure.get("name", "").startswith("fig-"), f"{where} has no figure name"
        assert len(figure.get("caption", "")) >= 40, f"{where} has no real caption"
        assert len(image.get("alt", "")) >= 30, f"{where} has no real alt text"
        assert "hide-input" in cell.metadata.get("tags", []), f"{where} is not folded"
        n_images = sum("image/png" in o.get("data", {}) for o in cell.outputs)
        assert n_images == 1, f"{where} shows {n_images} images (one figure per cell)"


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
    _browser.chromium_path() is None and not _browser.browser_required(), reason=_browser.NO_BROWSER
)
def test_browser_typesets_math_and_loads_figures(built_book):
    from tests._browser import inspect_pages

    pages = sorted((built_book / "book").glob("*.html")) + [
        built_book / "notebooks" / f"{p.stem}.html" for p in NOTEBOOKS
    ]
    results = inspect_pages(pages)
    report = json.dumps(results, indent=1)[:4000]
    total_math = 0
    for page in results:
        stem = Path(page["url"]).stem
        if page["n_math"]:
            assert page["mathjax_loaded"], f"MathJax did not load on {page['url']}"
        assert not page["raw_math"], f"raw TeX left on {page['url']}: {page['raw_math'][:3]}"
        assert not page["raw_tex"], f"raw TeX in the text of {stem}: {page['raw_tex'][:3]}"
        assert not page["too_wide"], f"wider than the column on {stem}: {page['too_wide'][:3]}"
        assert page["n_typeset"] >= page["n_math"]
        broken = [i["src"] for i in page["images"] if not i["ok"]]
        assert not broken, f"figures that did not load on {page['url']}: {broken}"
        if stem in CONVERTED:
            loose = [i["src"] for i in page["images"] if not (i["numbered"] and i["alt"])]
            assert not loose, f"{stem}: images outside a numbered, captioned figure: {loose}"
        total_math += page["n_math"]
    assert total_math > 0, report
    chapter_images = sum(len(p["images"]) for p in results[1:])
    assert chapter_images >= len(NOTEBOOKS), report


# --- structure of the converted chapters (sources only: fast) ---------------------------


def _markdown(stem: str) -> str:
    return "\n".join(c.source for c in _cells(stem) if c.cell_type == "markdown")


@pytest.mark.parametrize("stem", CONVERTED)
def test_converted_chapter_opens_with_learning_objectives(stem):
    first = next(c for c in _cells(stem) if c.cell_type == "markdown").source
    body = first.split("\n", 1)[1].lstrip() if first.startswith("# ") else first
    assert body.startswith(":::{admonition} Learning objectives"), (
        f"{stem}: the first thing after the title must be the learning-objectives admonition"
    )
    block = body.split(":::", 2)[1]
    assert block.count("\n- ") >= 3, f"{stem}: give at least three objectives as a list"


@pytest.mark.parametrize("stem", CONVERTED)
def test_converted_chapter_ends_with_takeaways_and_exercises(stem):
    text = _markdown(stem)
    assert "\n## Key takeaways\n" in text, f"{stem}: no '## Key takeaways' section"
    takeaways = text.split("\n## Key takeaways\n", 1)[1].split("\n## ", 1)[0]
    assert takeaways.count("\n- ") >= 3, f"{stem}: key takeaways need at least three bullets"
    assert "\n## Exercises\n" in text, f"{stem}: no '## Exercises' section"
    exercises = text.split("\n## Exercises\n", 1)[1]
    numbers = re.findall(r"\{admonition\} Exercise ([0-9A-Z]+)\.(\d+) — ", exercises)
    label = _exercise_label(stem)
    assert [int(n) for _, n in numbers] == list(range(1, len(numbers) + 1)), (
        f"{stem}: exercises must be numbered {label}.1, {label}.2, ... in order"
    )
    assert {c for c, _ in numbers} <= {label}, f"{stem}: exercise numbers must start {label}."
    n_ex = len(numbers)
    solutions = re.findall(
        r":::\{admonition\} Solution\n:class: dropdown\n(.*?)\n:::", exercises, flags=re.S
    )
    assert 2 <= n_ex <= 3, f"{stem}: {n_ex} exercises (want 2–3)"
    assert len(solutions) == n_ex, f"{stem}: every exercise needs a folded (dropdown) solution"
    assert any(f"judgerisk run {stem[:2]}" in s for s in solutions), (
        f"{stem}: one exercise must be a parameterised rerun (`judgerisk run {stem[:2]} ...`)"
    )


def _exercise_label(stem: str) -> str:
    """The chapter's number as exercises show it: ``"3"`` for 03_..., ``"A1"`` for A1_..."""
    number = stem.split("_", 1)[0]
    return str(int(number)) if number.isdigit() else number


@pytest.mark.parametrize("stem", CONVERTED)
def test_converted_chapter_code_is_short(stem):
    for cell in _cells(stem):
        if cell.cell_type != "code":
            continue
        lines = cell.source.splitlines()
        folded = {"hide-input", "hide-cell", "remove-cell", "remove-input", "parameters"}
        if not folded & set(cell.metadata.get("tags", [])):  # a reader sees this code
            assert len(lines) <= MAX_CODE_LINES, f"{stem}: a {len(lines)}-line cell: {lines[0]!r}"
        long = [line for line in lines if len(line) > MAX_LINE_CHARS]
        assert not long, f"{stem}: lines over {MAX_LINE_CHARS} characters: {long[:2]}"


@pytest.mark.parametrize("stem", CONVERTED)
def test_converted_chapter_parameters_are_documented(stem):
    params = rerun.chapter_parameters(ROOT / "notebooks" / f"{stem}.md")
    undocumented = [p.name for p in params if not p.help]
    assert params and not undocumented, f"{stem}: parameters without a comment: {undocumented}"


# --- global source checks --------------------------------------------------------------

SOURCES = NOTEBOOKS + sorted((ROOT / "book").glob("[!_]*.md"))  # _*.md: not in the book


def _math_in_list_items(text: str) -> list[int]:
    """Line numbers of ``$$`` inside a list item (it breaks MathJax in a list)."""
    bad, in_item, fence = [], False, False
    for n, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith(("```", "~~~")):
            fence = not fence
        if fence:
            continue
        if re.match(r"\s*([-*+]|\d+[.)])\s", line):
            in_item = True
        elif not line.strip():
            pass
        elif not line.startswith((" ", "\t")):
            in_item = False
        if in_item and "$$" in line:
            bad.append(n)
    return bad


@pytest.mark.parametrize("path", SOURCES, ids=[p.stem for p in SOURCES])
def test_no_display_math_inside_list_items(path):
    bad = _math_in_list_items(path.read_text())
    assert not bad, f"{path.name}: $$ inside a list item at line(s) {bad}"


def test_math_in_list_detector():
    assert _math_in_list_items("- a\n  $$x$$\n") == [2]
    assert _math_in_list_items("- a\n\n$$x$$\n") == []


def _bib_keys() -> set[str]:
    return set(re.findall(r"@\w+\{([^,\s]+),", (ROOT / "book" / "references.bib").read_text()))


def test_every_cite_key_is_in_the_bibliography():
    keys = _bib_keys()
    required = {
        "scur2026", "badshah2026scope", "wang2025lec", "jung2025trust", "dawid1979",
        "hovy2013mace", "whitehill2009glad", "zhao2026care", "candes2011rpca", "clopper1934",
        "zeng2024llmbar", "tan2025judgebench", "wang2024pandalm",
    }  # fmt: skip
    assert required <= keys, f"missing references: {sorted(required - keys)}"
    for path in SOURCES:
        for group in re.findall(r"\{cite(?::\w+)?\}`([^`]+)`", path.read_text()):
            for key in (k.strip() for k in group.split(",")):
                assert key in keys, f"{path.name}: {{cite}} key {key!r} is not in references.bib"


#: Typed direction words of a comparison (the rule of judgerisk._book.claims / BEATS_RULE).
DIRECTION = re.compile(
    r"\b(beats?|trails?|ties with|outperforms?|underperforms?|is (?:worse|better) than)\b"
)
GLUED = re.compile(r"\{glue:[a-z]+\}`[^`]*`")


def direction_sentences(markdown: str) -> list[str]:
    """Sentences that type a direction word next to a glued number (normalised text)."""
    found = []
    for sentence in re.split(r"(?<=[.;:!?])\s+", GLUED.sub("GLUED", markdown)):
        flat = " ".join(sentence.split())
        if DIRECTION.search(flat) and "GLUED" in flat:
            # "the best judge (GLUED) beats" reads "the best judge beats" in a quoted check
            found.append(re.sub(r"\s*\(GLUED\)", "", flat))
    return found


def claim_checks(code: str) -> list[str]:
    """What a chapter's code checks: ``check_direction(..., sentence=...)`` and quoted asserts."""
    quoted = re.findall(r'#\s*"([^"]+)"', code)
    checked = re.findall(r'check_direction\([^)]*?sentence\s*=\s*"([^"]+)"', code, flags=re.S)
    return [" ".join(q.split()) for q in quoted + checked]


def test_direction_sentence_detector():
    md = "On LLMBar the best judge ({glue:text}`k`) beats every rule. SCUR ties with PE."
    assert direction_sentences(md) == ["On LLMBar the best judge beats every rule."]
    code = (
        '# "the best judge beats every rule"\ncheck_direction("trails", lo, hi,\n sentence="x y")'
    )
    assert claim_checks(code) == ["the best judge beats every rule", "x y"]


#: Words that state a direction between two methods or numbers, glued or not.
STATIC_DIRECTION = re.compile(
    r"\b(beats?|beating|trails?|ties with|outperform(?:s|ed)?|underperform(?:s|ed)?"
    r"|(?:better|worse) than|as (?:well|good) as)\b",
    flags=re.I,
)
#: A sentence that states a rule, a condition or a question states no result.
CONDITIONAL = re.compile(r"\b(if|when|whether|unless)\b|(?:^|, )where\b|\?$", flags=re.I)


def static_direction_sentences(markdown: str) -> list[str]:
    """Sentences whose *typed* words state a direction (glued text, code and math removed).

    "SCUR ties with PE" typed in the prose is a result that cannot follow the numbers; the
    verb must be glued (``direction_word``, ``verdict_phrase``) or the sentence backed by a
    check. Rules ("beats ... when the interval lies above 0"), conditions and questions pass.
    """
    text = re.sub(r"```.*?```", "", markdown, flags=re.S)
    text = re.sub(r"\$\$.*?\$\$|\$[^$]*\$", "", text, flags=re.S)
    text = GLUED.sub("GLUED", text)
    found = []
    for sentence in re.split(r"(?<=[.;:!?])\s+|\n\s*\n", text):
        flat = " ".join(sentence.split())
        if STATIC_DIRECTION.search(flat) and not CONDITIONAL.search(flat):
            found.append(re.sub(r"\s*\(GLUED\)", "", flat))
    return found


def _without_objectives(markdown: str) -> str:
    """The learning objectives name skills ("spot a panel worse than its best judge")."""
    return re.sub(r":::\{admonition\} Learning objectives.*?\n:::", "", markdown, flags=re.S)


def test_static_direction_detector():
    md = (
        "On real panels they rank it about as well as the cheapest baseline. SCUR "
        "{glue:md}`v` PE. SCUR *beats* PE when the interval lies above 0. Will it beat PE?"
        "\n\n```python\nx = 'beats'\n```\n"
    )
    assert static_direction_sentences(md) == [
        "On real panels they rank it about as well as the cheapest baseline."
    ]


def _static_outside_objectives(markdown: str) -> list[str]:
    return static_direction_sentences(_without_objectives(markdown))


def _unchecked_sentences(stem: str, find) -> list[str]:
    """Sentences ``find`` flags in a chapter's prose (exercises aside) that no code checks."""
    cells = _cells(stem)
    checks = claim_checks("\n".join(c.source for c in cells if c.cell_type == "code"))
    return [
        sentence
        for c in cells
        if c.cell_type == "markdown" and "{admonition} Exercise" not in c.source
        for sentence in find(c.source)
        if not any(check.lower() in sentence.lower() for check in checks)
    ]


@pytest.mark.parametrize("stem", CONVERTED)
def test_no_static_sentence_states_a_direction(stem):
    """Every comparison a chapter states is generated from the comparison, or checked.

    The conclusion once said in bold that the risk scores rank "about as well as the
    cheapest baseline" above a table in which SCUR beat PE: a typed direction is a claim the
    numbers of a rerun can contradict. Glue the verb, or back the sentence with
    ``check_direction(..., sentence="...")`` or an ``assert`` whose comment quotes it.
    """
    unchecked = _unchecked_sentences(stem, _static_outside_objectives)
    assert not unchecked, f"{stem}: typed direction sentences (glue or check them): {unchecked}"


#: A measured-looking number: three or more decimals, or a percentage with decimals.
MEASURED = re.compile(r"(?<![\w.])\d+\.\d{3,}\b|\b\d+\.\d+\s?%")


def typed_results(solution: str) -> list[str]:
    """Numbers typed in a solution's prose (code, math and glued values are left out)."""
    text = re.sub(r"```.*?```", "", solution, flags=re.S)
    text = re.sub(r"\$\$.*?\$\$|\$[^$]*\$", "", text, flags=re.S)
    text = GLUED.sub("", text)
    text = re.sub(r"`[^`]*`", "", text)
    return MEASURED.findall(text)


def test_typed_results_detector():
    assert typed_results("naive sits at 0.0996 here") == ["0.0996"]
    assert typed_results("at {glue:text}`ch09_x:.4f`, $z = 0.998$, 80 % agree") == []
    assert typed_results("it keeps 12.5 % of the items") == ["12.5 %"]


@pytest.mark.parametrize("stem", CONVERTED)
def test_exercise_solutions_glue_their_numbers(stem):
    """A solution that quotes a result of the page glues it, so it cannot drift from it."""
    exercises = _markdown(stem).split("\n## Exercises\n", 1)[-1]
    solutions = re.findall(
        r":::\{admonition\} Solution\n:class: dropdown\n(.*?)\n:::", exercises, flags=re.S
    )
    typed = [n for sol in solutions for n in typed_results(sol)]
    assert not typed, f"{stem}: numbers typed in exercise solutions (glue them): {typed}"


@pytest.mark.parametrize("stem", CONVERTED)
def test_typed_direction_sentences_are_checked(stem):
    """A typed "beats / ties with / trails" next to a glued number must be checked in code.

    Either glue the verb (``judgerisk._book.claims.direction_word``), or back the sentence with
    ``check_direction(verb, low, high, sentence="...")`` (or an ``assert`` whose comment
    quotes it): a run whose numbers contradict the sentence then fails and the book does
    not build (``book/_authoring.md``, "Numbers in the prose").
    """
    unchecked = _unchecked_sentences(stem, direction_sentences)
    assert not unchecked, f"{stem}: direction sentences without a check: {unchecked}"


def test_parameters_page_lists_every_chapter(tmp_path):
    page = rerun.parameters_markdown(
        NOTEBOOKS, {NOTEBOOKS[0].stem: {"seconds": 3.0, "profile": "small"}}
    )
    for path in NOTEBOOKS:
        number = path.stem.split("_", 1)[0]
        assert f"judgerisk run {number} " in page, path.stem
        for p in rerun.chapter_parameters(path):
            assert f"`{p.name}`" in page, (path.stem, p.name)
    assert "3 s with the small parameters" in page


# --- the built book -------------------------------------------------------------------


def _pages(html: Path) -> list[Path]:
    return built_pages(html)


def _article_text(page: Path) -> str:
    return article_text(page.read_text())


def test_book_header_has_one_search_box_no_dead_repository_link_and_no_index(built_book):
    for page in _pages(built_book):
        text = page.read_text()
        assert "genindex.html" not in text, f"{page.name} links the empty general index"
        # the repository named in an earlier _config.yml does not exist: no button to it
        assert "github.com/judgerisk/judgerisk" not in text, f"{page.name} links a dead repo"
        # one search box: the header's (the primary sidebar holds none)
        sidebar = text.split('class="bd-sidebar-primary', 1)[-1].split('class="bd-main"', 1)[0]
        assert "search-button-field" not in sidebar, f"{page.name}: a second search box"
    assert (built_book / "book" / "glossary.html").exists()
    chapter = (built_book / "notebooks" / "04_scur_signals.html").read_text()
    assert re.search(r"Fig\. 4\.1\b", chapter), "figures are not numbered per chapter"
    bib = (built_book / "book" / "bibliography.html").read_text()
    for title in ("SCOPE", "Trust or Escalate", "Linear Expectation Constraints", "PandaLM"):
        assert title.lower() in bib.lower(), f"{title} is missing from the bibliography"


def test_book_pages_have_no_developer_notes_paths_or_raw_warnings(built_book):
    problems = [p for page in _pages(built_book) for p in page_problems(page)]
    assert not problems, problems[:5]


def test_reproducing_page_has_every_chapters_parameters(built_book):
    text = _article_text(built_book / "book" / "reproducing.html")
    for path in NOTEBOOKS:
        assert f"judgerisk run {path.stem[:2]}" in text, path.stem
    assert "run time:" in text and f"with the {PROFILE} parameters" in text
