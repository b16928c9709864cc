"""The assembler: the ``judgerisk`` parser built from every command, and :func:`main`.

Each command is a :class:`~judgerisk.cli.common.Command` in its own module
(:data:`~judgerisk.cli.common.COMMANDS`); :func:`build_parser` registers them in order and
:func:`main` runs the one asked for, turning its failures into one line and an exit code
(:mod:`judgerisk.cli.common`). A :attr:`~judgerisk.cli.common.Command.heavy` command (``extract``
imports heavy code to build its options) is built in full only when it is the command.
"""

from __future__ import annotations

import argparse
import atexit
import os
import sys
import textwrap
import threading
import time
import warnings
from typing import NoReturn

from judgerisk._util.files import float_overflow_message
from judgerisk._util.registry import PluginError
from judgerisk._util.version import package_version
from judgerisk.cli.common import (
    COMMANDS,
    EXIT_CODES,
    EXIT_DEPENDENCY,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_RUNTIME,
    EXIT_USAGE,
    get_command,
)
from judgerisk.options import InputError

__all__ = ["build_parser", "failure_line", "main"]

_EPILOG = """\
examples:
  judgerisk import fastchat model_judgment/*_pair.jsonl -o panel.csv
  judgerisk simulate -o panel.csv --n-items 1000 --seed 0
  judgerisk perturb items.jsonl -o perturbed.jsonl --conditions original swap label1 format1
  judgerisk score panel.csv -o scores.csv --n-seeds 5
  judgerisk select scores.csv --calibration labelled.csv --alpha 0.1 -o decisions.csv
  judgerisk report panel.csv -o report.html
  judgerisk run 04 --param panel_path=my.csv -o my_scur.ipynb
  judgerisk bpe one_judge.csv -o bpe.csv --calibration labelled.csv --alpha 0.1
  judgerisk verify report.html
  judgerisk extract items.jsonl -o run --model smollm2-135m

outputs: a command refuses an existing output unless --overwrite is given (then it is replaced
atomically; extract: --resume continues the run its folder holds); it never writes over one of
its inputs. Messages go to stderr. A list option takes a b c or a,b,c. Progress bars are shown
when stderr is a terminal (--progress / --no-progress to choose).

exit codes:
"""


