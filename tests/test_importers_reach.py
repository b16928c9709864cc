"""Importers that reach every real file (issue 34): each new shape against numbers from its raw file.

Excerpts (source, commit, licence, or how they were made) are described in each folder's
``NOTE.md`` under ``tests/data/importers``: ``arena_hard_v2_real`` (a fork's Arena-Hard v2.0
run), ``arena_hard_v2`` (v2.0's null games and mirrored labels, built in the writer's schema),
``fastchat_reruns`` (a fork's FastChat file with reruns appended), ``lm_eval_text_target`` (the
harness run here on WinoGrande's task and a QNLI-shaped one), ``alpaca_eval_weighted``
(alpaca_eval's own results), ``crowd_truth_infer`` (bluebirds as ``question, worker, answer``)
and ``crowdkit_real/simple_answers.csv`` (crowd-kit's three-class test table).
"""

from __future__ import annotations

import csv
import json
import shutil
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from judgerisk._provenance import read_record
from judgerisk.cli import EXIT_DEPENDENCY, EXIT_OK, EXIT_USAGE, main
from judgerisk.importers import import_judgments
from judgerisk.panel import PanelError, check_scorable, load_panel, validate_panel

DATA = Path(__file__).parent / "data" / "importers"
AH2_REAL = DATA / "arena_hard_v2_real"
AH2_BUILT = DATA / "arena_hard_v2" / "model_judgment" / "gpt-4.1" / "qwen3-8b.jsonl"
AH1_REAL = DATA / "arena_hard_real"
RERUNS = DATA / "fastchat_reruns" / "model_judgment" / "adapter-vs-alpaca.jsonl"
FC_REAL = DATA / "fastchat_real" / "model_judgment"
LM_OUT = DATA / "lm_eval_text_target" / "out"
AE = DATA / "alpaca_eval_weighted"
TRUTH_INFER = DATA / "crowd_truth_infer"

#: arena-hard v2.0's show_result.py: the model's score of each label, 3 battles for a strong one
V2_SCORE = {
    "A>B": [1],
    "A>>B": [1] * 3,
    "A=B": [0.5],
    "A<<B": [0] * 3,
    "A<B": [0],
    "B>A": [0],
    "B>>A": [0] * 3,
    "B=A": [0.5],
    "B<<A": [1] * 3,
    "B<A": [1],
}


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _import(tmp_path, capsys, fmt: str, *args: str, name: str = "panel.csv"):
    """``judgerisk import`` on the command line; returns (exit code, stderr, output path)."""
    out = tmp_path / name
    rc = main(["import", fmt, *args, "-o", str(out)])
    return rc, capsys.readouterr().err, out


def _one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


# --------------------------------------------------------------------------- Arena-Hard v2.0
def _v2_model_score(games: list) -> list[float]:
    """show_result.py's battles of one record: game 2's label, then 1 - game 1's."""
    g1, g2 = (g["score"] for g in games)
    return V2_SCORE[g2] + [1 - s for s in V2_SCORE[g1]]


def _model_score_from_panel(panel: pd.DataFrame) -> float:
    """The same win rate from the panel's canonical p (A = baseline): 3 battles for ε / 1 - ε."""
    scores = []
    for p in panel["p"]:
        model = 1 - p  # the model is the original B
        weight = 3 if min(p, 1 - p) < 0.1 else 1
        scores += [1.0 if model > 0.5 else 0.0 if model < 0.5 else 0.5] * weight
    return float(np.mean(scores))


