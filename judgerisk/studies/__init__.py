"""Studies of the panel risk estimators: the high-consensus and matched-vote analyses,
retention, pooled and paired comparisons of risk scores over items, the signal ablation, the
consensus and drift studies, convergence over repetitions and the options study.

The estimators they study live in :mod:`judgerisk.risk`.
"""

from judgerisk.studies.analysis import evaluate_risk, summarize_risk
from judgerisk.studies.paired import compare_scores, paired_auroc_difference
from judgerisk.studies.pooled import pooled_scores
from judgerisk.studies.retention import retention_analysis, retention_curve, summarize_retention

__all__ = [
    "compare_scores",
    "evaluate_risk",
    "paired_auroc_difference",
    "pooled_scores",
    "retention_analysis",
    "retention_curve",
    "summarize_retention",
    "summarize_risk",
]
