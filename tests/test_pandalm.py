"""PandaLM loader: a hand-made copy of the three files, and the shared data when present."""

from __future__ import annotations

import json

import numpy as np
import pytest

from judgerisk.datasets import data_root
from judgerisk.datasets.pandalm import load_pandalm_panel, load_pandalm_table

_ROOT = data_root(required=False)
needs_data = pytest.mark.skipif(
    _ROOT is None or not (_ROOT / "pandalm" / "testset-v1.json").is_file(),
    reason="shared PandaLM data not found (set JUDGERISK_DATA or place it in ../shared/data/pandalm)",
)


@pytest.fixture
def tiny(tmp_path):
    """Four items: A-majority, B-majority, tie-majority, 2-of-3 A."""
    d = tmp_path / "pandalm"
    d.mkdir()
    ann = [(1, 1, 1), (2, 2, 1), (0, 0, 2), (1, 2, 1)]
    test = [
        {
            "idx": i,
            "motivation_app": "x",
            "cmp_key": "m1_m2",
            "instruction": "q",
            "input": "",
            "response1": "r1",
            "response2": "r2",
            "annotator1": a,
            "annotator2": b,
            "annotator3": c,
        }
        for i, (a, b, c) in enumerate(ann)
    ]
    gpt = [
        {"idx": i, "gpt_result": r, "gpt_reason": "", "gpt_reference": ""}
        for i, r in enumerate(["1", "Tie", "2", "garbage"])
    ]
    panda = [
        {"idx": i, "pandalm_result": r, "pandalm_reason": "", "pandalm_reference": ""}
        for i, r in enumerate([1, 2, 0, 2])
    ]
    for name, obj in (
        ("testset-v1.json", test),
        ("gpt-3.5-turbo-testset-v1.json", gpt),
        ("pandalm-7b-testset-v1.json", panda),
    ):
        (d / name).write_text(json.dumps(obj))
    return tmp_path


def test_table_majority_and_codes(tiny):
    t = load_pandalm_table(tiny)
    assert t["human_majority"].tolist() == [1, 2, 0, 1]
    assert t["human_agreement"].tolist() == [3, 2, 2, 2]
    assert t["gpt-3.5-turbo"].tolist()[:3] == [1, 0, 2]
    assert np.isnan(t["gpt-3.5-turbo"].iloc[3])  # "garbage"


def test_panel_ties_garbage_and_gold(tiny):
    with pytest.warns(UserWarning) as rec:
        panel = load_pandalm_panel(tiny, epsilon=0.1)
    text = " ".join(str(w.message) for w in rec)
    assert "1 verdict(s) are missing cells (gpt-3.5-turbo: 1)" in text
    assert "1 item(s) whose human majority is a tie" in text
    assert sorted(panel["item"].unique()) == [0, 1, 3]  # the tie-gold item 2 is removed
    assert panel.attrs["dropped_tie_items"] == [2]
    cell = panel.set_index(["item", "judge"])
    assert cell.loc[(0, "gpt-3.5-turbo"), "p"] == pytest.approx(0.9)
    assert cell.loc[(1, "gpt-3.5-turbo"), "p"] == pytest.approx(0.5)  # judge tie -> 0.5
    assert cell.loc[(1, "gpt-3.5-turbo"), "verdict"] == 0.5  # logit 0: a tie, half a vote
    assert (3, "gpt-3.5-turbo") not in cell.index  # garbage -> missing
    assert cell.loc[(3, "PandaLM-7B"), "p"] == pytest.approx(0.1)
    assert panel.drop_duplicates("item").set_index("item")["gold"].to_dict() == {
        0: "A",
        1: "B",
        3: "A",
    }
    assert set(panel["condition"]) == {"original"}


def test_panel_options(tiny):
    with pytest.warns(UserWarning, match="missing cells"):
        keep = load_pandalm_panel(tiny, gold_ties="keep", judge_ties="missing", include_humans=True)
    assert "gold" not in keep.columns
    assert sorted(keep["item"].unique()) == [0, 1, 2, 3]
    assert {"human1", "human2", "human3"} <= set(keep["judge"])
    assert not ((keep["judge"] == "gpt-3.5-turbo") & (keep["item"] == 1)).any()  # tie missing
    with pytest.raises(ValueError, match="judge_ties"):
        load_pandalm_panel(tiny, judge_ties="coin")
    with pytest.raises(ValueError, match="gold_ties"):
        load_pandalm_panel(tiny, gold_ties="coin")


@needs_data
def test_shared_pandalm():
    table = load_pandalm_table(_ROOT)
    assert len(table) == 999
    assert (table["human_agreement"] == 3).sum() == 879
    with pytest.warns(UserWarning):
        panel = load_pandalm_panel(_ROOT)
    assert panel["item"].nunique() == 999 - int((table["human_majority"] == 0).sum())
    assert panel.attrs["missing_cells"] == {"gpt-3.5-turbo": 25}
    assert set(panel["judge"]) == {"gpt-3.5-turbo", "PandaLM-7B"}
