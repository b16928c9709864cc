"""``judgerisk extract``: run a judge (in-process or on a server) over items, write the panel."""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path
from typing import Any

from judgerisk.extract.http_client import MAX_RETRIES, MAX_TIMEOUT
from judgerisk.panel import CONDITIONS

__all__ = ["register", "run", "check_extract_paths"]


def _batch_size(text: str) -> int | str:
    if text == "auto":
        return text
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer or 'auto', got {text!r}")
    return value


def _positive(kind: type, high: float = math.inf) -> Any:
    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            value = 0
        if not (value > 0 and math.isfinite(value) and value <= high):
            bound = "" if high == math.inf else f" up to {high:g}"
            raise argparse.ArgumentTypeError(f"expected a positive number{bound}, got {text!r}")
        return value

    parse.__name__ = kind.__name__
    return parse


def _retries(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= MAX_RETRIES:
        raise argparse.ArgumentTypeError(
            f"expected a whole number from 0 to {MAX_RETRIES}, got {text!r}"
        )
    return value


class _DefaultsShown(argparse.ArgumentDefaultsHelpFormatter):
    """Help with each option's default, except where it is None (the help says what happens)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.default is None:
            return action.help
        return super()._get_help_string(action)


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``extract`` subcommand to an argparse subparsers object."""
    p = subparsers.add_parser(
        "extract",
        help="verdict-token logprobs of a judge on items -> panel table",
        formatter_class=_DefaultsShown,
        description="Run a judge on items (item, prompt, answer_a, answer_b[, gold]) under the "
        "chosen conditions. Backends: hf (a transformers model folder, a cached hub id or the "
        "bundled 'smollm2-135m'), gguf (a .gguf file de-quantised in-process), openai (a vLLM, "
        "SGLang or llama.cpp server, or a hosted API, through --base-url). Results go to "
        "OUT/parts (resumable: rerun the same command to finish an interrupted run; a changed "
        "item text is recomputed, a changed model, dtype or chat template is refused) and the "
        "merged panel to OUT/panel.parquet. Works under torchrun (one shard per rank).",
    )
    p.add_argument(
        "--model",
        default=None,
        help="bundled name, folder, .gguf file, cached hub "
        "id (hf/gguf; nothing is downloaded); the server's model name (openai)",
    )
    p.add_argument("--items", required=True, help="items .jsonl/.json/.csv/.parquet")
    p.add_argument("--out", required=True, help="output folder")
    p.add_argument(
        "--backend",
        default="hf",
        help="judge engine: hf, gguf, openai, or a plug-in's name (entry-point group "
        "judgerisk.judge_backends) (default: hf)",
    )
    p.add_argument(
        "--conditions",
        nargs="+",
        default=list(CONDITIONS),
        metavar="COND",
        help="conditions: the template's own (original, swap, rubric1, ...) or any a "
        "perturbation family declares (label1, swap_label1, format1, verbosity1, verbosity2, ...)",
    )
    p.add_argument(
        "--seed",
        type=int,
        default=0,
        help="perturbation seed of the families that draw (format's layouts, verbosity's "
        "sentences); recorded in OUT/manifest.json, so a resumed run with another is refused",
    )
    p.add_argument("--judge", default=None, help="judge name (None: from the model)")
    p.add_argument("--device", default=None, help="hf/gguf: cuda, cuda:1, cpu (None: cuda if any)")
    p.add_argument("--dtype", default=None, help="hf/gguf: bfloat16, float16 or float32")
    p.add_argument(
        "--batch-size",
        type=_batch_size,
        default="auto",
        help="prompts per forward pass and per result part, or 'auto'",
    )
    p.add_argument("--template", default="pairwise_v1", help="shipped name or JSON file")
    p.add_argument(
        "--chat-template",
        default=None,
        help="Jinja file overriding the tokenizer's chat template, or 'plain'",
    )
    p.add_argument(
        "--min-verdict-mass", type=float, default=0.5, help="warn below this P(A) + P(B)"
    )
    p.add_argument(
        "--progress", action=argparse.BooleanOptionalAction, default=True, help="progress bar"
    )
    g = p.add_argument_group("openai backend")
    g.add_argument("--base-url", default=None, help="server root, e.g. http://127.0.0.1:8000")
    g.add_argument(
        "--tokenizer",
        default=None,
        help="the judge's tokenizer (bundled name, "
        "folder, .gguf, cached hub id); needed by the completion endpoint",
    )
    g.add_argument(
        "--endpoint",
        default="completions",
        choices=("completions", "chat"),
        help="completions: judgerisk renders the prompt (exact verdict slot); chat: the server does",
    )
    g.add_argument(
        "--api-key-env",
        default=None,
        metavar="VAR",
        help="environment variable holding the API key (the key is never recorded)",
    )
    g.add_argument("--concurrency", type=_positive(int), default=4, help="requests in flight")
    g.add_argument(
        "--timeout",
        type=_positive(float, MAX_TIMEOUT),
        default=60.0,
        help="seconds for a whole try of one request (connect, send, answer)",
    )
    g.add_argument(
        "--retries",
        type=_retries,
        default=4,
        help="retries on timeout, 408/409/425/429, 5xx (waits capped at 60 s; no redirect is "
        "followed)",
    )
    g.add_argument("--top-logprobs", type=_positive(int), default=20, help="top-k list size")
    p.set_defaults(func=run)
    return p


def check_extract_paths(out: str | Path, inputs: dict[str, str | Path | None]) -> Path:
    """Refuse, before any work, an output folder whose files would overwrite an input.

    ``OUT/panel.parquet``, ``OUT/manifest.json``, ``OUT/served.json`` and everything under
    ``OUT/parts`` are written; no input (items, template, chat template, model file) may be one
    of them.

    Raises
    ------
    judgerisk.provenance.OutputPathError
        Naming the option and the input.
    """
    from judgerisk.provenance import OutputPathError, check_output_path

    out = Path(out)
    if out.exists() and not out.is_dir():
        raise OutputPathError(f"--out {out}: is a file, not a folder")
    written = {(out / name).resolve() for name in ("panel.parquet", "manifest.json", "served.json")}
    parts = (out / "parts").resolve()
    for option, path in inputs.items():
        if path is None or not Path(path).exists():
            continue
        real = Path(path).resolve()
        if real in written or real == parts or parts in real.parents:
            raise OutputPathError(
                f"--out {out} would overwrite the input {option} {path}; choose another folder"
            )
    if out.is_dir():
        check_output_path(out / "panel.parquet", (".parquet",), (), option="--out")
    return out


def _chat_template(value: str | None) -> str | None:
    from judgerisk.extract.prompts import PLAIN_CHAT_TEMPLATE

    if value is None or value == "plain":
        return PLAIN_CHAT_TEMPLATE if value == "plain" else None
    path = Path(value)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"--chat-template {path}: cannot read it ({exc})") from None
    import jinja2

    try:
        jinja2.Environment().parse(text)
    except jinja2.TemplateSyntaxError as exc:
        raise ValueError(
            f"--chat-template {path}: line {exc.lineno}: not a valid Jinja template ({exc.message})"
        ) from None
    return text


