"""Hardening of writes, reports, ``run`` and ``verify`` (issue "Hardening", points 1, 3-7, 11,
13, 15; issue "First contact", point 7).

One regression test per defect (numbered as in the issue), each reproducing the attack or
fault, and a property-based fuzz test of ``verify`` on mutated provenance records.
"""

from __future__ import annotations

import copy
import json
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import warnings
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from judgerisk._provenance import read_record, sidecar_path, write_table_with_record
from judgerisk._util.safe_write import atomic_write
from judgerisk.cli import EXIT_USAGE, main
from judgerisk.cli.common import EXIT_CANNOT_TELL, EXIT_DIFFERS
from judgerisk.cli.verify import verify
from judgerisk.simulate import simulate_panel

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture()
def victim(tmp_path, monkeypatch):
    """A panel file in an empty working folder."""
    monkeypatch.chdir(tmp_path)
    simulate_panel(n_items=30, n_judges=3, seed=2).data.to_csv(tmp_path / "victim.csv", index=False)
    return tmp_path / "victim.csv"


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if "tmp" in p.name)


# --------------------------------------------------------------------------- point 1
def test_1_a_planted_link_cannot_redirect_the_write(victim, capsys):
    before = victim.read_bytes()
    folder = victim.parent
    pid = os.getpid()
    for name in (f".out.csv.tmp-{pid}", f".out.csv.provenance.json.tmp-{pid}"):
        (folder / name).symlink_to(victim.name)  # the names the old writer used
    assert main(["score", "victim.csv", "-o", "out.csv", "--n-seeds", "1"]) == 0
    assert victim.read_bytes() == before
    out = folder / "out.csv"
    assert out.is_file() and not out.is_symlink()
    assert "scur" in out.read_text().splitlines()[0]
    assert not [p for p in folder.iterdir() if p.name.startswith(".judgerisk-tmp-")]


def test_1_temporary_file_is_private_and_unpredictable(tmp_path):
    seen = []

    def write(tmp: Path) -> None:
        seen.append(tmp)
        assert (tmp.parent.parent.stat().st_mode & 0o777) == 0o700
        tmp.write_text("x")

    atomic_write(tmp_path / "a.txt", write)
    atomic_write(tmp_path / "a.txt", write)
    assert seen[0].parent.parent.parent == tmp_path  # in the target's folder (atomic rename)
    assert seen[0].parent.parent != seen[1].parent.parent  # a fresh, unguessable folder
    assert seen[0].name == "a.txt" and (tmp_path / "a.txt").read_text() == "x"
    assert os.listdir(tmp_path) == ["a.txt"]


def test_1_stale_temporaries_of_dead_processes_are_swept(tmp_path):
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    stale = tmp_path / f".judgerisk-tmp-{dead}-abcdef"
    stale.mkdir()
    (stale / "out.csv").write_text("half")
    alive = tmp_path / f".judgerisk-tmp-{os.getpid()}-keepme"
    alive.mkdir()
    atomic_write(tmp_path / "out.csv", lambda t: t.write_text("whole"))
    assert not stale.exists() and alive.exists()
    assert (tmp_path / "out.csv").read_text() == "whole"


_SLOW_WRITER = """
import sys, time
from pathlib import Path
from judgerisk._util.safe_write import atomic_write
def write(tmp):
    tmp.write_text("partial")
    Path(sys.argv[2]).write_text("ready")
    time.sleep(60)
atomic_write(Path(sys.argv[1]), write)
"""


def test_1_sigterm_during_a_write_leaves_no_temporary(tmp_path):
    target, ready = tmp_path / "out" / "t.csv", tmp_path / "ready"
    target.parent.mkdir()
    target.write_text("old")
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.Popen([sys.executable, "-c", _SLOW_WRITER, str(target), str(ready)], env=env)
    try:
        for _ in range(600):
            if ready.exists():
                break
            time.sleep(0.1)
        assert ready.exists()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 128 + signal.SIGTERM
    finally:
        proc.kill()
    assert os.listdir(target.parent) == ["t.csv"] and target.read_text() == "old"