def test_real_arena_hard_v2_folder_imports_with_the_records_baseline(tmp_path, capsys):
    raw = _records(next(AH2_REAL.glob("model_judgment/*/*.jsonl")))
    rc, err, out = _import(tmp_path, capsys, "arena_hard", str(AH2_REAL))
    assert rc == EXIT_OK, err
    assert "1 file(s) of the layout model_judgment/*/*.jsonl" in err
    baselines = {r["baseline"] for r in raw}
    assert baselines == {"o3-mini-2025-01-31"}
    assert f"o3-mini-2025-01-31 for {len(raw)} record(s) (the records)" in err
    panel = load_panel(out, None)
    assert set(panel["category"]) == {r["category"] for r in raw}
    assert panel["item"].nunique() == len(raw) and set(panel["judge"]) == {"gemini-2.5-flash"}
    # the leaderboard number arena-hard's own show_result.py computes from the raw file
    theirs = float(np.mean([s for r in raw for s in _v2_model_score(r["games"])]))
    assert _model_score_from_panel(panel) == pytest.approx(theirs)
    # the same files through the judge's folder and through a pattern: the same panel
    judge_folder = next(AH2_REAL.glob("model_judgment/*"))
    for k, given in enumerate(
        (str(judge_folder), str(AH2_REAL / "model_judgment" / "*" / "*.jsonl"))
    ):  # a new name each time: an existing output (and its record) is refused
        rc, err, other = _import(tmp_path, capsys, "arena_hard", given, name=f"again{k}.csv")
        assert rc == EXIT_OK, err
        pd.testing.assert_frame_equal(load_panel(other, None), panel)
    assert main(["verify", str(out)]) == EXIT_OK


def test_a_baseline_that_contradicts_the_records_is_an_error(tmp_path, capsys):
    rc, err, out = _import(
        tmp_path, capsys, "arena_hard", str(AH2_REAL), "--baseline", "gpt-4-0314"
    )
    line = _one_error_line(err)
    assert rc == EXIT_USAGE and not out.exists()
    assert "line 1: the record's baseline is 'o3-mini-2025-01-31' but --baseline says" in line
    # the records' own baseline given again is no conflict
    rc, err, _ = _import(
        tmp_path, capsys, "arena_hard", str(AH2_REAL), "--baseline", "o3-mini-2025-01-31"
    )
    assert rc == EXIT_OK, err


def test_built_v2_records_drop_null_games_and_read_mirrored_labels():
    raw = _records(AH2_BUILT)
    panel, record = import_judgments("arena_hard", [AH2_BUILT])
    null_games = [sum(r["games"][k] is None for r in raw) for k in (0, 1)]
    null_scores = [
        sum(r["games"][k] is not None and r["games"][k]["score"] is None for r in raw)
        for k in (0, 1)
    ]
    dropped = record["dropped"]
    for k in (0, 1):
        assert (
            dropped.get(f"game {k + 1} = null (the judge call returned nothing)", 0)
            == (null_games[k])
        )
        assert dropped.get(f"game {k + 1} score = null", 0) == null_scores[k]
    assert sum(null_games) and sum(null_scores)
    mirrored = {"A<B", "A<<B", "B=A", "B<A", "B<<A"}
    shown = {g["score"] for r in raw for g in r["games"] if g is not None}
    assert mirrored <= shown
    # every mirrored label means its five-level twin (A<B is B>A, ...), game 2 mapped back
    level = record["assumptions"]["level -> p (original order)"]
    twin = {"A<B": "B>A", "A<<B": "B>>A", "B=A": "A=B", "B<A": "A>B", "B<<A": "A>>B"}
    flip = {"A>>B": "B>>A", "A>B": "B>A", "A=B": "A=B", "B>A": "A>B", "B>>A": "A>>B"}
    cells = panel.set_index(["question_id", "condition"])["p"]
    checked = 0
    for r in raw:
        for k, cond in ((0, "original"), (1, "swap")):
            g = r["games"][k]
            if g is None or g["score"] is None or (r["uid"], cond) not in cells.index:
                continue
            lv = twin.get(g["score"], g["score"])
            assert cells[(r["uid"], cond)] == pytest.approx(level[lv if k == 0 else flip[lv]])
            checked += 1
    assert checked == len(panel)
    # one baseline per category, read per record
    base = panel.groupby("category")["baseline"].unique().map(list).to_dict()
    assert base == {
        "creative_writing": ["gemini-2.0-flash-001"],
        "hard_prompt": ["o3-mini-2025-01-31"],
    }


