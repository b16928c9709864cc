"""Rules every command follows: overwriting, progress, announcing, version, help, no stray files.

Regression tests for the "first contact" issue (a README example that certifies, reruns with
``judgerisk run``, progress where a person waits, one overwrite rule) and for the command-line
parts of the hardening issue (``select --verdict gold``, help defaults, ``--version``).
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import shlex
from pathlib import Path

import pandas as pd
import pytest

import judgerisk
from judgerisk import cli
from judgerisk.cli import EXIT_OK, EXIT_USAGE, main
from judgerisk.simulate import calibration_labels, simulate_panel
from judgerisk.testing import tiny_items

ROOT = Path(__file__).resolve().parents[1]
CROWDKIT = ROOT / "tests" / "data" / "importers" / "crowdkit" / "labels.csv"


@pytest.fixture(scope="module")
def small():
    return simulate_panel(n_items=60, n_judges=3, seed=1).data


@pytest.fixture()
def folder(tmp_path, small, monkeypatch):
    """An empty working folder with a panel, a score table and a calibration sample."""
    monkeypatch.chdir(tmp_path)
    small.to_csv("panel.csv", index=False)
    scores = pd.DataFrame(
        {"item": range(60), "scur": [i / 60 for i in range(60)], "majority": ["A"] * 60}
    )
    scores.to_csv("scores.csv", index=False)
    calibration_labels(small, 30, seed=0).to_csv("cal.csv", index=False)
    tiny_items(3).to_json("items.jsonl", orient="records", lines=True)
    return tmp_path


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


# --------------------------------------------------------------------------- overwrite rule
_WRITERS = {
    "simulate": ["simulate", "--n-items", "20", "-o", "out.csv"],
    "simulate --labels": ["simulate", "--n-items", "20", "-o", "new.csv", "--labels", "out.csv"],
    "score": ["score", "panel.csv", "--n-seeds", "1", "-o", "out.csv"],
    "select": ["select", "scores.csv", "--calibration", "cal.csv", "-o", "out.csv"],
    "report": ["report", "panel.csv", "-o", "out.html"],
    "run": ["run", "01", "--small", "-o", "out.ipynb"],
    "import": ["import", "crowdkit", str(CROWDKIT), "-o", "out.csv"],
    "bpe": ["bpe", "panel.csv", "-o", "out.csv"],
    "perturb": ["perturb", "items.jsonl", "-o", "out.csv"],
}


@pytest.mark.parametrize("command", list(_WRITERS))
def test_every_command_refuses_an_existing_output(folder, capsys, monkeypatch, command):
    import papermill

    def _no_kernel(*a, **k):
        raise AssertionError("work started before the output was checked")

    monkeypatch.setattr(papermill, "execute_notebook", _no_kernel)
    argv = _WRITERS[command]
    out = Path(argv[argv.index("-o") + 1] if command != "simulate --labels" else "out.csv")
    out.write_text("precious\n")
    assert main(argv) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "exists" in err and "--overwrite" in err, err
    assert len(err.strip().splitlines()) == 1, err
    assert out.read_text() == "precious\n"
    assert not Path("new.csv").exists()


@pytest.mark.parametrize("command", ["import", "bpe"])
def test_import_and_bpe_refuse_a_left_over_sidecar(folder, capsys, command):
    Path("out.csv.provenance.json").write_text("{}")
    assert main(_WRITERS[command]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "its record" in err and "--overwrite" in err and len(err.strip().splitlines()) == 1
    assert not Path("out.csv").exists() and Path("out.csv.provenance.json").read_text() == "{}"


@pytest.mark.parametrize(
    "command", ["simulate", "simulate --labels", "score", "select", "import", "bpe", "perturb"]
)
def test_overwrite_replaces_the_output(folder, capsys, command):
    argv = _WRITERS[command]
    Path("out.csv").write_text("precious\n")
    assert main([*argv, "--overwrite"]) == EXIT_OK, capsys.readouterr().err
    assert Path("out.csv").read_text() != "precious\n"
    assert Path("out.csv.provenance.json").is_file()


def test_a_left_over_sidecar_counts_as_an_existing_output(folder, capsys):
    Path("out.csv.provenance.json").write_text("{}")
    assert main(_WRITERS["select"]) == EXIT_USAGE
    assert "its record" in capsys.readouterr().err
    assert not Path("out.csv").exists()


def test_the_rule_is_in_the_help_and_the_readme(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "--overwrite" in capsys.readouterr().out
    for command in ("simulate", "score", "select", "report", "run", "import", "bpe", "perturb"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        assert "--overwrite" in capsys.readouterr().out, command
    readme = (ROOT / "README.md").read_text()
    assert "One overwrite rule" in readme and "--overwrite" in readme


# --------------------------------------------------------------------------- progress
@pytest.mark.parametrize(
    ("flags", "terminal", "shown"),
    [([], True, True), ([], False, False), (["--progress"], False, True), (["--no-progress"], True, False)],
)  # fmt: skip
def test_score_progress_follows_the_terminal(folder, monkeypatch, flags, terminal, shown):
    err = _Terminal() if terminal else io.StringIO()
    monkeypatch.setattr("sys.stderr", err)
    assert main(["score", "panel.csv", "-o", "s.csv", "--n-seeds", "2", *flags]) == EXIT_OK
    text = err.getvalue()
    assert ("SCUR splits" in text) is shown, text
    said = text.index("judgerisk score: scoring 60 items x 3 judges x 6 conditions")
    assert said < text.index("wrote s.csv")


@pytest.mark.parametrize(("flags", "shown"), [([], False), (["--progress"], True)])
def test_report_progress_is_off_in_a_log(folder, monkeypatch, flags, shown):
    import judgerisk.report.build

    seen = {}

    def _fake(panel, output, **kwargs):
        seen.update(kwargs)
        return Path(output)

    monkeypatch.setattr(judgerisk.report.build, "render_report", _fake)
    assert main(["report", "panel.csv", "-o", "r.html", *flags]) == EXIT_OK
    assert seen["progress"] is shown and seen["overwrite"] is False
    assert callable(seen["announce"])


def test_verify_says_what_it_does_first(folder, capsys):
    assert main(["simulate", "--n-items", "20", "-o", "p.csv"]) == EXIT_OK
    capsys.readouterr()
    assert main(["verify", "p.csv"]) == EXIT_OK
    captured = capsys.readouterr()
    assert captured.err.startswith("judgerisk verify: checking the inputs of p.csv")
    assert "reproduced" in captured.err


# --------------------------------------------------------------------------- select
def test_select_refuses_to_certify_gold_against_itself(folder, capsys):
    scores = pd.read_csv("scores.csv").assign(gold="A")
    scores.to_csv("scores.csv", index=False)
    argv = ["select", "scores.csv", "--calibration", "cal.csv", "-o", "d.csv", "--verdict", "gold"]
    assert main(argv) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "against themselves" in err and len(err.strip().splitlines()) == 1
    assert not Path("d.csv").exists()


def test_select_warns_when_no_test_item_is_left(folder, capsys, small):
    calibration_labels(small).to_csv("all.csv", index=False)
    argv = ["select", "scores.csv", "--calibration", "all.csv", "-o", "d.csv"]
    assert main(argv) == EXIT_OK
    warnings_ = [ln for ln in capsys.readouterr().err.splitlines() if ": warning: " in ln]
    assert len(warnings_) == 1 and "no test items are left" in warnings_[0]


# --------------------------------------------------------------------------- simulate labels
def test_simulate_labels_a_calibration_sample(folder, capsys):
    argv = ["simulate", "--n-items", "50", "-o", "p.csv", "--labels", "l.csv", "--n-labelled"]
    assert main([*argv, "20"]) == EXIT_OK
    labels, panel = pd.read_csv("l.csv"), pd.read_csv("p.csv")
    assert len(labels) == 20 and labels["item"].is_unique
    assert set(labels["item"]) < set(panel["item"])
    gold = panel.drop_duplicates("item").set_index("item")["gold"]
    assert (labels.set_index("item")["gold"] == gold.reindex(labels["item"])).all()
    assert main(["verify", "l.csv"]) == EXIT_OK
    capsys.readouterr()
    assert main([*argv, "51", "--overwrite"]) == EXIT_USAGE
    assert "exceeds --n-items" in capsys.readouterr().err
    assert main(["simulate", "-o", "q.csv", "--n-labelled", "5"]) == EXIT_USAGE
    assert "needs --labels" in capsys.readouterr().err


# --------------------------------------------------------------------------- version, help
def test_version(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"judgerisk {judgerisk.__version__}"
    from importlib import metadata

    # one source: the installed metadata (pyproject.toml), no version string in the package
    assert judgerisk.__version__ == metadata.version("judgerisk")
    sources = "".join(p.read_text() for p in (ROOT / "judgerisk").rglob("*.py"))
    assert not re.search(r"__version__\s*=\s*['\"]", sources)


def test_simulate_help_shows_every_default(capsys):
    with pytest.raises(SystemExit):
        main(["simulate", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    from judgerisk.options import SIMULATE

    for needle in (
        f"(default: {SIMULATE.n_items})",
        f"(default: {SIMULATE.n_judges})",
        "(default: 0)",
        "swap_rubric2)",
        "(default: kept)",
        "(default: not written)",
        "(default: every item",
    ):
        assert needle in out, needle
    assert "(default: None)" not in out and "(default: False)" not in out


# --------------------------------------------------------------------------- the README
def _readme_block(after: str) -> list[str]:
    text = (ROOT / "README.md").read_text()
    block = text.split(after, 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]
    return [line.split("#")[0].strip() for line in block.splitlines() if line.strip()]


def test_readme_reruns_use_judgerisk_run():
    readme = (ROOT / "README.md").read_text()
    assert "execute(" not in readme and "python -c" not in readme
    lines = _readme_block("## Rerun a chapter on your own data")
    assert lines and all(line.startswith("judgerisk run ") for line in lines)
    for line in lines:
        args = cli.build_parser().parse_args(shlex.split(line)[1:])
        assert args.command == "run"


@pytest.mark.slow
def test_readme_command_line_example_certifies_and_leaves_no_stray_file(
    tmp_path, monkeypatch, capsys
):
    """The README's simulate / score / select lines, run as written, accept verdicts."""
    monkeypatch.chdir(tmp_path)
    lines = [
        ln
        for ln in _readme_block("Command line (")
        if ln.split()[1] in {"simulate", "score", "select"}
    ]
    assert [ln.split()[1] for ln in lines] == ["simulate", "score", "select"]
    named = set()
    for line in lines:
        argv = shlex.split(line)[1:]
        assert main(argv) == EXIT_OK, capsys.readouterr().err
        for flag in ("-o", "--labels"):
            if flag in argv:
                named.add(argv[argv.index(flag) + 1])
    err = capsys.readouterr().err
    found = re.search(r"accepted (\d+) of (\d+) items \(mean false discovery proportion", err)
    assert found, err
    n_acc, n_test = map(int, found.groups())
    assert n_acc > 0 and n_test > 0
    decisions = pd.read_csv("decisions.csv")
    assert int(decisions["accepted"].sum()) == n_acc
    assert (decisions["role"] == "test").sum() == n_test
    expected = named | {f"{n}.provenance.json" for n in named}
    assert {p.name for p in tmp_path.iterdir()} == expected


