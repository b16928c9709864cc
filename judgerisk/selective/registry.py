"""The selector registry of the single-judge part: SCOPE, the baselines and Trust-or-Escalate.

Each selector is a :class:`Selector` entry: the input it reads, its vectorised block kernel
(used by :func:`judgerisk.selective.protocol.split_protocol` for all splits and alphas at once),
its per-split reference (the plain loop the kernel must reproduce), and its display name and
colour. The built-ins are registered by :mod:`judgerisk.selective.protocol`; a package adds a
selector through the entry-point group ``judgerisk.selectors`` (CONTRIBUTING, "Plug-ins").

References
----------
Methods reference §7; "SCOPE: Selective Conformal Optimized Pairwise Evaluation" (§3).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import numpy as np

from judgerisk._util.registry import Registry

__all__ = [
    "REPORTED_SELECTORS",
    "SELECTORS",
    "BlockKernel",
    "Selector",
    "get_selector",
    "register_selector",
    "unregister_selector",
]

Needs = Literal["uncertainty", "confidence"] | None


class BlockKernel(Protocol):
    """A selector's vectorised kernel over a block of calibration / test splits.

    Built once per protocol run as ``kernel(inputs, errors, alphas, n_cal, settings)``, where
    ``inputs`` maps ``"uncertainty"`` / ``"confidence"`` to float arrays over the items,
    ``errors`` is the bool error array and ``settings`` holds the protocol's options
    (``delta``, ``n_grid``, ``min_accepted``).
    """

    #: Working cells per split besides the items (for the memory budget; 0 for most).
    cells: int

    def block(self, cal: np.ndarray) -> list[tuple[Any, Any, Any]]:
        """For a ``(splits, items)`` calibration mask: per alpha, the test items accepted, the
        accepted errors and the threshold, each a scalar or one value per split."""
        ...


#: ``reference(x_cal, errors_cal, x_test, alpha, settings) -> (threshold, accepted_test_mask)``.
Reference = Callable[[np.ndarray, np.ndarray, np.ndarray, float, dict], tuple[float, np.ndarray]]


@dataclass(frozen=True)
class Selector:
    """One registered selector.

    Attributes
    ----------
    name : str
        Key in the protocol's tables.
    needs : {"uncertainty", "confidence"} or None
        The per-item input it reads (None: it accepts without looking at a score).
    kernel : callable
        Builds the :class:`BlockKernel`.
    reference : callable
        The plain per-split rule (:data:`Reference`), run by ``split_protocol(loop=True)``.
    label, color : str
        Display name and colour (read by :mod:`judgerisk._plots`).
    """

    name: str
    needs: Needs
    kernel: Callable[..., BlockKernel]
    reference: Reference
    label: str = ""
    color: str | None = None


def _adopt(name: str, obj: Any) -> None:
    if not isinstance(obj, Selector):
        raise TypeError(f"a judgerisk.selectors entry point must give a Selector, got {obj!r}")
    _REGISTRY.add(name, obj)


#: The built-ins (registered by the protocol module, which holds their kernels), then the
#: plug-ins of the entry-point group ``judgerisk.selectors``.
_REGISTRY: Registry[Selector] = Registry(
    "selector",
    builtins=dict.fromkeys(
        ("vanilla", "heuristic", "naive", "scope", "toe"), "judgerisk.selective.protocol"
    ),
    group="judgerisk.selectors",
    adopt=lambda name, obj: _adopt(name, obj),
)

#: Every registered selector name, built-ins first (a live view).
SELECTORS: Sequence[str] = _REGISTRY.names()

#: The selectors whose certified decisions the reports and chapter 11 show: SCOPE, then every
#: selector registered beyond the built-ins (a live view; the uncertified baselines ``vanilla``,
#: ``heuristic`` and ``naive`` and Trust-or-Escalate stay in the protocol's full tables).
REPORTED_SELECTORS: Sequence[str] = _REGISTRY.reported(("scope",))


def register_selector(
    name: str,
    *,
    needs: Needs,
    kernel: Callable[..., BlockKernel],
    reference: Reference,
    label: str | None = None,
    color: str | None = None,
) -> Selector:
    """Register a selector and return its entry."""
    if needs not in ("uncertainty", "confidence", None):
        raise ValueError(f"needs must be 'uncertainty', 'confidence' or None, got {needs!r}")
    return _REGISTRY.add(name, Selector(name, needs, kernel, reference, label or name, color))


def unregister_selector(name: str) -> None:
    """Remove a registered selector (for tests and interactive sessions)."""
    _REGISTRY.remove(name)


def get_selector(name: str | Selector) -> Selector:
    """The :class:`Selector` registered under ``name`` (a :class:`Selector` is returned as is)."""
    return name if isinstance(name, Selector) else _REGISTRY.get(name)
