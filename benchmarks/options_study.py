"""The presets study: every reconstructed option and signal subset on every panel.

Runs :func:`judgerisk._book.studies.presets.study_rows` (each alternative against the paper's reading,
paired bootstrap over items, repeated K-fold cross-fitting) on three simulated settings and
the real panels (LLMBar, JudgeBench, SmolLM2 joined to LLMBar, PandaLM), applies the decision
rule committed before the study (:data:`judgerisk._book.studies.presets.DECISION_RULE`) and writes the
rows as a derived artefact with a manifest, which chapter 04 loads:

    judgerisk/datasets/shipped/scur_options_study.parquet
    judgerisk/datasets/shipped/scur_options_study.manifest.json

Usage (needs JUDGERISK_DATA for the real panels; about 10 minutes on two busy cores):

    python benchmarks/options_study.py [--repeats 3] [--n-items 600] [--out DIR]
"""

from __future__ import annotations

import argparse
import subprocess
import time
import warnings
from pathlib import Path

import pandas as pd

from judgerisk._book.studies.presets import (
    DECISION_RULE,
    STUDY,
    decide,
    options_study,
    save_study,
)
from judgerisk.datasets import data_root
from judgerisk.datasets.judgebench import load_judgebench_panel
from judgerisk.datasets.llmbar import load_llmbar_panel
from judgerisk.datasets.pandalm import load_pandalm_panel
from judgerisk.datasets.shipped import load_smollm2_llmbar
from judgerisk.panel import validate_panel
from judgerisk.simulate import simulate_panel

NAME = STUDY
#: Simulated generating settings (knobs of judgerisk.simulate.simulate_panel).
SIMULATED = {
    "simulated: default": {},
    "simulated: missing cells, one spammer": {"missing_rate": 0.3, "n_spammers": 1},
    "simulated: order-sensitive, consensus-wrong": {
        "order_sensitive_rate": 0.3,
        "consensus_wrong_rate": 0.15,
    },
}


def panels(n_items: int) -> dict[str, tuple[pd.DataFrame, bool]]:
    """Display name -> (panel with gold, real)."""
    out = {
        k: (simulate_panel(n_items=n_items, seed=0, **v).data, False) for k, v in SIMULATED.items()
    }
    root = data_root()
    llmbar = load_llmbar_panel(root)
    out["LLMBar"] = (llmbar, True)
    out["JudgeBench"] = (load_judgebench_panel(root), True)
    small = load_smollm2_llmbar()
    small = small[small["condition"].isin(llmbar["condition"].unique())]
    cols = ["item", "judge", "condition", "logit", "gold"]
    out["LLMBar + SmolLM2-135M"] = (
        validate_panel(pd.concat([llmbar[cols], small[cols]], ignore_index=True)),
        True,
    )
    out["PandaLM"] = (load_pandalm_panel(root), True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--n-items", type=int, default=600)
    ap.add_argument("--n-boot", type=int, default=2000)
    default_out = Path(__file__).resolve().parents[1] / "judgerisk" / "datasets" / "shipped"
    ap.add_argument("--out", type=Path, default=default_out)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    start = time.time()
    table = options_study(panels(args.n_items), args.repeats, args.n_boot, progress=True)
    tally, choice = decide(table)
    print(tally.to_string())
    print(choice)
    commit = subprocess.run(
        ["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    manifest = {
        "name": NAME,
        "description": "Each reconstructed SCUR option and signal subset against the paper's "
        "reading: AUROC difference over all items with its 95 % paired bootstrap interval, "
        "repeated 5-fold cross-fitting, errors of the majority vote.",
        "rule": DECISION_RULE,
        "choice": choice,
        "parameters": {"repeats": args.repeats, "n_items": args.n_items, "n_boot": args.n_boot},
        "simulated": SIMULATED,
        "command": "python benchmarks/options_study.py "
        f"--repeats {args.repeats} --n-items {args.n_items} --n-boot {args.n_boot}",
        "code_commit": commit,
        "wall_seconds": round(time.time() - start, 1),
        "rows": len(table),
    }
    save_study(table, manifest, args.out)
    print(f"wrote {args.out / NAME}.parquet and its manifest")


if __name__ == "__main__":
    main()
