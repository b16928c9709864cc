"""What a reader sees in a report, regenerated and compared (used by ``judgerisk verify``).

:func:`regenerate_report` renders the report again from its record (the recorded input and
parameters, and the record itself in "Reproduce this report"); :func:`compare_visible`
compares the two pages:

* **words**: every word of the page's text (tables, notes, the command line shown), numbers
  within the tolerance;
* **figures**: the pixels of every embedded image;
* **markup**: every element, with its attributes, in page order, every text node's place
  and word count, the text of every ``<style>`` and ``<script>`` and every comment. The only
  parts left out are the ones that change from one rendering to the next and are checked
  elsewhere: the pandas table ids (``T_xxxxx``, random per rendering), the image data (its
  pixels are compared), the embedded score table's data (``judgerisk verify`` compares it cell
  by cell) and the provenance record's JSON (checked field by field).

So an added script, a style rule that hides a cell and shows another value, a ``hidden``
attribute, an invisible link over the page, text moved from one cell to another: each is a
difference. :func:`judgerisk._plots.escape.live_content` lists what in a page could run or
fetch; a report holds none of it, which :func:`compare_visible` checks first.
"""

from __future__ import annotations

import base64
import difflib
import io
import re
import tempfile
from html.parser import HTMLParser
from pathlib import Path

__all__ = ["page_markup", "compare_visible", "regenerate_report"]

_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_MAX_SHOWN = 20
#: The random id pandas gives each rendered table (``T_1a2b3``, in ids and in its CSS).
_TABLE_ID = re.compile(r"\bT_[0-9a-f]{5}(?=[_\W]|$)")
_RECORD_ID = "judgerisk-provenance"
_VOID = frozenset(
    {
        "area",
        "base",
        "br",
        "col",
        "embed",
        "hr",
        "img",
        "input",
        "link",
        "meta",
        "source",
        "track",
        "wbr",
    }
)