def test_two_arena_hard_benchmarks_are_not_a_panel(tmp_path, capsys):
    # v0.1 (its baseline given for its folder only) and v2.0 (the records' own): disjoint items
    rc, err, out = _import(
        tmp_path,
        capsys,
        "arena_hard",
        str(AH1_REAL),
        str(AH2_REAL),
        "--baseline",
        f"{AH1_REAL}=gpt-4-0314",
    )
    assert rc == EXIT_OK, err
    assert "gpt-4-0314 for 17 record(s) (--baseline)" in err
    assert "next: judgerisk report" not in err and "not a panel: the judges form 2 groups" in err
    rc = main(["report", str(out), "-o", str(tmp_path / "r.html")])
    line = _one_error_line(capsys.readouterr().err)
    assert rc == EXIT_USAGE and "share no item" in line and "--judge-by model" in line
    assert not (tmp_path / "r.html").exists()
    rc = main(["score", str(out), "-o", str(tmp_path / "s.csv")])
    assert rc == EXIT_USAGE and "share no item" in capsys.readouterr().err


# --------------------------------------------------------------------------- FastChat reruns
def test_real_reruns_are_refused_naming_both_records(tmp_path, capsys):
    raw = _records(RERUNS)
    keys = [(r["question_id"], r["model_1"], r["model_2"], r["turn"]) for r in raw]
    first_repeat = next(k for k, key in enumerate(keys) if key in keys[:k])
    earlier = keys.index(keys[first_repeat])
    rc, err, out = _import(tmp_path, capsys, "fastchat", str(RERUNS))
    line = _one_error_line(err)
    assert rc == EXIT_USAGE and not out.exists()
    assert f"{RERUNS}, line {earlier + 1} and {RERUNS}, line {first_repeat + 1}:" in line
    n_repeated = len(keys) - len(set(keys))
    assert f"{2 * n_repeated} repeated cell(s)" in line and "--duplicates last" in line
    for policy in ("first", "last"):
        rc, err, out = _import(
            tmp_path, capsys, "fastchat", str(RERUNS), "--duplicates", policy, name=f"{policy}.csv"
        )
        assert rc == EXIT_OK, err
        assert f"{2 * n_repeated} repeated cells (kept the {policy} record read)" in err
        assert load_panel(out, None)["item"].nunique() == len(set(keys))
        assert main(["verify", str(out)]) == EXIT_OK


def test_first_and_last_keep_the_records_fastchat_would(tmp_path):
    # the real first record, and a rerun of it (appended later) whose verdicts differ
    first = _records(RERUNS)[0]
    rerun = {**first, "g1_winner": "model_2", "g2_winner": "error", "tstamp": first["tstamp"] + 1}
    f = tmp_path / "model_judgment" / "gpt-4_pair.jsonl"
    f.parent.mkdir()
    f.write_text(json.dumps(first) + "\n" + json.dumps(rerun) + "\n", encoding="utf-8")
    last, rec = import_judgments("fastchat", [f], duplicates="last")
    # FastChat's loader keeps the last record whole: its error game leaves no swap verdict
    assert last["condition"].tolist() == ["original"] and last["p"].tolist() == [
        pytest.approx(0.05)
    ]
    assert rec["dropped"] == {
        "repeated cells (kept the last record read)": 2,
        "g2_winner = error": 1,
    }
    kept, _ = import_judgments("fastchat", [f], duplicates="first")
    assert kept["p"].round(6).tolist() == [0.95, 0.95]  # model_1 won both games of the first run
    with pytest.raises(PanelError, match=r"duplicates must be one of"):
        import_judgments("fastchat", [f], duplicates="newest")


def test_the_same_file_twice_is_read_once_and_two_copies_are_duplicates(tmp_path, capsys):
    src = FC_REAL / "gpt-4_pair.jsonl"
    rc, err, _ = _import(tmp_path, capsys, "fastchat", str(src), str(src))
    assert rc == EXIT_OK and "given more than once, read once" in err
    copies = tmp_path / "copies"
    for name in ("run1", "run2"):
        (copies / name).mkdir(parents=True)
        shutil.copy(src, copies / name / "gpt-4_pair.jsonl")
    rc, err, _ = _import(tmp_path, capsys, "fastchat", str(copies), name="c.csv")
    line = _one_error_line(err)
    assert rc == EXIT_USAGE
    assert "run1/gpt-4_pair.jsonl, line 1 and " in line and "run2/gpt-4_pair.jsonl, line 1:" in line


