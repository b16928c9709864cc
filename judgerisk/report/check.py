"""What a reader sees in a report, regenerated and compared (used by ``judgerisk verify``).

:func:`regenerate_report` renders the report again from its record (the recorded input and
parameters, and the record itself in "Reproduce this report"); :func:`compare_visible`
compares every visible word and number of the two pages (tables, notes, the command line
shown) and every figure (its pixels), so an edited cell, sentence or figure is found.
"""

from __future__ import annotations

import base64
import io
import re
import tempfile
from html.parser import HTMLParser
from pathlib import Path

__all__ = ["visible_content", "compare_visible", "regenerate_report"]

_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_MAX_SHOWN = 20


class _Visible(HTMLParser):
    """Collects the visible words of a page and the data of its images."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.words: list[str] = []
        self.images: list[str] = []
        self._hidden = 0

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style"):
            self._hidden += 1
        elif tag == "img":
            self.images.append(dict(attrs).get("src") or "")

    def handle_endtag(self, tag):
        if tag in ("script", "style") and self._hidden:
            self._hidden -= 1

    def handle_data(self, data):
        if not self._hidden:
            self.words.extend(data.split())


def visible_content(page: str) -> tuple[list[str], list[str]]:
    """The visible words of an HTML page, and the ``src`` of each image, in page order."""
    parser = _Visible()
    parser.feed(page)
    parser.close()
    return parser.words, parser.images


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


def compare_visible(page: str, regenerated: str, rtol: float, atol: float) -> list[str]:
    """Where the visible content of ``page`` differs from ``regenerated``.

    Words agree when equal, or when they differ only in numbers that agree within
    ``atol + rtol |b|``; figures agree when their pixels are equal. Returns one line per
    difference (at most twenty, then a count).
    """
    words, images = visible_content(page)
    words2, images2 = visible_content(regenerated)
    problems = []
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
    if len(images) != len(images2):
        problems.append(f"{len(images)} figures in the report, {len(images2)} regenerated")
    for k, (a, b) in enumerate(zip(images, images2, strict=False), start=1):
        if not _same_image(a, b):
            problems.append(f"figure {k} of the report differs from the regenerated one")
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