def _options(args: argparse.Namespace, chat_template: str | None) -> dict:
    if args.backend == "openai":
        return {
            "base_url": args.base_url,
            "tokenizer": args.tokenizer,
            "chat_template": chat_template,
            "endpoint": args.endpoint,
            "name": args.judge,
            "top_logprobs": args.top_logprobs,
            "concurrency": args.concurrency,
            "timeout": args.timeout,
            "retries": args.retries,
            "api_key_env": args.api_key_env,
        }
    from judgerisk.extract.extract import shard_device

    if args.model is None:
        raise ValueError(f"--backend {args.backend} needs --model")
    return {
        "device": shard_device(args.device),
        "dtype": args.dtype,
        "chat_template": chat_template,
        "batch_size": args.batch_size,
        "name": args.judge,
    }


def run(args: argparse.Namespace) -> int:
    """Execute ``judgerisk extract`` from parsed arguments; returns the exit code."""
    started = time.time()
    from judgerisk.extract.backends import open_judge
    from judgerisk.extract.extract import run_judge
    from judgerisk.provenance import finish_record, make_record, write_table_with_record

    files = {
        "--items": args.items,
        "--template": args.template if str(args.template).endswith(".json") else None,
        "--chat-template": args.chat_template if args.chat_template != "plain" else None,
        "--model": args.model if args.backend != "openai" else None,
    }
    out = check_extract_paths(args.out, files)
    chat_template = _chat_template(args.chat_template)
    backend = open_judge(args.model, args.backend, **_options(args, chat_template))
    params = {k: v for k, v in vars(args).items() if k != "func"}
    inputs: dict[str, tuple[str | Path, int | None]] = {
        opt.lstrip("-"): (path, None)
        for opt, path in files.items()
        if path is not None and Path(path).is_file()
    }
    argv = [Path(sys.argv[0]).name, *sys.argv[1:]]
    record = make_record(argv, params, inputs, started=started)
    described = backend.describe() if hasattr(backend, "describe") else {}
    panel = run_judge(
        backend,
        args.items,
        tuple(args.conditions),
        judge=args.judge,
        chunk_size=None if args.batch_size == "auto" else args.batch_size,
        out_dir=out,
        progress=args.progress,
        template=args.template,
        min_verdict_mass=args.min_verdict_mass,
        provenance=finish_record(record, {"judge_backend": described}),
        seed=args.seed,
    )
    if int(os.environ.get("RANK", "0")) == 0:
        settings = {
            "rows": len(panel),
            "bounded_cells": int(panel["bounded"].sum()),
            "judge_backend": described,
        }
        write_table_with_record(panel, out / "panel.parquet", finish_record(record, settings))
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
