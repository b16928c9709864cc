"""Layout changes that keep every word: the ``format`` family's operations on an answer's text.

Each operation changes only whitespace, so ``op(text).split() == text.split()`` for every text
(a property test holds them to it): line breaks, blank lines, indentation and spacing move, the
words and their order do not. The order of :data:`LAYOUTS` is part of the ``format`` family's
rendering (its draws index into it); changing it changes the perturbed prompts, so it bumps the
family's version.
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["LAYOUTS", "applicable_layouts"]

_SENTENCE_GAP = re.compile(r"(?<=[.!?])[ \t]+(?=\S)")
_PARAGRAPH = re.compile(r"\n[ \t]*\n")
_LINE_BREAK = re.compile(r"[ \t]*\n[ \t]*")


def one_sentence_per_line(text: str) -> str:
    """Prose split into lines: a line break after each sentence's end."""
    return _SENTENCE_GAP.sub("\n", text)


def lines_as_prose(text: str) -> str:
    """Lines joined into prose within each paragraph (a list reads as one sentence run)."""
    paragraphs = _PARAGRAPH.split(text)
    return "\n\n".join(_LINE_BREAK.sub(" ", p) for p in paragraphs)


def blank_line_between_lines(text: str) -> str:
    """A blank line after every line."""
    return text.replace("\n", "\n\n")


def indented(text: str) -> str:
    """Every non-empty line indented by four spaces."""
    return "\n".join("    " + line if line.strip() else line for line in text.split("\n"))


def wide_sentence_gaps(text: str) -> str:
    """Two spaces after each sentence's end (typewriter spacing)."""
    return re.sub(r"(?<=[.!?]) (?=\S)", "  ", text)


#: The layout operations, ``(description, function)``, in the order the draws index.
LAYOUTS: tuple[tuple[str, Callable[[str], str]], ...] = (
    ("one sentence per line", one_sentence_per_line),
    ("lines joined into prose", lines_as_prose),
    ("a blank line between lines", blank_line_between_lines),
    ("indented by four spaces", indented),
    ("two spaces after each sentence", wide_sentence_gaps),
)


def applicable_layouts(text: str) -> list[tuple[str, Callable[[str], str]]]:
    """The operations that change ``text`` (indentation changes any text with a word)."""
    return [(name, op) for name, op in LAYOUTS if op(text) != text]
