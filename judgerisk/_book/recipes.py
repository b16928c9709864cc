"""What the recipes that make the shipped panels share: options, set-up and the timing log.

``recipes/smollm2_llmbar.py`` and ``recipes/smollm2_llmbar_families.py`` run the bundled judge
on the LLMBar items into a resumable work folder; each invocation's wall time is appended to
``<work>/timing.jsonl``, so the manifest's wall time is the sum over resumed invocations.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["RecipeRun", "recipe_parser", "start_recipe"]


def recipe_parser(description: str) -> argparse.ArgumentParser:
    """The options every LLMBar recipe takes (``--work --out --data --threads --batch-size
    --limit``); a recipe adds its own."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--work", required=True, help="resumable work folder (parts, timing)")
    parser.add_argument("--out", required=True, help="folder for the shipped panel + manifest")
    parser.add_argument("--data", default=None, help="data root holding llmbar/ (default: env)")
    parser.add_argument("--threads", type=int, default=2, help="torch CPU threads")
    parser.add_argument("--batch-size", default="auto", help="rows per forward pass or 'auto'")
    parser.add_argument("--limit", type=int, default=None, help="first N items only (a trial)")
    return parser


@dataclass
class RecipeRun:
    """One invocation of a recipe: its items, the loaded judge and its clock."""

    args: argparse.Namespace
    work: Path
    items: Any
    model: Any
    tokenizer: Any
    batch: int | str
    started: float
    load_seconds: float

    def finish(self, script: str, argv: list[str] | None) -> tuple[str, list[dict]]:
        """Log this invocation's wall time; return the command line and every invocation's log."""
        record = {
            "start": self.started,
            "seconds": time.time() - self.started,
            "load_seconds": self.load_seconds,
            "threads": self.args.threads,
        }
        path = self.work / "timing.jsonl"
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(record) + "\n")
        runs = [json.loads(line) for line in path.read_text("utf-8").splitlines() if line]
        args = argv if argv is not None else sys.argv[1:]
        command = " ".join(["python", script, *(shlex.quote(a) for a in args)])
        return command, runs


def start_recipe(args: argparse.Namespace, judge: str) -> RecipeRun:
    """Set the torch threads, make the work folder, read the LLMBar items (the first
    ``--limit``) and load the bundled ``judge`` in float32, timing the load."""
    import torch

    from judgerisk.datasets.llmbar import load_llmbar_items
    from judgerisk.extract._judges import load_judge

    torch.set_num_threads(args.threads)
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    items = load_llmbar_items(args.data, subsets="LLMBar")
    if args.limit is not None:
        items = items.head(args.limit)
    batch = args.batch_size if args.batch_size == "auto" else int(args.batch_size)
    started = time.time()
    model, tokenizer = load_judge(judge, dtype="float32")
    return RecipeRun(args, work, items, model, tokenizer, batch, started, time.time() - started)
