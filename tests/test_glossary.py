"""The glossary page and the chapters define the risk scores in the same words.

``judgerisk._book.figures.glossary.DEFINITIONS`` is the one wording; the glossary page must state it
(MyST links removed), and the conclusion pastes it instead of restating a definition.
"""

from __future__ import annotations

import re

import pytest

from judgerisk._book import runbook
from judgerisk._book.figures.glossary import DEFINITIONS, define

GLOSSARY = runbook.REPO_ROOT / "book" / "glossary.md"


def _entries() -> dict[str, str]:
    body = GLOSSARY.read_text().split("```{glossary}", 1)[1].split("\n```", 1)[0]
    entries, term = {}, None
    for line in body.splitlines():
        if line and not line.startswith(" "):
            term = line.strip()
            entries[term] = ""
        elif term is not None:
            entries[term] += " " + line.strip()
    plain = {}
    for key, text in entries.items():
        text = re.sub(r"\{term\}`([^`<]*?)\s*(?:<[^>]*>)?`", r"\1", text)
        text = re.sub(r"\{cite\}`[^`]*`", "", text)
        plain[key] = " ".join(text.split())
    return plain


@pytest.mark.parametrize("term", sorted(DEFINITIONS))
def test_glossary_page_states_the_packages_definition(term):
    assert _entries()[term] == DEFINITIONS[term]


def test_define_refuses_an_unknown_term():
    with pytest.raises(KeyError, match="no definition"):
        define("XYZ")


def test_pe_and_ve_are_not_confused():
    assert "mean probability" in define("PE") and "share of judges voting" in define("VE")
    assert "|p − p′|" in define("S")
