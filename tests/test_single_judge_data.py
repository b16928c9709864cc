"""The single-judge file contract: item, logit_fwd, logit_rev, gold."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judgerisk.panel import PanelError
from judgerisk.selective.data import load_single_judge, validate_single_judge
from judgerisk.simulate import simulate_pairs


def test_round_trip_keeps_every_row(tmp_path):
    pairs = simulate_pairs(40, seed=1)
    path = tmp_path / "judge.csv"
    pairs.to_csv(path, index=False)
    got = load_single_judge(path, require_gold=True)
    assert len(got) == 40
    np.testing.assert_allclose(got["logit_fwd"], np.clip(pairs["logit_fwd"], -20, 20))
    assert set(got["gold"]) <= {"A", "B"}


@pytest.mark.parametrize(
    ("frame", "needle"),
    [
        (pd.DataFrame({"item": [1], "logit_fwd": [0.1]}), "missing column"),
        (pd.DataFrame({"item": [1, 1], "logit_fwd": [0, 1], "logit_rev": [0, 1]}), "unique"),
        (pd.DataFrame({"item": [1, 2], "logit_fwd": [0, "x"], "logit_rev": [0, 1]}), "row 1"),
        (
            pd.DataFrame({"item": [1], "logit_fwd": [0], "logit_rev": [0], "gold": ["C"]}),
            "'gold'",
        ),
    ],
)
def test_bad_input_is_one_clear_error(frame, needle, tmp_path):
    path = tmp_path / "bad.csv"
    frame.to_csv(path, index=False)
    with pytest.raises(PanelError, match=needle) as info:
        load_single_judge(path)
    assert str(path) in str(info.value)


def test_gold_required_when_asked():
    frame = pd.DataFrame({"item": [1], "logit_fwd": [0.2], "logit_rev": [0.1]})
    assert len(validate_single_judge(frame)) == 1
    with pytest.raises(PanelError, match="gold"):
        validate_single_judge(frame, require_gold=True)
