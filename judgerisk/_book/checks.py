"""What every page of the book must not hold, checked on executed notebooks and built HTML.

The book is read by people who did not run it, so no page may show a traceback, a stderr
output (where Python's warnings land), a raw warning, a path of the machine that built it, a
developer's note, or a glued value that came out empty (a hole in a sentence). The same checks
run on the small book that the test suite builds and on the full-parameter book that
``make book`` builds (:func:`check_book`, run by ``python -m judgerisk._book.runbook --build-book``);
the browser checks (typeset math, loaded figures, widths) are the test suite's
(``make check-book``).

A warning that a chapter expects is not hidden: it is shown as a note in the page's own words
(:func:`judgerisk.report._content.warnings_as_notes`), as the HTML report does.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

__all__ = [
    "ABSOLUTE_PATH",
    "DEVELOPER_NOTES",
    "RAW_WARNING",
    "text_outputs",
    "notebook_problems",
    "article_text",
    "page_problems",
    "built_pages",
    "check_book",
]

#: Text that only a developer should read (the book cites chapters and papers, not files).
DEVELOPER_NOTES = re.compile(
    # the three markers spelled in pieces, so that a search of the package for them finds
    # the pages' leftovers and not this pattern
    r"\b(TO"
    r"DO|FIX"
    r"ME|X"
    r"XX)\b|METHODS(\.md| §)|shared/(data|seeds|spec|notes)"
    r"|once the subcommand|no text was available offline|except ImportError"
)
#: An absolute file path of this machine (a reader's paths differ).
ABSOLUTE_PATH = re.compile(
    r"(?<![\w.])(/work/|/home/|/root/|/tmp/|/usr/|/opt/|[A-Z]:\\)|site-packages"
)
#: A Python warning as ``warnings.showwarning`` prints it (``file:line: UserWarning: ...``).
RAW_WARNING = re.compile(r"\b[A-Z]\w*Warning: ")

_GLUE_PREFIX = "application/papermill.record/"


def text_outputs(cell: Any) -> list[str]:
    """The text a code cell's outputs put on the page (streams, text/* and glued text)."""
    texts = []
    for out in cell.get("outputs", []):
        if out.get("output_type") == "stream":
            texts.append(out.get("text", ""))
        for mime, value in out.get("data", {}).items():
            if mime.startswith(("text/", _GLUE_PREFIX + "text")):
                texts.append(value if isinstance(value, str) else "".join(value))
    return texts


def _empty_glue(out: dict) -> str | None:
    """The name of a glued text value that renders as nothing, else None."""
    name = out.get("metadata", {}).get("scrapbook", {}).get("name")
    data = out.get("data", {})
    if name is None or not any(m.startswith(_GLUE_PREFIX + "text/") for m in data):
        return None  # not a glue, or a glued figure
    markdown = data.get(_GLUE_PREFIX + "text/markdown")
    shown = markdown if markdown is not None else data.get(_GLUE_PREFIX + "text/plain", "")
    shown = shown if isinstance(shown, str) else "".join(shown)
    return name if shown.strip().strip("'\"").strip() == "" else None


def notebook_problems(nb: Any, name: str = "notebook") -> list[str]:
    """What an executed notebook would put on its page that a reader must not see.

    Errors, stderr outputs (warnings land there), raw ``...Warning:`` lines, absolute paths in
    any output (papermill's injected-parameters cell excepted: it is folded and holds the
    parameters the run was given) and glued text values that are empty.
    """
    problems = []
    for k, cell in enumerate(nb.cells):
        if cell.get("cell_type") != "code":
            continue
        where = f"{name}, cell {k}"
        for out in cell.get("outputs", []):
            kind = out.get("output_type")
            if kind == "error":
                problems.append(f"{where}: error {out.get('ename')}: {out.get('evalue', '')[:200]}")
            elif kind == "stream" and out.get("name") == "stderr":
                problems.append(f"{where}: stderr output {out.get('text', '')[:200]!r}")
            if (glue := _empty_glue(out)) is not None:
                problems.append(f"{where}: glued value {glue!r} is empty")
        if "injected-parameters" in cell.get("metadata", {}).get("tags", []):
            continue
        for text in text_outputs(cell):
            for label, pattern in (
                ("a raw warning", RAW_WARNING),
                ("an absolute path", ABSOLUTE_PATH),
            ):
                if m := pattern.search(text):
                    excerpt = text[max(m.start() - 60, 0) :][:200]
                    problems.append(f"{where}: {label} {excerpt!r}")
    return problems


def article_text(html: str, tag: str = "") -> str:
    """The visible text of a built page's article (each tag replaced by ``tag``, spaces
    collapsed)."""
    main = html.split('<article class="bd-article"', 1)[-1].split("</article>", 1)[0]
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", tag, main))


def page_problems(page: Path) -> list[str]:
    """Developer notes, absolute paths and raw warnings in a built page's article text."""
    # a tag ends a word: a path that opens a <pre> is not glued to the sentence before it
    text = article_text(page.read_text(), tag=" ")
    found = []
    for label, pattern in (
        ("developer note", DEVELOPER_NOTES),
        ("absolute path", ABSOLUTE_PATH),
        ("raw warning", RAW_WARNING),
    ):
        hits = [m.group(0) for m in pattern.finditer(text)]
        if hits:
            found.append(f"{page.parent.name}/{page.name}: {label}(s) {hits[:3]}")
    return found


def built_pages(html_dir: Path) -> list[Path]:
    """The book's own pages and its chapters in a built HTML folder."""
    return sorted(html_dir.glob("book/*.html")) + sorted(html_dir.glob("notebooks/*.html"))


def check_book(executed: Iterable[Path], html_dir: Path) -> list[str]:
    """Every problem of the executed notebooks and of the built pages (empty: the book is clean).

    Parameters
    ----------
    executed : iterable of path
        The executed ``.ipynb`` files the book was built from.
    html_dir : path
        The built HTML folder (holding ``index.html``).
    """
    import nbformat

    problems = []
    for path in executed:
        problems += notebook_problems(nbformat.read(path, as_version=4), Path(path).stem)
    for page in built_pages(Path(html_dir)):
        problems += page_problems(page)
    return problems
