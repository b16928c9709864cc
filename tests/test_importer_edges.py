"""Importer edges of issue 44 (items 6-9, 11, 12): the files the importers refused or read silently.

Real files only, as ``tests/data/importers`` holds them (each folder's ``NOTE.md`` gives the
source, commit and licence): crowd-kit's toy table (``crowdkit_real``, Apache-2.0) written
tab-separated, Get-Another-Label's labels files (``get_another_label``, Apache-2.0), the
harness's own lm-eval output (``lm_eval_real``, MIT), alpaca_eval's annotations
(``alpaca_eval``, Apache-2.0) and FastChat's judgments (``fastchat_real``). Where a test needs a
shape no excerpt has (a four-choice task beside a two-choice one, a log-likelihood gap beyond
±20, a second annotator folder), it derives it from the real records and says how.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from judgerisk._provenance import read_record
from judgerisk.cli import EXIT_OK, EXIT_USAGE, main
from judgerisk.importers import import_judgments
from judgerisk.panel import LOGIT_CLIP, PanelError, load_panel

DATA = Path(__file__).parent / "data" / "importers"
TOY = DATA / "crowdkit_real" / "toy_answers.csv"
GAL = DATA / "get_another_label"
LM_JUDGE = DATA / "lm_eval_real" / "out" / "SmolLM2-135M-Instruct"
LM_TIME = "2026-12-01T18-02-44.175676"
AE_FN = DATA / "alpaca_eval" / "alpaca_eval_gpt4_turbo_fn" / "annotations.json"
FC_PAIR = DATA / "fastchat_real" / "model_judgment" / "gpt-4_pair.jsonl"


def _import(tmp_path, capsys, fmt: str, *args: str, name: str = "panel.csv"):
    """``judgerisk import`` on the command line; returns (exit code, stderr, output path)."""
    out = tmp_path / name
    rc = main(["import", fmt, *args, "-o", str(out)])
    return rc, capsys.readouterr().err, out


def _one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _write_jsonl(path: Path, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


# --------------------------------------------------------------------------- 6: tsv, GAL
def test_a_tab_separated_crowd_table_reads_as_its_csv(tmp_path, capsys):
    table = pd.read_csv(TOY, dtype=str)
    folder = tmp_path / "crowd"
    folder.mkdir()
    table.to_csv(folder / "toy_answers.tsv", sep="\t", index=False)
    rc, err, out = _import(tmp_path, capsys, "crowdkit", str(folder), "--label-a", "yes")
    assert rc == EXIT_OK, err  # main: "unsupported file type '.tsv'"
    assert "1 file(s) of the layout" in err
    from_csv, _ = import_judgments("crowdkit", [TOY], label_a="yes")
    pd.testing.assert_frame_equal(load_panel(out, None), from_csv, check_dtype=False)
    assert main(["verify", str(out)]) == EXIT_OK


def test_get_another_label_labels_files_are_read(tmp_path, capsys):
    toy = GAL / "AdultContent"
    rows = [line.split("\t") for line in (toy / "labels.txt").read_text().splitlines()]
    rc, err, out = _import(tmp_path, capsys, "crowdkit", str(toy), "--label-a", "porn")
    assert rc == EXIT_OK, err  # main: the folder held no crowdkit file
    # the folder's gold and categories files are no labels: skipped, and said
    assert "skipped 2 other file(s) (categories.txt, gold.txt)" in err
    assert "Get-Another-Label labels file(s)" in err
    panel = load_panel(out, None)
    assert len(panel) == len(rows) == 25
    got = {(r.judge, r.item): r.p > 0.5 for r in panel.itertuples()}
    assert got == {(w, o): lab == "porn" for w, o, lab in rows}
    record = read_record(out)
    assert "Get-Another-Label" in record["settings"]["assumptions"]["assumptions"]["layout"]
    # a real 0/1 file needs no --label-a (1 is A); 30 objects, 5 workers each
    mturk, _ = import_judgments("crowdkit", [GAL / "BarzanMozafari" / "labels.txt"])
    assert mturk["item"].nunique() == 30 and mturk.groupby("item").size().eq(5).all()
    # a GAL file that is not a labels file: one line naming the line and what to pass
    with pytest.raises(PanelError, match=r"gold.txt, line 1: 2 field\(s\).*pass labels.txt"):
        import_judgments("crowdkit", [toy / "gold.txt"], label_a="porn")


def test_the_crowd_label_refusal_names_the_file_and_the_option(tmp_path, capsys):
    rc, err, out = _import(tmp_path, capsys, "crowdkit", str(GAL / "AdultContent" / "labels.txt"))
    line = _one_error_line(err)
    assert rc == EXIT_USAGE and not out.exists()
    assert line.count("labels.txt") == 1 and "--label-a notporn" in line  # main: no file, no value
    with pytest.raises(PanelError, match=r"toy_answers.csv: label_a 'x' is not among.*--label-a"):
        import_judgments("crowdkit", [TOY], label_a="x")


# --------------------------------------------------------------------------- 7, 8: lm-eval
def _four_choice(record: dict) -> dict:
    """A real two-choice record made four-choice (its two log-likelihoods, twice)."""
    resps = record["filtered_resps"] * 2
    return {**record, "filtered_resps": resps, "resps": [[r] for r in resps]}


def test_lm_eval_skips_a_four_choice_task_naming_it(tmp_path, capsys):
    judge = tmp_path / "out" / LM_JUDGE.name
    shutil.copytree(LM_JUDGE, judge)
    real = _jsonl(judge / f"samples_pairjudge_{LM_TIME}.jsonl")
    four = _write_jsonl(
        judge / f"samples_hellaswag_{LM_TIME}.jsonl", [_four_choice(r) for r in real]
    )
    rc, err, out = _import(tmp_path, capsys, "lm_eval", str(tmp_path / "out"))
    assert rc == EXIT_OK, err  # main: the folder was refused whole
    assert f"skipped files: {four}: 4 choices per record, not a pairwise verdict" in err
    assert f"{len(real)} records of {four} (4 choices: file skipped)" in err
    panel = load_panel(out, None)
    assert set(panel["condition"]) == {"original", "swap"} and len(panel) == 2 * len(real)
    info = read_record(out)["settings"]["assumptions"]
    assert str(four) in info["assumptions"]["skipped files"]
    assert info["dropped"] == {f"records of {four} (4 choices: file skipped)": len(real)}
    # the four-choice file alone: refused, naming it and what to pass
    rc, err, _ = _import(tmp_path, capsys, "lm_eval", str(four), name="four.csv")
    line = _one_error_line(err)
    assert rc == EXIT_USAGE and str(four) in line and "pass the samples files of two-choice" in line


def test_lm_eval_counts_the_log_odds_it_clips(tmp_path, capsys):
    real = _jsonl(LM_JUDGE / f"samples_pairjudge_{LM_TIME}.jsonl")
    # COPA's gaps reach 30 nats: the first record's choice 0 made 30.25 nats less likely
    far = [["-31.5", "False"], ["-1.25", "True"]]
    records = [{**real[0], "filtered_resps": far, "resps": [[r] for r in far]}, *real[1:]]
    f = _write_jsonl(tmp_path / "m" / f"samples_pairjudge_{LM_TIME}.jsonl", records)
    rc, err, out = _import(tmp_path, capsys, "lm_eval", str(f))
    assert rc == EXIT_OK, err
    said = f"1 of {len(real)} cell(s) beyond ±20 clipped to ±20"
    assert f"logit clipping: {said}" in err  # main: "no smoothing" and nothing on the clipping
    assert said in read_record(out)["settings"]["assumptions"]["assumptions"]["logit clipping"]
    assert load_panel(out, None)["logit"].min() == -LOGIT_CLIP


# --------------------------------------------------------------------------- 9: two sources
def test_two_annotator_folders_of_one_name_are_never_merged(tmp_path, capsys):
    results = tmp_path / "results" / "gpt-3.5-turbo-0301"
    for folder in ("alpaca_eval_gpt4_turbo_fn", "alpaca_eval_gpt4_turbo_fn_rerun"):
        (results / folder).mkdir(parents=True)
        shutil.copy(AE_FN, results / folder / "annotations.json")
    for policy in ("error", "first", "last"):
        rc, err, out = _import(
            tmp_path,
            capsys,
            "alpaca_eval",
            str(results),
            "--duplicates",
            policy,
            name=f"{policy}.csv",
        )
        line = _one_error_line(err)
        assert rc == EXIT_USAGE and not out.exists(), policy  # main: last/first merged them
        assert "two annotator folders write the same annotator name" in line
        assert "alpaca_eval_gpt4_turbo_fn_rerun/annotations.json, record 0" in line
        assert "FastChat" not in line and "never merged into one judge" in line


def test_the_fastchat_refusal_names_its_own_cause(tmp_path, capsys):
    first = _jsonl(FC_PAIR)[0]
    f = _write_jsonl(tmp_path / "model_judgment" / "gpt-4_pair.jsonl", [first, first])
    rc, err, _ = _import(tmp_path, capsys, "fastchat", str(f))
    line = _one_error_line(err)
    assert rc == EXIT_USAGE and "FastChat's gen_judgment.py appends" in line
    copies = tmp_path / "copies"
    for run in ("run1", "run2"):
        (copies / run).mkdir(parents=True)
        shutil.copy(FC_PAIR, copies / run / "gpt-4_pair.jsonl")
    rc, err, out = _import(tmp_path, capsys, "fastchat", str(copies), "--duplicates", "last")
    line = _one_error_line(err)
    assert rc == EXIT_USAGE and not out.exists() and "two copies of a run, or two runs" in line


# --------------------------------------------------------------------------- 11, 12: folders
def test_an_empty_file_in_a_folder_is_noted(tmp_path, capsys):
    folder = tmp_path / "model_judgment"
    folder.mkdir()
    shutil.copy(FC_PAIR, folder / "gpt-4_pair.jsonl")
    (folder / "gpt-3.5-turbo_pair.jsonl").write_text("\n")
    rc, err, out = _import(tmp_path, capsys, "fastchat", str(folder))
    assert rc == EXIT_OK, err
    note = f"{folder / 'gpt-3.5-turbo_pair.jsonl'}: an empty file (nothing but blank space)"
    assert note in err  # main: "read 2 file(s)" and nothing more
    assert any(n.startswith(note) for n in read_record(out)["settings"]["assumptions"]["inputs"])


def test_a_folder_link_to_a_file_outside_is_said(tmp_path, capsys):
    folder = tmp_path / "mine" / "model_judgment"
    folder.mkdir(parents=True)
    (folder / "gpt-4_pair.jsonl").symlink_to(FC_PAIR.resolve())
    rc, err, _ = _import(tmp_path, capsys, "fastchat", str(tmp_path / "mine"))
    assert rc == EXIT_OK, err
    assert "1 of them are links to files outside the folder" in err
    assert f"model_judgment/gpt-4_pair.jsonl -> {FC_PAIR.resolve()}" in err
    inside = tmp_path / "inside"  # a link to a file inside the folder: nothing to say
    for sub in ("model_judgment", "raw"):
        (inside / sub).mkdir(parents=True)
    shutil.copy(FC_PAIR, inside / "raw" / "gpt-4.jsonl")
    (inside / "model_judgment" / "gpt-4_pair.jsonl").symlink_to(inside / "raw" / "gpt-4.jsonl")
    rc, err, _ = _import(tmp_path, capsys, "fastchat", str(inside), name="i.csv")
    assert rc == EXIT_OK and "1 file(s) of the layout" in err and "outside the folder" not in err
