"""A module run as ``python -m`` must be complete when its ``__main__`` guard runs.

``make book`` runs ``python -m judgerisk._book.runbook``. With the ``if __name__ == "__main__":`` block
above some functions, ``main()`` ran before they were defined and staging the book stopped with
a ``NameError``, while every test that imported the module saw it complete. Two checks keep that
from coming back: the guard is the last statement of every module that has one (a lint over the
sources), and the runbook stages the book when run as a module (``--stage-only``, on a copy of
the sources: a second or so). Every such module of the package also answers ``--help`` when run
as a module (which alone would not have shown the bug: argparse exits before ``main`` goes on).
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted(
    p for folder in ("judgerisk", "benchmarks", "recipes") for p in (ROOT / folder).rglob("*.py")
)


def _is_main_guard(node: ast.stmt) -> bool:
    """``if __name__ == "__main__":`` (either operand order)."""
    if not isinstance(node, ast.If) or not isinstance(node.test, ast.Compare):
        return False
    sides = [node.test.left, *node.test.comparators]
    names = {s.id for s in sides if isinstance(s, ast.Name)}
    consts = {s.value for s in sides if isinstance(s, ast.Constant)}
    return names == {"__name__"} and consts == {"__main__"}


def statements_after_main_guard(source: str) -> list[int]:
    """Line numbers of the top-level statements that follow a ``__main__`` guard."""
    body = ast.parse(source).body
    guards = [k for k, node in enumerate(body) if _is_main_guard(node)]
    return [node.lineno for node in body[guards[0] + 1 :]] if guards else []


def test_detector():
    assert statements_after_main_guard("def f(): pass\nif __name__ == '__main__':\n f()\n") == []
    late = "if __name__ == '__main__':\n    main()\n\ndef main(): pass\n"
    assert statements_after_main_guard(late) == [4]
    assert statements_after_main_guard("if '__main__' == __name__:\n pass\nx = 1\n") == [3]
    assert statements_after_main_guard("x = 1\n") == []


def test_main_guard_is_the_last_statement():
    late = {
        str(path.relative_to(ROOT)): lines
        for path in SOURCES
        if (lines := statements_after_main_guard(path.read_text()))
    }
    assert not late, (
        f"statements after the __main__ guard (file: lines): {late}; run as a module, main() "
        "would run before they are defined: move the guard to the end"
    )


def _package_modules_with_a_guard() -> list[str]:
    mods = []
    for path in SOURCES:
        rel = path.relative_to(ROOT)
        if rel.parts[0] == "judgerisk" and any(
            _is_main_guard(n) for n in ast.parse(path.read_text()).body
        ):
            mods.append(".".join(rel.with_suffix("").parts))
    return mods


MODULES = _package_modules_with_a_guard()


def test_the_runbook_is_among_the_modules_run_with_python_m():
    assert any(m.endswith("runbook") for m in MODULES), MODULES


@pytest.mark.parametrize("module", MODULES)
def test_module_answers_help_when_run_with_python_m(module):
    proc = subprocess.run(
        [sys.executable, "-m", module, "--help"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "usage:" in proc.stdout.lower(), proc.stdout[:500]


def test_the_runbook_stages_the_book_when_run_with_python_m(tmp_path):
    """``make book``'s staging step, run as ``make book`` runs it (``python -m``), on a copy of
    the book's sources with stand-in executed notebooks: it exits 0 and writes the pages that
    staging generates (the chapter parameters, which ``parameters_markdown`` lays out, and the
    chapter times). A module whose ``__main__`` guard ran above ``parameters_markdown`` stopped
    here with a ``NameError``, which neither an import nor ``--help`` shows."""
    import nbformat

    root = tmp_path / "book-src"
    root.mkdir()
    for name in ("_config.yml", "_toc.yml"):
        (root / name).write_bytes((ROOT / name).read_bytes())
    shutil.copytree(ROOT / "book", root / "book")
    (root / "notebooks").mkdir()
    executed = tmp_path / "executed"
    executed.mkdir()
    sources = sorted((ROOT / "notebooks").glob("*.md"))
    assert sources
    for md in sources:
        (root / "notebooks" / md.name).write_bytes(md.read_bytes())
        nbformat.write(nbformat.v4.new_notebook(), executed / f"{md.stem}.ipynb")
    cmd = [sys.executable, "-m", "judgerisk._book.runbook", "--skip-execute", "--stage-only"]
    cmd += ["--out", str(executed), "--root", str(root)]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    stage = root / "_build" / "site-src"
    assert f"book staged: {stage}" in proc.stdout
    params = (stage / "book" / "_chapter_parameters.md").read_text()
    assert "n_items" in params  # every chapter's parameters cell, laid out
    assert (stage / "book" / "_chapter_times.md").is_file()
    assert sorted(p.stem for p in (stage / "notebooks").glob("*.ipynb")) == [
        p.stem for p in sources
    ]