class _Version(argparse.Action):
    """``--version``: the installed version, read from the metadata only when asked."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"judgerisk {package_version()}")  # on stdout, as argparse's version action
        parser.exit()


def build_parser(*, extract: bool = True) -> argparse.ArgumentParser:
    """The argument parser of every command (exposed for documentation and tests).

    ``extract=False`` lists the :attr:`~judgerisk.cli.common.Command.heavy` commands
    (``extract``) without importing their options (what :func:`main` does unless the command
    is one of them).
    """
    parser = argparse.ArgumentParser(
        prog="judgerisk",
        description=textwrap.dedent(
            """\
            Instance-level risk for LLM-judge panels (SCUR) and certified panel decisions
            (SCOPE calibration: the mean false discovery proportion over calibration draws
            of the accepted verdicts is <= alpha).
            A panel file is a long table item, judge, condition, logit and/or p [, gold]
            (.csv, .parquet or .jsonl)."""
        ),
        epilog=_EPILOG + "".join(f"  {code:<4d} {text}\n" for code, text in EXIT_CODES.items()),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action=_Version, help="show the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in COMMANDS:
        command = get_command(name)
        command.register(sub, full=extract or not command.heavy)
    return parser


def console() -> NoReturn:
    """The ``judgerisk`` console script: :func:`main`, and the process ends when it returns.

    When a command returns, what it wrote is complete and closed (atomic writes, closed files,
    its forked processes reaped). The interpreter's teardown would then free every module's
    objects one by one and collect them: a tenth of a second of a two-second
    ``judgerisk score``, with nothing to show for it. So the streams are flushed, the exit
    handlers (:mod:`atexit`) run, and the process ends (:func:`os._exit`). While another
    thread runs (a normal exit waits for it), or where the interpreter does not expose its
    exit handlers, it exits the usual way.
    """
    code = main()
    if threading.active_count() == 1 and hasattr(atexit, "_run_exitfuncs"):
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except (OSError, ValueError):  # a closed pipe: the usual exit reports it
            sys.exit(code)
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


def main(argv: list[str] | None = None) -> int:
    """What the ``judgerisk`` command runs (:func:`console`, the console script, calls it); returns
    the exit code."""
    started = time.time()
    argv = list(sys.argv[1:] if argv is None else argv)
    heavy = {name for name in COMMANDS if get_command(name).heavy}
    try:
        parser = build_parser(extract=bool(argv) and argv[0] in heavy)
        args = parser.parse_args(argv)  # exits with 2 on usage errors
    except PluginError as exc:  # a plug-in read while parsing (a --conditions family)
        name = argv[0] if argv and not argv[0].startswith("-") else ""
        print(f"{f'judgerisk {name}'.rstrip()}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    args.argv, args.started = argv, started
    prog = f"judgerisk {args.command}"

    def _show(message, category, filename, lineno, file=None, line=None):
        print(f"{prog}: warning: {message}", file=sys.stderr)

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("default")
            # another library's deprecation notice is for its callers' developers, not for
            # the user of a command (pandas 2.2 with pyarrow < 15 warns on every parquet read)
            warnings.filterwarnings("ignore", category=DeprecationWarning)
            warnings.filterwarnings("default", category=DeprecationWarning, module="judgerisk")
            warnings.filterwarnings("ignore", message="IProgress not found")
            warnings.showwarning = _show
            import numpy as np

            with np.errstate(all="ignore"):
                return int(args.func(args) or EXIT_OK)
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except ModuleNotFoundError as exc:
        from judgerisk._extras import missing_dependency

        print(f"{prog}: error: missing dependency: {missing_dependency(exc)}", file=sys.stderr)
        return EXIT_DEPENDENCY
    except (InputError, PluginError, FileNotFoundError, ValueError, KeyError) as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except Exception as exc:  # noqa: BLE001 - the CLI must turn any failure into one line
        message, code = failure_line(exc)
        print(f"{prog}: error: {message}", file=sys.stderr)
        return code


def failure_line(exc: Exception) -> tuple[str, int]:
    """What an error no command turned into its own message means, in one line, and its exit
    code: a file the system refuses (permission, a full disk), an input nested too deeply or
    holding a number beyond a float's range are the input's or the machine's (exit 2 or 1, with
    what to check); a ``RuntimeError`` is a run that failed and says why (exit 1); anything
    else (``TypeError``, ``AttributeError``, ...) is judgerisk's own failure (exit 1, to
    report)."""
    detail = " ".join(str(exc).split())[:300]
    if isinstance(exc, PermissionError):
        where = exc.filename or "a file or folder"
        return (
            f"{where}: permission denied; check that you may read the inputs and write the "
            "output's folder",
            EXIT_USAGE,
        )
    if isinstance(exc, OSError):
        where = f"{exc.filename}: " if exc.filename else ""
        return f"{where}{exc.strerror or detail} (the system refused the operation)", EXIT_RUNTIME
    if isinstance(exc, RecursionError):
        return (
            "the input is nested too deeply to process (a record inside a record, thousands "
            "of levels deep); pass flat records",
            EXIT_USAGE,
        )
    if isinstance(exc, OverflowError):
        return float_overflow_message(detail), EXIT_USAGE
    if isinstance(exc, RuntimeError):  # judgerisk's own runtime failures say what happened
        return f"{type(exc).__name__}: {' '.join(str(exc).split())}", EXIT_RUNTIME
    return (
        f"internal error ({type(exc).__name__}: {detail}); this is judgerisk's failure, not "
        "your input's: please report it with the command line that caused it",
        EXIT_RUNTIME,
    )
