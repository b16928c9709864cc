"""Aggregators: turn a panel's votes into one verdict and a posterior per item.

Majority vote, Dawid-Skene, MACE, GLAD and CARE (book chapter "Aggregators and retention").
"""

from judgerisk.aggregators.aggregate import (
    AGGREGATORS,
    GLAD,
    MACE,
    aggregate,
    compare_aggregators,
    disagreement,
    majority_vote,
)
from judgerisk.aggregators.care import CARE
from judgerisk.aggregators.dawid_skene import DawidSkene

__all__ = [
    "AGGREGATORS",
    "CARE",
    "GLAD",
    "MACE",
    "DawidSkene",
    "aggregate",
    "compare_aggregators",
    "disagreement",
    "majority_vote",
]