# --------------------------------------------------------------------------- point 13
def test_13_sidecar_path_is_checked_before_any_work(victim, capsys):
    (victim.parent / "out.csv.provenance.json").mkdir()
    assert main(["score", "victim.csv", "-o", "out.csv", "--n-seeds", "1"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "is a folder" in err and len(err.strip().splitlines()) == 1
    assert not (victim.parent / "out.csv").exists()


def test_13_table_and_record_are_published_together(tmp_path, monkeypatch):
    path = tmp_path / "t.csv"
    old = pd.DataFrame({"item": [1], "x": [0.0]})
    write_table_with_record(old, path, {"command": "old"})
    before = (path.read_bytes(), sidecar_path(path).read_bytes())
    real = os.replace
    calls = []

    def failing_replace(src, dst):
        calls.append(dst)
        if Path(dst) == sidecar_path(path):  # the sidecar's publication fails
            raise OSError(28, "No space left on device")
        return real(src, dst)

    monkeypatch.setattr(os, "replace", failing_replace)  # the os.replace safe writing calls
    with pytest.raises(OSError, match="No space"):
        write_table_with_record(old.assign(x=[1.0]), path, {"command": "new"})
    monkeypatch.setattr(os, "replace", real)
    assert (path.read_bytes(), sidecar_path(path).read_bytes()) == before
    assert path in calls  # the table had been published, and was put back
    assert set(os.listdir(tmp_path)) == {"t.csv", "t.csv.provenance.json"}


# --------------------------------------------------------------------------- points 3 and 6
class _Live(HTMLParser):
    """Elements that could run or load something."""

    def __init__(self) -> None:
        super().__init__()
        self.live: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if any(k.startswith("on") for k in a):
            self.live.append(f"{tag} with {sorted(a)}")
        if tag == "img" and not (a.get("src") or "").startswith("data:image/png;base64,"):
            self.live.append(f"img {a.get('src')!r}")
        if tag in ("script", "iframe", "object", "embed") and a.get("type") != "application/json":
            self.live.append(tag)


HOSTILE = "x`<img src=x onerror=alert(9)>`\n```\n<svg onload=alert(1)>.csv"


def test_3_6_hostile_file_name_and_edited_report(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    simulate_panel(n_items=40, n_judges=3, seed=5).data.to_csv(tmp_path / HOSTILE, index=False)
    argv = ["report", HOSTILE, "-o", "r.html", "--n-seeds", "1", "--n-splits", "20"]
    assert main(argv) == 0
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    parser = _Live()
    parser.feed(page)
    assert parser.live == []
    assert "alert(9)" in page  # the name is shown, as text
    capsys.readouterr()
    assert main(["verify", "r.html"]) == 0, capsys.readouterr().err

    # point 6: an edited visible cell (not the embedded table) is found
    start = page.index("<th>AUROC</th>")
    cell = page.index("<td>", start)
    shown = page[cell + 4 : page.index("</td>", cell)]
    edited = page[:cell] + "<td>0.999" + page[page.index("</td>", cell) :]
    assert shown != "0.999"
    (tmp_path / "edited.html").write_text(edited, encoding="utf-8")
    assert main(["verify", "edited.html"]) == EXIT_DIFFERS
    err = capsys.readouterr().err
    assert "'0.999' in the report" in err and repr(shown) in err


def test_6_record_command_line_must_agree_with_its_parameters(victim, capsys):
    assert main(["score", "victim.csv", "-o", "s.csv", "--n-seeds", "1", "--seed", "3"]) == 0
    side = sidecar_path(victim.parent / "s.csv")
    good = json.loads(side.read_text())
    for command in (
        ["judgerisk", "score", "victim.csv", "-o", "s.csv", "--n-seeds", "1", "--seed", "4"],
        ["judgerisk", "score", "victim.csv", "-o", "s.csv", "--n-seeds", "1; rm -rf ~"],
        "anything at all",
    ):
        side.write_text(json.dumps({**good, "command": command}))
        capsys.readouterr()
        assert main(["verify", "s.csv"]) == EXIT_DIFFERS, command
        assert "command" in capsys.readouterr().err


# --------------------------------------------------------------------------- point 4
_FOREIGN = textwrap.dedent(
    """\
    ---
    jupytext:
      text_representation:
        extension: .md
        format_name: myst
    kernelspec:
      name: python3
      display_name: Python 3
    ---

    ```{code-cell} ipython3
    :tags: [parameters]
    planted = 1
    ```

    ```{code-cell} ipython3
    open("PWNED", "w").write("x")
    raise ValueError("boom")
    ```
    """
)


def test_4_run_never_picks_up_a_book_near_the_working_directory(tmp_path, monkeypatch, capsys):
    (tmp_path / "_toc.yml").write_text("root: x\n")
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "notebooks" / "04_evil.md").write_text(_FOREIGN)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("JUDGERISK_CHAPTERS", raising=False)
    monkeypatch.delenv("JUDGERISK_BOOK", raising=False)
    assert main(["run", "04", "--list"]) == 0
    listed = capsys.readouterr().out
    assert "planted" not in listed and "panel_path" in listed  # the installed chapter 04
    assert main(["run", "notebooks/04_evil.md", "-o", "a.ipynb"]) == EXIT_USAGE
    assert "--from" in capsys.readouterr().err
    assert not list(tmp_path.rglob("PWNED"))
    # asked for explicitly: it runs, the source is named, and its failure is one line (point 11)
    assert main(["run", "--from", "notebooks/04_evil.md", "-o", "a.ipynb"]) == 1
    err = capsys.readouterr().err
    assert "04_evil.md" in err and "ValueError: boom" in err and "Traceback" not in err
    assert list(tmp_path.rglob("PWNED"))


def test_4_help_says_what_run_executes(capsys):
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "installed judgerisk" in out and "--from" in out


# --------------------------------------------------------------------------- point 5
def test_5_crafted_sizes_are_refused_before_any_recomputation(tmp_path, capsys):
    out = tmp_path / "p.csv"
    assert main(["simulate", "-o", str(out), "--n-items", "100", "--n-judges", "3"]) == 0
    side = sidecar_path(out)
    record = json.loads(side.read_text())
    record["parameters"]["n_items"] = 300_000
    record["command"][record["command"].index("100")] = "300000"
    side.write_text(json.dumps(record))
    start = time.perf_counter()
    result = verify(out)
    assert time.perf_counter() - start < 10
    assert result.status == "differs"
    assert "5400000 rows" in " ".join(result.messages) or "[1, 1800]" in " ".join(result.messages)

    panel = tmp_path / "q.csv"
    simulate_panel(n_items=20, n_judges=3, seed=1).data.to_csv(panel, index=False)
    assert main(["score", str(panel), "-o", str(tmp_path / "s.csv"), "--n-seeds", "1"]) == 0
    side = sidecar_path(tmp_path / "s.csv")
    record = json.loads(side.read_text())
    record["parameters"]["n_seeds"] = 10**6
    record["command"][record["command"].index("--n-seeds") + 1] = str(10**6)
    side.write_text(json.dumps(record))
    start = time.perf_counter()
    result = verify(tmp_path / "s.csv")
    assert time.perf_counter() - start < 10 and result.status == "differs"
    assert "n_seeds=1000000" in " ".join(result.messages)


# --------------------------------------------------------------------------- point 7
def test_7_scoring_runs_blas_on_one_thread_whatever_the_environment(victim, monkeypatch):
    from threadpoolctl import threadpool_info, threadpool_limits

    import judgerisk.engine.certified as certified

    real, seen = certified.score_panel, []

    def spy(*args, **kwargs):
        seen.append([i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"])
        return real(*args, **kwargs)

    monkeypatch.setattr(certified, "score_panel", spy)
    with threadpool_limits(limits=2, user_api="blas"):
        assert main(["score", "victim.csv", "-o", "s.csv", "--n-seeds", "1"]) == 0
        assert verify(victim.parent / "s.csv").status == "reproduced"
    assert len(seen) == 2 and all(n == [1] * len(n) for n in seen), seen


# --------------------------------------------------------------------------- point 11
@pytest.mark.parametrize("value", ["abc", "1e400", "-5", "2.5"])
def test_11_run_checks_parameter_types_before_the_kernel(tmp_path, monkeypatch, capsys, value):
    monkeypatch.chdir(tmp_path)
    import papermill

    def no_kernel(*a, **k):
        raise AssertionError("the kernel started")

    monkeypatch.setattr(papermill, "execute_notebook", no_kernel)
    assert main(["run", "01", "--small", "--param", f"n_items={value}", "-o", "o.ipynb"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "n_items" in err[0] and "default is" in err[0]


def test_11_run_checks_a_panel_file_before_the_kernel(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.csv").write_text("item,judge\n1,a\n")
    import papermill

    monkeypatch.setattr(papermill, "execute_notebook", lambda *a, **k: 1 / 0)
    assert main(["run", "01", "--small", "--param", "panel_path=bad.csv", "-o", "o.ipynb"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "bad.csv" in err[0] and "missing required column" in err[0]


# --------------------------------------------------------------------------- point 15 (verify)
def test_15_verify_messages_on_malformed_records(victim, capsys):
    assert main(["score", "victim.csv", "-o", "s.csv", "--n-seeds", "1"]) == 0
    side = sidecar_path(victim.parent / "s.csv")
    good = json.loads(side.read_text())
    side.write_text("[1, 2, 3]")
    capsys.readouterr()
    assert main(["verify", "s.csv"]) == EXIT_CANNOT_TELL
    assert "not a JSON object" in capsys.readouterr().err
    broken = copy.deepcopy(good)
    del broken["inputs"]["panel"]["path"]
    side.write_text(json.dumps(broken))
    assert main(["verify", "s.csv"]) == EXIT_CANNOT_TELL
    assert "no field 'inputs.panel.path'" in capsys.readouterr().err


def test_15_verify_says_what_it_cannot_recompute(tmp_path):
    from judgerisk.extract._parts import write_manifest

    write_manifest(tmp_path, {"judge": "tiny", "template": "abc"})
    result = verify(tmp_path / "manifest.json")
    assert result.status == "cannot tell" and "recomputes only" in result.messages[0]


# --------------------------------------------------------------------------- issue 25, point 7
def test_record_explains_code_differences_first(victim, capsys):
    from judgerisk.risk.registry import register_risk_score, unregister_risk_score

    @register_risk_score("logit_spread")
    def spread(probs, votes, fit_items, items):
        return probs.loc[items].std(axis=1)

    try:
        assert main(["score", "victim.csv", "-o", "s.parquet", "--n-seeds", "1"]) == 0
    finally:
        unregister_risk_score("logit_spread")
    record = read_record(victim.parent / "s.parquet")
    assert record["extensions"]["risk score"]["logit_spread"].endswith("spread")
    if record["judgerisk"]["git_commit"]:
        assert set(record["judgerisk"]["git_changes"]) == {"dirty", "sha256", "files"}
    result = verify(victim.parent / "s.parquet")
    assert result.status == "differs"
    text = result.messages
    hint = next(i for i, m in enumerate(text) if "risk score 'logit_spread'" in m)
    column = next(i for i, m in enumerate(text) if "column 'logit_spread'" in m)
    assert hint < column and "has none registered" in text[hint]


# --------------------------------------------------------------------------- fuzz
@pytest.fixture(scope="module")
def simulated(tmp_path_factory):
    folder = tmp_path_factory.mktemp("fuzz-record")
    out = folder / "p.csv"
    assert main(["simulate", "-o", str(out), "--n-items", "6", "--n-judges", "2"]) == 0
    return out, json.loads(sidecar_path(out).read_text())


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**12), 10**12) | st.floats() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)


def _paths(obj, prefix=()):
    yield prefix
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _paths(v, (*prefix, i))


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    derandomize=True,
)
@given(data=st.data(), op=st.sampled_from(["replace", "delete", "wrap"]))
def test_fuzz_mutated_records_end_in_a_verdict(simulated, data, op):
    out, good = simulated
    record = copy.deepcopy(good)
    paths = list(_paths(record))
    where = data.draw(st.sampled_from(paths))
    if not where:
        record = data.draw(_JSON)
    else:
        parent = record
        for key in where[:-1]:
            parent = parent[key]
        key = where[-1]
        if op == "delete" and isinstance(parent, dict):
            del parent[key]
        elif op == "wrap":
            parent[key] = [parent[key]]
        else:
            parent[key] = data.draw(_JSON)
    try:
        sidecar_path(out).write_text(json.dumps(record))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "library versions differ" on mutated versions
            result = verify(out)  # never raises, never runs long
        assert result.status in ("reproduced", "differs", "cannot tell")
        assert all(isinstance(m, str) and "Traceback" not in m for m in result.messages)
        if record == good:
            assert result.status == "reproduced"
    finally:
        sidecar_path(out).write_text(json.dumps(good))


def test_record_names_uncommitted_changes(tmp_path):
    from judgerisk._provenance import git_changes

    def git(*args):
        subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True)

    git("init", "-q")
    (tmp_path / "code.py").write_text("x = 1\n")
    git("add", "code.py")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c")
    assert git_changes(tmp_path) == {"dirty": False, "sha256": None, "files": []}
    (tmp_path / "code.py").write_text("x = 2\n")
    first = git_changes(tmp_path)
    assert first["dirty"] and first["files"] == ["code.py"] and len(first["sha256"]) == 64
    (tmp_path / "code.py").write_text("x = 3\n")
    assert git_changes(tmp_path)["sha256"] != first["sha256"]  # the hash follows the content
    (tmp_path / "new.py").write_text("y = 1\n")
    assert "new.py" in git_changes(tmp_path)["files"]


def test_11_parameter_check_follows_the_default():
    from judgerisk._book.rerun import check_parameter

    assert check_parameter("alphas", [0.1], "(0.05, 0.10)") == [0.1]
    assert check_parameter("accelerate", None, '"anderson"') is None  # "off"
    assert check_parameter("epsilon", 1, "0.05") == 1
    assert check_parameter("verdict", 7, '"majority"') == "7"
    for name, value, default in [
        ("real_data", 1, "True"),
        ("n", True, "5"),
        ("epsilon", float("nan"), "0.05"),
        ("seed", -1, "0"),
        ("alphas", "x", "(0.05, 0.10)"),
    ]:
        with pytest.raises(ValueError, match=f"--param {name}="):
            check_parameter(name, value, default)


def test_a_count_that_may_be_zero_says_so_in_its_comment():
    """Chapter 07 asks for ``n_spammers=0``; its default is 1, so the sign rule alone refused it."""
    from judgerisk._book.rerun import check_parameter
    from judgerisk._book.runbook import chapter_parameters

    with pytest.raises(ValueError, match=r"n_items=0: expected a whole number > 0"):
        check_parameter("n_items", 0, "2000", "items in the simulated panel")
    spammers = next(
        p
        for p in chapter_parameters(ROOT / "notebooks" / "07_aggregators_retention.md")
        if p.name == "n_spammers"
    )
    assert check_parameter("n_spammers", 0, spammers.default, spammers.help) == 0
    with pytest.raises(ValueError, match=r"n_spammers=-1: expected a whole number >= 0"):
        check_parameter("n_spammers", -1, spammers.default, spammers.help)


def test_3_record_in_a_page_holds_no_markup():
    from judgerisk._provenance import html_record_tag

    record = {"command": ["judgerisk", "report", "<!--<script>x</script>.csv"], "k": "</script>"}
    tag = html_record_tag(record)
    assert tag.count("<") == 2  # the element's own start and end tags only
    page = Path(tempfile.mkdtemp()) / "r.html"
    page.write_text(f"<html><body>{tag}</body></html>", encoding="utf-8")
    assert read_record(page) == record
