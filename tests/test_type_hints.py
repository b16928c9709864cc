"""Every public function and method of the package has type hints (mypy checks them in make test).

Public = listed in its module's ``__all__`` (and the public methods of the classes listed there),
in every module whose path has no ``_``-prefixed part.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import judgerisk

MODULES = sorted(
    m.name
    for m in pkgutil.walk_packages(judgerisk.__path__, "judgerisk.")
    if not any(part.startswith("_") for part in m.name.split(".")[1:])
)


def _public_functions(module):
    for attr in getattr(module, "__all__", []):
        obj = getattr(module, attr, None)
        if getattr(obj, "__module__", None) != module.__name__:
            continue  # re-exported: checked in its home module
        if inspect.isfunction(obj):
            yield attr, obj
        elif inspect.isclass(obj):
            for name, member in vars(obj).items():
                public = not name.startswith("_") or name == "__init__"
                if public and inspect.isfunction(member) and member.__module__ == module.__name__:
                    yield f"{attr}.{name}", member


def unannotated(func) -> list[str]:
    sig = inspect.signature(func)
    bad = [
        p
        for p, v in sig.parameters.items()
        if p not in ("self", "cls") and v.annotation is inspect.Parameter.empty
    ]
    if sig.return_annotation is inspect.Signature.empty:
        bad.append("return")
    return bad


@pytest.mark.parametrize("name", MODULES)
def test_public_functions_have_type_hints(name):
    if name.startswith("judgerisk.extract"):
        pytest.importorskip("torch")
    module = importlib.import_module(name)
    missing = {q: b for q, f in _public_functions(module) if (b := unannotated(f))}
    assert not missing, f"{name}: parameters / return without a type hint: {missing}"


def test_the_check_can_fail():
    def f(x, y: int = 0):
        return x

    assert unannotated(f) == ["x", "return"]
