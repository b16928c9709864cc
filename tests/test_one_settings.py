"""The split fractions, the bootstrap size and the thresholds are written once.

Every function reads its default from ``judgerisk.options.ANALYSIS``; this test reads the
package's source (every signature's defaults and every text) for a literal copy.
"""

from __future__ import annotations

import argparse
import ast
import inspect
import re
from dataclasses import fields
from pathlib import Path

import pytest

from judgerisk.options import ANALYSIS, AnalysisSettings, OptionError, StreamSettings

PACKAGE = Path(__file__).resolve().parents[1] / "judgerisk"
HOME = PACKAGE / "options.py"  # where the values are written, once
SOURCES = sorted(p for p in PACKAGE.rglob("*.py") if p != HOME)
#: Parameter name -> the ANALYSIS field its default must be.
FIELDS = {
    "fractions": "fractions",
    "splits": "fractions",
    "n_boot": "n_boot",
    "hc_threshold": "hc_threshold",
    "prob_threshold": "prob_threshold",
    "level": "level",
    "min_verdict_mass": "min_verdict_mass",
}


def _defaults(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            args = node.args
            positional = [*args.posonlyargs, *args.args]
            tail = positional[len(positional) - len(args.defaults) :]
            pairs = list(zip(tail, args.defaults, strict=True))
            pairs += [
                (a, d)
                for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)
                if d is not None
            ]
            for arg, default in pairs:
                yield node.name, arg.arg, default


def test_no_literal_copy_of_the_analysis_defaults():
    literal = re.compile(r"0\.5,\s*0\.3,\s*0\.2|n_boot\s*(?::\s*int\s*)?=\s*2000\b")
    found = []
    for path in SOURCES:
        text = path.read_text(encoding="utf-8")
        found += [f"{path.name}:{m.group(0)}" for m in literal.finditer(text)]
        for func, name, default in _defaults(ast.parse(text)):
            if name in FIELDS and isinstance(default, ast.Constant | ast.Tuple):
                found.append(f"{path.name}:{func}({name}={ast.unparse(default)})")
            if "threshold" in name and isinstance(default, ast.Constant):
                if isinstance(default.value, float):
                    found.append(f"{path.name}:{func}({name}={default.value})")
    assert not found, f"literal copies of judgerisk.options.ANALYSIS: {found}"


def test_the_signatures_read_the_settings():
    from judgerisk._book.studies.paired import compare_scores
    from judgerisk._splits import split_items
    from judgerisk.engine.analysis import evaluate_risk
    from judgerisk.risk.metrics import high_consensus, probability_high_consensus
    from judgerisk.risk.scur import scur_scores

    def default(func, name):
        return inspect.signature(func).parameters[name].default

    assert default(split_items, "fractions") == ANALYSIS.fractions == (0.5, 0.3, 0.2)
    assert default(scur_scores, "splits") == ANALYSIS.fractions
    assert default(evaluate_risk, "hc_threshold") == ANALYSIS.hc_threshold == 0.8
    assert default(high_consensus, "threshold") == ANALYSIS.hc_threshold
    assert default(probability_high_consensus, "threshold") == ANALYSIS.prob_threshold
    assert default(compare_scores, "n_boot") == ANALYSIS.n_boot == 2000


@pytest.mark.parametrize(
    "bad",
    [{"n_boot": 0}, {"fractions": (0.5, 0.5, 0.5)}, {"hc_threshold": 1.5}, {"level": 0.0}],
)
def test_bad_settings_are_refused(bad):
    with pytest.raises(OptionError):
        AnalysisSettings(**bad)


# --------------------------------------------------------------------------- one default each
def _quantities() -> dict[str, object]:
    """Parameter name -> its one default in judgerisk.options (the settings module)."""
    from judgerisk import options as o

    return {
        "alpha": o.DEFAULT_ALPHA,
        "delta": o.DEFAULT_DELTA,
        "template": o.DEFAULT_TEMPLATE,
        "n_folds": o.DEFAULT_FOLDS,
        "protocol": o.DEFAULT_PROTOCOL,
        "n_seeds": o.DEFAULT_REPEATS,
        "n_splits": o.DEFAULT_SPLITS,
        "accelerate": o.DEFAULT_ACCELERATE,
        "n_items": o.SIMULATE.n_items,
        "n_judges": o.SIMULATE.n_judges,
        "timeout": o.DEFAULT_CELL_TIMEOUT,
    }


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            if isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def _literal_copies(text: str, where: str) -> list[str]:
    """Signature defaults and ``add_argument(..., default=...)`` that copy a default's value,
    and the template's name written anywhere but in a docstring."""
    quantities = _quantities()
    tree = ast.parse(text)
    found = []
    for func, name, default in _defaults(tree):
        if name in quantities and isinstance(default, ast.Constant):
            if default.value == quantities[name] and type(default.value) is type(quantities[name]):
                found.append(f"{where}:{func}({name}={default.value!r})")
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "add_argument":
            flags = [a.value for a in node.args if isinstance(a, ast.Constant)]
            dests = {str(f).lstrip("-").replace("-", "_") for f in flags}
            for kw in node.keywords:
                if kw.arg == "default" and isinstance(kw.value, ast.Constant):
                    for dest in dests & set(quantities):
                        if kw.value.value == quantities[dest]:
                            found.append(f"{where}:add_argument({flags[-1]}, default=...)")
    docs = _docstrings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and node.value == quantities["template"]:
            if id(node) not in docs:
                found.append(f"{where}:line {node.lineno}: {node.value!r}")
    return found


