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


# ------------------------------------------------------------------ one contract: the panel
def test_a_pair_table_and_its_panel_are_one_judge_in_both_orders(tmp_path):
    from judgerisk.panel import order_pairs, pairs_to_panel
    from judgerisk.selective.confidence import bpe
    from judgerisk.selective.one_judge import bpe_table

    pairs = simulate_pairs(30, seed=2)
    panel = pairs_to_panel(pairs, judge="J")  # the one converter
    assert sorted(panel["condition"].unique()) == ["original", "swap"] and len(panel) == 60
    back = order_pairs(panel)  # the one view
    np.testing.assert_allclose(back["logit_fwd"], pairs.set_index("item")["logit_fwd"])
    assert back["gold"].tolist() == pairs["gold"].tolist()
    # a panel file and a pair file load to the same table
    panel.to_csv(tmp_path / "panel.csv", index=False)
    pairs.to_csv(tmp_path / "pairs.csv", index=False)
    from_panel = load_single_judge(tmp_path / "panel.csv", require_gold=True)
    from_pairs = load_single_judge(tmp_path / "pairs.csv", require_gold=True)
    pd.testing.assert_frame_equal(from_panel, from_pairs)
    # the one-judge paths read the panel: BPE of the table is BPE of the arrays
    table = bpe_table(panel)
    np.testing.assert_allclose(table["bpe"], bpe(pairs["logit_fwd"], pairs["logit_rev"]).score)


def test_a_panel_in_one_order_only_is_refused_in_one_line():
    from judgerisk.panel import pairs_to_panel

    panel = pairs_to_panel(simulate_pairs(5, seed=0))
    with pytest.raises(PanelError, match="seen in one order only"):
        validate_single_judge(panel[~((panel["item"] == 0) & (panel["condition"] == "swap"))])
    with pytest.raises(PanelError, match="no \\['swap'\\]"):
        validate_single_judge(panel[panel["condition"] == "original"])
