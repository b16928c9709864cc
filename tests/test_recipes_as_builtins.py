"""CONTRIBUTING.md's recipes followed as built-ins: the tests that read the registries still pass.

``tests/test_recipes.py`` installs the recipes as a plug-in. A contributor who follows them
inside the package writes each block into its module and adds the lines the recipe names: the
name and module in ``builtins=`` where the registry is defined, the reported lists the recipe
quotes (``_REGISTRY.reported((...))``) and the importer's line in ``BUILTIN_FORMATS``. This
test does exactly that in a copy of the repository and runs, there, the doctests and every test
module that reads a registry (found by the names it imports, not listed here), so a test that
pins the built-ins (a count, a set, a list of labels) fails here rather than in a
contributor's ``make test``. The browser check of the book is left to a full ``make test`` of
such a copy.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests._plugin_site import run_python
from tests.test_recipes import BLOCKS, MODULES, SECTIONS

ROOT = Path(__file__).resolve().parents[1]
#: Left out of the copy: environments, caches and build outputs.
NOT_COPIED = (".git", ".venv*", "_build", ".*cache", ".hypothesis", "__pycache__", "*.egg-info")
#: Recipe title -> (its module in the package, the file defining the registry, its names).
BUILTINS = {
    "Add an aggregator": ("aggregators/_my_rule.py", "aggregators/_base.py", ["my_rule"]),
    "Add a risk score": (
        "risk/_judge_spread.py",
        "risk/registry.py",
        ["judge_spread", "order_flips"],
    ),
    "Add a data set": ("datasets/_my_bench.py", "datasets/_registry.py", ["my_bench"]),
    "Add a selector (single judge)": (
        "selective/_cal_median.py",
        "selective/registry.py",
        ["cal_median"],
    ),
    "Add a judge backend": ("extract/_tempered.py", "extract/backends.py", ["tempered"]),
    "Add a perturbation family": ("families/_tone.py", "families/_base.py", ["tone"]),
}
#: The registries' names: a test module importing one of them reads what is registered.
REGISTRY_NAMES = re.compile(
    r"AGGREGATORS|REPORTED_\w+|RISK_SCORES|BASELINES|COMPARED|CERTIFIED|METHODS|SELECTORS|"
    r"score_selectors|FAMILIES|IMPORTERS|BUILTIN_FORMATS|JUDGE_BACKENDS|DATASETS"
)
#: Test modules not run in the copy: the recipes as a plug-in would register every name twice;
#: this module; the server (minutes).
NOT_RUN = {
    "test_recipes.py",
    "test_recipes_as_builtins.py",
    "test_openai_server.py",
}


def _find(source: str, predicate) -> tuple[ast.AST, list[int]]:
    """The first node of ``source`` that ``predicate`` accepts, and each line's byte offset."""
    offsets = [0]
    for line in source.encode().splitlines(keepends=True):
        offsets.append(offsets[-1] + len(line))
    return next(n for n in ast.walk(ast.parse(source)) if predicate(n)), offsets


def _replace(source: str, predicate, change) -> str:
    """``source`` with the text of the first node ``predicate`` accepts passed through
    ``change`` (AST positions are byte offsets)."""
    node, offsets = _find(source, predicate)
    raw = source.encode()
    start = offsets[node.lineno - 1] + node.col_offset
    end = offsets[node.end_lineno - 1] + node.end_col_offset
    return (raw[:start] + change(raw[start:end].decode()).encode() + raw[end:]).decode()


def _add_builtins(source: str, names: list[str], module: str) -> str:
    """``builtins=EXPR`` -> ``builtins={**EXPR, "name": "module", ...}``."""
    added = ", ".join(f'"{name}": "{module}"' for name in names)
    return _replace(
        source,
        lambda n: isinstance(n, ast.keyword) and n.arg == "builtins",
        lambda text: f"builtins={{**{text.partition('=')[2]}, {added}}}",
    )


def _set_reported(source: str, quoted: str) -> str:
    """The file's ``_REGISTRY.reported(...)`` call replaced by the one the recipe quotes."""
    return _replace(
        source,
        lambda n: isinstance(n, ast.Call) and getattr(n.func, "attr", "") == "reported",
        lambda text: quoted,
    )