def test_no_literal_copy_of_a_command_or_library_default():
    found = []
    for path in SOURCES:
        found += _literal_copies(path.read_text(encoding="utf-8"), str(path.relative_to(PACKAGE)))
    assert not found, f"literal copies of judgerisk.options' defaults: {found}"


def test_the_scan_finds_a_literal_copy():
    """The scan is not vacuous: each kind of copy it looks for is found."""
    source = (
        "def f(alpha=0.1, template='pairwise_v1', n_folds=5):\n    pass\n"
        "def g(p):\n    p.add_argument('--n-items', default=2000)\n"
    )
    found = _literal_copies(source, "x.py")
    assert any("alpha=0.1" in f for f in found) and any("n_folds=5" in f for f in found)
    assert any("--n-items" in f for f in found) and any("'pairwise_v1'" in f for f in found)
    assert not _literal_copies("def f(alpha=0.5, n_seeds=20):\n    pass\n", "x.py")


def _parser(command: str):
    from judgerisk.cli._app import build_parser

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices[command]


def _options(parser) -> dict[str, argparse.Action]:
    return {a.option_strings[-1]: a for a in parser._actions if a.option_strings}


def test_every_parser_reads_its_defaults_from_the_settings_module():
    from judgerisk.cli._app import build_parser
    from judgerisk.options import PERTURB_CONDITIONS, SIMULATE, ReportSettings, ScoreSettings

    quantities = _quantities()
    parser = build_parser(extract=False)
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    seen = 0
    for name, command in sub.choices.items():
        for action in command._actions:
            if action.dest in quantities and action.default is not None:
                assert action.default == quantities[action.dest], (name, action.dest)
                seen += 1
    assert seen >= 12, seen
    assert _options(_parser("simulate"))["--conditions"].default == SIMULATE.conditions
    assert _options(_parser("perturb"))["--conditions"].default == PERTURB_CONDITIONS
    assert ReportSettings().n_seeds == ScoreSettings().n_seeds  # one repetition count


def test_report_accepts_every_scoring_option_of_score_with_its_default():
    score, report = _options(_parser("score")), _options(_parser("report"))
    own = {"--output", "--overwrite", "--progress", "--help"}
    # how a parquet panel larger than memory is streamed (StreamSettings), not what is computed:
    # the report scores in memory (its notebook reads the whole score table)
    streamed = {"--" + f.name.replace("_", "-") for f in fields(StreamSettings)}
    assert streamed <= set(score)
    shared = set(score) - own - streamed
    assert shared >= {"--n-seeds", "--protocol", "--n-folds", "--seed", "--aggregators"}
    for flag in shared:
        assert flag in report, flag
        a, b = score[flag], report[flag]
        assert (a.default, a.choices, type(a)) == (b.default, b.choices, type(b)), flag


# --------------------------------------------------------------------------- one list syntax
def _list_options() -> list[tuple[str, str]]:
    """Every (command, option) whose action is the one list action, from the parsers."""
    from judgerisk.cli._app import build_parser
    from judgerisk.cli.common import ListOption

    try:
        parser = build_parser(extract=True)
    except ImportError:
        parser = build_parser(extract=False)
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return [
        (name, action.option_strings[-1])
        for name, command in sub.choices.items()
        for action in command._actions
        if isinstance(action, ListOption)
    ]


LIST_OPTIONS = _list_options()


def test_the_list_options_are_found_and_no_other_option_takes_several_values():
    from judgerisk.cli._app import build_parser
    from judgerisk.cli.common import ListOption

    found = set(LIST_OPTIONS)
    assert {("simulate", "--conditions"), ("perturb", "--conditions")} <= found
    assert {("score", "--aggregators"), ("report", "--aggregators")} <= found
    assert ("report", "--certified-scores") in found and ("import", "--columns") in found
    sub = next(
        a for a in build_parser(extract=False)._actions if isinstance(a, argparse._SubParsersAction)
    )
    for name, command in sub.choices.items():
        for action in command._actions:
            several = action.nargs in ("+", "*") or (
                isinstance(action.nargs, int) and action.nargs > 1
            )
            if action.option_strings and several:
                assert isinstance(action, ListOption), (name, action.option_strings)


