"""Exclusive publication (issue 33, item 4 and item 9's report folder).

Without ``--overwrite`` an output is published with an exclusive link, so of two writers racing
for one new name exactly one succeeds and the other replaces nothing; the report builds in a
private folder beside its output (swept like :mod:`judgerisk._util.safe_write`'s), never in the
system temp folder.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pandas as pd
import pytest

from judgerisk._provenance import sidecar_path, write_table_with_record
from judgerisk._util.safe_write import (
    TMP_PREFIX,
    OutputExistsError,
    atomic_write,
    atomic_write_group,
    private_folder,
)

ROOT = Path(__file__).resolve().parents[1]


def _leftovers(folder: Path) -> list[str]:
    return [p.name for p in folder.iterdir() if p.name.startswith(TMP_PREFIX)]


def test_two_racing_exclusive_writers_exactly_one_wins(tmp_path):
    target = tmp_path / "out.csv"
    both_staged = threading.Barrier(2)
    results: dict[str, object] = {}

    def writer(name: str) -> None:
        def write(tmp: Path) -> None:
            tmp.write_text(f"written by {name}\n")
            both_staged.wait(timeout=10)  # both have checked and staged: now they race

        try:
            atomic_write(target, write, exclusive=True)
            results[name] = "won"
        except OutputExistsError as exc:
            results[name] = exc

    threads = [threading.Thread(target=writer, args=(n,)) for n in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=20)
    winners = [n for n, r in results.items() if r == "won"]
    assert len(winners) == 1, results
    loser = next(r for r in results.values() if r != "won")
    assert "another process wrote it" in str(loser) and "nothing was replaced" in str(loser)
    assert isinstance(loser, ValueError)  # an input error: the command line exits with 2
    assert target.read_text() == f"written by {winners[0]}\n"
    assert _leftovers(tmp_path) == []


def test_an_exclusive_group_publishes_all_or_nothing(tmp_path):
    a, b = tmp_path / "t.csv", tmp_path / "t.csv.provenance.json"
    b.write_text("someone else's record")
    with pytest.raises(OutputExistsError, match="t.csv.provenance.json exists"):
        atomic_write_group(
            [(a, lambda t: t.write_text("table")), (b, lambda t: t.write_text("mine"))],
            exclusive=True,
        )
    assert not a.exists()  # the one published first is taken back
    assert b.read_text() == "someone else's record"
    assert _leftovers(tmp_path) == []


def test_an_exclusive_write_never_replaces_a_link_or_a_file(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("keep")
    link = tmp_path / "out.txt"
    link.symlink_to(tmp_path / "dangling")
    with pytest.raises(OutputExistsError):
        atomic_write(link, lambda t: t.write_text("x"), exclusive=True)
    assert link.is_symlink() and not (tmp_path / "dangling").exists()
    with pytest.raises(OutputExistsError):
        atomic_write(victim, lambda t: t.write_text("x"), exclusive=True)
    assert victim.read_text() == "keep"
    atomic_write(victim, lambda t: t.write_text("replaced"))  # the --overwrite path
    assert victim.read_text() == "replaced"


def test_a_table_that_appeared_meanwhile_is_kept(tmp_path):
    df = pd.DataFrame({"x": [1, 2]})
    out = tmp_path / "scores.csv"
    out.write_text("theirs\n")  # written by another process after this one's check
    with pytest.raises(OutputExistsError):
        write_table_with_record(df, out, {"k": 1}, overwrite=False)
    assert out.read_text() == "theirs\n" and not sidecar_path(out).exists()
    write_table_with_record(df, tmp_path / "new.csv", {"k": 1}, overwrite=False)
    assert json.loads(sidecar_path(tmp_path / "new.csv").read_text()) == {"k": 1}


_RACE = """
import sys
from judgerisk.cli import main
print("ready", flush=True)
sys.stdin.readline()  # go
sys.exit(main(sys.argv[1:]))
"""


def test_two_simulate_runs_on_one_output_exactly_one_wins(tmp_path):
    """Both processes are released together, after their imports, in each round."""
    from judgerisk.simulate import simulate_panel

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for rnd in range(2):
        out = tmp_path / f"same{rnd}.csv"
        procs = [
            subprocess.Popen(
                [
                    sys.executable,
                    "-c",
                    _RACE,
                    "simulate",
                    "-o",
                    str(out),
                    "--n-items",
                    "400",
                    "--seed",
                    str(seed),
                ],  # fmt: skip
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=env,
            )
            for seed in (1, 2)
        ]
        for p in procs:
            assert p.stdout.readline().strip() == "ready"
        for p in procs:
            p.stdin.write("go\n")
            p.stdin.flush()
        outcomes = [(p.wait(timeout=120), p.stderr.read()) for p in procs]
        for p in procs:
            for f in (p.stdin, p.stdout, p.stderr):
                f.close()
        codes = sorted(code for code, _ in outcomes)
        assert codes == [0, 2], outcomes
        loser = next(err for code, err in outcomes if code == 2)
        assert "exists" in loser and "--overwrite" in loser
        record = json.loads(sidecar_path(out).read_text())
        seed = record["parameters"]["seed"]  # table and record come from the same writer
        expect = simulate_panel(n_items=400, seed=seed).data
        got = pd.read_csv(out)
        assert len(got) == len(expect)
        assert got["logit"].round(6).tolist() == expect["logit"].round(6).tolist()
        assert _leftovers(tmp_path) == []


# ------------------------------------------------------------------ report and run
@pytest.fixture
def panel_file(tmp_path, simulated_panel):
    path = tmp_path / "panel.parquet"
    simulated_panel(n_items=60, n_judges=3).to_parquet(path)
    return path


def test_the_report_builds_in_a_private_folder_beside_its_output(tmp_path, panel_file, monkeypatch):
    import judgerisk.report.build as report

    out_dir = tmp_path / "reports"
    out_dir.mkdir()
    stale = out_dir / f"{TMP_PREFIX}999999999-left"  # a killed report's folder
    stale.mkdir()
    seen = {}

    def killed(nb, path, params, cwd, timeout=None, progress=True, **kwargs):
        seen["cwd"] = Path(cwd)
        seen["scores"] = Path(params["scores_path"])
        assert seen["scores"].is_file()
        raise RuntimeError("the kernel died")

    monkeypatch.setattr(report, "run_notebook", killed)
    with pytest.raises(RuntimeError, match="kernel died"):
        report.render_report(panel_file, out_dir / "r.html", parameters={"n_seeds": 1})
    assert seen["cwd"].parent == out_dir and seen["cwd"].name.startswith(TMP_PREFIX)
    assert seen["scores"].parent == seen["cwd"]
    assert not seen["cwd"].exists() and not stale.exists()  # removed, and the stale one swept
    assert list(out_dir.iterdir()) == []


def test_a_report_that_appeared_meanwhile_is_not_replaced(tmp_path, panel_file, monkeypatch):
    import nbformat

    import judgerisk.report.build as report

    out = tmp_path / "r.html"

    def racing(nb, path, params, cwd, timeout=None, progress=True, **kwargs):
        out.write_text("the other report")  # another run published first
        return nbformat.v4.new_notebook()

    monkeypatch.setattr(report, "run_notebook", racing)
    with pytest.raises(OutputExistsError):
        report.render_report(panel_file, out, parameters={"n_seeds": 1}, overwrite=False)
    assert out.read_text() == "the other report"


def test_a_chapter_run_that_appeared_meanwhile_is_not_replaced(tmp_path, monkeypatch):
    from judgerisk._book import rerun, runbook

    out = tmp_path / "ch.ipynb"

    def racing(md, folder, profile=None, parameters=None, record=None):
        import nbformat

        written = Path(folder) / "ch.ipynb"
        nbformat.write(nbformat.v4.new_notebook(), str(written))
        out.write_text("the other run")
        return written, 0.0

    monkeypatch.setattr(runbook, "execute", racing)
    with pytest.raises(OutputExistsError):
        rerun.run_chapter("04", out, small=True, cwd=tmp_path)
    assert out.read_text() == "the other run" and _leftovers(tmp_path) == []
    assert not out.with_suffix(".html").exists()  # its page is published with it, or not at all


def test_private_folder_is_removed_and_swept(tmp_path):
    with private_folder(tmp_path) as tmp:
        assert tmp.parent == tmp_path and oct(tmp.stat().st_mode & 0o777) == "0o700"
        (tmp / "x").write_text("x")
    assert not tmp.exists()
