"""Warnings recorded in one process and issued again in another, as if issued there.

A report's scoring process records the warnings of the certification check and its notebook
issues them again (as notes); the forked processes of
:func:`judgerisk.engine.certified.score_panel` record the warnings of their splits and the
parent issues them again in the order one process would have. A record is plain data (it
travels pickled through a pipe and as a notebook parameter): ``[category's module, category's
qualified name, message, filename, line number]``.
"""

from __future__ import annotations

import importlib
import sys
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

__all__ = ["recorded_warnings", "replay_warnings"]


@contextmanager
def recorded_warnings() -> Iterator[list[list[Any]]]:
    """Within the block every warning is recorded (none shown); the list it yields holds the
    records once the block ends, also when it ends with an error."""
    records: list[list[Any]] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            yield records
        finally:
            records.extend(
                [
                    w.category.__module__,
                    w.category.__qualname__,
                    str(w.message),
                    w.filename,
                    w.lineno,
                ]
                for w in caught
            )


def _category(module: str, name: str) -> type[Warning]:
    """The warning class ``module.name``, or :class:`UserWarning` where it cannot be found."""
    try:
        category = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        return UserWarning
    return category if isinstance(category, type) and issubclass(category, Warning) else UserWarning


def replay_warnings(records: Sequence[Sequence[Any]]) -> None:
    """Issue ``records`` again here, in order, each through this process's filters and
    ``showwarning``: from the place that issued it (its module's registry, as
    :func:`warnings.warn` would have) where that module is loaded here, else from the caller.
    The same warnings are then shown, caught or raised as errors as if issued here."""
    if not records:
        return
    modules = {getattr(m, "__file__", None): m for m in list(sys.modules.values())}
    for module_name, name, message, filename, lineno in records:
        category = _category(module_name, name)
        module = modules.get(filename)
        if module is None:
            warnings.warn(message, category, stacklevel=2)
            continue
        space = vars(module)
        warnings.warn_explicit(
            message,
            category,
            filename,
            lineno,
            module=module.__name__,
            registry=space.setdefault("__warningregistry__", {}),
            module_globals=space,
        )