def test_judge_by_model_and_prompt_gives_judges_that_share_no_item(tmp_path, capsys):
    raw = _records(FC_REAL / "gpt-4_pair.jsonl")
    prompts = {r["judge"][1] for r in raw}
    assert prompts == {"pair-v2", "pair-math-v1"}
    rc, err, out = _import(tmp_path, capsys, "fastchat", str(FC_REAL), "--judge-by", "model+prompt")
    assert rc == EXIT_OK, err
    assert "skipped 1 other file(s) (gpt-4_single.jsonl)" in err  # the folder's single grading
    assert "not a panel" in err and "next: judgerisk report" not in err
    with pytest.raises(PanelError, match="share no item.*--judge-by model"):
        check_scorable(load_panel(out, None))
    # and no chapter of the book draws a panel page from it either (refused before a kernel)
    nb = tmp_path / "ch04.ipynb"
    rc = main(["run", "04", "--small", "--param", f"panel_path={out}", "-o", str(nb)])
    line = _one_error_line(capsys.readouterr().err)
    assert rc == EXIT_USAGE and "share no item" in line and not nb.exists()


# --------------------------------------------------------------------------- one judge, ties
#: a verdict of the original order's answer A: 1 (A), 1/2 (tie), 0 (B); FastChat's winners are
#: already in the original order, Arena-Hard's game 2 is in the order it showed (A = the model)
FC_VERDICT = {"model_1": 1.0, "tie": 0.5, "model_2": 0.0}
AH_SHOWN = {"A>>B": 1.0, "A>B": 1.0, "A=B": 0.5, "B>A": 0.0, "B>>A": 0.0}


def _fastchat_pairs() -> list[tuple[float, float]]:
    raw = _records(FC_REAL / "gpt-4_pair.jsonl")
    return [
        (FC_VERDICT[r["g1_winner"]], FC_VERDICT[r["g2_winner"]])
        for r in raw
        if r["g1_winner"] in FC_VERDICT and r["g2_winner"] in FC_VERDICT
    ]


def _arena_hard_pairs() -> list[tuple[float, float]]:
    raw = _records(next(AH1_REAL.glob("model_judgment/*/*.jsonl")))
    return [
        (AH_SHOWN[g1["score"]], 1.0 - AH_SHOWN[g2["score"]])  # game 2 mapped back
        for g1, g2 in (r["games"] for r in raw)
        if g1 and g2 and g1["score"] is not None and g2["score"] is not None
    ]


@pytest.mark.parametrize(
    "fmt, path, options, pairs",
    [
        ("fastchat", FC_REAL / "gpt-4_pair.jsonl", {}, _fastchat_pairs),
        ("arena_hard", AH1_REAL, {"baseline": "gpt-4-0314"}, _arena_hard_pairs),
    ],
)
def test_one_judge_consistency_counts_a_tie_against_a_tie_as_the_same_verdict(
    fmt, path, options, pairs
):
    from judgerisk.engine.describe import flip_rates
    from judgerisk.report._one_judge import one_judge_overview, order_consistency
    from judgerisk.selective.one_judge import bpe_table

    raw = pairs()
    assert (0.5, 0.5) in raw  # the real file holds a tie in both orders
    assert any(0.5 in pair and len(set(pair)) == 2 for pair in raw)  # and a tie against a verdict
    # from the raw file: a tie in both orders is the same verdict, a tie against A or B half of
    # one (one minus the flip rate, as every vote-based figure of judgerisk counts ties)
    theirs = 1 - float(np.mean([abs(a - b) for a, b in raw]))
    strict_old = float(np.mean([a == b != 0.5 for a, b in raw]))  # ties never consistent
    panel, _ = import_judgments(fmt, [path], **options)
    table = bpe_table(panel)
    assert len(table.dropna(subset=["bpe"])) == len(raw)
    assert order_consistency(table) == pytest.approx(theirs)
    assert order_consistency(table) > strict_old
    assert order_consistency(table) == pytest.approx(1 - flip_rates(panel)["flip_rate"].iloc[0])
    shown = one_judge_overview(table)["same verdict in both orders (a tie counts as a verdict)"]
    assert shown == f"{theirs:.1%}"


