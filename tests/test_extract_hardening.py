"""Regression tests of ``extract``'s hardening (issue 27 points 2, 8, 9, 10, 14, 15) and a fuzz
test of its items and templates, on the tiny offline judge."""

from __future__ import annotations

import json
import shutil
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
torch.set_num_threads(1)

from judgerisk._provenance import read_record  # noqa: E402
from judgerisk.cli import EXIT_OK, EXIT_USAGE, main  # noqa: E402
from judgerisk.extract import extract_logprobs, load_template, read_items  # noqa: E402
from judgerisk.extract._extract import run_judge  # noqa: E402
from judgerisk.extract.backends import open_judge  # noqa: E402
from judgerisk.testing import short_template, tiny_items, tiny_judge  # noqa: E402

CONDS = ("original", "swap")


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tiny_judge(tmp_path_factory.mktemp("tiny"))


@pytest.fixture
def work(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    tiny_items(2).to_csv("items.csv", index=False)
    Path("short.json").write_text(json.dumps(short_template()), encoding="utf-8")
    return tmp_path


def _cli(folder, *extra, items="items.csv", out="run"):
    argv = [
        "extract",
        items,
        "-o",
        out,
        "--model",
        str(folder),
        "--template",
        "short.json",
        "--conditions",
        *CONDS,
        "--no-progress",
        *extra,
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return main(argv)


def _run(judge, items, out, **kw):
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="low verdict mass")
        return run_judge(judge, items, CONDS, out_dir=out, template=short_template(), **kw)


# ------------------------------------------------------------------ point 2: output paths first
def test_out_folder_holding_the_items_is_refused_before_any_work(folder, work, capsys):
    Path("run").mkdir()
    shutil.copy("items.csv", "run/panel.parquet")  # an input where the output would go
    before = Path("run/panel.parquet").read_bytes()
    assert _cli(folder, items="run/panel.parquet") == EXIT_USAGE
    err = capsys.readouterr().err
    assert "would overwrite the input items run/panel.parquet" in err
    assert Path("run/panel.parquet").read_bytes() == before
    assert not Path("run/manifest.json").exists() and not Path("run/parts").exists()


def test_out_that_is_a_file_is_refused(folder, work, capsys):
    Path("run").write_text("x")
    assert _cli(folder) == EXIT_USAGE
    assert "is a file, not a folder" in capsys.readouterr().err


# ------------------------------------------------------------------ point 8: stale results
def test_resume_recomputes_a_changed_item_and_refuses_another_judge(folder, work):
    items = tiny_items(2)
    judge = open_judge(str(folder), "hf")
    first = _run(judge, items, "out")
    changed = items.copy()
    changed.loc[1, "answer_a"] = "A different answer now."
    with pytest.warns(UserWarning, match="computed from a different prompt"):
        resumed = _run(judge, changed, "out")
    fresh = _run(judge, changed, None)
    assert np.allclose(resumed["logit"], fresh["logit"], atol=1e-5)
    # item 1's cells were recomputed: they differ from the stale values
    stale = first.set_index(["item", "condition"])["logit"]
    new = resumed.set_index(["item", "condition"])["logit"]
    assert not np.allclose(stale.loc[1], new.loc[1])
    assert np.allclose(stale.loc[0], new.loc[0])
    # another chat template, dtype or model: refused with the differing fields named
    plain = "{% for m in messages %}{{ m['content'] }}\n{% endfor %}Verdict:"
    for other, field in (
        (open_judge(str(folder), "hf", chat_template=plain), "chat_template_sha256"),
        (open_judge(str(folder), "hf", dtype="bfloat16"), "dtype"),
        (open_judge(str(tiny_judge(work / "other", seed=1)), "hf"), "model_sha256"),
    ):
        with pytest.raises(ValueError, match=f"different run.*{field}"):
            _run(other, changed, "out")


# ------------------------------------------------------------------ point 9: the record
def test_record_holds_true_start_wall_time_and_every_input(folder, work):
    t0 = time.time()
    assert _cli(folder) == EXIT_OK
    wall = time.time() - t0
    rec = read_record("run/panel.parquet")
    started = pd.Timestamp(rec["started"]).timestamp()
    assert t0 - 1 <= started <= t0 + 1
    assert 0.5 * wall <= rec["wall_s"] <= wall + 1
    assert {"items", "template"} <= set(rec["inputs"])
    assert rec["inputs"]["items"]["sha256"]
    judge = rec["settings"]["judge_backend"]
    assert judge["dtype"] == "float32" and len(judge["model_sha256"]) == 64
    assert judge["chat_template_sha256"] and judge["backend"] == "hf"
    manifest = json.loads(Path("run/manifest.json").read_text())
    assert manifest["judge_backend"] == judge
    assert {"items", "template"} <= set(manifest["provenance"]["inputs"])


# ------------------------------------------------------------------ point 10: ids as given
def test_item_ids_stay_as_written(folder, work):
    items = tiny_items(3)
    items["item"] = ["007", "NA", "null"]
    items.to_csv("ids.csv", index=False)
    assert read_items("ids.csv")["item"].tolist() == ["007", "NA", "null"]
    assert _cli(folder, items="ids.csv") == EXIT_OK
    panel = pd.read_parquet("run/panel.parquet")
    assert sorted(set(panel["item"])) == ["007", "NA", "null"]


# ------------------------------------------------------------------ point 14: models offline
@pytest.mark.parametrize("model", ["./no-such-folder", "no/such.gguf", "missing.gguf"])
def test_a_missing_local_model_fails_at_once(work, capsys, model):
    t0 = time.time()
    argv = ["extract", "--model", model, "--items", "items.csv", "--out", "run", "--no-progress"]
    assert main(argv) == EXIT_USAGE
    assert time.time() - t0 < 10
    assert "no such file or folder" in capsys.readouterr().err


def test_an_uncached_hub_id_fails_at_once_without_download(work, capsys, monkeypatch):
    monkeypatch.setenv("HF_HOME", str(work / "empty-cache"))
    t0 = time.time()
    argv = ["extract", "--model", "nobody/no-model", "--items", "items.csv", "--out", "run"]
    assert main(argv) == EXIT_USAGE
    assert time.time() - t0 < 10
    assert "nothing is downloaded" in capsys.readouterr().err


# ------------------------------------------------------------------ point 15: messages
def test_errors_name_the_file(folder, work, capsys):
    Path("broken.jsonl").write_text(
        '{"item": 1, "prompt": "p", "answer_a": "a", "answer_b": "b"}\n{oops\n'
    )
    Path("broken.json").write_text('{"name": "x", "version": 1,')
    Path("broken.jinja").write_text("{% for m in messages %}{{ m['content'] }")
    dup = tiny_items(2)
    dup["item"] = [5, 5]
    dup.to_csv("dup.csv", index=False)
    cases = [
        (["--items", "broken.jsonl"], "broken.jsonl: line 2"),
        (["--template", "broken.json"], "template broken.json: line 1"),
        (["--chat-template", "broken.jinja"], "--chat-template broken.jinja: line 1"),
        (["--items", "dup.csv"], "dup.csv: duplicate item ids ['5']"),
        (["--batch-size", "abc"], "--batch-size: expected a positive integer or 'auto'"),
    ]
    for extra, message in cases:
        argv = [
            "extract",
            "--model",
            str(folder),
            "--items",
            "items.csv",
            "--out",
            "run",
            "--no-progress",
            *extra,
        ]
        code = None
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse's own usage errors
            code = exc.code
        assert code == EXIT_USAGE, extra
        err = capsys.readouterr().err
        assert message in err, (extra, err)
        assert "Traceback" not in err


def test_extract_help_shows_defaults(capsys):
    with pytest.raises(SystemExit):
        main(["extract", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for default in (
        "(default: pairwise_v1)",
        "(default: hf)",
        "(default: auto)",
        "(default: 0.5)",
        "(default: 20)",
    ):
        assert default in text


# ------------------------------------------------------------------ fuzz: items and templates
def _mutate_items(df, op, data):
    df = df.copy().astype(object)
    row = data.draw(st.integers(0, len(df) - 1))
    col = data.draw(st.sampled_from(list(df.columns)))
    if op == "blank":
        df.loc[row, col] = data.draw(st.sampled_from(["", " ", None, np.nan]))
    elif op == "value":
        df.loc[row, col] = data.draw(st.sampled_from(["007", "NA", "null", "x\ny", 3, 2.5, True]))
    elif op == "duplicate":
        df = pd.concat([df, df.iloc[[row]]], ignore_index=True)
    elif op == "drop":
        df = df.drop(columns=col)
    elif op == "rename":
        df = df.rename(columns={col: data.draw(st.sampled_from(["Item", "item ", "x", "gold"]))})
    return df


@settings(
    max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(
    ops=st.lists(
        st.sampled_from(["blank", "value", "duplicate", "drop", "rename", "none"]),
        min_size=1,
        max_size=3,
    ),
    fmt=st.sampled_from([".csv", ".jsonl", ".json", ".parquet"]),
    truncate=st.one_of(st.none(), st.floats(0.0, 1.0)),
    data=st.data(),
)
def test_fuzz_items_end_in_a_named_error_or_valid_items(ops, fmt, truncate, data):
    df = tiny_items(3)
    for op in ops:
        if op != "none" and len(df.columns):
            df = _mutate_items(df, op, data)
    folder = Path(tempfile.mkdtemp(prefix="judgerisk-fuzz-items-"))
    try:
        path = folder / f"items{fmt}"
        try:
            if fmt == ".csv":
                df.to_csv(path, index=False)
            elif fmt == ".parquet":
                df.astype(str).to_parquet(path)
            else:
                df.to_json(path, orient="records", lines=fmt == ".jsonl")
        except Exception:  # noqa: BLE001 - pandas cannot write it: nothing to read
            return
        if truncate is not None:
            raw = path.read_bytes()
            path.write_bytes(raw[: int(len(raw) * truncate)])
        try:
            items = read_items(path)
        except ValueError as exc:
            assert str(path) in str(exc)
            return
        assert {"item", "prompt", "answer_a", "answer_b"} <= set(items.columns)
        assert not items["item"].duplicated().any()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@settings(max_examples=100, deadline=None, derandomize=True)
@given(
    key=st.sampled_from(
        [
            "name",
            "version",
            "system",
            "user",
            "rubrics",
            "conditions",
            "verdict_tokens",
            "assistant_prefill",
        ]
    ),
    value=st.sampled_from([None, 1, "", "{nope}", [], {}, ["A"], ["A", "A"], {"x": 1}]),
    drop=st.booleans(),
    truncate=st.one_of(st.none(), st.floats(0.0, 1.0)),
)
def test_fuzz_templates_end_in_a_named_error_or_a_template(key, value, drop, truncate):
    record = short_template()
    if drop:
        record.pop(key, None)
    else:
        record[key] = value
    folder = Path(tempfile.mkdtemp(prefix="judgerisk-fuzz-tmpl-"))
    try:
        path = folder / "t.json"
        raw = json.dumps(record).encode()
        path.write_bytes(raw if truncate is None else raw[: int(len(raw) * truncate)])
        try:
            tmpl = load_template(path)
        except ValueError as exc:
            assert str(path) in str(exc)
            return
        assert tmpl.hash and len(tmpl.verdict_tokens) == 2
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_a_ready_judge_refuses_options_it_would_ignore(folder):
    judge = open_judge(str(folder), "hf")
    for kw in ({"device": "cpu"}, {"dtype": "float32"}, {"chat_template": "x"}):
        with pytest.raises(ValueError, match="cannot be applied to a ready Judge"):
            extract_logprobs(judge, None, tiny_items(1), **kw)
