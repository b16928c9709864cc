"""Panel risk estimators: the latent measurement model, the U/C/S signals and SCUR, the
baselines (PE, VE, MSP, DS entropy), the risk metrics and the risk-score registry.

The studies built on them (high-consensus and matched-vote analyses, retention, pooled and
paired comparisons, ablation, consensus, drift) live in :mod:`judgerisk.engine` and the book's
private :mod:`judgerisk._book.studies`.
"""

from judgerisk.risk.baselines import baseline_scores, ds_entropy, msp, pe, ve
from judgerisk.risk.explain import explain, riskiest
from judgerisk.risk.lmm import LatentMeasurementModel, align_to_reference
from judgerisk.risk.scur import scur_scores

__all__ = [
    "LatentMeasurementModel",
    "align_to_reference",
    "baseline_scores",
    "ds_entropy",
    "explain",
    "msp",
    "pe",
    "riskiest",
    "scur_scores",
    "ve",
]
