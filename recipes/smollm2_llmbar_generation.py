"""Recipe: verbalized confidence and self-consistency of the bundled SmolLM2 judge on LLMBar.

The generation baselines of chapter 8 (verbalized confidence; self-consistency with k = 5 samples
at T = 0.7), in the original answer order, on a stratified random subset of LLMBar (``--per-subset``
items of each of the five subsets, drawn with ``--seed``); generation costs several forward passes
per item, so the subset is sized to a CPU budget. Verbalized confidence is elicited in two steps:
the judge's greedy verdict comes from its verdict-token logprobs (template ``pairwise_v2``), the
assistant turn of ``verbalized_v1`` starts with that letter and the judge writes its 0-100
confidence. Writes ``smollm2_llmbar_generation.parquet`` + manifest next to the logprob panel.

Usage::

    python recipes/smollm2_llmbar_generation.py --out judgerisk/datasets/shipped
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="folder of the shipped panels")
    parser.add_argument("--data", default=None, help="data root holding llmbar/ (default: env)")
    parser.add_argument("--per-subset", type=int, default=10, help="items per LLMBar subset")
    parser.add_argument("--seed", type=int, default=0, help="subset draw and sampling seed")
    parser.add_argument("--threads", type=int, default=2, help="torch CPU threads")
    args = parser.parse_args(argv)

    import torch

    from judgerisk.datasets.llmbar import load_llmbar_items
    from judgerisk.datasets.shipped import write_generation
    from judgerisk.extract import (
        SMOLLM2,
        extract_logprobs,
        load_judge,
        self_consistency,
        verbalized_confidence,
    )

    torch.set_num_threads(args.threads)
    items = load_llmbar_items(args.data, subsets="LLMBar")
    rng = np.random.default_rng(args.seed)
    pick = items.groupby("subset", sort=False).sample(
        n=args.per_subset, random_state=int(rng.integers(2**31))
    )
    pick = pick.reset_index(drop=True)
    t0 = time.time()
    model, tok = load_judge(SMOLLM2)
    greedy = extract_logprobs(
        model, tok, pick, judge=SMOLLM2, conditions=("original",), template="pairwise_v2"
    )
    choices = pd.DataFrame(
        {
            "item": greedy["item"],
            "condition": "original",
            # displayed letter of the greedy verdict (original order: displayed = canonical)
            "choice": np.where(greedy["logprob_a"] >= greedy["logprob_b"], "A", "B"),
        }
    )
    verbal = verbalized_confidence(model, tok, pick, judge=SMOLLM2, choices=choices)
    sc = self_consistency(
        model,
        tok,
        pick,
        judge=SMOLLM2,
        k=5,
        temperature=0.7,
        seed=args.seed,
        template="pairwise_v2",
    )
    wall = time.time() - t0
    table = verbal[["item", "judge", "condition", "response", "choice", "confidence"]].rename(
        columns={"choice": "verbal_choice", "confidence": "verbal_confidence"}
    )
    table["verbal_p"] = verbal["p"].to_numpy()
    table = table.merge(
        sc[["item", "condition", "n_a", "n_b", "n_invalid", "p"]].rename(columns={"p": "sc_p"}),
        on=["item", "condition"],
        validate="one_to_one",
    )
    table = table.merge(pick[["item", "gold", "subset"]], on="item", validate="many_to_one")
    command = " ".join(
        ["python", "recipes/smollm2_llmbar_generation.py"]
        + [shlex.quote(a) for a in (argv if argv is not None else sys.argv[1:])]
    )
    write_generation(
        table,
        Path(args.out),
        command=command,
        wall_seconds=wall,
        settings={
            "per_subset": args.per_subset,
            "seed": args.seed,
            "k": 5,
            "temperature": 0.7,
            "verbalized_template": verbal["template"].iloc[0],
            "verbalized_template_hash": verbal["template_hash"].iloc[0],
            "self_consistency_template": sc["template"].iloc[0],
            "self_consistency_template_hash": sc["template_hash"].iloc[0],
            "threads": args.threads,
        },
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
