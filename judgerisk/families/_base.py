"""Perturbation families as data: the registry, the condition names and the pairs they form.

A *perturbation family* is a set of pairs of conditions that differ by one change that should
not move the verdict (Methods reference §1 and §4, S). Its name fixes its condition names:
variant ``k`` of family ``F`` is the condition ``F<k>`` (``label1``), the same prompt with the
answers in the swapped order is ``swap_F<k>`` (``swap_label1``). Two names stand apart:
``original`` (the unperturbed prompt) and ``swap`` (the original prompt, order swapped).

The pairs of a family are

* **order** (:class:`~judgerisk.families._builtin.OrderFamily`): ``(swap, original)`` and
  ``(swap_F<k>, F<k>)`` for every variant condition present with its swapped twin;
* **any other family F**: ``(F<k>, original)`` for every variant ``k`` present, then
  ``(swap_F<k>, swap)``.

So the paper's two families come out as before: order ``(swap, original), (swap_rubric1,
rubric1), (swap_rubric2, rubric2)``; rubric ``(rubric1, original), (rubric2, original),
(swap_rubric1, swap), (swap_rubric2, swap)``.

The families are a registry like the other extension points: the built-ins are ``order``,
``rubric``, ``label``, ``format`` and ``verbosity`` (:mod:`judgerisk.families._builtin`), and a
package adds one with no edit to judgerisk through the entry-point group
``judgerisk.families`` (a :class:`Family` subclass or instance), or :func:`register_family` in
a session. Importing this module imports neither numpy nor pandas.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Container, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from judgerisk._util.registry import Registry
from judgerisk.options import ORIGINAL, SWAP

__all__ = [
    "DECLARED",
    "FAMILIES",
    "ORIGINAL",
    "SWAP",
    "ConditionName",
    "DeclaredConditions",
    "Draw",
    "Family",
    "PromptParts",
    "check_conditions",
    "condition_order",
    "family_pairs",
    "get_family",
    "is_declared",
    "parse_condition",
    "register_family",
    "reported_families",
    "swapped_twin",
    "unregister_family",
]

_SWAP_PREFIX = "swap_"
_NAME_RE = re.compile(r"[a-z](?:[a-z_]*[a-z])?")
_CONDITION_RE = re.compile(r"(swap_)?([a-z](?:[a-z_]*[a-z])?)([1-9][0-9]*)")


@dataclass(frozen=True)
class PromptParts:
    """One prompt's pieces before rendering, answers in canonical orientation.

    A family's :meth:`Family.perturb` returns a changed copy (``dataclasses.replace``); the
    renderer then puts the answers in display order (swapped or not) and formats the user
    message (:mod:`judgerisk.extract._prompts`).

    Attributes
    ----------
    system : str
        System message.
    user : str
        User message skeleton, with the ``str.format`` fields ``{rubric} {prompt} {answer_a}
        {answer_b}`` (``answer_a`` is the answer *shown first*).
    assistant_prefill : str
        Start of the assistant turn, before the verdict slot.
    verdict_tokens : tuple of str
        Verdict strings for the first and the second shown answer.
    labels : tuple of str
        Labels under which the first and the second answer are shown (``("A", "B")``).
    rubric : str
        The rubric text.
    rubrics : mapping of str to str
        The template's rubrics by name (the rubric family reads them).
    prompt : str
        The task.
    answer_a, answer_b : str
        The original answers A and B (canonical: A is the item's ``answer_a``).
    notes : tuple of str
        What the perturbations changed, in words (shown by ``judgerisk perturb``).
    """

    system: str
    user: str
    assistant_prefill: str
    verdict_tokens: tuple[str, str]
    labels: tuple[str, str]
    rubric: str
    rubrics: Mapping[str, str] = field(repr=False)
    prompt: str
    answer_a: str
    answer_b: str
    notes: tuple[str, ...] = ()

    def note(self, text: str, **changes: Any) -> PromptParts:
        """A copy with ``changes`` applied and ``text`` added to :attr:`notes`."""
        return replace(self, notes=(*self.notes, text), **changes)


class Draw:
    """Deterministic choices for one (seed, family, item): no random state.

    ``draw(key, n)`` is an integer in ``[0, n)`` read from the SHA-256 of the seed, the family's
    name, the item id and ``key``, so the same inputs give the same choice on any machine and
    any Python or numpy version, and no choice depends on another item's. A family puts the
    variant into ``key`` where its variants should draw independently (format) and leaves it
    out where they should share a choice (verbosity pads A and B with the same words).
    """

    def __init__(self, seed: int, family: str, item: object) -> None:
        self._stem = f"{int(seed)}\x1f{family}\x1f{item!s}\x1f"

    def __call__(self, key: str, n: int) -> int:
        if n < 1:
            raise ValueError(f"cannot draw from {n} choices")
        digest = hashlib.sha256((self._stem + key).encode("utf-8")).digest()
        return int.from_bytes(digest[:8], "big") % n

    def sample(self, key: str, n: int, k: int) -> list[int]:
        """``k`` distinct integers of ``[0, n)`` (a deterministic partial shuffle)."""
        pool = list(range(n))
        return [pool.pop(self(f"{key}/{i}", len(pool))) for i in range(min(k, n))]


class Family:
    """A perturbation family: the invariance it tests, its condition pairs and its rendering.

    Subclass it, set the class attributes and override :meth:`perturb` (the built-ins in
    :mod:`judgerisk.families._builtin` are examples); its docstring says which invariance the
    family tests and why the canonical verdict should not change under it.

    Attributes
    ----------
    name : str
        Lower-case letters and underscores, neither ``swap``-prefixed nor ``original``; the
        conditions are ``<name><k>`` and ``swap_<name><k>``, the signal ``S_<name>``.
    label : str
        Display name of the family (figures, tables).
    invariance : str
        One sentence: what should not change the verdict (the docstring says why).
    color : str
        Its colour in figures of flip rates and shifts.
    signal_label, signal_color : str
        Display name and colour of its sensitivity signal ``S_<name>``.
    core : bool
        One of the paper's two families (order, rubric): their ``S_`` columns are in every
        score table, NaN when the panel lacks the family; another family's columns appear
        when the panel has one of its pairs.
    seeded : bool
        Whether :meth:`perturb` draws from the perturbation seed (the seed is then part of the
        extraction's resume manifest and of the provenance).
    version : int
        Bump when the rendering changes, so stored results are not mixed with new ones.
    has_variants : bool
        False for the order family, whose conditions are the swapped twins of the others.
    sensitive_rate, sensitivity : float
        The simulator's defaults (:func:`judgerisk.simulate.simulate_panel`): share of items
        sensitive to the family and the sd of their shift (knobs ``<name>_sensitive_rate``,
        ``<name>_sensitivity``).
    """

    name: str = ""
    label: str = ""
    invariance: str = ""
    color: str = "#777777"
    signal_label: str = ""
    signal_color: str = "#777777"
    core: bool = False
    seeded: bool = False
    version: int = 1
    sensitive_rate: float = 0.12
    sensitivity: float = 2.0
    #: Whether the family has conditions of its own (``<name><k>``); the order family has none:
    #: its conditions are the ``swap`` twins of the others (:meth:`pairs` is its own).
    has_variants: bool = True

    # ------------------------------------------------------------------ conditions and pairs
    def condition(self, variant: int, swapped: bool = False) -> str:
        """The name of variant ``variant`` (``swap_``-prefixed when ``swapped``)."""
        return f"{_SWAP_PREFIX if swapped else ''}{self.name}{int(variant)}"

    def variants(self, conditions: Iterable[str]) -> list[int]:
        """The variants of this family among ``conditions`` (either order), ascending."""
        out = set()
        for c in conditions:
            spec = parse_condition(c)
            if spec is not None and spec.family == self.name:
                out.add(spec.variant)
        return sorted(v for v in out if v is not None)

    def pairs(self, conditions: Iterable[str]) -> list[tuple[str, str]]:
        """The family's pairs ``(c, c')`` with both conditions in ``conditions``.

        ``(F<k>, original)`` for each variant present, then ``(swap_F<k>, swap)``.
        """
        present = set(conditions)
        out = []
        for swapped, base in ((False, ORIGINAL), (True, SWAP)):
            for k in self.variants(present):
                c = self.condition(k, swapped)
                if c in present and base in present:
                    out.append((c, base))
        return out

    # ------------------------------------------------------------------ rendering
    def perturb(self, parts: PromptParts, variant: int, draw: Draw) -> PromptParts:
        """The prompt of variant ``variant``: ``parts`` changed by this family's perturbation.

        ``draw`` gives deterministic choices from the perturbation seed (:class:`Draw`).
        """
        from judgerisk.options import OptionError

        raise OptionError(
            f"family {self.name!r} has no rendering: its conditions can be validated and "
            "scored in a panel, but not rendered from items (extract, perturb)"
        )

    def simulation_sign(self, variant: int) -> float | None:
        """The simulator's direction of the shift of variant ``variant``.

        ``None`` (the default): each variant has its own independent shift per item and judge,
        like two rubric rewordings. ``+1`` / ``-1``: one shift per item and judge, signed by
        the variant (a verbosity judge moves towards the padded answer).
        """
        return None

    def describe(self) -> dict[str, Any]:
        """What identifies the rendering (the resume manifest and the provenance record)."""
        return {"version": int(self.version), "seeded": bool(self.seeded)}

    def __repr__(self) -> str:
        return f"<perturbation family {self.name!r}>"


# --------------------------------------------------------------------------- registry
def _adopt(name: str, obj: Any) -> None:
    """Register a plug-in of the group ``judgerisk.families``: a Family subclass or instance."""
    family = obj() if isinstance(obj, type) and issubclass(obj, Family) else obj
    if not isinstance(family, Family):
        raise TypeError(f"{obj!r} is not a judgerisk.families.Family (subclass or instance)")
    if family.name != name:
        raise ValueError(f"the entry point {name!r} names a family called {family.name!r}")
    register_family(family)


_BUILTIN = "judgerisk.families._builtin"
_REGISTRY: Registry[Family] = Registry(
    "perturbation family",
    builtins=dict.fromkeys(("order", "rubric", "label", "format", "verbosity"), _BUILTIN),
    group="judgerisk.families",
    adopt=_adopt,
)


def register_family(family: Family) -> Family:
    """Register a perturbation family (an instance of a :class:`Family` subclass).

    Examples
    --------
    >>> class Greeting(Family):
    ...     '''A greeting before the task: it says nothing about the answers.'''
    ...     name, label = "greeting", "greeting"
    ...     def perturb(self, parts, variant, draw):
    ...         return parts.note("greeting", prompt="Hello. " + parts.prompt)
    >>> _ = register_family(Greeting())
    >>> parse_condition("swap_greeting2")
    ConditionName(name='swap_greeting2', swapped=True, family='greeting', variant=2)
    >>> unregister_family("greeting")
    """
    if not isinstance(family, Family):
        raise TypeError(f"a family must be a judgerisk.families.Family, got {type(family)!r}")
    name = family.name
    if not isinstance(name, str) or not _NAME_RE.fullmatch(name) or name.startswith("swap"):
        raise ValueError(
            f"a family name must be lower-case letters and underscores, not ending in '_' "
            f"and not starting with 'swap' (its conditions are <name><k>, swap_<name><k>); "
            f"got {name!r}"
        )
    if name == ORIGINAL:
        raise ValueError(f"{ORIGINAL!r} is the unperturbed condition, not a family")
    return _REGISTRY.add(name, family)


def unregister_family(name: str) -> None:
    """Remove a registered family (for tests and interactive sessions)."""
    _REGISTRY.remove(name)


def get_family(name: str | Family) -> Family:
    """The :class:`Family` registered under ``name`` (a Family is returned as is)."""
    return name if isinstance(name, Family) else _REGISTRY.get(name)


class _FamilyMapping(Mapping[str, Family]):
    """Live, read-only ``name -> Family`` view of the registry, in registration order."""

    def __getitem__(self, name: str) -> Family:
        items = dict(_REGISTRY.items())
        if name not in items:
            raise KeyError(name)
        return items[name]

    def __iter__(self) -> Iterator[str]:
        return iter([k for k, _ in _REGISTRY.items()])

    def __len__(self) -> int:
        return len(_REGISTRY.items())

    def __repr__(self) -> str:
        return f"FAMILIES({list(self)})"


#: Every registered perturbation family, ``name -> Family`` (live: plug-ins appear in it).
FAMILIES: Mapping[str, Family] = _FamilyMapping()


# --------------------------------------------------------------------------- condition names
@dataclass(frozen=True)
class ConditionName:
    """A declared condition name, parsed.

    ``family`` and ``variant`` are None for ``original`` and ``swap``.
    """

    name: str
    swapped: bool
    family: str | None
    variant: int | None


def parse_condition(name: object) -> ConditionName | None:
    """Parse a condition name; ``None`` when no registered family declares it.

    Examples
    --------
    >>> parse_condition("swap_rubric2")
    ConditionName(name='swap_rubric2', swapped=True, family='rubric', variant=2)
    >>> parse_condition("label1").family, parse_condition("original").family
    ('label', None)
    >>> parse_condition("order1") is None, parse_condition("shuffle") is None
    (True, True)
    """
    if not isinstance(name, str):
        return None
    if name in (ORIGINAL, SWAP):
        return ConditionName(name, name == SWAP, None, None)
    match = _CONDITION_RE.fullmatch(name)
    if match is None:
        return None
    family = match.group(2)
    if family not in FAMILIES or not FAMILIES[family].has_variants:
        return None
    return ConditionName(name, match.group(1) is not None, family, int(match.group(3)))


def is_declared(name: object) -> bool:
    """Whether a registered family declares the condition ``name`` (``original`` and ``swap``
    included)."""
    return parse_condition(name) is not None


class DeclaredConditions(Container[str]):
    """Every condition name a registered family declares (the default of
    :func:`judgerisk.panel.validate_panel`): ``"label1" in DECLARED``."""

    def __contains__(self, name: object) -> bool:
        return is_declared(name)

    def __repr__(self) -> str:
        return "DECLARED (original, swap, <family><k>, swap_<family><k>)"


#: The conditions declared by the registered families (a container, not a list: ``k`` is open).
DECLARED = DeclaredConditions()


def _sort_key(name: str) -> tuple:
    spec = parse_condition(name)
    if spec is None:
        return (1, 0, 0, 0, name)
    rank = -1 if spec.family is None else list(FAMILIES).index(spec.family)
    return (0, rank, int(spec.swapped), spec.variant or 0, name)


def condition_order(conditions: Iterable[str]) -> list[str]:
    """The distinct ``conditions`` in canonical order.

    ``original``, ``swap``, then family by family (registration order) the variants in the
    original order and then swapped (``rubric1, rubric2, swap_rubric1, swap_rubric2``); names
    no family declares come last, sorted.
    """
    return sorted(dict.fromkeys(conditions), key=_sort_key)


def family_pairs(conditions: Iterable[str]) -> dict[str, list[tuple[str, str]]]:
    """``family -> its pairs present in conditions`` for the families with at least one pair,
    in registration order."""
    present = list(dict.fromkeys(conditions))
    out = {}
    for name, family in FAMILIES.items():
        pairs = family.pairs(present)
        if pairs:
            out[name] = pairs
    return out


def reported_families(conditions: Iterable[str]) -> list[str]:
    """The families with an ``S_`` column in a score table of a panel with ``conditions``:
    the core families (the paper's order and rubric, NaN when absent), then every other
    family with a pair present, in registration order."""
    present = family_pairs(conditions)
    return [n for n, f in FAMILIES.items() if f.core or n in present]


def swapped_twin(name: str) -> str | None:
    """The condition that differs from ``name`` by the answer order only (None if undeclared)."""
    spec = parse_condition(name)
    if spec is None:
        return None
    if spec.family is None:
        return ORIGINAL if spec.swapped else SWAP
    return get_family(spec.family).condition(int(spec.variant or 0), not spec.swapped)


def check_conditions(conditions: Sequence[str], where: str = "conditions") -> tuple[str, ...]:
    """The condition names, unique, declared and including ``original``; else a ValueError
    naming the unknown ones and the naming rule."""
    conditions = tuple(conditions)
    unknown = [c for c in conditions if not is_declared(c)]
    if unknown:
        raise ValueError(
            f"{where}: unknown condition name(s) {unknown}; a condition is 'original', 'swap', "
            f"<family><k> or swap_<family><k> with a registered family ({', '.join(FAMILIES)})"
        )
    if ORIGINAL not in conditions:
        raise ValueError(f"{where} must include {ORIGINAL!r}, got {list(conditions)}")
    if len(set(conditions)) != len(conditions):
        raise ValueError(f"{where} must be unique, got {list(conditions)}")
    return conditions
