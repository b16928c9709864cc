"""judgerisk: can this LLM-as-a-judge verdict be trusted?

Instance-level risk for panels of LLM judges (latent measurement model, the U/C/S signals
and SCUR, baselines, aggregators, retention) and certified selective judging for one
judge (BPE and SCOPE), on one tidy long data contract (:mod:`judgerisk.panel`).

The most used names are importable from the package itself; everything else lives in
its module. :mod:`judgerisk.extract` (torch, transformers) is imported only when used.
"""

from judgerisk.aggregators.aggregate import AGGREGATORS, aggregate
from judgerisk.aggregators.dawid_skene import DawidSkene
from judgerisk.certified import certify_panel, score_panel, select_items
from judgerisk.panel import (
    CONDITIONS,
    FAMILIES,
    PanelError,
    load_panel,
    save_panel,
    to_wide,
    validate_panel,
    verdicts,
)
from judgerisk.risk.analysis import evaluate_risk, summarize_risk
from judgerisk.risk.baselines import baseline_scores, ds_entropy, msp, pe, ve
from judgerisk.risk.lmm import LatentMeasurementModel
from judgerisk.risk.retention import retention_analysis, retention_curve
from judgerisk.risk.signals import ScurResult, explain, riskiest, scur_scores
from judgerisk.selective.confidence import bpe, predictive_probability, swap_and_aggregate
from judgerisk.selective.protocol import split_protocol, summarize_protocol
from judgerisk.selective.scope import Scope, TrustOrEscalate, scope_threshold
from judgerisk.simulate import simulate_pairs, simulate_panel

__version__ = "0.1.0"

__all__ = [
    "AGGREGATORS",
    "CONDITIONS",
    "FAMILIES",
    "DawidSkene",
    "LatentMeasurementModel",
    "PanelError",
    "Scope",
    "ScurResult",
    "TrustOrEscalate",
    "aggregate",
    "baseline_scores",
    "bpe",
    "certify_panel",
    "ds_entropy",
    "evaluate_risk",
    "explain",
    "extract_logprobs",
    "load_judge",
    "load_judgebench_panel",
    "load_judgebench_reward_pairs",
    "load_llmbar_items",
    "load_llmbar_panel",
    "load_pandalm_panel",
    "load_panel",
    "load_smollm2_llmbar",
    "load_smollm2_llmbar_generation",
    "msp",
    "pe",
    "predictive_probability",
    "retention_analysis",
    "retention_curve",
    "riskiest",
    "save_panel",
    "scope_threshold",
    "score_panel",
    "scur_scores",
    "select_items",
    "simulate_pairs",
    "simulate_panel",
    "split_protocol",
    "summarize_protocol",
    "summarize_risk",
    "swap_and_aggregate",
    "to_wide",
    "validate_panel",
    "ve",
    "verdicts",
]


#: Names imported on first use: the data loaders (their modules read files only when called)
#: and the extraction API (torch and transformers).
_LAZY = {
    "extract_logprobs": "judgerisk.extract",
    "load_judge": "judgerisk.extract",
    "load_judgebench_panel": "judgerisk.datasets.judgebench",
    "load_judgebench_reward_pairs": "judgerisk.datasets.judgebench",
    "load_llmbar_items": "judgerisk.datasets.llmbar",
    "load_llmbar_panel": "judgerisk.datasets.llmbar",
    "load_pandalm_panel": "judgerisk.datasets.pandalm",
    "load_smollm2_llmbar": "judgerisk.datasets.shipped",
    "load_smollm2_llmbar_generation": "judgerisk.datasets.shipped",
}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'judgerisk' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
