"""Command-line edges of issue 44 (items 10-12): what a command passes on, refuses and prints.

Each test runs the command (or the function it calls) on the input the probe used: the harness's
own lm-eval output (``tests/data/importers/lm_eval_real``, MIT; its ``NOTE.md``), a simulated
panel, or items of :func:`judgerisk.testing.tiny_items`.
"""

from __future__ import annotations

import ast
import json
import warnings
from pathlib import Path

import jupytext
import pandas as pd
import pytest

from judgerisk.cli import EXIT_OK, EXIT_RUNTIME, EXIT_USAGE, main
from judgerisk.extract.perturb import perturb_items
from judgerisk.importers import import_judgments
from judgerisk.report import build
from judgerisk.testing import tiny_items

LM_JUDGE = Path(__file__).parent / "data" / "importers" / "lm_eval_real" / "out"
LM_JUDGE = LM_JUDGE / "SmolLM2-135M-Instruct"


def _one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def _lm_panel(tmp_path: Path, pattern: str) -> Path:
    """The real one-judge lm-eval panel: both orders (``samples_*``) or the original only."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the 135M judge's position bias, said on import
        panel, _ = import_judgments("lm_eval", sorted(LM_JUDGE.glob(pattern)))
    path = tmp_path / f"{pattern.replace('*', '')}.csv"
    panel.to_csv(path, index=False)
    return path


def _declared(template: Path) -> set[str]:
    """The names the template's ``parameters`` cell assigns, read here on its own."""
    nb = jupytext.read(template)
    cell = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    return {
        t.id
        for node in ast.parse(cell.source).body
        for t in node.targets
        if isinstance(t, ast.Name)
    }


class _Stop(Exception):
    pass


# --------------------------------------------------------------------------- 10: parameters
@pytest.mark.parametrize("one_judge", [True, False])
def test_the_report_passes_only_the_template_parameters(tmp_path, monkeypatch, one_judge):
    if one_judge:
        panel = _lm_panel(tmp_path, "samples_*")
    else:
        panel = tmp_path / "sim.csv"
        assert main(["simulate", "-o", str(panel), "--n-items", "40", "--seed", "0"]) == EXIT_OK
    seen: dict = {}

    def run_notebook(nb, out_path, parameters, *args, **kwargs):
        seen.update(parameters)
        raise _Stop

    monkeypatch.setattr(build, "run_notebook", run_notebook)
    with pytest.raises(_Stop):
        build.render_report(panel, tmp_path / "r.html", parameters={"n_splits": 20})
    declared = _declared(build.report_notebook_path(one_judge))
    # main passed aggregators and certified_scores to the one-judge template: papermill printed
    # "Passed unknown parameter" for each on the terminal
    assert seen and set(seen) <= declared, sorted(set(seen) - declared)
    assert {"panel_path", "alpha", "n_splits", "provenance"} <= set(seen)


# --------------------------------------------------------------------------- 11: one judge
@pytest.mark.parametrize("command", ["score", "report"])
def test_one_judge_in_one_order_is_refused_naming_the_file(tmp_path, capsys, command):
    panel = _lm_panel(tmp_path, "samples_pairjudge_2*")  # the original order only
    out = tmp_path / ("o.csv" if command == "score" else "o.html")
    rc = main([command, str(panel), "-o", str(out)])
    line = _one_error_line(capsys.readouterr().err)
    assert rc == EXIT_USAGE and not out.exists()
    assert f"error: {panel}: " in line  # main: no file named
    assert "add a second judge's verdicts on the same items" in line and "'swap'" in line


# --------------------------------------------------------------------------- 12: smaller
def test_perturb_writes_mixed_ids_as_text_to_parquet(tmp_path, capsys):
    items = tiny_items(3)
    items["item"] = pd.Series([1, "x2", 3], dtype=object)
    src = tmp_path / "items.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in items.to_dict("records")))
    out = tmp_path / "x.parquet"
    rc = main(["perturb", str(src), "-o", str(out), "--conditions", "original", "swap"])
    assert rc == EXIT_OK, capsys.readouterr().err  # main: ArrowTypeError, exit 2
    assert pd.read_parquet(out)["item"].tolist() == ["1", "1", "x2", "x2", "3", "3"]
    assert main(["verify", str(out)]) == EXIT_OK
    # 1 and "1" are then the same id: a duplicate, refused
    items["item"] = pd.Series([1, "1", "x"], dtype=object)
    with pytest.raises(ValueError, match=r"duplicate item ids \['1'\]"):
        perturb_items(items, ["original"])


