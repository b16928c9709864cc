"""A named registry with a live, read-only view of its names (shared by the extension points).

:mod:`judgerisk.aggregators.base` (aggregators), :mod:`judgerisk.risk.registry` (risk scores)
and :mod:`judgerisk.datasets` (public-data loaders) each keep one :class:`Registry`.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Generic, TypeVar, overload

__all__ = ["NameView", "Registry"]

T = TypeVar("T")


class Registry(Generic[T]):
    """An ordered ``name -> entry`` mapping; registering a name twice is an error."""

    _instances: weakref.WeakSet[Registry] = weakref.WeakSet()

    def __init__(self, what: str) -> None:
        self.what = what
        self._entries: dict[str, T] = {}
        Registry._instances.add(self)

    @classmethod
    def instances(cls) -> list[Registry]:
        """Every registry made so far (for the provenance record), by name."""
        return sorted(cls._instances, key=lambda r: r.what)

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
        try:
            return self._entries[name]
        except (KeyError, TypeError):
            raise ValueError(
                f"unknown {self.what} {name!r}; choose from {tuple(self._entries)}"
            ) from None

    def items(self) -> list[tuple[str, T]]:
        """``(name, entry)`` pairs in registration order."""
        return list(self._entries.items())

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
