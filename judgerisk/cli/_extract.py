"""``judgerisk extract``: run a judge (in-process or on a server) over items, write the panel.

Its parser is built in full only when the command is ``extract`` (it reads the judge-backend
registry, which imports the extraction code): ``judgerisk --help`` lists it by name.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import time
from pathlib import Path
from typing import Any

from judgerisk.cli.common import (
    EXIT_DEPENDENCY,
    EXIT_OK,
    Command,
    add_list,
    add_overwrite,
    add_progress,
    command_record,
    seed,
    write_output,
)
from judgerisk.options import ANALYSIS, CONDITIONS, DEFAULT_TEMPLATE, OptionError

__all__ = [
    "COMMAND",
    "Extract",
    "backend_kwargs",
    "check_extract_paths",
    "clear_run",
    "resolve_spellings",
]


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
        "OUT/parts and the merged panel to OUT/panel.parquet. A folder holding a run is "
        "refused unless --resume (continue it: a changed item text is recomputed, a changed "
        "model, dtype or chat template is refused) or --overwrite (start again: the run's "
        "files are removed first). Works under torchrun (one shard per rank: "
        "torchrun -m judgerisk.cli extract ...)."
    )
    epilog = (
        "example:\n  judgerisk extract items.jsonl -o run --model smollm2-135m "
        "--conditions original swap\n  judgerisk extract items.jsonl -o run --model "
        "smollm2-135m --resume"
    )
    heavy = True

    def register(self, sub: argparse._SubParsersAction, full: bool = True) -> Any:
        """Add ``extract``; ``full=False`` adds only its name and help (no extraction code)."""
        if not full:
            return super().register(sub, full=False)
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
    p.add_argument("items", nargs="?", default=None, help="items .jsonl/.json/.csv/.parquet")
    p.add_argument("-o", "--output", default=None, help="output folder OUT (required)")
    # the spellings before every command took a positional input and -o: a deprecation line
    p.add_argument("--items", dest="items_option", default=None, help=argparse.SUPPRESS)
    p.add_argument("--out", dest="out_option", default=None, help=argparse.SUPPRESS)
    p.add_argument(
        "--backend",
        default="hf",
        help="judge engine: hf, gguf, openai, or a plug-in's name (entry-point group "
        "judgerisk.judge_backends)",
    )
    add_list(
        p,
        "--conditions",
        default=CONDITIONS,
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
    p.add_argument("--template", default=DEFAULT_TEMPLATE, help="shipped name or JSON file")
    p.add_argument(
        "--chat-template",
        default=None,
        help="Jinja file overriding the tokenizer's chat template, or 'plain'",
    )
    p.add_argument(
        "--min-verdict-mass",
        type=float,
        default=ANALYSIS.min_verdict_mass,
        help="warn below this P(A) + P(B)",
    )
    p.add_argument(
        "--resume",
        action="store_true",
        help="continue the run OUT holds (default: a folder holding a run is refused)",
    )
    add_progress(p, default=True)
    add_overwrite(p)


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


#: The files an extraction run writes in its folder (beside ``parts/``).
_RUN_FILES = ("panel.parquet", "manifest.json", "served.json")


def check_extract_paths(
    out: str | Path,
    inputs: dict[str, str | Path | None],
    *,
    resume: bool = False,
    overwrite: bool = False,
    started: float | None = None,
) -> Path:
    """The one output rule for an extraction folder, checked before any work.

    ``OUT/panel.parquet``, ``OUT/manifest.json``, ``OUT/served.json`` and everything under
    ``OUT/parts`` are written; no input (items, template, chat template, model file) may be one
    of them. A folder that holds a run (any of those, written before ``started``, this run's
    start: under torchrun the other ranks of this run write there too) is refused unless
    ``resume`` (continue it) or ``overwrite`` (start again, :func:`clear_run`).

    Raises
    ------
    judgerisk._provenance.OutputPathError
        Naming the option and the input, or the run the folder holds.
    judgerisk._util.files.NotRegularFileError
        An input that is a FIFO, a device or a socket (nothing is read).
    """
    from judgerisk._provenance import OutputPathError, check_output_path
    from judgerisk._util.files import check_regular

    for option, path in inputs.items():  # a FIFO, device or socket: refused before any read
        if path is not None:
            check_regular(path, option)
    out = Path(out)
    if resume and overwrite:
        raise OptionError("--resume continues a run, --overwrite starts it again: give one")
    if out.exists() and not out.is_dir():
        raise OutputPathError(f"-o/--output {out}: is a file, not a folder")
    written = {(out / name).resolve() for name in _RUN_FILES}
    parts = (out / "parts").resolve()
    for option, path in inputs.items():
        if path is None or not Path(path).exists():
            continue
        real = Path(path).resolve()
        if real in written or real == parts or parts in real.parents:
            raise OutputPathError(
                f"-o/--output {out} would overwrite the input {option} {path}; choose another "
                "folder"
            )
    before = time.time() if started is None else started

    def older(path: Path) -> bool:
        return path.is_file() and path.stat().st_mtime < before

    held = [name for name in _RUN_FILES if older(out / name)]
    if (out / "parts").is_dir() and any(older(f) for f in (out / "parts").iterdir()):
        held.append("parts/")
    if held and not (resume or overwrite):
        raise OutputPathError(
            f"-o/--output {out} holds a run ({', '.join(held)}): give --resume to continue it "
            "or --overwrite to start it again, or choose another folder"
        )
    if out.is_dir():
        check_output_path(out / "panel.parquet", (".parquet",), (), option="-o/--output")
    return out


def clear_run(out: Path) -> None:
    """Remove the run ``out`` holds (``--overwrite``): only the files a run writes there.

    Done while holding the folder (:func:`judgerisk.extract._parts.hold_folder`), so a run
    still writing there is not cut short; refused under torchrun with several ranks (each would
    clear the others' parts).
    """
    from judgerisk._provenance import sidecar_path
    from judgerisk.extract._parts import hold_folder

    if int(os.environ.get("WORLD_SIZE", "1")) > 1:
        raise OptionError(
            "--overwrite under torchrun with several ranks: clear the folder first, or choose "
            "another one"
        )
    if not out.is_dir():
        return
    with hold_folder(out, 0):
        for name in _RUN_FILES:
            for path in (out / name, sidecar_path(out / name)):
                if path.is_file():
                    path.unlink()
        parts = out / "parts"
        if parts.is_dir():
            for part in parts.iterdir():
                if part.is_file() and part.name.startswith("part-"):
                    part.unlink()


def resume_argv(argv: list[str]) -> list[str]:
    """The command line that continues a stopped run: ``argv`` with ``--resume`` and
    without ``--overwrite`` (which would start the run again).

    >>> resume_argv(["extract", "items.jsonl", "-o", "run", "--overwrite"])
    ['judgerisk', 'extract', 'items.jsonl', '-o', 'run', '--resume']
    """
    kept = [arg for arg in argv if arg != "--overwrite"]
    return ["judgerisk", *kept, *([] if "--resume" in kept else ["--resume"])]


def resolve_spellings(args: argparse.Namespace) -> None:
    """The input and folder from the positional input and ``-o``, or the old spellings
    (``--items``, ``--out``: a deprecation line each)."""
    for old, new, flag in (("items_option", "items", "--items"), ("out_option", "output", "--out")):
        value = getattr(args, old, None)
        if hasattr(args, old):
            delattr(args, old)
        if value is None:
            continue
        if getattr(args, new) is not None:
            raise OptionError(f"{flag} repeats the {'input' if new == 'items' else '-o/--output'}")
        what = (
            "give the items file first (judgerisk extract ITEMS ...)"
            if new == "items"
            else ("use -o/--output")
        )
        print(f"judgerisk extract: warning: {flag} is deprecated; {what}", file=sys.stderr)
        setattr(args, new, value)
    if args.items is None:
        raise OptionError("the items file is required (judgerisk extract ITEMS -o OUT ...)")
    if args.output is None:
        raise OptionError("-o/--output is required (the folder OUT of the run)")


def _chat_template(value: str | None) -> str | None:
    from judgerisk.extract._prompts import PLAIN_CHAT_TEMPLATE

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
    from judgerisk._provenance import finish_record
    from judgerisk.extract._extract import run_judge
    from judgerisk.extract.backends import open_judge
    from judgerisk.extract.judge import RunStopped

    resolve_spellings(args)
    files = {
        "items": args.items,
        "--template": args.template if str(args.template).endswith(".json") else None,
        "--chat-template": args.chat_template if args.chat_template != "plain" else None,
        "--model": args.model,  # a model file or folder (a server's model name is no file)
    }
    out = check_extract_paths(
        args.output, files, resume=args.resume, overwrite=args.overwrite, started=args.started
    )
    chat_template = _chat_template(args.chat_template)
    backend = open_judge(args.model, args.backend, **backend_kwargs(args, chat_template))
    inputs: dict[str, tuple[str | Path, int | None]] = {
        opt.lstrip("-"): (path, None)
        for opt, path in files.items()
        if path is not None and Path(path).is_file()
    }
    record = command_record(args, inputs)
    described = backend.describe() if hasattr(backend, "describe") else {}
    if args.overwrite:
        clear_run(out)
    try:
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
        exc.args = (f"{exc}; to resume: {shlex.join(resume_argv(args.argv))}",)
        raise
    if int(os.environ.get("RANK", "0")) == 0:
        settings = {
            "rows": len(panel),
            "bounded_cells": int(panel["bounded"].sum()),
            "judge_backend": described,
        }
        written = write_output(args, panel, out / "panel.parquet", record, settings)
        print(
            f"wrote {written}: {len(panel)} rows ({panel['item'].nunique()} items x "
            f"{panel['condition'].nunique()} conditions)",
            file=sys.stderr,
        )
    return EXIT_OK


COMMAND = Extract()