# --------------------------------------------------------------------------- lm-evaluation-harness
def _samples(task: str) -> tuple[list[dict], Path]:
    path = next(LM_OUT.glob(f"*/samples_{task}_*.jsonl"))
    return _records(path), path


def test_real_lm_eval_text_targets_and_acc_give_the_documents_gold(tmp_path, capsys):
    wino, _ = _samples("wino_local")
    qnli, _ = _samples("qnli_text")
    # the raw shapes: WinoGrande's target is the continuation both choices share, QNLI's the
    # choice's text
    assert all(r["target"] == r["arguments"]["gen_args_0"]["arg_1"].strip() for r in wino)
    assert {r["target"] for r in qnli} == {"yes", "no"}
    rc, err, out = _import(tmp_path, capsys, "lm_eval", str(LM_OUT))
    assert rc == EXIT_OK, err
    assert (
        f"from acc (two choices: acc 1 -> the argmax choice is gold, acc 0 -> the other): {len(wino)}"
        in err
    )
    assert f"target is the text of one choice: {len(qnli)}" in err
    assert "next: no judgerisk command scores one judge in one answer order" in err
    panel = load_panel(out, None).set_index("item")
    # the gold read from acc is the document's own answer (WinoGrande: option "1" -> choice 0)
    for r in wino:
        assert panel.loc[f"wino_local:{r['doc_id']}", "gold"] == (
            "A" if r["doc"]["answer"] == "1" else "B"
        )
    for r in qnli:
        assert panel.loc[f"qnli_text:{r['doc_id']}", "gold"] == (
            "A" if r["doc"]["label"] == 0 else "B"
        )
        ll = [float(x[0]) for x in r["filtered_resps"]]
        assert panel.loc[f"qnli_text:{r['doc_id']}", "logit"] == pytest.approx(ll[0] - ll[1])
    # and the harness's own accuracy of each task, from the panel
    results = json.loads(next(LM_OUT.glob("*/results_*.json")).read_text(encoding="utf-8"))
    for task in ("wino_local", "qnli_text"):
        sub = panel[panel.index.str.startswith(task + ":")]
        acc = ((sub["logit"] > 0) == (sub["gold"] == "A")).mean()
        assert acc == pytest.approx(results["results"][task]["acc,none"])


def test_lm_eval_gold_rules(tmp_path, capsys):
    wino, wino_path = _samples("wino_local")
    _, qnli_path = _samples("qnli_text")
    rc, err, _ = _import(tmp_path, capsys, "lm_eval", str(wino_path), "--gold", "target")
    line = _one_error_line(err)
    assert rc == EXIT_USAGE and f"{wino_path}, line 1: target {wino[0]['target']!r}" in line
    assert "--gold auto" in line and "--gold none" in line
    none, _ = import_judgments("lm_eval", [wino_path], gold="none")
    assert "gold" not in none.columns and len(none) == len(wino)
    by_acc, _ = import_judgments("lm_eval", [qnli_path], gold="acc")
    by_text, _ = import_judgments("lm_eval", [qnli_path], gold="target")
    assert by_acc["gold"].tolist() == by_text["gold"].tolist()
    # a record with neither a usable target nor acc: one line naming it and the way out
    rec = {**wino[0]}
    rec.pop("acc")
    f = tmp_path / "m" / "samples_wino_2024-01-01T00-00-00.000000.jsonl"
    f.parent.mkdir()
    f.write_text(json.dumps(rec) + "\n", encoding="utf-8")
    with pytest.raises(PanelError, match=r"line 1: .* no acc of 0 or 1 .*--gold none"):
        import_judgments("lm_eval", [f])


