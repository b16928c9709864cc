"""Which optional extra provides a missing module: a missing dependency named with its fix.

judgerisk's core installs without the heavy stacks; ``report`` and the book need the ``book``
extra (papermill, jupytext, ...), ``extract`` the ``extract`` extra (torch, transformers, ...),
the OpenAI backend's server tests the ``server`` extra. The extras are read from the installed
package's metadata (``pyproject.toml``'s ``[project.optional-dependencies]``, the one list), so
a missing module is answered with ``pip install 'judgerisk[<extra>]'``.
"""

from __future__ import annotations

import re
from importlib import metadata

__all__ = ["extra_for", "missing_dependency"]

#: Import names that differ from their distribution's name.
_DISTRIBUTION = {"llama_cpp": "llama_cpp_python"}
_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_EXTRA = re.compile(r"""extra\s*==\s*["']([^"']+)["']""")


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def extra_for(module: str) -> str | None:
    """The extra of judgerisk that installs the top-level module ``module``, if one does."""
    top = _normal(module.split(".")[0])
    dist = _DISTRIBUTION.get(top, top)
    try:
        requires = metadata.requires("judgerisk") or []
    except metadata.PackageNotFoundError:
        return None
    for req in requires:
        name, extra = _NAME.match(req), _EXTRA.search(req)
        if name and extra and _normal(name.group(1)) == dist and extra.group(1) != "dev":
            return extra.group(1)
    return None


def missing_dependency(exc: ModuleNotFoundError) -> str:
    """``"No module named 'jupytext' (pip install 'judgerisk[book]')"``: the error and its fix."""
    extra = extra_for(exc.name or "")
    hint = f" (install it with: pip install 'judgerisk[{extra}]')" if extra else ""
    return f"{exc}{hint}"
