"""Perturbation families: which pairs of conditions differ by one change that should not matter.

A facade over :mod:`judgerisk.families._base` (the registry, condition names, pairs) and
:mod:`judgerisk.families._builtin` (order, rubric, label, format, verbosity); the book's chapter
"Which perturbations reveal risk?" and the Methods reference (§1, §4) explain them.
"""

from judgerisk.families._base import (
    DECLARED,
    FAMILIES,
    ORIGINAL,
    SWAP,
    ConditionName,
    DeclaredConditions,
    Draw,
    Family,
    PromptParts,
    check_conditions,
    condition_order,
    family_pairs,
    get_family,
    is_declared,
    parse_condition,
    register_family,
    reported_families,
    swapped_twin,
    unregister_family,
)

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