@pytest.mark.slow
def test_run_writes_only_the_notebook_it_names(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    before = _digest(
        ROOT / "notebooks" / sorted(p.name for p in (ROOT / "notebooks").glob("01_*.md"))[0]
    )
    assert main(["run", "01", "--small", "-o", "out.ipynb"]) == EXIT_OK
    err = capsys.readouterr().err
    assert err.startswith("judgerisk run: running ") and "01_" in err.splitlines()[0]
    # the executed notebook it names, nothing else (-o out.html would write the page alone)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.ipynb"]
    assert not list(ROOT.glob("notebooks/_timings.json"))
    after = _digest(
        ROOT / "notebooks" / sorted(p.name for p in (ROOT / "notebooks").glob("01_*.md"))[0]
    )
    assert before == after


# --------------------------------------------------------------------------- one record shape
_RECORDED = {
    "simulate": ["simulate", "--n-items", "20", "-o", "p.csv", "--labels", "l.csv"],
    "score": ["score", "panel.csv", "--n-seeds", "1", "-o", "s.csv"],
    "select": ["select", "scores.csv", "--calibration", "cal.csv", "-o", "d.csv"],
    "import": ["import", "crowdkit", str(CROWDKIT), "-o", "i.csv"],
    "bpe": ["bpe", "panel.csv", "--calibration", "cal.csv", "-o", "b.csv"],
    "perturb": ["perturb", "items.jsonl", "-o", "pt.jsonl", "--conditions", "original", "label1"],
}


def test_every_command_writes_one_record_shape(folder, capsys):
    """Same fields; parameters = the command and every option of its command line, nothing else."""
    from judgerisk._provenance import read_record
    from judgerisk.cli.common import command_options

    shapes = set()
    for name, argv in _RECORDED.items():
        assert main(argv) == EXIT_OK, capsys.readouterr().err
        out = argv[argv.index("-o") + 1]
        record = read_record(out)
        shapes.add(tuple(sorted(record)))
        assert record["command"] == ["judgerisk", *argv]
        parsed = cli.build_parser(extract=False).parse_args(argv)
        expected = {"command": name, **command_options(parsed)}
        assert record["parameters"] == json.loads(json.dumps(expected, default=str)), name
        assert main(["verify", out]) == EXIT_OK, capsys.readouterr().err
    assert len(shapes) == 1, shapes
    labels = read_record("l.csv")  # the second file of one run: same parameters, its part
    assert labels["settings"] == {"part": "labels"}
    assert labels["parameters"] == read_record("p.csv")["parameters"]


@pytest.mark.parametrize(
    ("argv", "target"),
    [
        (["report", "panel.csv", "-o", "r.html", "--n-seeds", "2"], "judgerisk.report.build.render_report"),
        (["run", "01", "--small", "-o", "n.ipynb"], "judgerisk._book.rerun.run_chapter"),
    ],
)  # fmt: skip
def test_report_and_run_records_come_from_the_one_helper(folder, monkeypatch, argv, target):
    """``report`` and ``run`` hand their builders the record ``command_record`` made."""
    from judgerisk._provenance import make_record
    from judgerisk.cli.common import command_options

    seen = {}

    def _fake(*args, **kwargs):
        seen.update(kwargs)
        return (Path(argv[-1]), 0.0) if argv[0] == "run" else Path(argv[-1])

    monkeypatch.setattr(target, _fake)
    assert main(argv) == EXIT_OK
    record = seen["record"]
    assert sorted(record) == sorted(make_record(["judgerisk"], {}))
    assert record["command"] == ["judgerisk", *argv]
    parsed = cli.build_parser(extract=False).parse_args(argv)
    expected = {"command": argv[0], **command_options(parsed)}
    assert record["parameters"] == json.loads(json.dumps(expected, default=str))
    if argv[0] == "report":  # the panel is read once, by render_report, which counts its rows
        assert record["inputs"]["panel"]["rows"] is None
        assert record["inputs"]["panel"]["sha256"]


def test_verify_holds_no_default_of_any_command():
    """Each command recomputes its outputs from its own settings; verify names none of them."""
    from judgerisk.cli.common import COMMANDS, Command, get_command
    from judgerisk.options import ReportSettings, ScoreSettings, SelectSettings

    source = (ROOT / "judgerisk" / "cli" / "verify.py").read_text()
    for settings in (ScoreSettings(), SelectSettings(), ReportSettings()):
        for value in settings.as_parameters().values():
            words = value if isinstance(value, tuple) else (value,)
            for word in (w for w in words if isinstance(w, str)):
                assert f'"{word}"' not in source, word
    for name in ("score", "select", "report", "simulate", "import", "bpe", "perturb", "estimate"):
        command = get_command(name)
        assert command.recomputable and type(command).recompute is not Command.recompute, name
    assert set(COMMANDS) == {"simulate", "extract", "perturb", "score", "select", "report"} | {
        "run",
        "import",
        "bpe",
        "verify",
        "estimate",
    }


def test_a_record_without_a_setting_recomputes_with_the_settings_default(folder, capsys):
    """A parameter missing from a record takes its command's settings default (ScoreSettings)."""
    from judgerisk._provenance import sidecar_path

    assert main(["score", "panel.csv", "--n-seeds", "1", "-o", "s.csv"]) == EXIT_OK
    side = sidecar_path(Path("s.csv"))
    record = json.loads(side.read_text())
    del record["parameters"]["protocol"], record["parameters"]["accelerate"]
    side.write_text(json.dumps(record))
    capsys.readouterr()
    assert main(["verify", "s.csv"]) == EXIT_OK, capsys.readouterr().err
