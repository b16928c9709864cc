"""Aggregators: turn a panel's votes into one verdict and a posterior per item.

Majority vote, Dawid-Skene, MACE, GLAD and CARE (book chapter "Aggregators and retention"), each a
:class:`BaseAggregator` registered by name with :func:`register_aggregator`.
"""

from judgerisk.aggregators._base import (
    BaseAggregator,
    get_aggregator,
    make_aggregator,
    register_aggregator,
    unregister_aggregator,
)
from judgerisk.aggregators.aggregate import (
    AGGREGATORS,
    CARE,
    GLAD,
    MACE,
    DawidSkene,
    MajorityVote,
    aggregate,
    compare_aggregators,
    disagreement,
    majority_vote,
)

__all__ = [
    "AGGREGATORS",
    "CARE",
    "GLAD",
    "MACE",
    "BaseAggregator",
    "DawidSkene",
    "MajorityVote",
    "aggregate",
    "compare_aggregators",
    "disagreement",
    "get_aggregator",
    "make_aggregator",
    "majority_vote",
    "register_aggregator",
    "unregister_aggregator",
]
