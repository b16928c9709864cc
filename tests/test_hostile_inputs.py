"""The smaller findings of issue 33 (item 9), each seen on ``main`` and each a regression test.

crowd-kit import of an all-``0`` table read every label as A; gold values that are not labels
were dropped while the import said "dropped: nothing"; duplicate JSON keys kept the last value
in the importers (the panel reader refused them); a JSON Lines file with a raw U+2028 inside a
string was refused as truncated; 200,000-level nested JSON exited 1 with a RecursionError;
``select`` with every item labelled said "accepted 0 of 0".
"""

from __future__ import annotations

import json

import pandas as pd
import pytest

from judgerisk._util.json_text import DuplicateKeyError, NestingError, loads, split_lines
from judgerisk.cli import EXIT_OK, EXIT_USAGE, main
from judgerisk.importers import import_judgments
from judgerisk.panel import PanelError, load_panel

DEEP = "[" * 200_000 + "]" * 200_000


def _crowdkit(path, labels, gold=None):
    rows = {"task": [1, 1, 2, 2], "worker": ["w1", "w2", "w1", "w2"], "label": labels}
    if gold is not None:
        rows["gold"] = gold
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_an_all_zero_crowdkit_table_is_all_b(tmp_path):
    panel, info = import_judgments("crowdkit", [_crowdkit(tmp_path / "l.csv", [0, 0, 0, 0])])
    assert (panel["verdict"] == 0.0).all()  # 1 is A and 0 is B, whichever occurs
    assert info["assumptions"]["label -> p"].startswith("'1': 0.95, '0': 0.05")
    ones, _ = import_judgments("crowdkit", [_crowdkit(tmp_path / "m.csv", [1, 1, 1, 1])])
    assert (ones["verdict"] == 1.0).all()


def test_a_gold_value_that_is_no_label_is_an_error_naming_its_row(tmp_path, capsys):
    src = _crowdkit(tmp_path / "l.csv", ["A", "B", "A", "A"], ["A", "A", "a", "a"])
    out = tmp_path / "panel.csv"
    assert main(["import", "crowdkit", str(src), "-o", str(out)]) == EXIT_USAGE
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "row 3, column 'gold': 'a' is not a label" in err[0]
    assert not out.exists()


def test_a_tie_gold_is_counted_as_dropped(tmp_path, capsys):
    src = _crowdkit(tmp_path / "l.csv", ["A", "B", "A", "tie"], ["A", "A", "tie", "tie"])
    out = tmp_path / "panel.csv"
    assert main(["import", "crowdkit", str(src), "--label-tie", "tie", "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "dropped: 2 gold labels that are a tie (kept as unlabelled)" in err
    assert "dropped: nothing" not in err
    gold = load_panel(out, None).drop_duplicates("item").set_index("item")["gold"]
    assert gold[1] == "A" and pd.isna(gold[2])


def _fastchat_record(qid: int, **extra) -> dict:
    return {
        "question_id": qid,
        "model_1": "m1",
        "model_2": "m2",
        "g1_winner": "model_1",
        "g2_winner": "model_2",
        "judge": ["gpt-4", "pair-v2"],
        "turn": 1,
        **extra,
    }


def test_importers_refuse_a_key_given_twice(tmp_path, capsys):
    line = json.dumps(_fastchat_record(1))[:-1] + ', "g1_winner": "model_2"}'
    src = tmp_path / "j_pair.jsonl"
    src.write_text(json.dumps(_fastchat_record(2)) + "\n" + line + "\n", encoding="utf-8")
    assert main(["import", "fastchat", str(src), "-o", str(tmp_path / "p.csv")]) == EXIT_USAGE
    err = capsys.readouterr().err.strip()
    assert "line 2: the key 'g1_winner' appears twice" in err and "\n" not in err
    alpaca = tmp_path / "annotations.json"
    alpaca.write_text('[{"instruction": "x", "preference": 1, "preference": 2}]')
    with pytest.raises(PanelError, match="the key 'preference' appears twice"):
        import_judgments("alpaca_eval", [alpaca])


def test_a_raw_line_separator_inside_a_string_is_not_a_line_end(tmp_path):
    src = tmp_path / "j_pair.jsonl"
    records = [_fastchat_record(q, user_prompt="first\u2028second\u2029\x85third") for q in (1, 2)]
    src.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), "utf-8")
    assert "\u2028" in src.read_text(encoding="utf-8")  # raw, as a JSON writer may leave it
    panel, _ = import_judgments("fastchat", [src])
    assert panel["item"].nunique() == 2
    assert split_lines("a\u2028b\r\nc\n") == ["a\u2028b", "c"]


@pytest.mark.parametrize("where", ["importer", "panel"])
def test_deeply_nested_json_is_one_line_exit_2(tmp_path, capsys, where):
    if where == "importer":
        src = tmp_path / "j_pair.jsonl"
        src.write_text(json.dumps(_fastchat_record(1)) + "\n" + DEEP + "\n", encoding="utf-8")
        argv = ["import", "fastchat", str(src), "-o", str(tmp_path / "p.csv")]
    else:
        src = tmp_path / "panel.jsonl"
        src.write_text(DEEP + "\n", encoding="utf-8")
        argv = ["score", str(src), "-o", str(tmp_path / "s.csv")]
    assert main(argv) == EXIT_USAGE
    err = capsys.readouterr().err.strip()
    assert "nested too deeply" in err and "line" in err and "\n" not in err


def test_the_json_reader_is_one_rule():
    with pytest.raises(DuplicateKeyError):
        loads('{"a": 1, "b": {"c": 1, "c": 2}}')
    with pytest.raises(NestingError):
        loads(DEEP)
    assert loads('{"a": [1, {"b": null}]}') == {"a": [1, {"b": None}]}


def test_select_with_every_item_labelled_does_not_say_accepted_0_of_0(tmp_path, capsys):
    sim = tmp_path / "sim.csv"
    assert main(["simulate", "--n-items", "40", "-o", str(sim)]) == EXIT_OK
    scores = tmp_path / "scores.csv"
    assert main(["score", str(sim), "-o", str(scores), "--n-seeds", "1"]) == EXIT_OK
    labels = tmp_path / "labels.csv"
    pd.read_csv(sim).drop_duplicates("item")[["item", "gold"]].to_csv(labels, index=False)
    capsys.readouterr()
    argv = ["select", str(scores), "--calibration", str(labels), "-o", str(tmp_path / "d.csv")]
    assert main(argv) == EXIT_OK
    err = capsys.readouterr().err
    assert "accepted 0 of 0" not in err
    assert "warning: all 40 item(s) of the scores are in the calibration file" in err
    assert "no item is left to decide" in err