@pytest.mark.parametrize("command", ["score", "report"])
def test_an_empty_aggregators_list_is_a_usage_error(tmp_path, capsys, command):
    panel = tmp_path / "sim.csv"
    assert main(["simulate", "-o", str(panel), "--n-items", "40", "--seed", "0"]) == EXIT_OK
    capsys.readouterr()
    out = tmp_path / ("o.csv" if command == "score" else "o.html")
    with pytest.raises(SystemExit) as exc:  # argparse: before any scoring
        main([command, str(panel), "-o", str(out), "--aggregators", ""])
    err = capsys.readouterr().err
    assert exc.value.code == EXIT_USAGE and "expected at least one name" in err
    assert "scoring" not in err and not out.exists()


def test_verbosity_variants_stop_where_the_sentences_do():
    from judgerisk.families._builtin import MAX_VERBOSITY, NEUTRAL_SENTENCES

    assert MAX_VERBOSITY == 2 * len(NEUTRAL_SENTENCES)
    last = f"verbosity{MAX_VERBOSITY}"
    table = perturb_items(tiny_items(2), ["original", f"verbosity{MAX_VERBOSITY - 1}", last])
    padded = table.loc[table["condition"] == last, "perturbation"].iloc[0]
    assert all(s in padded for s in NEUTRAL_SENTENCES)
    with pytest.raises(ValueError, match=rf"verbosity{MAX_VERBOSITY + 1}'.*variants are 1 to"):
        perturb_items(tiny_items(2), ["original", f"verbosity{MAX_VERBOSITY + 1}"])


def test_a_number_beyond_a_float_is_one_line_and_exit_2(tmp_path, capsys):
    sim = tmp_path / "sim.csv"
    assert main(["simulate", "-o", str(sim), "--n-items", "40", "--seed", "0"]) == EXIT_OK
    rows = pd.read_csv(sim).drop(columns=["p"]).to_dict("records")
    lines = [json.dumps(r) for r in rows]
    lines[0] = lines[0].replace(json.dumps(rows[0]["logit"]), "1" + "0" * 400)  # a JSON integer
    big = tmp_path / "big.jsonl"
    big.write_text("\n".join(lines) + "\n")
    capsys.readouterr()
    rc = main(["score", str(big), "-o", str(tmp_path / "s.csv")])
    line = _one_error_line(capsys.readouterr().err)
    assert (
        rc == EXIT_USAGE and "too large for a float" in line
    )  # main: exit 1, "OverflowError: ..."


@pytest.mark.parametrize(
    ("exc", "code", "said"),
    [
        (
            PermissionError(13, "Permission denied", "/data/out.csv"),
            EXIT_USAGE,
            "/data/out.csv: permission denied",
        ),
        (RecursionError("maximum recursion depth exceeded"), EXIT_USAGE, "nested too deeply"),
        (OverflowError("int too large to convert to float"), EXIT_USAGE, "too large for a float"),
        (
            TypeError("'<' not supported"),
            EXIT_RUNTIME,
            "internal error (TypeError: '<' not supported)",
        ),
        (
            RuntimeError("no answer after 1 tries"),
            EXIT_RUNTIME,
            "RuntimeError: no answer after 1 tries",
        ),
    ],
)
def test_errors_no_command_names_become_one_line(monkeypatch, capsys, exc, code, said):
    from judgerisk.cli import _score as score

    def fail(self, args):
        raise exc

    monkeypatch.setattr(score.Score, "run", fail)
    rc = main(["score", "panel.csv", "-o", "s.csv"])
    line = _one_error_line(capsys.readouterr().err)
    assert rc == code and line.startswith("judgerisk score: error: ") and said in line


def test_extract_refuses_a_folder_of_other_typed_ids(tmp_path, capsys):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from judgerisk.testing import short_template, tiny_judge

    model = tiny_judge(tmp_path / "judge")
    template = tmp_path / "short.json"
    template.write_text(json.dumps(short_template()))
    items = tiny_items(2)
    text, ints = tmp_path / "text.jsonl", tmp_path / "int.jsonl"
    items.assign(item=items["item"].map(lambda i: f"t{i}")).to_json(
        text, orient="records", lines=True
    )
    items.to_json(ints, orient="records", lines=True)
    out = tmp_path / "out"
    args = ["--model", str(model), "-o", str(out), "--conditions", "original"]
    args += ["--judge", "tiny", "--no-progress", "--template", str(template)]
    assert main(["extract", str(text), *args]) == EXIT_OK
    parts = sorted((out / "parts").iterdir())
    capsys.readouterr()
    rc = main(["extract", str(ints), *args, "--resume"])
    line = _one_error_line(capsys.readouterr().err)
    assert rc == EXIT_USAGE and f"{out}: holds results of items whose ids are text" in line
    assert "these items' ids are numbers" in line  # main: "invalid literal for int()"
    assert sorted((out / "parts").iterdir()) == parts  # nothing run, nothing written
