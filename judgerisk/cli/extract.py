"""``judgerisk extract``: run a judge (in-process or on a server) over items, write the panel.

Its parser is built in full only when the command is ``extract`` (it reads the judge-backend
registry, which imports the extraction code): ``judgerisk --help`` lists it by name.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path
from typing import Any

from judgerisk.cli.common import (
    EXIT_DEPENDENCY,
    EXIT_OK,
    Command,
    add_progress,
    command_record,
    seed,
)
from judgerisk.options import CONDITIONS

__all__ = ["COMMAND", "Extract", "backend_kwargs", "check_extract_paths"]


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


_EXTRACT_HELP = "verdict-token logprobs of a judge on items -> panel table"


class Extract(Command):
    name = "extract"
    help = _EXTRACT_HELP
    description = (
        "Run a judge on items (item, prompt, answer_a, answer_b[, gold]) under the "
        "chosen conditions. Backends: hf (a transformers model folder, a cached hub id or the "
        "bundled 'smollm2-135m'), gguf (a .gguf file de-quantised in-process), openai (a vLLM, "
        "SGLang or llama.cpp server, or a hosted API, through --base-url). Results go to "
        "OUT/parts (resumable: rerun the same command to finish an interrupted run; a changed "
        "item text is recomputed, a changed model, dtype or chat template is refused) and the "
        "merged panel to OUT/panel.parquet. Works under torchrun (one shard per rank: "
        "torchrun -m judgerisk.cli extract ...)."
    )

    def register(self, sub: argparse._SubParsersAction, full: bool = True) -> Any:
        """Add ``extract``; ``full=False`` adds only its name and help (no extraction code)."""
        if not full:
            return sub.add_parser(self.name, help=self.help, add_help=False)
        try:
            import judgerisk.extract.backends  # noqa: F401 - torch / transformers present?
        except ImportError as exc:  # the extract extra is not installed
            return _unavailable(sub, str(exc))
        return super().register(sub)

    def add_arguments(self, p: argparse.ArgumentParser) -> None:
        add_common_arguments(p)
        _add_backend_options(p)

    def run(self, args: argparse.Namespace) -> int:
        return _run(args)


def add_common_arguments(p: argparse.ArgumentParser) -> None:
    """The options of every backend (each backend's own are added after them)."""
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
        "judgerisk.judge_backends)",
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
        type=seed,
        default=0,
        help="perturbation seed of the families that draw (format's layouts, verbosity's "
        "sentences); recorded in OUT/manifest.json, so a resumed run with another is refused",
    )
    p.add_argument("--judge", default=None, help="judge name (None: from the model)")
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
    add_progress(p, default=True)


def _unavailable(sub: argparse._SubParsersAction, reason: str) -> argparse.ArgumentParser:
    """An ``extract`` parser that explains why it cannot run (exit code 3)."""
    p = sub.add_parser("extract", help=_EXTRACT_HELP, description="Unavailable here: " + reason)
    p.add_argument("rest", nargs=argparse.REMAINDER)

    def _missing(args: argparse.Namespace) -> int:
        print(
            f"judgerisk extract: error: not available ({reason}); install judgerisk[extract]",
            file=sys.stderr,
        )
        return EXIT_DEPENDENCY

    p.set_defaults(func=_missing)
    return p


def _add_backend_options(p: argparse.ArgumentParser) -> None:
    """Every registered backend's own options, one group per set of backends that take them.

    An option is not given a default here (it is absent unless given), so that
    :func:`backend_kwargs` can refuse one the chosen backend does not take; it gets its
    declared default there.
    """
    from judgerisk.extract.backends import JUDGE_BACKENDS, backend_options

    common = {a.dest for a in p._actions}
    takers: dict[str, list[str]] = {}
    declared: dict[str, Any] = {}
    for backend in JUDGE_BACKENDS:
        for opt in backend_options(backend):
            if opt.name not in common:
                declared.setdefault(opt.name, opt)  # the first declaration shows its help
                takers.setdefault(opt.name, []).append(backend)
    groups: dict[tuple[str, ...], list] = {}
    for name, opt in declared.items():
        groups.setdefault(tuple(takers[name]), []).append(opt)
    for backends, opts in groups.items():
        g = p.add_argument_group("options of --backend " + ", ".join(backends))
        for opt in opts:
            shown = "" if opt.default is None else f" (default: {opt.default})"
            g.add_argument(
                opt.flag,
                dest=opt.name,
                default=argparse.SUPPRESS,
                type=opt.type,
                choices=opt.choices,
                metavar=opt.metavar,
                help=opt.help + shown,
            )


