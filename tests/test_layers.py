"""The package's layers: no import runs up a layer, and no two modules import each other.

Layer order (CONTRIBUTING, "Layers"): contract and checks (with the inputs that produce a
panel) → estimators → engine → presentation → commands and the book's own code. A module may
import its own layer or a lower one. The layers are the package's folders: the flat modules at the top
of ``judgerisk/`` are the data contract, and each folder has one layer (:data:`FOLDERS`), so a new
module needs no entry. Package ``__init__`` files are re-export facades and are not checked as
importers.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "judgerisk"

CONTRACT, ESTIMATORS, ENGINE, PRESENTATION, COMMANDS = range(5)
NAMES = (
    "contract and checks",
    "estimators",
    "engine",
    "presentation",
    "commands and the book's own code",
)

#: Folder of the package -> its layer; a flat module of ``judgerisk/`` is the contract.
FOLDERS: dict[str, int] = {
    "_util": CONTRACT,
    "panel": CONTRACT,  # the data contract: checks, files, reshaping, one-judge pairs, cells  # registry, progress, determinism, safe writing, hashing, version
    "datasets": CONTRACT,  # inputs: public data sets, importers, extraction
    "importers": CONTRACT,
    "extract": CONTRACT,
    "families": CONTRACT,  # perturbation families: the conditions the contract declares
    "aggregators": ESTIMATORS,
    "risk": ESTIMATORS,
    "selective": ESTIMATORS,
    "estimate": ESTIMATORS,  # PPI estimates, labelling plans, the exchangeability check
    "engine": ENGINE,  # score / select / certify, the risk scores' evaluation, retention
    "_plots": PRESENTATION,  # private: the figures and tables the report shares with the book
    "report": PRESENTATION,  # report builders, their sentences, templates and checks
    "cli": COMMANDS,
    "_book": COMMANDS,  # private: the chapters' studies and figures, runbook, rerun, render
}
#: At most this many flat modules at the top of ``judgerisk/`` (besides ``__init__``).
MAX_FLAT = 12
#: At most this many lines in one module (one responsibility per module).
MAX_LINES = 800


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def layer_of(module: str) -> int:
    """The layer of ``module``: its folder's (:data:`FOLDERS`), the contract for a flat module."""
    parts = module.split(".")
    if parts[0] != "judgerisk":
        raise AssertionError(f"{module} is outside the package")
    if len(parts) > 1 and parts[1] in FOLDERS:
        return FOLDERS[parts[1]]
    if len(parts) <= 2:  # the package face, or a flat module
        return CONTRACT
    raise AssertionError(f"{module}: folder judgerisk/{parts[1]} has no layer in FOLDERS")


def imports_of(module: str) -> set[str]:
    """The judgerisk modules ``module`` imports anywhere (module level or inside a function)."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.split(".")[0] == "judgerisk"}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative import
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            if base.split(".")[0] != "judgerisk":
                continue
            for alias in node.names:  # `from pkg import submodule` imports the submodule
                sub = f"{base}.{alias.name}"
                out.add(sub if sub in MODULES else base)
    return out - {module}


GRAPH = {m: imports_of(m) for m in MODULES}


def _is_facade(module: str) -> bool:
    return module in MODULES and MODULES[module].name == "__init__.py"


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """Every import from a module to a higher layer, as readable lines."""
    out = []
    for module, targets in sorted(graph.items()):
        if _is_facade(module):
            continue
        mine = layer_of(module)
        for target in sorted(targets):
            if layer_of(target) > mine:
                out.append(f"{module} ({NAMES[mine]}) imports {target} ({NAMES[layer_of(target)]})")
    return out


def import_cycles(graph: dict[str, set[str]], facades: bool = False) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm).

    ``facades=False`` leaves the package ``__init__`` files out (a cycle of modules);
    ``facades=True`` keeps them, so that a module importing a name through its own package's
    facade, which imports the module back, is a cycle too.
    """
    nodes = [m for m in graph if facades or not _is_facade(m)]
    edges = {m: [t for t in graph[m] if t in graph and t in nodes] for m in nodes}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in nodes:
        if v not in index:
            visit(v)
    return cycles


