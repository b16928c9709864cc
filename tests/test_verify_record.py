"""``verify`` compares the whole record it regenerates (issue 44, item 4), and CRLF round-trips.

Every field of the record read must equal the regenerated record's, except the dynamic ones
(:data:`judgerisk.cli.verify.DYNAMIC_FIELDS`): a record-only edit (``settings.n_items``, a
report's ``settings.kind``, a forged ``extensions`` entry, an added field) fails naming the
field. A ``perturb`` csv whose text holds ``\\r\\n`` inside a cell verifies: its text is read
byte for byte.
"""

from __future__ import annotations

import json
import re
import shutil

import numpy as np
import pandas as pd
import pytest

from judgerisk.cli import main
from judgerisk.cli.common import EXIT_DIFFERS
from judgerisk.cli.verify import DYNAMIC_FIELDS, compare_records
from judgerisk.testing import tiny_items


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    folder = tmp_path_factory.mktemp("scored")
    panel, scores = folder / "panel.csv", folder / "scores.csv"
    assert main(["simulate", "--n-items", "40", "-o", str(panel)]) == 0
    assert main(["score", str(panel), "-o", str(scores), "--no-progress"]) == 0
    return scores


def _tampered(scores, tmp_path, edit) -> str:
    out = tmp_path / "scores.csv"
    shutil.copy(scores, out)
    record = json.loads((scores.parent / "scores.csv.provenance.json").read_text())
    edit(record)
    (tmp_path / "scores.csv.provenance.json").write_text(json.dumps(record))
    return str(out)


def _verify(path, capsys) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["verify", str(path)])
    return code, capsys.readouterr().err


def test_an_untouched_output_reproduces(scored, capsys):
    assert _verify(scored, capsys)[0] == 0


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        (lambda r: r["settings"].update(n_items=999), "settings.n_items"),
        (lambda r: r["settings"].update(seeds=[7]), "settings.seeds[0]"),
        (lambda r: r["settings"].pop("ties"), "settings.ties"),
        (lambda r: r["extensions"].update({"risk score": {"x": "evil.mod.x"}}), "extensions"),
        (lambda r: r.update(note="signed off"), "note"),
        (lambda r: r["settings"].update(reviewed=True), "settings.reviewed"),
        (lambda r: r["inputs"]["panel"].update(origin="lab"), "inputs.panel.origin"),
    ],
    ids=["n_items", "seeds", "removed", "extensions", "added", "added-setting", "added-input"],
)
def test_a_record_only_edit_fails_naming_the_field(scored, tmp_path, capsys, edit, field):
    code, err = _verify(_tampered(scored, tmp_path, edit), capsys)
    assert code == EXIT_DIFFERS, err
    assert "does not reproduce" in err and f"record field '{field}" in err


@pytest.mark.parametrize(
    "edit",
    [
        lambda r: r.update(started="2020-01-01T00:00:00+00:00", wall_s=12345.0),
        lambda r: r["environment"].update(platform="another machine"),
    ],
    ids=["times", "machine"],
)
def test_the_dynamic_fields_may_differ(scored, tmp_path, capsys, edit):
    assert _verify(_tampered(scored, tmp_path, edit), capsys)[0] == 0


def test_the_dynamic_fields_are_listed_in_one_place():
    assert {"started", "wall_s", "environment", "judgerisk"} <= set(DYNAMIC_FIELDS)
    read = {"started": "a", "wall_s": 1.0, "settings": {"n": 1}}
    again = {"started": "b", "wall_s": 2.0, "settings": {"n": 1}}
    assert compare_records(read, again) == []
    assert compare_records({**read, "settings": {"n": 2}}, again) == [
        "record field 'settings.n': 2 in the record, 1 regenerated"
    ]


def test_a_report_whose_kind_was_edited_fails(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(0)
    logit = rng.normal(0, 2, 20)
    rows = [(i, "solo", c, float(v)) for c, sign in (("original", 1), ("swap", 1))
            for i, v in enumerate(sign * logit + rng.normal(0, 0.3, 20))]  # fmt: skip
    pd.DataFrame(rows, columns=["item", "judge", "condition", "logit"]).to_csv("one.csv")
    assert main(["report", "one.csv", "-o", "report.html", "--no-progress"]) == 0
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert '"kind": "one judge in both orders"' in page
    forged = page.replace('"kind": "one judge in both orders"', '"kind": "panel of judges"')
    (tmp_path / "forged.html").write_text(forged, encoding="utf-8")
    code, err = _verify(tmp_path / "forged.html", capsys)
    assert code == EXIT_DIFFERS, err
    assert re.search(r"record field 'settings.kind': \"panel of judges\" in the record", err)


def test_a_perturb_csv_holding_crlf_verifies(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    items = tiny_items(3)
    items.loc[0, "prompt"] = "line one\r\nline two"
    items.to_json("items.jsonl", orient="records", lines=True)
    assert main(["perturb", "items.jsonl", "-o", "perturbed.csv"]) == 0
    assert b"line one\r\nline two" in (tmp_path / "perturbed.csv").read_bytes()
    code, err = _verify(tmp_path / "perturbed.csv", capsys)
    assert code == 0, err
