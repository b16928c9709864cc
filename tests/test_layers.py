"""The package's layers: no import runs up a layer, and no two modules import each other.

Layer order (CONTRIBUTING, "Layers"): contract and checks (with the inputs that produce a
panel) → estimators → studies → presentation → commands and book tooling. A module may import
its own layer or a lower one. A module not named in :data:`LAYERS` takes the layer of its
longest listed package prefix, so a new module (an importer, an extraction backend, a selector)
needs no entry unless it belongs to another layer than its package. Package ``__init__`` files
are re-export facades and are not checked as importers.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "judgerisk"

CONTRACT, ESTIMATORS, STUDIES, PRESENTATION, COMMANDS = range(5)
NAMES = (
    "contract and checks",
    "estimators",
    "studies",
    "presentation",
    "commands and book tooling",
)

#: Module or package prefix -> layer (longest prefix wins).
LAYERS: dict[str, int] = {
    "judgerisk": CONTRACT,  # the root: __version__ and lazy re-exports
    "judgerisk._registry": CONTRACT,
    "judgerisk._progress": CONTRACT,
    "judgerisk.options": CONTRACT,
    "judgerisk.validation": CONTRACT,
    "judgerisk.panel": CONTRACT,
    "judgerisk.splits": CONTRACT,
    "judgerisk.provenance": CONTRACT,
    "judgerisk.simulate": CONTRACT,
    "judgerisk.testing": CONTRACT,
    "judgerisk.datasets": CONTRACT,  # inputs: public data sets, importers, extraction
    "judgerisk.importers": CONTRACT,
    "judgerisk.extract": CONTRACT,
    "judgerisk.extract.cli": COMMANDS,
    "judgerisk.aggregators": ESTIMATORS,
    "judgerisk.risk": ESTIMATORS,
    "judgerisk.selective": ESTIMATORS,
    "judgerisk.describe": STUDIES,
    "judgerisk.certified": STUDIES,
    "judgerisk.studies": STUDIES,  # analyses, retention, comparisons, ablation, drift, presets
    "judgerisk.selective.protocol": STUDIES,
    "judgerisk.plots": PRESENTATION,
    "judgerisk.reports": PRESENTATION,
    "judgerisk.cli": COMMANDS,
    "judgerisk.report": COMMANDS,
    "judgerisk.verify": COMMANDS,
    "judgerisk.rerun": COMMANDS,
    "judgerisk.runbook": COMMANDS,
    "judgerisk.book_checks": COMMANDS,  # what no page of the book may show
    "judgerisk.importers.cli": COMMANDS,
    "judgerisk.record_checks": COMMANDS,  # verify's checks of a record
    "judgerisk.report_check": COMMANDS,  # verify's check of a report's visible tables
    "judgerisk.report_content": COMMANDS,
    "judgerisk.report_one_judge": COMMANDS,  # the one-judge report's sentences and tables
    "judgerisk.render": COMMANDS,
    "judgerisk.claims": PRESENTATION,  # the book's checked direction sentences
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def layer_of(module: str) -> int:
    """The layer of ``module``: its own entry, else its longest listed package prefix."""
    parts = module.split(".")
    for k in range(len(parts), 0, -1):
        prefix = ".".join(parts[:k])
        if prefix in LAYERS:
            return LAYERS[prefix]
    raise AssertionError(f"{module} is outside the package")


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


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), facades left out."""
    nodes = [m for m in graph if not _is_facade(m)]
    edges = {m: [t for t in graph[m] if t in graph and not _is_facade(t)] for m in nodes}
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


def test_layer_map_falls_back_to_the_package_prefix():
    assert layer_of("judgerisk.importers.some_new_tool") == CONTRACT
    assert layer_of("judgerisk.extract.new_backend") == CONTRACT
    assert layer_of("judgerisk.selective.registry") == ESTIMATORS
    assert layer_of("judgerisk.plots.new_figure") == PRESENTATION
    assert layer_of("judgerisk.studies.analysis") == STUDIES
    assert layer_of("judgerisk.risk.lmm") == ESTIMATORS


def test_no_import_runs_up_a_layer():
    assert upward_imports(GRAPH) == []


def test_no_import_cycle():
    assert import_cycles(GRAPH) == []


def test_the_checks_can_fail():
    """What the package had before: an estimator importing the figure style, and a cycle."""
    bad = {
        "judgerisk.aggregators.base": {"judgerisk.plots.style"},
        "judgerisk.plots.style": {"judgerisk.aggregators.base"},
        "judgerisk.rerun": {"judgerisk.runbook"},
        "judgerisk.runbook": {"judgerisk.rerun"},
    }
    assert upward_imports(bad) == [
        "judgerisk.aggregators.base (estimators) imports judgerisk.plots.style (presentation)"
    ]
    assert sorted(import_cycles(bad)) == [
        ["judgerisk.aggregators.base", "judgerisk.plots.style"],
        ["judgerisk.rerun", "judgerisk.runbook"],
    ]
    # the parser sees a function-level import and `from package import submodule`
    assert "judgerisk.aggregators.base" in GRAPH["judgerisk.plots.style"]
    assert "judgerisk.plots.style" in GRAPH["judgerisk.plots.aggregate"]