# --------------------------------------------------------------------------- alpaca_eval
def test_real_weighted_preferences_map_monotonically(tmp_path, capsys):
    path = AE / "gemma-2b-it" / "weighted_alpaca_eval_gpt4_turbo" / "annotations.json"
    raw = json.loads(path.read_text(encoding="utf-8"))
    assert sum(r["preference"] == 1.0 for r in raw) == 2  # the two exact 1.0 of that file
    rc, err, out = _import(tmp_path, capsys, "alpaca_eval", str(path))
    assert rc == EXIT_OK, err
    # one annotator in one order: import names no command that would refuse it
    assert "next: judgerisk report" not in err
    assert "next: no judgerisk command scores one judge in one answer order" in err
    panel = load_panel(out, None)
    by_instruction = panel.set_index("instruction")["logit"]
    prefs = [(r["preference"], by_instruction[r["instruction"]]) for r in raw]
    prefs.sort()
    logits = [m for _, m in prefs]
    # a larger preference for output 2 never gives a larger logit for output 1
    assert all(a >= b for a, b in zip(logits, logits[1:], strict=False))
    exact = [m for w, m in prefs if w == 1.0]
    nearly = [m for w, m in prefs if 1.0 < w < 1.0000001]  # 1.0000000631
    assert exact and nearly and min(exact) >= max(nearly) > 16
    # every weighted w < 2 is its probability: p = 2 - w (below the logit clip)
    for w, m in prefs:
        if 1.0 < w < 1.9999:
            assert 1 / (1 + np.exp(-m)) == pytest.approx(2 - w, rel=1e-9)
    # an item id leads back to the instruction
    assert set(panel["instruction"]) == {r["instruction"] for r in raw}


def test_alpaca_eval_1_and_2_annotators_share_no_item(tmp_path, capsys):
    folder = AE / "alpaca-farm-ppo-human"
    raw = {p.parent.name: json.loads(p.read_text()) for p in folder.glob("*/annotations.json")}
    refs = {name: {r["generator_1"] for r in recs} for name, recs in raw.items()}
    assert refs == {
        "alpaca_eval_gpt4": {"text_davinci_003"},
        "weighted_alpaca_eval_gpt4_turbo": {"gpt4_1106_preview"},
    }
    rc, err, out = _import(tmp_path, capsys, "alpaca_eval", str(folder))
    assert rc == EXIT_OK and "2 file(s) of the layout annotations.json" in err
    assert "not a panel" in err
    weighted = load_panel(out, None).query("judge == 'weighted_alpaca_eval_gpt4_turbo'")
    hard = load_panel(out, None).query("judge == 'alpaca_eval_gpt4'")
    assert set(hard["p"].round(6)) <= {0.95, 0.05, 0.5}  # AE1's 1 and 2 are verdicts
    assert weighted["logit"].max() == pytest.approx(
        20.0
    )  # AE2's exact 1.0 is its most certain probability
    rc = main(["report", str(out), "-o", str(tmp_path / "r.html")])
    assert rc == EXIT_USAGE and "share no item" in capsys.readouterr().err


def test_an_alpaca_eval_leaderboard_is_refused_with_what_to_pass(tmp_path, capsys):
    csv_path = AE / "weighted_alpaca_eval_gpt4_turbo_leaderboard.csv"
    rc, err, _ = _import(tmp_path, capsys, "alpaca_eval", str(csv_path))
    line = _one_error_line(err)
    assert rc == EXIT_USAGE and "not annotations" in line
    assert "results/<model>/<annotator>/annotations.json" in line


