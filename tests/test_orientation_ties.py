"""The orientation check on strict pairs (issue 44, item 5): ties are out of the denominator.

An Arena-Hard panel whose swapped games were not mapped back, built here as the probe found
it: 3 judges, 30 items, 176 of the 180 cells present, 37 of them ties (Arena-Hard's ``A=B``),
and 79 % of the pairs with a strict verdict in both orders disagreeing. Counted over every
pair (ties as agreements) the share is under one half and the check said nothing.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from judgerisk._orientation import check_orientation, order_disagreement
from judgerisk.cli import EXIT_OK, main

JUDGES = ("gpt-4-0314", "claude-3-opus", "gemini-1.5-pro")
N_ITEMS = 30


def unmapped_arena_panel() -> pd.DataFrame:
    """The probe's panel: every judge's swapped verdicts left in the shown order."""
    rows = []
    ties = {0: 12, 1: 12, 2: 13}  # 37 tie cells: one side of the pair is A=B
    missing = {0: (27, 28, 29), 1: (27,), 2: ()}  # 4 cells with no game
    agree = {0: (13, 14, 15), 1: (13, 14, 15), 2: (13, 14, 15, 16)}  # 10 of 49 strict pairs
    for j, judge in enumerate(JUDGES):
        for i in range(N_ITEMS):
            content = 1.0 if (i + j) % 2 == 0 else -1.0  # the better answer, balanced
            original, swap = 2.0 * content, -2.0 * content  # unmapped: the shown order's sign
            k = (i + 3 * j) % N_ITEMS  # each judge's items in another order
            if k < ties[j]:
                original, swap = (0.0, swap) if k % 2 else (original, 0.0)
            elif k in missing[j]:
                swap = np.nan
            elif k in agree[j]:
                swap = original
            rows.append((f"q{i:02d}", judge, "original", original))
            rows.append((f"q{i:02d}", judge, "swap", swap))
    panel = pd.DataFrame(rows, columns=["item", "judge", "condition", "logit"])
    return panel.dropna(subset=["logit"]).reset_index(drop=True)


def test_the_panel_is_the_probes():
    panel = unmapped_arena_panel()
    assert len(panel) == 176 and panel["judge"].nunique() == 3 and panel["item"].nunique() == 30
    ties = int((panel["logit"] == 0).sum())
    assert ties == 37, ties
    wide = panel.pivot_table(index=["item", "judge"], columns="condition", values="logit")
    wide = wide.dropna()
    strict = wide[(wide["original"] != 0) & (wide["swap"] != 0)]
    share = float((np.sign(strict["original"]) != np.sign(strict["swap"])).mean())
    assert share == pytest.approx(0.79, abs=0.01), share
    every = float((np.sign(wide["original"]) * np.sign(wide["swap"]) < 0).mean())
    assert every < 0.5  # the old denominator: ties counted as agreements


def test_the_share_is_over_strict_pairs():
    table = order_disagreement(unmapped_arena_panel())
    assert set(table["judge"]) == set(JUDGES)
    assert (table["disagree"] > 0.75).all(), table
    assert table["n_items"].sum() == 49  # the pairs with a strict verdict in both orders


def test_check_orientation_names_every_judge():
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        messages = check_orientation(unmapped_arena_panel())
    assert len(messages) == len(JUDGES) and all("ties left out" in m for m in messages)
    for judge in JUDGES:
        assert sum(m.startswith(f"judge {judge!r}: ") for m in messages) == 1


def test_score_warns_on_the_unmapped_arena_panel(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    unmapped_arena_panel().to_csv("panel.csv", index=False)
    assert main(["score", "panel.csv", "-o", "scores.csv", "--no-progress"]) == EXIT_OK
    err = capsys.readouterr().err
    for judge in JUDGES:
        assert f"warning: judge {judge!r}: its verdicts in 'swap' disagree with 'original'" in err
    assert "not mapped back" in err
