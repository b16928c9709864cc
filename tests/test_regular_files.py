"""Readers open regular files only (issue 44, item 2): no read that blocks.

A FIFO nobody writes to blocks its reader forever, so every command that reads is run on one in
a fresh process under a timeout: it must refuse the FIFO in one line naming it (exit 2) before
opening it, whether the FIFO is given directly, found in a folder, matched by a pattern, in a
crowd-kit folder, or is an output's provenance sidecar. A device (``/dev/zero`` never ends) and a
socket are refused the same way (:mod:`judgerisk._util.files`).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from judgerisk._util.files import NotRegularFileError, check_regular, file_kind
from judgerisk.cli import EXIT_USAGE
from judgerisk.simulate import simulate_panel
from judgerisk.testing import tiny_items

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")

DATA = Path(__file__).parent / "data" / "importers"
TIMEOUT = 60  # a blocked read never returns: the process is killed and the test fails


def _fifo(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    return path


def _run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    return subprocess.run(
        [sys.executable, "-m", "judgerisk.cli", *argv],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=TIMEOUT,
    )


def _setup(tmp: Path, case: str) -> tuple[list[str], str]:
    """The command line of ``case`` and the path its refusal must name."""
    fastchat = DATA / "fastchat" / "model_judgment" / "gpt-4_pair.jsonl"
    if case == "import-file":
        _fifo(tmp / "judge_pair.jsonl")
        return ["import", "fastchat", "judge_pair.jsonl", "-o", "p.csv"], "judge_pair.jsonl"
    if case in ("import-folder", "import-glob"):
        (tmp / "runs").mkdir()
        shutil.copy(fastchat, tmp / "runs" / "gpt-4_pair.jsonl")
        _fifo(tmp / "runs" / "pipe_pair.jsonl")
        given = "runs" if case == "import-folder" else "runs/*_pair.jsonl"
        return ["import", "fastchat", given, "-o", "p.csv"], "pipe_pair.jsonl"
    if case == "import-crowdkit-folder":
        _fifo(tmp / "crowd" / "labels.csv")
        return ["import", "crowdkit", "crowd", "-o", "p.csv"], "labels.csv"
    if case in ("score", "report", "bpe"):
        _fifo(tmp / "panel.csv")
        out = {"score": "s.csv", "report": "r.html", "bpe": "b.csv"}[case]
        return [case, "panel.csv", "-o", out], "panel.csv"
    if case == "select":
        simulate_panel(n_items=20, n_judges=3, seed=0).data.to_csv(tmp / "scores.csv")
        _fifo(tmp / "labels.csv")
        argv = ["select", "scores.csv", "--calibration", "labels.csv", "-o", "d.csv"]
        return argv, "labels.csv"
    if case in ("perturb-jsonl", "perturb-csv"):
        name = "items." + case.split("-")[1]
        _fifo(tmp / name)
        return ["perturb", name, "-o", "out.jsonl"], name
    if case == "perturb-template":
        tiny_items(2).to_json(tmp / "items.jsonl", orient="records", lines=True)
        _fifo(tmp / "template.json")
        argv = ["perturb", "items.jsonl", "-o", "o.jsonl", "--template", "template.json"]
        return argv, "template.json"
    if case == "verify":
        _fifo(tmp / "scores.csv")
        return ["verify", "scores.csv"], "scores.csv"
    if case == "verify-sidecar":
        (tmp / "scores.csv").write_text("item,scur\n1,0.5\n")
        _fifo(tmp / "scores.csv.provenance.json")
        return ["verify", "scores.csv"], "scores.csv.provenance.json"
    if case == "extract":
        _fifo(tmp / "items.jsonl")
        argv = ["extract", "--backend", "openai", "--endpoint", "chat", "--base-url",
                "http://127.0.0.1:9", "--items", "items.jsonl", "--out", "run"]  # fmt: skip
        return argv, "items.jsonl"
    raise AssertionError(case)


CASES = [
    "import-file",
    "import-folder",
    "import-glob",
    "import-crowdkit-folder",
    "score",
    "report",
    "bpe",
    "select",
    "perturb-jsonl",
    "perturb-csv",
    "perturb-template",
    "verify",
    "verify-sidecar",
    "extract",
]


@pytest.mark.parametrize("case", CASES)
def test_a_fifo_is_refused_before_any_read(tmp_path, case):
    argv, named = _setup(tmp_path, case)
    proc = _run(argv, tmp_path)  # a blocked read would raise TimeoutExpired here
    err = proc.stderr
    assert proc.returncode == EXIT_USAGE, (proc.returncode, err)
    assert "Traceback" not in err
    line = next(line for line in err.splitlines() if "is a FIFO" in line)
    assert named in line and "not a regular file" in line, err
    written = {"p.csv", "s.csv", "r.html", "b.csv", "d.csv", "out.jsonl", "o.jsonl", "run"}
    assert not written & {p.name for p in tmp_path.iterdir()}


def test_a_device_and_a_socket_are_refused(tmp_path):
    assert file_kind("/dev/null") == "a character device"
    with pytest.raises(NotRegularFileError, match="/dev/zero: is a character device"):
        check_regular("/dev/zero")
    proc = _run(["score", "/dev/zero", "-o", "s.csv"], tmp_path)
    assert proc.returncode == EXIT_USAGE and "is a character device" in proc.stderr
    sock_path = tmp_path / "panel.csv"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.bind(str(sock_path))
        proc = _run(["score", "panel.csv", "-o", "s.csv"], tmp_path)
    assert proc.returncode == EXIT_USAGE and "panel.csv: is a socket" in proc.stderr


def test_regular_files_links_and_folders_pass(tmp_path):
    target = tmp_path / "a.csv"
    target.write_text("x\n")
    (tmp_path / "link.csv").symlink_to(target)
    assert check_regular(tmp_path / "link.csv") == tmp_path / "link.csv"
    assert file_kind(tmp_path) is None and file_kind(tmp_path / "missing.csv") is None
    pipe = _fifo(tmp_path / "pipe")
    (tmp_path / "to_pipe.csv").symlink_to(pipe)
    with pytest.raises(NotRegularFileError, match="--items .*to_pipe.csv: is a FIFO"):
        check_regular(tmp_path / "to_pipe.csv", "--items")