# --------------------------------------------------------------------------- crowd tables
def test_question_worker_answer_columns_are_named(tmp_path, capsys):
    answers = TRUTH_INFER / "answer.csv"
    rc, err, _ = _import(tmp_path, capsys, "crowdkit", str(answers))
    line = _one_error_line(err)
    assert rc == EXIT_USAGE
    assert line.endswith("name them with --columns task=question,worker=worker,label=answer")
    cols = "task=question,worker=worker,label=answer"
    rc, err, out = _import(
        tmp_path, capsys, "crowdkit", str(answers), "--columns", cols, "--label-a", "1"
    )
    assert rc == EXIT_OK, err
    panel = load_panel(out, None)
    with answers.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert len(panel) == len(rows) == 4212
    assert panel["item"].nunique() == 108 and panel["judge"].nunique() == 39
    # the same bluebirds labels as the cubam YAML rebuilt in crowdkit_real/bluebirds
    blue = pd.read_csv(DATA / "crowdkit_real" / "bluebirds" / "bluebirds.csv")
    ours = {
        (str(i), str(j), round(p))
        for i, j, p in panel[["item", "judge", "p"]].itertuples(index=False)
    }
    theirs = {
        (str(t), str(w), int(lab))
        for t, w, lab in blue[["task", "worker", "label"]].itertuples(index=False)
    }
    assert ours == theirs
    # crowd-kit's majority vote on the raw table equals the panel's, item for item
    from crowdkit.aggregation import MajorityVote as CrowdKitMajority

    from judgerisk.aggregators import aggregate

    raw = pd.DataFrame(rows).rename(columns={"question": "task", "answer": "label"})
    mv = CrowdKitMajority().fit_predict(raw[["task", "worker", "label"]])
    ours_mv = aggregate(panel, "majority").set_index("item")["verdict"].map({"A": "1", "B": "0"})
    ours_mv.index = ours_mv.index.astype(str)
    assert (ours_mv.reindex(mv.index) == mv).all()


def test_more_than_two_labels_are_refused_in_one_line(tmp_path, capsys):
    table = DATA / "crowdkit_real" / "simple_answers.csv"
    labels = sorted(set(pd.read_csv(table)["label"]))
    assert labels == ["chicken", "goose", "parrot"]
    rc, err, _ = _import(tmp_path, capsys, "crowdkit", str(table))
    line = _one_error_line(err)
    assert rc == EXIT_USAGE and f"3 labels {labels}" in line and "--label-tie" in line
    rc, err, _ = _import(tmp_path, capsys, "crowdkit", str(table), "--label-a", "goose")
    assert rc == EXIT_USAGE and "3 labels" in _one_error_line(err)  # asks once, never twice


# --------------------------------------------------------------------------- refusals
def test_refusals_say_what_to_pass(tmp_path, capsys):
    empty = tmp_path / "gpt-4_pair.jsonl"
    empty.write_text("\n", encoding="utf-8")
    rc, err, _ = _import(tmp_path, capsys, "fastchat", str(empty))
    line = _one_error_line(err)
    assert rc == EXIT_USAGE and "holds no judgement" in line and "pass the tool's output" in line
    folder = tmp_path / "nothing_here"
    folder.mkdir()
    (folder / "notes.txt").write_text("x")
    rc, err, _ = _import(tmp_path, capsys, "arena_hard", str(folder))
    line = _one_error_line(err)
    assert (
        rc == EXIT_USAGE and "a folder holding no arena_hard file (model_judgment/*/*.jsonl" in line
    )
    rc, err, _ = _import(tmp_path, capsys, "arena_hard", str(tmp_path / "no" / "*.jsonl"))
    assert rc == EXIT_USAGE and "the pattern matches no file" in _one_error_line(err)
    # a file whose every judgement was dropped: the real record whose two games are null
    src = next(AH1_REAL.glob("model_judgment/*/*.jsonl"))
    failed = [line for line in src.read_text(encoding="utf-8").splitlines() if line]
    failed = [line for line in failed if all(g["score"] is None for g in json.loads(line)["games"])]
    assert len(failed) == 1
    only = tmp_path / "model_judgment" / src.parent.name / src.name
    only.parent.mkdir(parents=True)
    only.write_text(failed[0] + "\n", encoding="utf-8")
    rc, err, _ = _import(tmp_path, capsys, "arena_hard", str(only), "--baseline", "gpt-4-0314")
    line = _one_error_line(err)
    assert rc == EXIT_USAGE and "every one was dropped (1 game 1 score = null, 1 game 2" in line
    assert "rerun the judge on the failed records" in line


