"""Every docstring example in the package runs (``doctest`` on each module), the Scope one included."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import judgerisk

MODULES = sorted(
    m.name
    for m in pkgutil.walk_packages(judgerisk.__path__, "judgerisk.")
    if not m.name.endswith("__main__")
)
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _run(name: str) -> doctest.TestResults:
    module = importlib.import_module(name)
    return doctest.testmod(module, optionflags=FLAGS, report=True, verbose=False)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    if name.startswith("judgerisk.extract"):
        pytest.importorskip("torch")
    result = _run(name)
    assert result.failed == 0, f"{result.failed} doctest example(s) failed in {name}"


def test_the_scope_example_runs():
    assert _run("judgerisk.selective.scope").attempted >= 2
