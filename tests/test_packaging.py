"""The package installs beside other tools: ranges in pyproject.toml, exact versions in the lock.

The wheel's requirements are ranges (a lower bound tested by ``make oldest-test``, an upper bound
only where a known break exists); ``requirements.lock`` (``make lock``) holds the exact set that
``make`` installs, and must satisfy those ranges. A wheel install finds the chapters it carries
(``make wheel-test`` builds and installs one; here the lookup itself is checked).
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from judgerisk._book import rerun

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
#: the only upper bounds, each for a known break
UPPER_BOUNDS = {"jupyter-book": "Jupyter Book 2 is a new engine; the book is written for 1.x"}


def _requirements() -> list[Requirement]:
    extras = PYPROJECT["optional-dependencies"].values()
    return [Requirement(r) for r in [*PYPROJECT["dependencies"], *(r for e in extras for r in e)]]


def _lock() -> dict[str, list[str]]:
    """``{name: [versions]}`` of requirements.lock (a name is pinned once per environment marker)."""
    found: dict[str, list[str]] = {}
    for line in (ROOT / "requirements.lock").read_text().splitlines():
        m = re.match(r"([A-Za-z0-9_.\-]+)==([^\s;]+)", line)
        if m:
            found.setdefault(canonicalize_name(m.group(1)), []).append(m.group(2))
    return found


def test_requirements_are_ranges_with_a_lower_bound():
    for req in _requirements():
        ops = {spec.operator for spec in req.specifier}
        assert "==" not in ops and "===" not in ops and "~=" not in ops, f"{req} is a pin"
        assert ">=" in ops, f"{req} has no lower bound"
        name = canonicalize_name(req.name)
        assert ("<" in ops) == (name in UPPER_BOUNDS), f"{req}: an upper bound needs a known break"


def test_the_lock_pins_every_requirement_inside_its_range():
    lock = _lock()
    for req in _requirements():
        versions = lock.get(canonicalize_name(req.name))
        assert versions, f"{req.name} is missing from requirements.lock (run make lock)"
        for version in versions:
            assert req.specifier.contains(version, prereleases=True), (
                f"requirements.lock has {req.name}=={version}, outside {req} (run make lock)"
            )


def test_the_lock_keeps_torch_at_the_cpu_build_on_disk():
    # pip finds torch 2.13.0's CPU wheel on this project's machines; a newer torch from the
    # index is a CUDA build of several GB
    assert _lock()["torch"] == ["2.13.0"]


def _fake_install(site: Path, shipped: bool):
    package = site / "judgerisk"
    package.mkdir(parents=True)
    if shipped:
        book = package / rerun.SHIPPED_BOOK
        (book / "notebooks" / "data").mkdir(parents=True)
        (book / "_toc.yml").write_text("root: book/intro\n")
        (book / "notebooks" / "04_scur_signals.md").write_text("# 4\n")
    return lambda: package


def test_a_wheel_install_finds_the_chapters_it_carries(tmp_path, monkeypatch):
    monkeypatch.setattr(rerun, "_package_dir", _fake_install(tmp_path / "site", shipped=True))
    found = rerun.installed_chapters()
    assert found == (tmp_path / "site" / "judgerisk" / "_book" / "sources" / "notebooks").resolve()
    monkeypatch.delenv(rerun.ENV_CHAPTERS, raising=False)
    assert [p.name for p in rerun.chapter_sources()] == ["04_scur_signals.md"]


def test_an_install_without_chapters_says_what_to_do(tmp_path, monkeypatch):
    monkeypatch.setattr(rerun, "_package_dir", _fake_install(tmp_path / "site", shipped=False))
    with pytest.raises(FileNotFoundError, match="has no chapter sources.*--from FOLDER"):
        rerun.installed_chapters()


def test_a_chapter_example_file_is_found_in_the_book_from_any_folder(tmp_path):
    # the chapters' exercises name notebooks/data/my_judge.csv; from a wheel install there is
    # no such folder under the reader's working directory: the book's copy is used, and said
    notes: list[str] = []
    given = {"pairs_path": "notebooks/data/my_judge.csv", "n": 3}
    out = rerun._absolute_paths(given, tmp_path, ROOT, notes.append)
    assert out == {"pairs_path": str(ROOT / "notebooks" / "data" / "my_judge.csv"), "n": 3}
    assert len(notes) == 1 and "pairs_path" in notes[0] and "book's copy" in notes[0]
    # a file of the reader's with that name comes first
    mine = tmp_path / "notebooks" / "data" / "my_judge.csv"
    mine.parent.mkdir(parents=True)
    mine.write_text("item\n")
    notes.clear()
    out = rerun._absolute_paths(given, tmp_path, ROOT, notes.append)
    assert out["pairs_path"] == str(mine) and notes == []
    with pytest.raises(FileNotFoundError, match="pairs_path: .*missing.csv does not exist"):
        rerun._absolute_paths({"pairs_path": "missing.csv"}, tmp_path, ROOT, notes.append)


def test_the_conda_environment_installs_through_the_lock():
    import yaml

    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    assert "-c requirements.lock" in pip
    assert [line for line in pip if "==" in line] == []  # the versions live in the lock only
