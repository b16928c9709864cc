"""The ``judgerisk`` command line: end to end in a subprocess, and its error handling."""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from judgerisk.cli import EXIT_OK, EXIT_USAGE, main


def _cli(*args, cwd):
    script = Path(sys.executable).with_name("judgerisk")
    cmd = [str(script)] if script.exists() else [sys.executable, "-m", "judgerisk.cli"]
    return subprocess.run(
        [*cmd, *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=300
    )


def test_simulate_score_select_report_end_to_end(tmp_path):
    r = _cli(
        "simulate",
        "-o",
        "panel.csv",
        "--n-items",
        120,
        "--seed",
        2,
        "--labels",
        "labels.csv",
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr
    r = _cli("score", "panel.csv", "-o", "scores.csv", "--n-seeds", 2, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    scores = pd.read_csv(tmp_path / "scores.csv")
    assert len(scores) == 120 and scores["scur"].notna().all()
    for col in (
        "item",
        "scur",
        "z_U",
        "z_C",
        "z_S",
        "pe",
        "ve",
        "msp",
        "ds_entropy",
        "majority",
        "dawid_skene",
    ):
        assert col in scores.columns, col

    labels = pd.read_csv(tmp_path / "labels.csv")
    labels.sample(frac=0.5, random_state=0).to_csv(tmp_path / "cal.csv", index=False)
    r = _cli(
        "select",
        "scores.csv",
        "--calibration",
        "cal.csv",
        "--alpha",
        0.2,
        "-o",
        "decisions.csv",
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr
    assert "mean false discovery proportion over calibration draws <= 0.2" in r.stderr
    dec = pd.read_csv(tmp_path / "decisions.csv")
    assert (dec["role"] == "calibration").sum() == 60
    test = dec[dec["role"] == "test"]
    thr = dec["threshold"].iloc[0]
    np.testing.assert_array_equal(test["accepted"], test["score"] <= thr)
    assert set(test["decision"]) <= {"accept", "abstain"}

    panel_sha = hashlib.sha256((tmp_path / "panel.csv").read_bytes()).hexdigest()
    r = _cli(
        "report", "panel.csv", "-o", "report.html", "--n-seeds", 1, "--n-splits", 200, cwd=tmp_path
    )
    assert r.returncode == 0, r.stderr
    assert "IPKernelApp" not in r.stderr and "Traceback" not in r.stderr
    page = (tmp_path / "report.html").read_text()
    assert "Reproduce this report" in page and panel_sha in page
    assert "judgerisk report panel.csv -o report.html --n-seeds 1 --n-splits 200" in page
    assert "METHODS" not in page
    assert re.search(r"<th>items</th>\s*<td>120</td>", page)  # counts as integers
    r = _cli("verify", "report.html", cwd=tmp_path)
    assert r.returncode == 0 and "reproduced" in r.stderr, r.stderr
    assert hashlib.sha256((tmp_path / "panel.csv").read_bytes()).hexdigest() == panel_sha
    assert page.count("<table") >= 4  # overview, judges, riskiest items, AUROC, certified
    assert len(re.findall(r'src="data:image/png;base64,[A-Za-z0-9+/=]{1000,}"', page)) >= 2
    assert "Certified panel decisions" in page and "AUROC" in page
    assert 'class="error"' not in page
    assert "http://" not in page and "https://" not in page.replace("https://docs", "")


def test_help_has_examples_and_exit_codes(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "examples:" in out and "exit codes" in out
    for command in ("simulate", "extract", "score", "select", "report"):
        assert command in out
    with pytest.raises(SystemExit) as exc:
        main(["select", "--help"])
    assert "example" in capsys.readouterr().out


def test_bad_panel_file_gets_the_validation_message(tmp_path, capsys):
    bad = pd.DataFrame(
        {
            "item": [1, 1, 2],
            "judge": ["a", "b", "a"],
            "condition": ["original"] * 3,
            "p": [0.2, 1.5, 0.4],
        }
    )
    bad.to_csv(tmp_path / "bad.csv", index=False)
    assert main(["score", str(tmp_path / "bad.csv"), "-o", str(tmp_path / "s.csv")]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "judgerisk score: error:" in err and "column 'p'" in err and "row 1" in err
    assert main(["report", str(tmp_path / "missing.csv"), "-o", "r.html"]) == EXIT_USAGE
    assert "not found" in capsys.readouterr().err
    (tmp_path / "panel.txt").write_text("x")
    assert main(["score", str(tmp_path / "panel.txt"), "-o", "s.csv"]) == EXIT_USAGE
    assert "unsupported" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:  # argparse usage error
        main(["select", "s.csv", "--calibration", "c.csv", "--alpha", "1.5", "-o", "d.csv"])
    assert exc.value.code == EXIT_USAGE


def test_select_reports_bad_calibration(tmp_path, capsys):
    scores = pd.DataFrame({"item": [0, 1, 2], "scur": [0.1, 0.5, 0.9], "majority": ["A", "B", "A"]})
    scores.to_csv(tmp_path / "scores.csv", index=False)
    pd.DataFrame({"item": [0, 7]}).to_csv(tmp_path / "cal.csv", index=False)
    args = [
        "select",
        str(tmp_path / "scores.csv"),
        "--calibration",
        str(tmp_path / "cal.csv"),
        "-o",
        str(tmp_path / "d.csv"),
    ]
    assert main(args) == EXIT_USAGE
    assert "'gold'" in capsys.readouterr().err
    pd.DataFrame({"item": [0, 7], "gold": ["A", "B"]}).to_csv(tmp_path / "cal.csv", index=False)
    assert main(args) == EXIT_USAGE
    assert "not in the scores" in capsys.readouterr().err
    pd.DataFrame({"item": [0, 1], "gold": ["A", "A"]}).to_csv(tmp_path / "cal.csv", index=False)
    assert main(args) == EXIT_OK  # nothing certifiable from 2 items: everything abstained
    out = pd.read_csv(tmp_path / "d.csv")
    assert out.loc[out["role"] == "test", "decision"].tolist() == ["abstain"]


def test_simulate_writes_parquet_without_gold(tmp_path):
    out = tmp_path / "p.parquet"
    assert (
        main(
            [
                "simulate",
                "-o",
                str(out),
                "--n-items",
                "20",
                "--n-judges",
                "3",
                "--conditions",
                "original,swap",
                "--no-gold",
            ]
        )
        == EXIT_OK
    )
    df = pd.read_parquet(out)
    assert "gold" not in df.columns and set(df["condition"]) == {"original", "swap"}
    assert df["item"].nunique() == 20
