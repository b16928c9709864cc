"""A named registry with a live, read-only view of its names (shared by the extension points).

:mod:`judgerisk.aggregators._base` (aggregators), :mod:`judgerisk.risk.registry` (risk scores)
and :mod:`judgerisk.datasets` (public-data loaders) each keep one :class:`Registry`.

Each registry lists its built-in methods where it is defined (``builtins``: name -> module that
registers it) and names an entry-point ``group``: a third-party package adds a method with no
edit to judgerisk, by declaring in its ``pyproject.toml``::

    [project.entry-points."judgerisk.aggregators"]
    my_rule = "my_package.rules:MyRule"

The built-ins are imported, then the entry points loaded, the first time the registry is read.
A plug-in that raises an ``Exception`` while loading is skipped with a warning naming it; one
that tries to end the process (``SystemExit``, a ``KeyboardInterrupt`` it raises itself, any
other ``BaseException``) raises :class:`PluginError` naming it, which the command line prints as
one line with exit code 2. A real Ctrl-C (a SIGINT delivered to the process while a plug-in
loads) stays a ``KeyboardInterrupt``.
"""

from __future__ import annotations

import contextlib
import importlib
import signal
import threading
import warnings
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Generic, TypeVar, overload

__all__ = ["ENTRY_POINT_GROUPS", "NameView", "PluginError", "Registry", "load_entry_points"]

T = TypeVar("T")

#: The entry-point groups judgerisk reads, one per extension point.
ENTRY_POINT_GROUPS: tuple[str, ...] = (
    "judgerisk.aggregators",
    "judgerisk.risk_scores",
    "judgerisk.selectors",
    "judgerisk.judge_backends",
    "judgerisk.datasets",
    "judgerisk.importers",
    "judgerisk.families",
)


class PluginError(Exception):
    """A plug-in that tried to end the process while loading (``SystemExit``, ...).

    Not a :class:`ValueError`, so that no caller (argparse's type conversion included) reads it
    as a bad value; the command line prints it as one line and exits with code 2.
    """


@contextlib.contextmanager
def _real_sigint() -> Iterator[list[bool]]:
    """A list that holds ``True`` once a SIGINT is delivered to the process meanwhile.

    The handler in place is kept (called, or its ``KeyboardInterrupt`` raised); outside the main
    thread no handler can be installed, and every ``KeyboardInterrupt`` counts as real.
    """
    seen: list[bool] = []
    if threading.current_thread() is not threading.main_thread():
        seen.append(True)
        yield seen
        return
    previous = signal.getsignal(signal.SIGINT)

    def _handler(signum: int, frame: Any) -> None:
        seen.append(True)
        if callable(previous):
            previous(signum, frame)
        elif previous != signal.SIG_IGN:
            raise KeyboardInterrupt

    signal.signal(signal.SIGINT, _handler)
    try:
        yield seen
    finally:
        signal.signal(signal.SIGINT, previous)


def _load_one(ep: Any, group: str, adopt: Callable[[str, Any], None] | None) -> bool:
    """Load one entry point; False when it failed with an ``Exception`` (warned and skipped)."""
    with _real_sigint() as sigint:
        try:
            obj = ep.load()
            if adopt is not None:
                adopt(ep.name, obj)
        except Exception as exc:  # noqa: BLE001 - a broken plug-in must not break judgerisk
            warnings.warn(
                f"judgerisk plug-in {ep.name!r} ({ep.value}, group {group}) was not loaded: "
                f"{type(exc).__name__}: {exc}",
                RuntimeWarning,
                stacklevel=3,
            )
            return False
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt) and sigint:
                raise  # a real Ctrl-C
            shown = f"{type(exc).__name__}({', '.join(map(repr, exc.args))})"
            raise PluginError(
                f"judgerisk plug-in {ep.name!r} ({ep.value}, group {group}) raised {shown} "
                "while loading, which would end judgerisk with no result; uninstall or fix "
                "the package that declares it"
            ) from None
    return True


def load_entry_points(group: str, adopt: Callable[[str, Any], None] | None = None) -> list[str]:
    """Load the installed plug-ins of ``group``; return the names loaded.

    Loading an entry point imports its module (a decorated method registers itself there); the
    loaded object is then handed to ``adopt(name, obj)``, which registers it when the import
    did not. A plug-in that fails to load with an ``Exception`` is reported as a
    ``RuntimeWarning`` naming it and skipped, so one broken package never disables the others
    or the built-ins.

    Raises
    ------
    PluginError
        A plug-in raised ``SystemExit``, ``KeyboardInterrupt`` or another ``BaseException``
        while loading (a real Ctrl-C, a SIGINT delivered meanwhile, stays a
        ``KeyboardInterrupt``).
    """
    from importlib import metadata  # on first use: judgerisk --help reads no entry point

    return [ep.name for ep in metadata.entry_points(group=group) if _load_one(ep, group, adopt)]


