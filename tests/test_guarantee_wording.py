"""SCOPE's guarantee has one wording wherever a user reads it.

The calibration controls the mean false discovery proportion over calibration draws, not
the SCOPE paper's ratio of expectations (book, Methods §7). The methods page, the glossary,
the chapters that certify, the reports and the CLI help must all say so in the same words,
and none of them may fall back to an unqualified "expected error rate".
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from judgerisk.cli._app import main

ROOT = Path(__file__).resolve().parents[1]
PHRASE = "mean false discovery proportion over calibration draws"
#: Wordings that leave open which expectation is bounded.
VAGUE = re.compile(
    r"expected (false discovery|error rate|share of wrong|FDP)|in expectation\b", re.I
)
PAGES = [
    "book/methods.md",
    "book/glossary.md",
    "book/intro.md",
    "notebooks/11_certified_panel_decisions.md",
    "notebooks/15_conclusion.md",
    "judgerisk/report/templates/panel_report.md",
    "judgerisk/report/templates/one_judge_report.md",
]


def _flat(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("page", PAGES)
def test_pages_state_the_guarantee_in_one_wording(page):
    text = _flat((ROOT / page).read_text(encoding="utf-8"))
    assert PHRASE in text, f"{page}: does not say '{PHRASE}'"
    assert not VAGUE.search(text), f"{page}: vague wording {VAGUE.search(text).group(0)!r}"


@pytest.mark.parametrize("command", ["select", "bpe"])
def test_cli_help_states_the_guarantee_in_the_same_words(command, capsys):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    out = _flat(capsys.readouterr().out)
    assert PHRASE in out
    assert not VAGUE.search(out)


def test_methods_page_derives_it_and_names_the_ratio_form_that_does_not_hold():
    text = _flat((ROOT / "book/methods.md").read_text(encoding="utf-8"))
    assert "(methods-guarantee)=" in (ROOT / "book/methods.md").read_text(encoding="utf-8")
    assert "a draw that accepts nothing counts as 0" in text  # FDP = 0 on an empty set
    assert "ratio form is not what holds" in text
    assert "Cov" in text  # the gap between the ratio and the mean, derived


def test_the_detector_flags_the_old_wordings():
    old = "the expected false discovery rate of the accepted verdicts is <= alpha"
    assert VAGUE.search(old)
    assert VAGUE.search("the certificate still holds in expectation, but")
    assert not VAGUE.search(PHRASE)
