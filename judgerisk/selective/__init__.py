"""One judge: Bidirectional Preference Entropy, SCOPE and the 1,000-split protocol.

- :mod:`~judgerisk.selective.confidence`: BPE and the other confidence scores;
- :mod:`~judgerisk.selective.scope`: SCOPE and the baseline selectors (naive, heuristic, vanilla,
  Trust-or-Escalate);
- :mod:`~judgerisk.selective.protocol`: the repeated calibration/test split protocol;
- :mod:`~judgerisk.selective.metrics`: accuracy, ECE, AUROC/AUPRC, coverage and FDP.
"""

from judgerisk.selective.confidence import (
    bpe,
    compare_uncertainty,
    predictive_probability,
    self_consistency,
    swap_and_aggregate,
    verbalized_confidence,
)
from judgerisk.selective.protocol import split_protocol, summarize_protocol
from judgerisk.selective.scope import (
    Heuristic,
    Naive,
    Scope,
    TrustOrEscalate,
    Vanilla,
    scope_threshold,
)

__all__ = [
    "Heuristic",
    "Naive",
    "Scope",
    "TrustOrEscalate",
    "Vanilla",
    "bpe",
    "compare_uncertainty",
    "predictive_probability",
    "scope_threshold",
    "self_consistency",
    "split_protocol",
    "summarize_protocol",
    "swap_and_aggregate",
    "verbalized_confidence",
]
