"""Panels shipped inside judgerisk: real judges' verdict log-probabilities, with their recipes.

``smollm2_llmbar.parquet``: the bundled SmolLM2-135M-Instruct judge (GGUF Q4_1, Apache-2.0) on all
419 items of LLMBar's five subsets (MIT) under the six prompt conditions, template ``pairwise_v2``.
It was produced by ``recipes/smollm2_llmbar.py`` in the judgerisk repository; the manifest next
to it records the model file's sha256, the template hash, the package versions, the exact command,
the wall time, and the data's provenance and licences. Read it with :func:`load_smollm2_llmbar`.
"""

from __future__ import annotations

import json
import os
from importlib import resources
from pathlib import Path

import pandas as pd

from judgerisk.panel import validate_panel

__all__ = ["SMOLLM2_LLMBAR", "load_smollm2_llmbar", "shipped_manifest", "write_shipped"]

#: Base name of the shipped SmolLM2 x LLMBar panel (``.parquet`` + ``.manifest.json``).
SMOLLM2_LLMBAR = "smollm2_llmbar"

_COLUMNS = [
    "item",
    "judge",
    "condition",
    "logit",
    "p",
    "gold",
    "subset",
    "swapped",
    "logprob_a",
    "logprob_b",
    "verdict_mass",
    "prompt_tokens",
]

_DATA = {
    "name": "LLMBar (Natural + four Adversarial subsets, 419 items)",
    "source": "https://github.com/princeton-nlp/LLMBar",
    "commit": "900616bff90b6c6c8e1681f7d079250637c55992",
    "files": "Dataset/LLMBar/{Natural,Adversarial/Neighbor,Adversarial/GPTInst,"
    "Adversarial/GPTOut,Adversarial/Manual}/dataset.json",
    "licence": "MIT",
    "citation": "Zeng et al., Evaluating Large Language Models at Evaluating Instruction "
    "Following, ICLR 2024 (arXiv:2310.07641)",
    "item_ids": "<subset>/<0-based index in dataset.json>; answer_a = output_1, "
    "answer_b = output_2, gold A/B = label 1/2",
}


def _path(name: str, suffix: str):
    return resources.files("judgerisk.datasets.shipped").joinpath(f"{name}{suffix}")


def shipped_manifest(name: str = SMOLLM2_LLMBAR) -> dict:
    """The manifest of a shipped panel (provenance, licences, hashes, command, wall time)."""
    res = _path(name, ".manifest.json")
    if not res.is_file():
        raise FileNotFoundError(f"no shipped panel named {name!r} in judgerisk.datasets.shipped")
    return json.loads(res.read_text(encoding="utf-8"))


def load_smollm2_llmbar() -> pd.DataFrame:
    """The shipped panel of the SmolLM2-135M-Instruct judge on LLMBar (419 items x 6 conditions).

    Returns
    -------
    pandas.DataFrame
        A validated panel with columns ``item, judge, condition, logit, p, gold, subset, swapped,
        logprob_a, logprob_b, verdict_mass, prompt_tokens`` (see
        :func:`judgerisk.extract.extract_logprobs`); ``attrs["manifest"]`` holds the manifest.
        ``logit`` is the canonical log-odds that the original answer A wins,
        :math:`m = \\log P(\\text{A}) - \\log P(\\text{B})`, sign-flipped after a swap.
    """
    manifest = shipped_manifest(SMOLLM2_LLMBAR)
    with resources.as_file(_path(SMOLLM2_LLMBAR, ".parquet")) as path:
        panel = pd.read_parquet(path)
    out = validate_panel(panel)
    out.attrs["manifest"] = manifest
    return out


def _atomic_write(path: Path, write) -> None:
    tmp = path.with_name(f".tmp-{path.name}.{os.getpid()}")
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def write_shipped(
    panel: pd.DataFrame,
    out_dir: Path,
    *,
    command: str,
    wall_seconds: float,
    invocations: int,
    threads: int,
    name: str = SMOLLM2_LLMBAR,
) -> Path:
    """Write a panel and its manifest atomically (used by the recipe, not by readers).

    The manifest records the judge (model file and its sha256, wheel, licence), the template
    name and hash, the verdict tokens, judgerisk / torch / transformers versions, the command,
    the wall time summed over resumed invocations, and the data's provenance and licence.
    """
    import torch
    import transformers

    import judgerisk
    from judgerisk.extract.judges import BUNDLED_JUDGES, bundled_gguf, file_sha256

    out_dir.mkdir(parents=True, exist_ok=True)
    judge = str(panel["judge"].iloc[0])
    spec = BUNDLED_JUDGES[judge]
    gguf = bundled_gguf(judge)
    first = panel.iloc[0]
    manifest = {
        "name": name,
        "description": f"{spec.model} as a pairwise judge on LLMBar: verdict-token "
        "log-probabilities under six prompt conditions (original, swap, rubric1, rubric2, "
        "swap_rubric1, swap_rubric2).",
        "rows": int(len(panel)),
        "items": int(panel["item"].nunique()),
        "conditions": sorted(panel["condition"].unique().tolist()),
        "judge": {
            "name": judge,
            "model": spec.model,
            "wheel": spec.requirement,
            "gguf_file": spec.gguf_file,
            "sha256": file_sha256(gguf),
            "dtype": "float32",
            "licence": spec.licence,
        },
        "template": {"name": str(first["template"]), "hash": str(first["template_hash"])},
        "verdict_tokens": [str(first["token_a"]), str(first["token_b"])],
        "versions": {
            "judgerisk": judgerisk.__version__,
            "torch": torch.__version__,
            "transformers": transformers.__version__,
        },
        "command": command,
        "wall_seconds": round(float(wall_seconds), 1),
        "invocations": int(invocations),
        "torch_threads": int(threads),
        "data": _DATA,
        "licences": {"data": "MIT (LLMBar)", "model": f"{spec.licence} ({spec.model})"},
    }
    table = panel[[c for c in _COLUMNS if c in panel.columns]].reset_index(drop=True)
    parquet = out_dir / f"{name}.parquet"
    _atomic_write(parquet, lambda tmp: table.to_parquet(tmp, index=False, compression="zstd"))
    text = json.dumps(manifest, indent=2, sort_keys=False) + "\n"
    _atomic_write(out_dir / f"{name}.manifest.json", lambda tmp: tmp.write_text(text, "utf-8"))
    return parquet