class Registry(Generic[T]):
    """An ordered ``name -> entry`` mapping; registering a name twice is an error.

    Parameters
    ----------
    what : str
        What an entry is, for messages ("aggregation method").
    builtins : mapping of str to str, optional
        Built-in name -> module that registers it; the built-ins come first, in this order.
    group : str, optional
        Entry-point group of the plug-ins (one of :data:`ENTRY_POINT_GROUPS`).
    adopt : callable, optional
        ``adopt(name, obj)`` registers a loaded plug-in object that did not register itself.
    """

    _instances: weakref.WeakSet[Registry] = weakref.WeakSet()

    def __init__(
        self,
        what: str,
        *,
        builtins: Mapping[str, str] | None = None,
        group: str | None = None,
        adopt: Callable[[str, Any], None] | None = None,
    ) -> None:
        self.what = what
        self.builtins: dict[str, str] = dict(builtins or {})
        self.group = group
        self.adopt = adopt
        self._entries: dict[str, T] = {}
        self._loaded = False
        Registry._instances.add(self)

    @classmethod
    def instances(cls) -> list[Registry]:
        """Every registry made so far (for the provenance record), by name."""
        return sorted(cls._instances, key=lambda r: r.what)

    def load(self) -> None:
        """Import the built-ins and load the plug-ins (once; reading the registry does it)."""
        if self._loaded:
            return
        self._loaded = True
        for module in dict.fromkeys(self.builtins.values()):
            importlib.import_module(module)
        if self.group is not None:
            load_entry_points(self.group, self._adopt)

    def _adopt(self, name: str, obj: Any) -> None:
        if name in self._entries:  # it registered itself when its module was imported
            return
        if self.adopt is None:
            raise TypeError(f"{obj!r} did not register itself as a {self.what}")
        self.adopt(name, obj)

    def add(self, name: str, entry: T) -> T:
        """Register ``entry`` under ``name`` (re-registering the same entry is a no-op)."""
        if not isinstance(name, str) or not name:
            raise ValueError(f"a {self.what} name must be a non-empty string, got {name!r}")
        if name in self._entries and self._entries[name] != entry:
            raise ValueError(f"a {self.what} named {name!r} is already registered")
        self._entries[name] = entry
        return entry

    def remove(self, name: str) -> None:
        """Unregister ``name`` (for tests and interactive sessions); unknown names are ignored."""
        self._entries.pop(name, None)

    def get(self, name: str) -> T:
        """The entry registered under ``name``; a ``ValueError`` lists the registered names."""
        self.load()
        try:
            return self._entries[name]
        except (KeyError, TypeError):
            raise ValueError(
                f"unknown {self.what} {name!r}; choose from {tuple(k for k, _ in self.items())}"
            ) from None

    def items(self) -> list[tuple[str, T]]:
        """``(name, entry)`` pairs: the built-ins in their listed order, then the others in
        registration order (plug-ins and methods registered at run time)."""
        self.load()
        first = [k for k in self.builtins if k in self._entries]
        rest = [k for k in self._entries if k not in self.builtins]
        return [(k, self._entries[k]) for k in (*first, *rest)]

    def reported(self, builtins: Sequence[str]) -> NameView:
        """A live view of ``builtins`` (a documented subset of the built-ins) followed by every
        name registered beyond the built-ins (plug-ins and methods registered at run time): the
        default of the surfaces (score table, report, certification) that would be too slow or
        too long with every built-in, so that an extension reaches them without an option."""
        keep = set(builtins)
        return NameView(lambda: [k for k, _ in self.items() if k in keep or k not in self.builtins])

    def names(self, where: Callable[[T], bool] | None = None) -> NameView:
        """A live view of the registered names (those whose entry satisfies ``where``)."""
        return NameView(self, where)


class NameView(Sequence[str]):
    """Live, read-only, tuple-like view of a registry's names in registration order.

    Newly registered entries appear in it; it compares equal to the tuple of its names. The
    source may also be a function returning names (a list derived from one or more registries,
    such as the risk columns of a scored panel), re-evaluated on every use.
    """

    def __init__(
        self,
        registry: Registry | Callable[[], Iterable[str]],
        where: Callable | None = None,
    ) -> None:
        self._registry = registry
        self._where = where

    def _names(self) -> tuple[str, ...]:
        if not isinstance(self._registry, Registry):
            return tuple(self._registry())
        return tuple(k for k, v in self._registry.items() if self._where is None or self._where(v))

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> tuple[str, ...]: ...
    def __getitem__(self, i: int | slice) -> str | tuple[str, ...]:
        return self._names()[i]

    def __len__(self) -> int:
        return len(self._names())

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __contains__(self, name: object) -> bool:
        return name in self._names()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str):
            return self._names() == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._names())

    def __add__(self, other: Sequence[str]) -> tuple[str, ...]:
        return self._names() + tuple(other)

    def __radd__(self, other: Sequence[str]) -> tuple[str, ...]:
        return tuple(other) + self._names()

    def __repr__(self) -> str:
        return repr(self._names())