def _add_importer_line(source: str, body: str) -> str:
    """Recipe 6's ``Importer("my_tool", read_my_tool, files=, options=, layout=)`` as one more
    entry of the tuple ``BUILTIN_FORMATS``, its reader named in full
    (``judgerisk.importers._my_tool:read_my_tool``)."""
    quoted = re.search(r"`\w+ = (Importer\(.*?\))`", body, re.S)
    assert quoted, "recipe 6 quotes its Importer"
    call = ast.parse(quoted.group(1), mode="eval").body
    assert isinstance(call, ast.Call) and isinstance(call.args[1], ast.Name)
    name = ast.literal_eval(call.args[0])
    reader = ast.Constant(f"judgerisk.importers._{name}:{call.args[1].id}")
    entry = ast.unparse(ast.Call(call.func, [call.args[0], reader], call.keywords))
    formats, _ = _find(
        source, lambda n: getattr(n, "target", None) and n.target.id == "BUILTIN_FORMATS"
    )
    entries = formats.value
    assert isinstance(entries, ast.Tuple)
    if name in [ast.literal_eval(e.args[0]) for e in entries.elts]:
        return source  # a checkout where recipe 6 was followed already
    at = (entries.lineno, entries.col_offset)  # the same node in _replace's parse
    return _replace(
        source,
        lambda n: isinstance(n, ast.Tuple) and (n.lineno, n.col_offset) == at,
        lambda text: f"{text[:-1]}    {entry},\n)",
    )


@pytest.fixture(scope="module")
def copy(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("builtin_recipes")
    root = root / "repo"
    shutil.copytree(ROOT, root, ignore=shutil.ignore_patterns(*NOT_COPIED), symlinks=True)
    package = root / "judgerisk"
    bodies = {t: b for _, t, b in SECTIONS}
    for title, (path, registry, names) in BUILTINS.items():
        (package / path).write_text(BLOCKS[MODULES[title]])
        source = (package / registry).read_text()
        dotted = "judgerisk." + path.removesuffix(".py").replace("/", ".")
        source = _add_builtins(source, names, dotted)
        body = bodies[title]
        quoted = re.search(r"`(_REGISTRY\.reported\(\(.*?\)\))`", body, re.S)
        if quoted:
            source = _set_reported(source, quoted.group(1))
        (package / registry).write_text(source)
    (package / "importers/_my_tool.py").write_text(BLOCKS["importer"])
    registry = package / "importers/_registry.py"
    registry.write_text(_add_importer_line(registry.read_text(), bodies["Add an importer"]))
    return root


def _imports_a_registry(path: Path) -> bool:
    return any(
        isinstance(node, ast.ImportFrom)
        and (node.module or "").startswith("judgerisk")
        and any(REGISTRY_NAMES.fullmatch(alias.name) for alias in node.names)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
    )


def _registry_tests() -> list[str]:
    """The doctests and every test module that imports a registry's names from judgerisk."""
    paths = sorted((ROOT / "tests").glob("test_*.py"))
    tests = [p.name for p in paths if p.name not in NOT_RUN and _imports_a_registry(p)]
    assert len(tests) >= 10, tests  # the pinning tests this guards against are among them
    return ["test_doctests.py", *tests]


def test_the_copy_registers_every_recipe_as_a_built_in(copy):
    code = """
        from judgerisk.aggregators._base import REPORTED_AGGREGATORS
        from judgerisk.risk.registry import CERTIFIED
        from judgerisk.selective.registry import REPORTED_SELECTORS
        from judgerisk.families import FAMILIES
        from judgerisk.importers import IMPORTERS
        from judgerisk.datasets import DATASETS
        from judgerisk.extract.backends import JUDGE_BACKENDS
        print("my_rule" in REPORTED_AGGREGATORS, list(CERTIFIED)[2:], list(REPORTED_SELECTORS),
              "tone" in FAMILIES, list(IMPORTERS)[-1], "my_bench" in DATASETS,
              "tempered" in JUDGE_BACKENDS)
    """
    out = run_python(code, {**os.environ, "PYTHONPATH": str(copy)}, copy)
    assert out.split("\n")[0] == (
        "True ['judge_spread', 'order_flips'] ['scope', 'cal_median'] True my_tool True True"
    )


@pytest.mark.slow
def test_tests_that_read_the_registries_pass_with_the_recipes_built_in(copy):
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]  # every pin at once
    argv += [f"tests/{name}" for name in _registry_tests()]
    env = {**os.environ, "PYTHONPATH": str(copy)}
    out = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=copy)
    assert out.returncode == 0, out.stdout[-6000:] + out.stderr[-2000:]
