"""judgerisk: can this LLM-as-a-judge verdict be trusted?

Instance-level risk for panels of LLM judges (latent measurement model, the U/C/S signals
and SCUR, baselines, aggregators, retention) and certified selective judging for one
judge (BPE and SCOPE), on one tidy long data contract (:mod:`judgerisk.panel`).

The most used names are importable from the package itself; everything else lives in
its module. Every top-level name is imported on first use, so ``import judgerisk`` is fast and
loads no scikit-learn, plotting library or torch.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

#: Where each top-level name lives: ``import judgerisk`` imports none of them (so no
#: scikit-learn, scipy.optimize, matplotlib or torch); each is imported on first use.
_LAZY: dict[str, str] = {
    "AGGREGATORS": "judgerisk.aggregators.aggregate",
    "aggregate": "judgerisk.aggregators.aggregate",
    "DawidSkene": "judgerisk.aggregators.dawid_skene",
    "certify_panel": "judgerisk.engine.certified",
    "score_panel": "judgerisk.engine.certified",
    "select_items": "judgerisk.engine.certified",
    "score_parquet": "judgerisk.engine.partitioned",
    "estimate_panel": "judgerisk.engine.estimates",
    "plan_labels": "judgerisk.engine.estimates",
    "CONDITIONS": "judgerisk.panel",
    "FAMILIES": "judgerisk.panel",
    "PanelError": "judgerisk.panel",
    "load_panel": "judgerisk.panel",
    "save_panel": "judgerisk.panel",
    "to_wide": "judgerisk.panel",
    "validate_panel": "judgerisk.panel",
    "verdicts": "judgerisk.panel",
    "evaluate_risk": "judgerisk.engine.analysis",
    "summarize_risk": "judgerisk.engine.analysis",
    "baseline_scores": "judgerisk.risk.baselines",
    "ds_entropy": "judgerisk.risk.baselines",
    "msp": "judgerisk.risk.baselines",
    "pe": "judgerisk.risk.baselines",
    "ve": "judgerisk.risk.baselines",
    "LatentMeasurementModel": "judgerisk.risk.lmm",
    "retention_analysis": "judgerisk.engine.retention",
    "retention_curve": "judgerisk.engine.retention",
    "explain": "judgerisk.risk.explain",
    "riskiest": "judgerisk.risk.explain",
    "scur_scores": "judgerisk.risk.scur",
    "bpe": "judgerisk.selective.confidence",
    "predictive_probability": "judgerisk.selective.confidence",
    "swap_and_aggregate": "judgerisk.selective.confidence",
    "split_protocol": "judgerisk.selective.protocol",
    "summarize_protocol": "judgerisk.selective.protocol",
    "Scope": "judgerisk.selective.scope",
    "TrustOrEscalate": "judgerisk.selective.scope",
    "scope_threshold": "judgerisk.selective.scope",
    "simulate_pairs": "judgerisk.simulate",
    "simulate_panel": "judgerisk.simulate",
    "extract_logprobs": "judgerisk.extract",  # torch and transformers
    "load_judge": "judgerisk.extract",
    "load_judgebench_panel": "judgerisk.datasets.judgebench",
    "load_judgebench_reward_pairs": "judgerisk.datasets.judgebench",
    "load_llmbar_items": "judgerisk.datasets.llmbar",
    "load_llmbar_panel": "judgerisk.datasets.llmbar",
    "load_pandalm_panel": "judgerisk.datasets.pandalm",
    "load_smollm2_llmbar": "judgerisk.datasets.shipped",
    "load_smollm2_llmbar_families": "judgerisk.datasets.shipped",
    "load_smollm2_llmbar_generation": "judgerisk.datasets.shipped",
    "family_pairs": "judgerisk.families",
    "parse_condition": "judgerisk.families",
    "register_family": "judgerisk.families",
    "perturb_items": "judgerisk.extract.perturb",
    "ScurResult": "judgerisk.risk.scur",
    "InputError": "judgerisk.validation",
    "OptionError": "judgerisk.validation",
}

if TYPE_CHECKING:  # the names as static analysers and IDEs see them
    __version__: str

    from judgerisk.aggregators.aggregate import AGGREGATORS, aggregate
    from judgerisk.aggregators.dawid_skene import DawidSkene
    from judgerisk.datasets.judgebench import load_judgebench_panel, load_judgebench_reward_pairs
    from judgerisk.datasets.llmbar import load_llmbar_items, load_llmbar_panel
    from judgerisk.datasets.pandalm import load_pandalm_panel
    from judgerisk.datasets.shipped import (
        load_smollm2_llmbar,
        load_smollm2_llmbar_families,
        load_smollm2_llmbar_generation,
    )
    from judgerisk.engine.analysis import evaluate_risk, summarize_risk
    from judgerisk.engine.certified import certify_panel, score_panel, select_items
    from judgerisk.engine.estimates import estimate_panel, plan_labels
    from judgerisk.engine.partitioned import score_parquet
    from judgerisk.engine.retention import retention_analysis, retention_curve
    from judgerisk.extract import extract_logprobs, load_judge
    from judgerisk.extract.perturb import perturb_items
    from judgerisk.families import family_pairs, parse_condition, register_family
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
    from judgerisk.risk.baselines import baseline_scores, ds_entropy, msp, pe, ve
    from judgerisk.risk.explain import explain, riskiest
    from judgerisk.risk.lmm import LatentMeasurementModel
    from judgerisk.risk.scur import ScurResult, scur_scores
    from judgerisk.selective.confidence import bpe, predictive_probability, swap_and_aggregate
    from judgerisk.selective.protocol import split_protocol, summarize_protocol
    from judgerisk.selective.scope import Scope, TrustOrEscalate, scope_threshold
    from judgerisk.simulate import simulate_pairs, simulate_panel
    from judgerisk.validation import InputError, OptionError


__all__ = [
    "AGGREGATORS",
    "CONDITIONS",
    "FAMILIES",
    "DawidSkene",
    "InputError",
    "LatentMeasurementModel",
    "OptionError",
    "PanelError",
    "Scope",
    "ScurResult",
    "TrustOrEscalate",
    "aggregate",
    "baseline_scores",
    "bpe",
    "certify_panel",
    "ds_entropy",
    "estimate_panel",
    "evaluate_risk",
    "explain",
    "extract_logprobs",
    "family_pairs",
    "load_judge",
    "load_judgebench_panel",
    "load_judgebench_reward_pairs",
    "load_llmbar_items",
    "load_llmbar_panel",
    "load_pandalm_panel",
    "load_panel",
    "load_smollm2_llmbar",
    "load_smollm2_llmbar_families",
    "load_smollm2_llmbar_generation",
    "msp",
    "perturb_items",
    "plan_labels",
    "parse_condition",
    "pe",
    "predictive_probability",
    "register_family",
    "retention_analysis",
    "retention_curve",
    "riskiest",
    "save_panel",
    "scope_threshold",
    "score_panel",
    "score_parquet",
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


def __getattr__(name: str) -> Any:
    """Import a top-level name from its module on first use (see :data:`_LAZY`)."""
    if name == "__version__":  # from the installed metadata, read on first use
        from judgerisk._util.version import package_version

        return package_version()
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'judgerisk' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY, "__version__"})
