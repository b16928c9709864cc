"""``judgerisk extract``: run a Hugging Face judge over an items file and write the panel."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from judgerisk.panel import CONDITIONS

__all__ = ["register", "run"]


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``extract`` subcommand to an argparse subparsers object."""
    p = subparsers.add_parser(
        "extract",
        help="verdict-token logprobs of a judge on items -> panel table",
        description="Run a Hugging Face causal LM judge on items (item, prompt, answer_a, "
        "answer_b[, gold]) under the chosen conditions. Results go to OUT/parts (resumable; "
        "rerun the same command to finish an interrupted run) and the merged panel to "
        "OUT/panel.parquet. Works under torchrun (one shard per rank).",
    )
    p.add_argument("--model", required=True, help="model folder or hub id (loaded offline)")
    p.add_argument("--items", required=True, help="items .jsonl/.json/.csv/.parquet")
    p.add_argument("--out", required=True, help="output folder")
    p.add_argument("--conditions", nargs="+", default=list(CONDITIONS), metavar="COND")
    p.add_argument("--judge", default=None, help="judge name (default: model folder name)")
    p.add_argument("--device", default=None, help="cuda, cuda:1, cpu (default: cuda if any)")
    p.add_argument("--dtype", default=None, help="bfloat16, float16 or float32")
    p.add_argument("--batch-size", default="auto", help="rows per forward pass or 'auto'")
    p.add_argument("--template", default="pairwise_v1", help="shipped name or JSON file")
    p.add_argument(
        "--chat-template",
        default=None,
        help="Jinja file overriding the tokenizer's chat template, or 'plain'",
    )
    p.add_argument("--min-verdict-mass", type=float, default=0.5)
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=True)
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    """Execute ``judgerisk extract`` from parsed arguments; returns the exit code."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from judgerisk.extract.extract import extract_logprobs
    from judgerisk.extract.forward import resolve_dtype
    from judgerisk.extract.prompts import PLAIN_CHAT_TEMPLATE

    chat_template = args.chat_template
    if chat_template == "plain":
        chat_template = PLAIN_CHAT_TEMPLATE
    elif chat_template is not None:
        chat_template = Path(chat_template).read_text(encoding="utf-8")
    batch_size = args.batch_size if args.batch_size == "auto" else int(args.batch_size)
    tokenizer = AutoTokenizer.from_pretrained(args.model)
    kwargs = {}
    if args.dtype is not None:
        kwargs["dtype"] = resolve_dtype(args.dtype)
    model = AutoModelForCausalLM.from_pretrained(args.model, **kwargs)
    panel = extract_logprobs(
        model,
        tokenizer,
        args.items,
        judge=args.judge,
        conditions=tuple(args.conditions),
        batch_size=batch_size,
        device=args.device,
        dtype=args.dtype,
        out_dir=args.out,
        progress=args.progress,
        template=args.template,
        chat_template=chat_template,
        min_verdict_mass=args.min_verdict_mass,
    )

    if int(os.environ.get("RANK", "0")) == 0:
        from judgerisk.provenance import finish_record, make_record, write_table_with_record

        params = {k: v for k, v in vars(args).items() if k != "func"}
        items: dict[str, tuple[str | Path, int | None]] = (
            {"items": (args.items, None)} if Path(str(args.items)).is_file() else {}
        )
        record = make_record([Path(sys.argv[0]).name, *sys.argv[1:]], params, items)
        write_table_with_record(
            panel, Path(args.out) / "panel.parquet", finish_record(record, {"rows": len(panel)})
        )
    return 0


def main(argv=None) -> int:
    """Standalone entry point: ``python -m judgerisk.extract.cli extract ...``."""
    parser = argparse.ArgumentParser(prog="judgerisk")
    sub = parser.add_subparsers(dest="command", required=True)
    register(sub)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    raise SystemExit(main())
