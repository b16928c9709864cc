"""One reading of JSON text for every input: a key given twice or nesting too deep is an error.

:func:`json.loads` keeps the last value of a key that an object gives twice, silently, and
raises :class:`RecursionError` on deeply nested arrays (a traceback, exit code 1). Every JSON a
user gives judgerisk (panel and importer ``.jsonl`` lines, importer ``.json`` files, provenance
records) is read by :func:`loads`, which refuses both with a :class:`ValueError` the caller
turns into one line naming the file and line.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["DuplicateKeyError", "NestingError", "loads", "problem", "split_lines"]


class DuplicateKeyError(ValueError):
    """A JSON object with one key twice (:func:`json.loads` would keep the last value)."""

    def __init__(self, key: str) -> None:
        super().__init__(f"the key {key!r} appears twice in one object")
        self.key = key


class NestingError(ValueError):
    """JSON nested deeper than the reader's recursion allows."""

    def __init__(self) -> None:
        super().__init__("arrays or objects nested too deeply to read (not a flat record)")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict:
    out: dict = {}
    for key, value in pairs:
        if key in out:
            raise DuplicateKeyError(key)
        out[key] = value
    return out


def loads(text: str) -> Any:
    """:func:`json.loads`, refusing a key given twice in one object and too deep a nesting.

    Raises
    ------
    DuplicateKeyError, NestingError
        Both :class:`ValueError`; so is :class:`json.JSONDecodeError` for malformed text.

    Examples
    --------
    >>> loads('{"a": 1}')
    {'a': 1}
    >>> loads('{"a": 1, "a": 2}')
    Traceback (most recent call last):
    ...
    judgerisk._util.json_text.DuplicateKeyError: the key 'a' appears twice in one object
    """
    try:
        return json.loads(text, object_pairs_hook=_unique_keys)
    except RecursionError:
        raise NestingError() from None


def split_lines(text: str) -> list[str]:
    """The lines of a JSON Lines text: split at ``\\n`` only (``\\r\\n`` too).

    :meth:`str.splitlines` also splits at U+2028, U+2029, U+0085 and other characters that
    JSON allows raw inside a string, which would cut a valid record in two.
    """
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def problem(exc: ValueError) -> str:
    """What a :func:`loads` error means for the user, as a clause (file and line come first)."""
    if isinstance(exc, DuplicateKeyError):
        return f"{exc} (JSON would keep only the last value silently); keep one"
    return str(exc)
