"""LLMBar loader: the shared copy (skipped only when absent) and hand-made verdict tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judgerisk.datasets import data_root
from judgerisk.datasets.llmbar import (
    LLMBAR_SUBSETS,
    llmbar_panel,
    load_llmbar_panel,
    load_llmbar_verdicts,
    smooth_verdicts,
)
from judgerisk.panel import PanelError

_ROOT = data_root(required=False)
needs_data = pytest.mark.skipif(
    _ROOT is None or not (_ROOT / "llmbar" / "verdicts_long.csv").is_file(),
    reason="shared LLMBar data not found (set JUDGERISK_DATA or place it in ../shared/data/llmbar)",
)


def _verdicts(rows):
    cols = ["subset", "item_idx", "judge", "strategy", "gold", "swap", "winner"]
    return pd.DataFrame(rows, columns=cols)


def test_smoothing_maps_verdicts_to_eps_and_one_minus_eps():
    np.testing.assert_allclose(smooth_verdicts([1, 0, 1], 0.1), [0.9, 0.1, 0.9])
    with pytest.raises(ValueError, match="epsilon"):
        smooth_verdicts([1], 0.5)


def test_conditions_canonical_orientation_and_missing_cells():
    s = "LLMBar/Natural"
    v = _verdicts(
        [
            (s, 0, "J1", "Vanilla_NoRules", 1, False, 1.0),
            (s, 0, "J1", "Vanilla_NoRules", 1, True, 2.0),  # flips under the swap
            (s, 0, "J1", "Vanilla", 1, False, 1.0),
            (s, 0, "J1", "Vanilla", 1, True, np.nan),  # unparseable -> missing cell
            (s, 0, "J2", "Vanilla_NoRules", 1, False, 2.0),
            (s, 1, "J1", "Vanilla_NoRules", 2, False, np.nan),  # item 1: no original verdict
            (s, 1, "J1", "Vanilla_NoRules", 2, True, 2.0),
        ]
    )
    with pytest.warns(UserWarning) as rec:
        panel = llmbar_panel(v, epsilon=0.05)
    text = " ".join(str(w.message) for w in rec)
    assert "2 unparseable" in text and "J1/swap_rubric1: 1" in text
    assert "LLMBar/Natural/1" in text  # the orphan item is named
    assert set(panel["item"]) == {"LLMBar/Natural/0"}
    cell = panel.set_index(["judge", "condition"])
    assert cell.loc[("J1", "original"), "p"] == pytest.approx(0.95)
    assert cell.loc[("J1", "swap"), "p"] == pytest.approx(0.05)  # winner already canonical
    assert cell.loc[("J1", "rubric1"), "verdict"] == 1
    assert ("J1", "swap_rubric1") not in cell.index
    assert cell.loc[("J2", "original"), "verdict"] == 0
    assert (panel["gold"] == "A").all()
    assert panel.attrs["missing_cells"] == {"J1/original": 1, "J1/swap_rubric1": 1}
    with pytest.warns(UserWarning, match="removed"):  # item 1 has only a swap cell
        only_base = llmbar_panel(v.dropna(), rubric_strategy=None)
    assert set(only_base["item"]) == {"LLMBar/Natural/0"}
    assert set(only_base["condition"]) == {"original", "swap"}


def test_bad_arguments_are_named(tmp_path):
    v = _verdicts([("LLMBar/Natural", 0, "J1", "Vanilla_NoRules", 1, False, 1.0)])
    with pytest.raises(ValueError, match="unknown LLMBar judge"):
        llmbar_panel(v, judges=["nobody"])
    with pytest.raises(ValueError, match="differ"):
        llmbar_panel(v, rubric_strategy="Vanilla_NoRules")
    with pytest.raises(FileNotFoundError, match="LLMBar"):
        load_llmbar_panel(tmp_path)  # exists, but holds no llmbar/ folder


@needs_data
def test_shared_llmbar_panel_shape_and_missing_counts():
    with pytest.warns(UserWarning, match="27 unparseable"):
        panel = load_llmbar_panel(_ROOT)
    assert panel["item"].nunique() == 419
    assert sorted(panel["judge"].unique()) == sorted(
        ["GPT-4", "ChatGPT", "ChatGPT-0301", "LLaMA2", "PaLM2", "Falcon"]
    )
    assert set(panel["condition"]) == {"original", "swap", "rubric1", "swap_rubric1"}
    assert set(np.round(panel["p"], 6)) == {0.05, 0.95}
    # 6 judges x 4 conditions x 419 items minus the 27 unparseable verdicts
    assert len(panel) == 6 * 4 * 419 - 27
    assert panel.groupby("subset")["item"].nunique().to_dict() == {
        "LLMBar/Adversarial/GPTInst": 92,
        "LLMBar/Adversarial/GPTOut": 47,
        "LLMBar/Adversarial/Manual": 46,
        "LLMBar/Adversarial/Neighbor": 134,
        "LLMBar/Natural": 100,
    }


@needs_data
def test_shared_llmbar_matches_the_papers_sanity_check():
    panel = load_llmbar_panel(_ROOT, judges=["GPT-4"])  # GPT-4 has no unparseable verdict here
    rub = panel[panel["condition"] == "rubric1"]  # the Vanilla (+Rules) prompt, swap False
    correct = rub["verdict"].eq((rub["gold"] == "A").astype(int))
    natural = correct[rub["subset"] == "LLMBar/Natural"].mean()
    adversarial = correct[rub["subset"] != "LLMBar/Natural"].mean()
    assert natural == pytest.approx(0.95, abs=0.01)
    assert adversarial == pytest.approx(0.79, abs=0.01)


@needs_data
def test_shared_csv_and_result_json_agree_and_processed_sets():
    csv = load_llmbar_verdicts(_ROOT, subsets="all", source="csv")
    js = load_llmbar_verdicts(_ROOT / "llmbar", subsets="all", source="json")
    pd.testing.assert_frame_equal(csv, js)
    assert set(csv["subset"]) == set(LLMBAR_SUBSETS) | {
        "Processed/FairEval",
        "Processed/LLMEval2",
        "Processed/MT-Bench",
    }
    with pytest.warns(UserWarning, match="84 unparseable"):
        proc = load_llmbar_panel(_ROOT, subsets="Processed")
    assert proc["item"].nunique() == 466
    assert proc["judge"].nunique() == 4
    assert set(proc["condition"]) == {"original", "swap"}
    with pytest.raises(ValueError, match="unknown LLMBar subset"):
        load_llmbar_verdicts(_ROOT, subsets=["LLMBar/Nope"])
    assert issubclass(PanelError, ValueError)
