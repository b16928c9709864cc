"""The small files the exercises use are shipped, current and valid; one validity rule."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judgerisk._book import runbook
from judgerisk._book.examples import my_judge_table, write_my_judge
from judgerisk.selective.data import load_single_judge
from judgerisk.selective.protocol import VALID_SE, within_guarantee

SHIPPED = runbook.REPO_ROOT / "notebooks" / "data" / "my_judge.csv"


def test_shipped_my_judge_is_what_the_package_writes(tmp_path):
    shipped = pd.read_csv(SHIPPED)
    pd.testing.assert_frame_equal(shipped, my_judge_table(), check_dtype=False)
    pairs = load_single_judge(SHIPPED, require_gold=True)  # the exercises' contract
    assert len(pairs) == len(shipped) > 100


def test_write_my_judge_never_overwrites(tmp_path):
    target = tmp_path / "my_judge.csv"
    target.write_text("mine")
    with pytest.raises(FileExistsError):
        write_my_judge(target)
    assert target.read_text() == "mine"
    write_my_judge(target, overwrite=True)
    assert pd.read_csv(target).columns.tolist() == ["item", "logit_fwd", "logit_rev", "gold"]


def test_write_my_judge_keeps_a_file_that_appears_meanwhile(tmp_path, monkeypatch):
    """Through the one safe writer: onto a free name only, so a racing file survives."""
    import judgerisk._book.examples as examples

    target = tmp_path / "my_judge.csv"

    def _table_then_a_rival():
        target.write_text("theirs")  # another process wins the name while the table is made
        return my_judge_table()

    monkeypatch.setattr(examples, "my_judge_table", _table_then_a_rival)
    with pytest.raises(FileExistsError):
        write_my_judge(target)
    assert target.read_text() == "theirs"
    assert [p.name for p in tmp_path.iterdir()] == ["my_judge.csv"]  # no temporary left


def test_one_validity_rule():
    alpha, se = np.array([0.1, 0.1, 0.1]), np.array([0.01, 0.01, np.nan])
    mean = np.array([0.1 + (VALID_SE - 0.5) * 0.01, 0.1 + (VALID_SE + 0.5) * 0.01, 0.1])
    assert within_guarantee(mean, alpha, se).tolist() == [True, False, True]
