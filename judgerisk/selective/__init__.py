"""One judge: Bidirectional Preference Entropy, SCOPE and the 1,000-split protocol.

- :mod:`~judgerisk.selective.confidence`: BPE and the other confidence scores;
- :mod:`~judgerisk.selective.scope`: SCOPE and the baseline selectors (naive, heuristic, vanilla,
  Trust-or-Escalate);
- :mod:`~judgerisk.selective.protocol`: the repeated calibration/test split protocol;
- :mod:`~judgerisk.selective.one_judge`: a panel's judge in both orders as one table (BPE,
  verdicts and, with labels, SCOPE's selection);
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
from judgerisk.selective.one_judge import bpe_table
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
    "bpe_table",
    "compare_uncertainty",
    "predictive_probability",
    "scope_threshold",
    "self_consistency",
    "split_protocol",
    "summarize_protocol",
    "swap_and_aggregate",
    "verbalized_confidence",
]