def backend_kwargs(args: argparse.Namespace, chat_template: str | None) -> dict:
    """The keywords of ``--backend``'s factory: its own options (given, else their defaults).

    An option that only other backends take is refused in one line naming the backend's own.
    The chosen backend's options are set on ``args`` with their values, so that the provenance
    record holds every one of them.
    """
    from judgerisk.extract.backends import JUDGE_BACKENDS, backend_options
    from judgerisk.options import OptionError

    own = backend_options(args.backend)
    names = {o.name for o in own}
    common = argparse.ArgumentParser(add_help=False)
    add_common_arguments(common)  # --batch-size is every backend's
    names |= {a.dest for a in common._actions}
    others = {o.flag: o.name for b in JUDGE_BACKENDS for o in backend_options(b)}
    given = sorted(f for f, n in others.items() if n not in names and n in vars(args))
    if given:
        takes = ", ".join(o.flag for o in own) or "none"
        raise OptionError(
            f"--backend {args.backend} takes no {', '.join(given)} (its options: {takes})"
        )
    kwargs: dict[str, Any] = {"chat_template": chat_template, "name": args.judge}
    for opt in own:
        setattr(args, opt.name, getattr(args, opt.name, opt.default))
        kwargs[opt.name] = getattr(args, opt.name)
    return kwargs


def check_extract_paths(out: str | Path, inputs: dict[str, str | Path | None]) -> Path:
    """Refuse, before any work, an output folder whose files would overwrite an input.

    ``OUT/panel.parquet``, ``OUT/manifest.json``, ``OUT/served.json`` and everything under
    ``OUT/parts`` are written; no input (items, template, chat template, model file) may be one
    of them.

    Raises
    ------
    judgerisk.provenance.OutputPathError
        Naming the option and the input.
    judgerisk._util.files.NotRegularFileError
        An input that is a FIFO, a device or a socket (nothing is read).
    """
    from judgerisk._util.files import check_regular
    from judgerisk.provenance import OutputPathError, check_output_path

    for option, path in inputs.items():  # a FIFO, device or socket: refused before any read
        if path is not None:
            check_regular(path, option)
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
    from judgerisk._util.files import check_regular

    path = check_regular(value, "--chat-template")
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


def _run(args: argparse.Namespace) -> int:
    """Execute ``judgerisk extract`` from parsed arguments; returns the exit code."""
    from judgerisk.extract.backends import open_judge
    from judgerisk.extract.extract import run_judge
    from judgerisk.extract.judge import RunStopped
    from judgerisk.provenance import finish_record, write_table_with_record

    files = {
        "--items": args.items,
        "--template": args.template if str(args.template).endswith(".json") else None,
        "--chat-template": args.chat_template if args.chat_template != "plain" else None,
        "--model": args.model,  # a model file or folder (a server's model name is no file)
    }
    out = check_extract_paths(args.out, files)
    chat_template = _chat_template(args.chat_template)
    backend = open_judge(args.model, args.backend, **backend_kwargs(args, chat_template))
    inputs: dict[str, tuple[str | Path, int | None]] = {
        opt.lstrip("-"): (path, None)
        for opt, path in files.items()
        if path is not None and Path(path).is_file()
    }
    record = command_record(args, inputs)
    try:
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
    except RunStopped as exc:  # the answers got so far are in OUT: say how to resume
        exc.args = (f"{exc}; to resume: {shlex.join(['judgerisk', *args.argv])}",)
        raise
    if int(os.environ.get("RANK", "0")) == 0:
        settings = {
            "rows": len(panel),
            "bounded_cells": int(panel["bounded"].sum()),
            "judge_backend": described,
        }
        write_table_with_record(panel, out / "panel.parquet", finish_record(record, settings))
    return EXIT_OK


COMMAND = Extract()