def test_a_missing_extra_is_named(tmp_path, capsys, monkeypatch):
    panel = tmp_path / "p.csv"
    shutil.copy(DATA / "crowdkit" / "labels.csv", tmp_path / "labels.csv")
    assert main(["import", "crowdkit", str(tmp_path / "labels.csv"), "-o", str(panel)]) == 0
    capsys.readouterr()
    monkeypatch.setitem(sys.modules, "jupytext", None)  # as on a core-only install
    rc = main(["report", str(panel), "-o", str(tmp_path / "r.html")])
    line = _one_error_line(capsys.readouterr().err)
    assert rc == EXIT_DEPENDENCY and "jupytext" in line and "pip install 'judgerisk[book]'" in line


# --------------------------------------------------------------------------- smaller points
def _flipped_panel(n_items: int) -> pd.DataFrame:
    rows = [
        {"item": i, "judge": "j", "condition": c, "logit": 1.0 if c == "original" else -1.0}
        for i in range(n_items)
        for c in ("original", "swap")
    ]
    return validate_panel(pd.DataFrame(rows), conditions=None)


@pytest.mark.parametrize("n_items, warned", [(1, False), (3, False), (4, True)])
def test_the_orientation_warning_needs_more_than_chance(n_items, warned):
    from judgerisk._orientation import check_orientation

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert bool(check_orientation(_flipped_panel(n_items))) is warned
    assert len(caught) == int(warned)


def test_two_hard_annotators_get_a_hint_that_scur_says_little():
    rng = np.random.default_rng(0)
    rows = [
        {"item": i, "judge": j, "condition": "original", "p": 0.95 if rng.random() < 0.7 else 0.05}
        for i in range(40)
        for j in ("a", "b")
    ]
    with pytest.warns(UserWarning, match=r"40 items show only 4 distinct patterns.*SCUR"):
        check_scorable(validate_panel(pd.DataFrame(rows)))


def test_a_record_without_judge_or_turn_is_said(tmp_path):
    ah = tmp_path / "model_judgment" / "some-judge" / "m.jsonl"
    ah.parent.mkdir(parents=True)
    ah.write_text(
        json.dumps(
            {
                "uid": "q",
                "model": "m",
                "baseline": "b",
                "games": [{"score": "A>B"}, {"score": "B>A"}],
            }
        )
        + "\n"
    )
    _, rec = import_judgments("arena_hard", [ah])
    assert "records without one: the folder's name, 'some-judge' (1)" in rec["assumptions"]["judge"]
    fc = tmp_path / "x_pair.jsonl"
    fc.write_text(
        json.dumps(
            {
                "question_id": 1,
                "model_1": "a",
                "model_2": "b",
                "g1_winner": "tie",
                "g2_winner": "tie",
                "judge": ["j", "pair-v2"],
            }
        )
        + "\n"
    )
    _, rec = import_judgments("fastchat", [fc])
    assert rec["assumptions"]["turn"] == "1 record(s) carry no 'turn': taken as turn 1"


def test_the_record_keeps_how_folders_were_read(tmp_path, capsys):
    rc, _, out = _import(tmp_path, capsys, "arena_hard", str(AH2_REAL))
    assert rc == EXIT_OK
    info = read_record(out)["settings"]["assumptions"]  # the importer's account
    assert info["files"] == [str(next(AH2_REAL.glob("model_judgment/*/*.jsonl")))]
    assert info["inputs"][0].startswith(f"{AH2_REAL}: 1 file(s) of the layout")


def test_a_per_path_baseline_must_name_an_existing_path(tmp_path):
    src = next(AH1_REAL.glob("model_judgment/*/*.jsonl"))
    with pytest.raises(PanelError, match=r"'no/such/dir' is no file or folder"):
        import_judgments("arena_hard", [src], baseline="no/such/dir=gpt-4-0314")
    with pytest.raises(PanelError, match="--baseline given twice as a model"):
        import_judgments("arena_hard", [src], baseline=["gpt-4-0314", "gpt-4o"])
    panel, rec = import_judgments("arena_hard", [src], baseline=[f"{src.parent}=gpt-4-0314"])
    assert set(panel["baseline"]) == {"gpt-4-0314"}
    assert "(--baseline)" in rec["assumptions"]["baseline (answer A of game 1)"]
