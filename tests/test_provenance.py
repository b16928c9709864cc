"""Provenance records on every output, ``judgerisk verify``, and determinism across processes."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pandas as pd
import pytest

from judgerisk._provenance import (
    LIBRARIES,
    command_text,
    make_record,
    read_record,
    sha256_file,
    sidecar_path,
    write_table_with_record,
)
from judgerisk.cli import main
from judgerisk.cli.common import EXIT_CANNOT_TELL, EXIT_DIFFERS
from judgerisk.cli.verify import compare_tables, verify
from judgerisk.simulate import simulate_panel


@pytest.fixture()
def panel_file(tmp_path):
    simulate_panel(n_items=60, n_judges=3, seed=4).data.to_csv(tmp_path / "panel.csv", index=False)
    return tmp_path / "panel.csv"


def test_record_holds_what_reproduces_a_run(panel_file):
    record = make_record(["judgerisk", "score", "x"], {"seed": 3}, {"panel": (panel_file, 7)})
    assert record["judgerisk"]["version"]
    assert record["parameters"] == {"seed": 3}
    entry = record["inputs"]["panel"]
    assert entry["sha256"] == hashlib.sha256(panel_file.read_bytes()).hexdigest()
    assert entry["rows"] == 7 and Path(entry["path"]).is_absolute()
    env = record["environment"]
    assert {"python", "platform", *LIBRARIES} <= set(env) and env["pandas"] == pd.__version__
    assert record["started"].endswith("+00:00")


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".parquet"])
def test_tables_carry_their_record(tmp_path, suffix):
    df = pd.DataFrame({"item": ["007", "a"], "x": [0.1, 0.2]})
    path = write_table_with_record(df, tmp_path / f"t{suffix}", {"command": "c", "k": [1, 2]})
    assert read_record(path)["k"] == [1, 2]
    assert sidecar_path(path).exists() == (suffix != ".parquet")
    assert not list(tmp_path.glob(".*tmp*"))


def test_score_table_verifies_and_edits_are_caught(panel_file, tmp_path, capsys):
    out = tmp_path / "scores.csv"
    assert main(["score", str(panel_file), "-o", str(out), "--n-seeds", "1", "--seed", "2"]) == 0
    record = read_record(out)
    assert record["command"][:2] == ["judgerisk", "score"]
    params = record["parameters"]
    assert params["seed"] == 2 and params["n_seeds"] == 1 and params["accelerate"] == "anderson"
    assert record["settings"]["seeds"][0] == 2 and record["wall_s"] >= 0
    assert record["inputs"]["panel"]["rows"] == 60 * 3 * 6
    capsys.readouterr()

    assert main(["verify", str(out)]) == 0
    assert "reproduced" in capsys.readouterr().err

    table = pd.read_csv(out)
    table.loc[7, "scur"] = table.loc[7, "scur"] + 0.001
    table.to_csv(out, index=False)
    assert main(["verify", str(out)]) == EXIT_DIFFERS
    err = capsys.readouterr().err
    assert "row 7" in err and "'scur'" in err and "tolerance" in err

    panel = pd.read_csv(panel_file)
    panel.loc[0, "logit"] += 0.5
    panel.to_csv(panel_file, index=False)
    assert main(["verify", str(out)]) == EXIT_CANNOT_TELL
    err = capsys.readouterr().err
    assert "has changed" in err and "sha256" in err and str(panel_file) in err
    panel_file.unlink()
    assert main(["verify", str(out)]) == EXIT_CANNOT_TELL
    assert "missing" in capsys.readouterr().err


def test_verify_cannot_tell_without_a_record(tmp_path, capsys):
    pd.DataFrame({"item": [1]}).to_csv(tmp_path / "plain.csv", index=False)
    assert main(["verify", str(tmp_path / "plain.csv")]) == EXIT_CANNOT_TELL
    assert "no provenance record" in capsys.readouterr().err


def test_version_differences_are_a_warning(panel_file, tmp_path):
    out = tmp_path / "s.parquet"
    assert main(["score", str(panel_file), "-o", str(out), "--n-seeds", "1"]) == 0
    record = read_record(out)
    record["environment"]["numpy"] = "0.0.1"
    write_table_with_record(pd.read_parquet(out), out, record)
    with pytest.warns(UserWarning, match="numpy 0.0.1 ->"):
        assert verify(out).status == "reproduced"


def test_select_and_simulate_outputs_verify(tmp_path, capsys):
    panel, labels = tmp_path / "p.parquet", tmp_path / "labels.jsonl"
    argv = ["simulate", "-o", str(panel), "--n-items", "40", "--labels", str(labels)]
    assert main(argv) == 0
    assert main(["score", str(panel), "-o", str(tmp_path / "s.csv"), "--n-seeds", "1"]) == 0
    pd.read_json(labels, lines=True).head(20).to_csv(tmp_path / "cal.csv", index=False)
    argv = ["select", str(tmp_path / "s.csv"), "--calibration", str(tmp_path / "cal.csv")]
    assert main([*argv, "--alpha", "0.3", "-o", str(tmp_path / "d.parquet")]) == 0
    record = read_record(tmp_path / "d.parquet")
    assert {"threshold", "feasible", "n_calibration"} <= set(record["settings"])
    assert record["parameters"]["alpha"] == 0.3 and record["parameters"]["score"] == "scur"
    capsys.readouterr()
    for name in ("p.parquet", "labels.jsonl", "d.parquet"):
        assert main(["verify", str(tmp_path / name)]) == 0, capsys.readouterr().err


def test_compare_tables_tolerance_and_text():
    a = pd.DataFrame({"item": [1, 2], "x": [0.5, float("nan")], "v": ["A", "B"]})
    assert compare_tables(a, a.copy()) == []
    b = a.assign(x=[0.5 + 1e-12, float("nan")])
    assert compare_tables(a, b) == []
    c = a.assign(v=["A", "A"])
    (line,) = compare_tables(a, c)
    assert line.startswith("row 1 (item 2), column 'v'")


def test_report_section_and_manifest_record(tmp_path):
    from judgerisk.extract._parts import write_manifest
    from judgerisk.report._content import reproduce_html
    from judgerisk.report.build import report_notebook_path

    for one_judge in (False, True):
        text = report_notebook_path(one_judge).read_text()
        assert "## Reproduce this report" in text and "reproduce_html(provenance)" in text
    record = make_record(["judgerisk", "report", "p<1>.csv", "-o", "r.html"], {"n": 1}, {}, None)
    page = reproduce_html({**record, "command_text": command_text(record)})
    assert "judgerisk report" in page and "p&lt;1&gt;.csv" in page and "<1>" not in page
    write_manifest(tmp_path, {"judge": "tiny", "template": "abc"})
    rec = read_record(tmp_path / "manifest.json")
    assert rec["parameters"]["judge"] == "tiny" and rec["judgerisk"]["version"]
    write_manifest(tmp_path, {"judge": "tiny", "template": "abc"})  # a resume: same run
    with pytest.raises(ValueError, match="different run"):
        write_manifest(tmp_path, {"judge": "other", "template": "abc"})


_DETERMINISM = """
import hashlib, sys, warnings
warnings.simplefilter("ignore")
import pandas as pd
from judgerisk.engine.certified import score_panel
from judgerisk.engine.analysis import evaluate_risk
from judgerisk.simulate import simulate_panel
panel = simulate_panel(n_items=120, n_judges=4, seed=11).data
scores = score_panel(panel, n_seeds=2, seed=5, aggregators=("majority", "dawid_skene"))
risk = evaluate_risk(panel, seeds=[0])
h = hashlib.sha256()
h.update(pd.util.hash_pandas_object(scores.reset_index(), index=False).to_numpy().tobytes())
h.update(risk.to_csv(float_format="%.17g").encode())
print(h.hexdigest())
"""


def _digest(env_extra: dict) -> str:
    env = {**os.environ, **env_extra}
    root = str(Path(__file__).resolve().parents[1])
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run(
        [sys.executable, "-c", _DETERMINISM],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=True,
    )
    return proc.stdout.strip().splitlines()[-1]


def test_same_input_same_numbers_across_processes_and_blas_threads(capsys):
    """This process (default BLAS threads) and a fresh one with one BLAS thread agree."""
    capsys.readouterr()
    with warnings.catch_warnings():
        exec(compile(_DETERMINISM, "<determinism>", "exec"), {"__name__": "determinism"})
    here = capsys.readouterr().out.strip().splitlines()[-1]
    assert len(here) == 64
    one = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    assert _digest(one) == here


def test_sha256_file_matches_hashlib(tmp_path):
    p = tmp_path / "f.bin"
    p.write_bytes(os.urandom(3 * 2**20 + 5))
    assert sha256_file(p) == hashlib.sha256(p.read_bytes()).hexdigest()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        json.dumps(make_record("api call", {"x": float("inf")}))
