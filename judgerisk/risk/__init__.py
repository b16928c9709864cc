"""Panel risk: the latent measurement model, the U/C/S signals and SCUR, the baselines
(PE, VE, MSP, DS entropy), the risk metrics and the high-consensus, matched-vote and
retention analyses, and paired comparisons of risk scores over items.
"""

from judgerisk.risk.analysis import evaluate_risk, summarize_risk
from judgerisk.risk.baselines import baseline_scores, ds_entropy, msp, pe, ve
from judgerisk.risk.lmm import LatentMeasurementModel, align_to_reference
from judgerisk.risk.paired import compare_scores, paired_auroc_difference
from judgerisk.risk.pooled import pooled_scores
from judgerisk.risk.retention import retention_analysis, retention_curve, summarize_retention
from judgerisk.risk.signals import explain, riskiest, scur_scores

__all__ = [
    "LatentMeasurementModel",
    "align_to_reference",
    "baseline_scores",
    "compare_scores",
    "ds_entropy",
    "evaluate_risk",
    "explain",
    "msp",
    "paired_auroc_difference",
    "pe",
    "pooled_scores",
    "retention_analysis",
    "retention_curve",
    "riskiest",
    "scur_scores",
    "summarize_retention",
    "summarize_risk",
    "ve",
]
