"""The assembler: the ``judgerisk`` parser built from every command, and :func:`main`.

Each command is a :class:`~judgerisk.cli.common.Command` in its own module
(:data:`~judgerisk.cli.common.COMMANDS`); :func:`build_parser` registers them in order and
:func:`main` runs the one asked for, turning its failures into one line and an exit code
(:mod:`judgerisk.cli.common`). Only ``extract`` imports heavy code to build its options, so it is
built in full only when it is the command.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
import time
import warnings

from judgerisk._util.version import package_version
from judgerisk.cli.common import (
    COMMANDS,
    EXIT_DEPENDENCY,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_RUNTIME,
    EXIT_USAGE,
    get_command,
)
from judgerisk.options import InputError

__all__ = ["build_parser", "main"]

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
  judgerisk extract --help

outputs: a command refuses an existing output file unless --overwrite is given (then it is
replaced atomically); it never writes over one of its inputs. Progress bars are shown when
stderr is a terminal (--progress / --no-progress to choose).

exit codes: 0 ok, 1 runtime error, 2 usage error or bad input (e.g. a panel that breaks the
data contract), 3 optional dependency missing, 130 interrupted.
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

    ``extract=False`` lists the ``extract`` command without importing its options (what
    :func:`main` does unless the command is ``extract``).
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
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action=_Version, help="show the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in COMMANDS:
        command = get_command(name)
        if name == "extract":
            command.register(sub, full=extract)  # type: ignore[call-arg]
        else:
            command.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``judgerisk`` console script; returns the exit code."""
    started = time.time()
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(extract=bool(argv) and argv[0] == "extract")
    args = parser.parse_args(argv)  # exits with 2 on usage errors
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
        from judgerisk.extras import missing_dependency

        print(f"{prog}: error: missing dependency: {missing_dependency(exc)}", file=sys.stderr)
        return EXIT_DEPENDENCY
    except (InputError, FileNotFoundError, ValueError, KeyError) as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except Exception as exc:  # noqa: BLE001 - the CLI must turn any failure into exit code 1
        print(f"{prog}: error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_RUNTIME
