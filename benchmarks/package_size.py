"""The package's size by part, and its public names (issue 42: "a small library").

Counts the lines of every ``judgerisk/**/*.py`` file of a commit (default: the working tree),
split into four parts:

- **core**: the data contract and the science (``panel``, the flat checks, ``_util``, the
  aggregators, the risk scores, the one-judge methods and the engine);
- **getting a panel**: extraction, importers, public data sets, perturbation families, the
  simulator and the tiny test judge;
- **delivery**: the commands, the report, its figures and tables, provenance records;
- **book**: the book's own code (studies, chapter figures, runbook, rerun, render, checks).

The same rule sorts the layout before issue 42 (``studies/``, ``book/``, ``plots/``, a flat
``panel.py``): a study that the commands or the report used counts as core, the others as
book. Public names: the names in the ``__all__`` of every public module (no ``_``-prefixed
part), and the names the API page (``book/api.md``) documents::

    python benchmarks/package_size.py            # the working tree
    python benchmarks/package_size.py --ref 6215999
"""

from __future__ import annotations

import argparse
import ast
import re
import subprocess
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PARTS = ("core", "getting a panel", "delivery", "book")
#: First matching prefix of a module's path (relative to ``judgerisk/``) wins.
RULES: tuple[tuple[str, str], ...] = (
    ("_book/", "book"),
    ("book/", "book"),
    # before issue 42: the engine inside studies/, the report's figures inside plots/
    ("studies/analysis.py", "core"),
    ("studies/retention.py", "core"),
    ("studies/describe.py", "core"),
    ("studies/certified.py", "core"),
    ("studies/", "book"),
    ("plots/certified.py", "delivery"),
    ("plots/tables.py", "delivery"),
    ("plots/style.py", "delivery"),
    ("plots/escape.py", "delivery"),
    ("plots/__init__.py", "delivery"),
    ("plots/", "book"),
    ("_plots/", "delivery"),
    ("cli/", "delivery"),
    ("report/", "delivery"),
    ("provenance.py", "delivery"),
    ("_provenance.py", "delivery"),
    ("extract/", "getting a panel"),
    ("importers/", "getting a panel"),
    ("datasets/", "getting a panel"),
    ("families/", "getting a panel"),
    ("simulate.py", "getting a panel"),
    ("testing.py", "getting a panel"),
    ("", "core"),
)


def part_of(path: str) -> str:
    """The part of the module at ``path`` (relative to ``judgerisk/``)."""
    return next(part for prefix, part in RULES if path.startswith(prefix))


def sources(ref: str | None) -> dict[str, str]:
    """``{path relative to judgerisk/: text}`` of every Python module at ``ref`` (or on disk)."""
    if ref is None:
        package = ROOT / "judgerisk"
        return {
            str(p.relative_to(package)): p.read_text(encoding="utf-8")
            for p in sorted(package.rglob("*.py"))
            if "__pycache__" not in p.parts
        }
    names = subprocess.run(
        ["git", "ls-tree", "-r", "--name-only", ref, "judgerisk"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    out = {}
    for name in names:
        if name.endswith(".py"):
            show = ["git", "show", f"{ref}:{name}"]
            out[name.removeprefix("judgerisk/")] = subprocess.run(
                show, cwd=ROOT, capture_output=True, text=True, check=True
            ).stdout
    return out


def exported(text: str) -> list[str]:
    """The names of a module's ``__all__`` (empty when it has none)."""
    for node in ast.parse(text).body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, ast.AnnAssign):
            targets = [node.target]
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            value = node.value
            if isinstance(value, (ast.List, ast.Tuple)):
                return [e.value for e in value.elts if isinstance(e, ast.Constant)]
    return []


def is_public(path: str) -> bool:
    return not any(part.startswith("_") and part != "__init__.py" for part in path.split("/"))


def api_page_names(ref: str | None) -> list[str]:
    """The dotted names the API page documents (``.. autofunction:: judgerisk.x``, ...)."""
    if ref is None:
        text = (ROOT / "book" / "api.md").read_text(encoding="utf-8")
    else:
        show = ["git", "show", f"{ref}:book/api.md"]
        text = subprocess.run(show, cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return re.findall(r"^\.\. auto(?:function|class|data|module):: (\S+)", text, re.M)


def measure(ref: str | None) -> dict:
    files = sources(ref)
    lines: Counter[str] = Counter()
    for path, text in files.items():
        lines[part_of(path)] += len(text.splitlines())
    public = {p: exported(t) for p, t in files.items() if is_public(p)}
    face = set(api_page_names(ref))
    top = exported(files["__init__.py"])
    face |= {f"judgerisk.{n}" for n in top}
    return {
        "lines": {part: lines[part] for part in PARTS},
        "total": sum(lines.values()),
        "modules": len(files),
        "public modules": len(public),
        "names in public __all__": sum(len(v) for v in public.values()),
        "API page names": len(set(api_page_names(ref))),
        "face (API page + judgerisk.__all__)": len(face),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ref", help="a git commit (default: the working tree)")
    args = ap.parse_args()
    for key, value in measure(args.ref).items():
        if isinstance(value, dict):
            print(f"{key}: " + ", ".join(f"{k} {v}" for k, v in value.items()))
        else:
            print(f"{key}: {value}")


if __name__ == "__main__":
    main()