class _Page(HTMLParser):
    """The words, images and markup tokens of a page (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.words: list[str] = []
        self.images: list[str] = []
        self.markup: list[str] = []
        self._raw: str | None = None  # inside <script> / <style>: their text, as one token
        self._record = False

    def _attrs(self, tag: str, attrs) -> str:
        shown = []
        for name, value in sorted(attrs, key=lambda kv: kv[0]):
            if value is None:
                shown.append(name)
                continue
            if tag == "img" and name == "src" and value.startswith("data:"):
                self.images.append(value)
                value = value.split(",", 1)[0] + ",…"  # compared by its pixels
            elif tag == "a" and name == "href" and value.startswith("data:text/csv;base64,"):
                value = "data:text/csv;base64,…"  # the score table: compared cell by cell
            shown.append(f'{name}="{_TABLE_ID.sub("T_…", value)}"')
        return "".join(" " + a for a in shown)

    def handle_starttag(self, tag, attrs):
        self.markup.append(f"<{tag}{self._attrs(tag, attrs)}>")
        if tag in ("script", "style"):
            self._raw = ""
            self._record = tag == "script" and dict(attrs).get("id") == _RECORD_ID

    def handle_startendtag(self, tag, attrs):
        self.markup.append(f"<{tag}{self._attrs(tag, attrs)}/>")

    def handle_endtag(self, tag):
        if self._raw is not None and tag in ("script", "style"):
            text = "(the provenance record)" if self._record else self._raw
            self.markup.append(f"{tag} text: {_TABLE_ID.sub('T_…', text).strip()}")
            self._raw, self._record = None, False
        self.markup.append(f"</{tag}>")

    def handle_data(self, data):
        if self._raw is not None:
            self._raw += data
            return
        words = data.split()
        if words:
            self.words.extend(words)
            self.markup.append(f"(text: {len(words)} word{'s' if len(words) > 1 else ''})")

    def handle_comment(self, data):
        self.markup.append(f"<!--{data}-->")

    def handle_decl(self, decl):
        self.markup.append(f"<!{decl}>")

    def handle_pi(self, data):
        self.markup.append(f"<?{data}>")

    def unknown_decl(self, data):
        self.markup.append(f"<![{data}]>")


def _parse(page: str) -> _Page:
    parser = _Page()
    parser.feed(page)
    parser.close()
    return parser


def page_markup(page: str) -> list[str]:
    """The page's markup tokens: elements with attributes, text places, style and script text.

    Pandas' random table ids, image data, the embedded score table's data and the provenance
    record's JSON are replaced by placeholders (they are compared elsewhere).
    """
    return _parse(page).markup


def _same_word(a: str, b: str, rtol: float, atol: float) -> bool:
    if a == b:
        return True
    if _NUMBER.sub("#", a) != _NUMBER.sub("#", b):
        return False
    x, y = _NUMBER.findall(a), _NUMBER.findall(b)
    return all(
        abs(float(u) - float(v)) <= atol + rtol * abs(float(v)) for u, v in zip(x, y, strict=True)
    )


def _pixels(src: str):
    import matplotlib.image as mpimg

    data = base64.b64decode(src.split("base64,", 1)[1])
    return mpimg.imread(io.BytesIO(data), format="png")


def _same_image(a: str, b: str) -> bool:
    if a == b:
        return True
    try:
        x, y = _pixels(a), _pixels(b)
    except (ValueError, IndexError, OSError, SyntaxError):
        return False
    return x.shape == y.shape and bool((x == y).all())


def _markup_differences(a: list[str], b: list[str]) -> list[str]:
    """One line per run of markup tokens that differs between the report and the regenerated page."""
    out = []
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            continue
        ours, theirs = " ".join(a[i1:i2])[:200], " ".join(b[j1:j2])[:200]
        near = " ".join(a[max(0, i1 - 3) : i1])[-120:]
        if op == "delete":
            out.append(
                f"markup: the report has {ours!r}, which the regenerated page has not (after {near!r})"
            )
        elif op == "insert":
            out.append(
                f"markup: the report lacks {theirs!r} of the regenerated page (after {near!r})"
            )
        else:
            out.append(f"markup: {ours!r} in the report, {theirs!r} regenerated (after {near!r})")
    return out


def compare_visible(page: str, regenerated: str, rtol: float, atol: float) -> list[str]:
    """Where what a reader of ``page`` sees differs from ``regenerated``.

    First any live content of ``page`` (:func:`judgerisk._plots.escape.live_content`: a script,
    an event handler, a ``javascript:`` or external URL, ...), which no report holds. Then
    words agree when equal, or when they differ only in numbers that agree within
    ``atol + rtol |b|``; figures agree when their pixels are equal; the markup
    (:func:`page_markup`) must be the same token for token. Returns one line per difference
    (at most twenty of each kind, then a count).
    """
    from judgerisk._plots.escape import live_content

    problems = [f"live content that no report holds: {line}" for line in live_content(page)]
    ours, theirs = _parse(page), _parse(regenerated)
    words, words2 = ours.words, theirs.words
    n = 0
    for i, (a, b) in enumerate(zip(words, words2, strict=False)):
        if not _same_word(a, b, rtol, atol):
            n += 1
            if n <= _MAX_SHOWN:
                near = " ".join(words2[max(0, i - 6) : i])
                problems.append(
                    f"visible text: {a!r} in the report, {b!r} regenerated (after '{near}')"
                )
    if n > _MAX_SHOWN:
        problems.append(f"... and {n - _MAX_SHOWN} more differing word(s)")
    if len(words) != len(words2):
        problems.append(
            f"visible text: {len(words)} words in the report, {len(words2)} regenerated"
        )
    images, images2 = ours.images, theirs.images
    if len(images) != len(images2):
        problems.append(f"{len(images)} figures in the report, {len(images2)} regenerated")
    for k, (a, b) in enumerate(zip(images, images2, strict=False), start=1):
        if not _same_image(a, b):
            problems.append(f"figure {k} of the report differs from the regenerated one")
    markup = _markup_differences(ours.markup, theirs.markup)
    problems += markup[:_MAX_SHOWN]
    if len(markup) > _MAX_SHOWN:
        problems.append(f"... and {len(markup) - _MAX_SHOWN} more markup difference(s)")
    return problems


def regenerate_report(record: dict, panel_path: str | Path, parameters: dict) -> str:
    """The report rendered again from ``record``'s input and parameters (HTML text)."""
    from judgerisk.report.build import render_report

    with tempfile.TemporaryDirectory(prefix="judgerisk-verify-") as tmp:
        out = Path(tmp) / "regenerated.html"
        render_report(
            panel_path, out, parameters=parameters, command=record["command"], shown_record=record
        )
        return out.read_text(encoding="utf-8")