def test_every_module_has_a_layer():
    for module in MODULES:
        assert 0 <= layer_of(module) < len(NAMES)


def test_every_folder_has_a_layer():
    folders = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    assert folders == set(FOLDERS)


def test_the_top_level_is_the_contract_and_folders():
    flat = sorted(p.stem for p in PACKAGE.glob("*.py") if p.name != "__init__.py")
    assert len(flat) <= MAX_FLAT, flat
    assert all(layer_of(f"judgerisk.{m}") == CONTRACT for m in flat)


def test_no_module_is_over_the_line_limit():
    sizes = {m: len(p.read_text(encoding="utf-8").splitlines()) for m, p in MODULES.items()}
    assert {m: n for m, n in sizes.items() if n > MAX_LINES} == {}
    assert max(sizes.values()) > MAX_LINES // 2  # the count reads real files


def test_layer_map_reads_the_folder():
    assert layer_of("judgerisk.importers.some_new_tool") == CONTRACT
    assert layer_of("judgerisk.extract.new_backend") == CONTRACT
    assert layer_of("judgerisk.selective.registry") == ESTIMATORS
    assert layer_of("judgerisk.selective.protocol") == ESTIMATORS
    assert layer_of("judgerisk._plots.new_figure") == PRESENTATION
    assert layer_of("judgerisk.engine.analysis") == ENGINE
    assert layer_of("judgerisk._book.studies.paired") == COMMANDS
    assert layer_of("judgerisk.risk.lmm") == ESTIMATORS
    assert layer_of("judgerisk.cli.new_command") == COMMANDS
    assert layer_of("judgerisk.panel") == CONTRACT
    assert layer_of("judgerisk") == CONTRACT


def test_no_import_runs_up_a_layer():
    assert upward_imports(GRAPH) == []


def test_no_import_cycle():
    """Module-level and function-level imports alike, with and without the facades."""
    assert import_cycles(GRAPH) == []
    assert import_cycles(GRAPH, facades=True) == []


def test_no_module_imports_the_package_face():
    """``judgerisk/__init__`` re-exports every layer: importing it runs up to the top one."""
    assert sorted(m for m, targets in GRAPH.items() if "judgerisk" in targets) == []


def test_the_checks_can_fail():
    """What the package had before: an estimator importing the figure style, and a cycle."""
    bad = {
        "judgerisk.aggregators._base": {"judgerisk._plots.style"},
        "judgerisk._plots.style": {"judgerisk.aggregators._base"},
        "judgerisk._book.rerun": {"judgerisk._book.runbook"},
        "judgerisk._book.runbook": {"judgerisk._book.rerun"},
    }
    assert upward_imports(bad) == [
        "judgerisk.aggregators._base (estimators) imports judgerisk._plots.style (presentation)"
    ]
    assert sorted(import_cycles(bad)) == [
        ["judgerisk._book.rerun", "judgerisk._book.runbook"],
        ["judgerisk._plots.style", "judgerisk.aggregators._base"],
    ]
    through_a_facade = {
        "judgerisk.risk": {"judgerisk.risk.lmm"},
        "judgerisk.risk.lmm": {"judgerisk.risk"},
    }
    assert import_cycles(through_a_facade) == []
    assert import_cycles(through_a_facade, facades=True) == [
        ["judgerisk.risk", "judgerisk.risk.lmm"]
    ]
    # the parser sees a function-level import and `from package import submodule`
    assert "judgerisk.aggregators._base" in GRAPH["judgerisk._plots.style"]
    assert "judgerisk._plots.style" in GRAPH["judgerisk._book.figures.aggregate"]