def _argv(command: str, flag: str, values: list[str]) -> list[str]:
    """The command with every required argument filled, then ``flag`` and its values."""
    parser = _parser(command)
    argv = [command]
    for action in parser._actions:
        if not action.option_strings and action.nargs != "?":
            argv.append("fastchat" if action.dest == "format" else "x.csv")
        elif action.required:
            argv += [action.option_strings[0], "x.csv"]
    return [*argv, flag, *values]


@pytest.mark.parametrize(("command", "flag"), LIST_OPTIONS)
def test_every_list_option_takes_spaces_and_commas(command, flag):
    action = _options(_parser(command))[flag]
    default = action.default if isinstance(action.default, tuple) else ()
    values = list(default[:3]) if len(default) >= 2 else ["task=q", "worker=w", "label=l"]
    parse = _parser(command).parse_args
    spaced = getattr(parse(_argv(command, flag, values)[1:]), action.dest)
    commas = getattr(parse(_argv(command, flag, [",".join(values)])[1:]), action.dest)
    mixed = getattr(
        parse(_argv(command, flag, [",".join(values[:2]), *values[2:]])[1:]), action.dest
    )
    assert spaced == commas == mixed == tuple(values)


# --------------------------------------------------------------------------- one command shape
def test_one_exit_code_table_in_code_and_readme():
    from judgerisk.cli.common import EXIT_CODES, EXIT_RUNTIME, EXIT_USAGE
    from judgerisk.cli.verify import Verification

    readme = (PACKAGE.parent / "README.md").read_text(encoding="utf-8")
    section = readme.split("### Exit codes", 1)[1].split("\n#", 1)[0]
    rows = re.findall(r"^\| (\d+) \| (.+?) \|$", section, re.M)
    assert {int(code): text for code, text in rows} == EXIT_CODES
    assert len(set(EXIT_CODES.values())) == len(EXIT_CODES)
    outcomes = {Verification(s).exit_code for s in ("reproduced", "differs", "cannot tell")}
    assert len(outcomes) == 3 and not outcomes & {EXIT_RUNTIME, EXIT_USAGE}


def test_every_command_is_registered_the_same_way():
    source = (PACKAGE / "cli" / "_app.py").read_text(encoding="utf-8")
    assert "type: ignore" not in source and '"extract"' not in source


def test_extract_takes_a_positional_input_and_o():
    pytest.importorskip("torch")
    parser = _parser("extract")
    args = parser.parse_args(["items.jsonl", "-o", "run", "--model", "m", "--conditions", "a,b"])
    assert (args.items, args.output, args.conditions) == ("items.jsonl", "run", ("a", "b"))
    assert not args.resume and not args.overwrite


def test_an_extraction_folder_holding_a_run_needs_resume_or_overwrite(tmp_path, capsys):
    import time

    from judgerisk._provenance import OutputPathError
    from judgerisk.cli._extract import check_extract_paths, resolve_spellings

    out = tmp_path / "run"
    assert check_extract_paths(out, {}) == out  # a new folder
    out.mkdir()
    (out / "manifest.json").write_text("{}")
    with pytest.raises(OutputPathError, match="holds a run .*--resume.*--overwrite"):
        check_extract_paths(out, {})
    assert check_extract_paths(out, {}, resume=True) == out
    assert check_extract_paths(out, {}, overwrite=True) == out
    assert check_extract_paths(out, {}, started=time.time() - 3600) == out  # this run's files
    with pytest.raises(OptionError, match="give one"):
        check_extract_paths(out, {}, resume=True, overwrite=True)
    old = argparse.Namespace(items=None, output=None, items_option="i.jsonl", out_option="run")
    resolve_spellings(old)
    assert (old.items, old.output) == ("i.jsonl", "run") and not hasattr(old, "items_option")
    err = capsys.readouterr().err
    assert "--items is deprecated" in err and "--out is deprecated" in err
    with pytest.raises(OptionError, match="-o/--output is required"):
        resolve_spellings(argparse.Namespace(items="i.jsonl", output=None))


def test_run_says_what_it_wrote_on_stderr(tmp_path, monkeypatch, capsys):
    from judgerisk.cli._app import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(
        "judgerisk._book.rerun.run_chapter", lambda *a, **k: (tmp_path / "n.ipynb", 1.0)
    )
    assert main(["run", "01", "--small", "-o", "n.ipynb"]) == 0
    out, err = capsys.readouterr()
    assert out == "" and "wrote" in err
