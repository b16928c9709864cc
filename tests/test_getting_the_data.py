"""The "Getting the data" steps: a plain clone of each repository is all a loader needs.

* JudgeBench: :func:`judgerisk.datasets.judgebench.build_judgments_table` turns the clone's
  seven ``outputs/`` runs into the flat table (checked here on hand-made runs; on the real
  clone at the book's commit it reproduces the book's table row for row);
* LLMBar: a clone has no flat table, so the loader reads its ``result.json`` files.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest

from judgerisk._util.safe_write import OutputExistsError
from judgerisk.datasets import data_root
from judgerisk.datasets.judgebench import SOURCE_FILES, build_judgments_table, source_name
from judgerisk.datasets.llmbar import load_llmbar_verdicts


def _record(pair: str, judge_name: str, judge_model: str, game_2_as_repr: bool = False) -> dict:
    if judge_name == "reward_model":
        games = [
            {"judgment": {"judge_model": judge_model, "scores": [1.5, 0.5]}, "decision": "A>B"},
            {"judgment": {"judge_model": judge_model, "scores": [0.5, 1.5]}, "decision": "B>A"},
        ]
    else:
        second = {"judge_model": judge_model, "response": "B wins: [[A=B]] no, [[B>>A]]"}
        games = [
            {"judgment": {"judge_model": judge_model, "response": "[[A>B]]"}, "decision": "A>B"},
            {"judgment": repr(second) if game_2_as_repr else second, "decision": "B>A"},
        ]
    return {
        "pair_id": pair,
        "source": "livebench-math",
        "response_model": "m",
        "label": "A>B",
        "judgments": games,
    }


@pytest.fixture
def clone(tmp_path):
    outputs = tmp_path / "JudgeBench" / "outputs"
    outputs.mkdir(parents=True)
    for response_model, judge_name, judge_model in SOURCE_FILES:
        recs = [_record(f"p{k}", judge_name, judge_model, game_2_as_repr=k == 1) for k in (0, 1)]
        (outputs / source_name(response_model, judge_name, judge_model)).write_text(
            "\n".join(json.dumps(r) for r in recs) + "\n"
        )
    return tmp_path / "JudgeBench"


def test_build_judgments_table_reads_the_seven_runs(clone, tmp_path):
    out = tmp_path / "judgebench" / "judgments_long.csv"
    out.parent.mkdir()
    table = build_judgments_table(clone, out)
    assert len(table) == len(SOURCE_FILES) * 2 * 2
    pd.testing.assert_frame_equal(pd.read_csv(out), table, check_dtype=False)
    reward = table[table["judge_name"] == "reward_model"]
    assert reward["score_first_shown"].tolist()[:2] == [1.5, 0.5]
    assert reward["verdict_5level_presented_frame"].isna().all()
    llm = table[table["judge_name"] == "arena_hard"]
    # the last verdict tag of the answer, also when the run stored the judgment's repr
    assert llm["verdict_5level_presented_frame"].tolist()[:4] == ["A>B", "B>>A", "A>B", "B>>A"]
    with pytest.raises(OutputExistsError):
        build_judgments_table(clone, out)  # never over an existing file


def test_build_judgments_table_names_a_missing_run_and_a_bad_line(clone):
    first = clone / "outputs" / source_name(*SOURCE_FILES[0])
    first.write_text('{"pair_id": "x"}\n')
    with pytest.raises(ValueError, match=r"line 1: not a judge record"):
        build_judgments_table(clone)
    first.unlink()
    with pytest.raises(FileNotFoundError, match="clone https://github.com/ScalerLab/JudgeBench"):
        build_judgments_table(clone)


_ROOT = data_root(required=False)


@pytest.mark.data
@pytest.mark.skipif(
    _ROOT is None or not (_ROOT / "llmbar" / "Dataset").is_dir(), reason="LLMBar not found"
)
def test_a_plain_llmbar_clone_needs_no_flat_table(tmp_path):
    clone = tmp_path / "llmbar"
    clone.mkdir()
    (clone / "Dataset").symlink_to(_ROOT / "llmbar" / "Dataset")  # a clone: no verdicts_long.csv
    from_clone = load_llmbar_verdicts(tmp_path)
    pd.testing.assert_frame_equal(from_clone, load_llmbar_verdicts(_ROOT, source="csv"))
