"""What every ``judgerisk`` command shares: exit codes, the overwrite rule, the record, types.

Exit codes
----------
:data:`EXIT_CODES`, the one table (the README's is tested against it): no two meanings share a
code, ``verify``'s outcomes included.

====  ===========================================================================
0     success (``verify``: the output reproduced)
1     runtime error (an unexpected failure while computing; the message says where)
2     usage error or bad input: wrong arguments, a missing or malformed file, a panel that
      breaks the data contract (the panel validation's message is printed), bad values
3     an optional dependency is missing (``extract`` needs the ``extract`` extra; ``report``
      needs the ``book`` extra: papermill, jupytext, markdown-it-py)
4     ``verify``: the output does not reproduce (the differing cells are listed)
5     ``verify``: cannot tell (an input is missing or changed, or the record is absent or
      malformed)
130   interrupted (Ctrl-C)
====  ===========================================================================

Errors go to stderr as one ``judgerisk <command>: error: ...`` line (plus the validation details),
warnings as ``judgerisk <command>: warning: ...`` lines; every message (the "wrote" lines
included) goes to stderr, stdout carries only what a command is asked to print (``--version``,
``run --list``). Every output path is checked before any work (extension, folder, writable, not
an input, and not existing unless ``--overwrite``, or ``--resume`` for a command that continues
a run: :func:`check_output`, the one rule), every output is written atomically
(:func:`write_output`, the one writer), and every output carries
its provenance record (:func:`command_record`, one shape for every command), which ``judgerisk
verify`` checks and recomputes through the command's own :meth:`Command.recompute`. Before a
long step a command says what it is doing in one line; progress bars are shown when stderr is a
terminal (``--progress`` / ``--no-progress`` decide otherwise: :func:`add_progress`). Every
option that takes a list accepts ``a b c`` and ``a,b,c`` (:func:`add_list`, the one helper).

A command is one module of this package holding one :class:`Command` (its parser, its run, and
what ``verify`` needs for its outputs), listed in :data:`COMMANDS`; the assembler
(:mod:`judgerisk.cli._app`) builds the parser from them. Nothing here imports numpy or pandas,
so ``judgerisk --help`` stays fast.
"""

from __future__ import annotations

import abc
import argparse
import dataclasses
import importlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from judgerisk.options import COUNT_MINIMA, OptionError, check_alpha, check_count

if TYPE_CHECKING:  # building the parser imports no pandas
    import pandas as pd

_S = TypeVar("_S")

__all__ = [
    "COMMANDS",
    "Command",
    "EXIT_OK",
    "EXIT_RUNTIME",
    "EXIT_USAGE",
    "EXIT_DEPENDENCY",
    "EXIT_DIFFERS",
    "EXIT_CANNOT_TELL",
    "EXIT_INTERRUPTED",
    "EXIT_CODES",
    "ListOption",
    "add_list",
    "split_list",
    "Formatter",
    "add_overwrite",
    "add_progress",
    "alpha",
    "check_output",
    "command_options",
    "command_record",
    "conditions",
    "count",
    "get_command",
    "count_of",
    "positive_int",
    "say",
    "seed",
    "settings_from",
    "write_output",
]

EXIT_OK, EXIT_RUNTIME, EXIT_USAGE, EXIT_DEPENDENCY = 0, 1, 2, 3
EXIT_DIFFERS, EXIT_CANNOT_TELL, EXIT_INTERRUPTED = 4, 5, 130

#: Every exit code of every command and its one meaning (the README's table is this one).
EXIT_CODES: dict[int, str] = {
    EXIT_OK: "success (verify: the output reproduced)",
    EXIT_RUNTIME: "runtime error: an unexpected failure while computing",
    EXIT_USAGE: "usage error or bad input: wrong arguments, a missing or malformed file, a "
    "panel that breaks the data contract, a bad value",
    EXIT_DEPENDENCY: "an optional dependency is missing (the message names the extra)",
    EXIT_DIFFERS: "verify: the output does not reproduce (the differing cells are listed)",
    EXIT_CANNOT_TELL: "verify: cannot tell (an input is missing or changed, or the record is "
    "absent or malformed)",
    EXIT_INTERRUPTED: "interrupted (Ctrl-C)",
}

#: The commands, in the order ``judgerisk --help`` lists them: name -> module of this package
#: (each module holds its :class:`Command` as ``COMMAND``; imported when the parser is built).
COMMANDS: dict[str, str] = {
    "simulate": "_simulate",
    "extract": "_extract",
    "perturb": "_perturb",
    "score": "_score",
    "select": "_select",
    "estimate": "_estimate",
    "report": "_report",
    "run": "_run",
    "import": "_import",
    "bpe": "_bpe",
    "verify": "verify",
}


def get_command(name: str) -> Command:
    """The :class:`Command` called ``name`` (its module is imported on first use)."""
    if name not in COMMANDS:
        raise OptionError(f"unknown command {name!r}; the commands are {', '.join(COMMANDS)}")
    return importlib.import_module(f"judgerisk.cli.{COMMANDS[name]}").COMMAND


# --------------------------------------------------------------------------- argument types
def split_list(values: str | list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """The names of a list option as given: ``a b c``, ``a,b,c`` or a mix (``a,b c``).

    Examples
    --------
    >>> split_list(["original,swap", "label1"])
    ('original', 'swap', 'label1')
    >>> split_list("majority, dawid_skene")
    ('majority', 'dawid_skene')
    """
    tokens = [values] if isinstance(values, str) else list(values)
    return tuple(n.strip() for t in tokens for n in t.split(",") if n.strip())


class ListOption(argparse.Action):
    """The action of every option that takes a list (:func:`add_list`).

    The values are split by :func:`split_list` (``a b c`` and ``a,b,c`` are the same list),
    each is passed through ``element`` (an argument type, or None) and the list through
    ``check`` (or None); it is stored as a tuple. A bad value is argparse's usage error (exit
    code 2) naming the option.
    """

    def __init__(
        self,
        option_strings: list[str],
        dest: str,
        element: Callable[[str], str] | None = None,
        check: Callable[[tuple[str, ...]], tuple[str, ...]] | None = None,
        **kwargs: Any,
    ) -> None:
        kwargs["nargs"] = "+"
        super().__init__(option_strings, dest, **kwargs)
        self.element, self.check = element, check

    def __call__(self, parser, namespace, values, option_string=None):
        names = split_list(values)
        try:
            if not names:
                raise argparse.ArgumentTypeError("expected at least one name")
            if self.element is not None:
                names = tuple(self.element(n) for n in names)
            if self.check is not None:
                names = tuple(self.check(names))
        except (argparse.ArgumentTypeError, ValueError) as exc:
            parser.error(f"argument {'/'.join(self.option_strings)}: {exc}")
        setattr(namespace, self.dest, names)


def add_list(
    p: argparse.ArgumentParser | argparse._ArgumentGroup,
    *flags: str,
    help: str,
    default: Any = None,
    element: Callable[[str], str] | None = None,
    check: Callable[[tuple[str, ...]], tuple[str, ...]] | None = None,
    metavar: str = "NAME",
) -> argparse.Action:
    """Add an option taking a list, written ``a b c`` or ``a,b,c``: the one list syntax.

    ``element`` checks each name, ``check`` the whole list (:class:`ListOption`); ``default``
    is a tuple, None for "not given" (the help then says the default in its own words) or
    ``argparse.SUPPRESS`` (absent unless given).
    """
    return p.add_argument(
        *flags,
        action=ListOption,
        element=element,
        check=check,
        default=default,
        metavar=metavar,
        help=f"{help}; a list: a b c or a,b,c",
    )


def conditions(names: tuple[str, ...]) -> tuple[str, ...]:
    """``--conditions``' check: declared conditions (the data contract's or a perturbation
    family's: :mod:`judgerisk.families`), unique, with ``original``."""
    from judgerisk.families import check_conditions

    return check_conditions(names)


def alpha(text: str) -> float:
    """``--alpha``: a target risk level in (0, 1)."""
    try:
        return check_alpha(text)
    except OptionError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _integer(text: str, lo: int, what: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
    if value < lo:
        raise argparse.ArgumentTypeError(f"expected {what}, got {text}")
    return value


def count_of(name: str) -> Callable[[str], int]:
    """The argument type of the count option ``name`` (``--n-folds``, ``--n-seeds``): an
    integer checked by :func:`judgerisk.options.check_count`, the library's own check."""

    def parse(text: str) -> int:
        try:
            return check_count(name, int(text))
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{name} must be an integer >= {COUNT_MINIMA.get(name, 1)}, got {text!r}"
            ) from None

    parse.__name__ = name  # argparse names the type in its error message
    return parse


def positive_int(text: str) -> int:
    """An integer >= 1 (item, judge, seed and split counts)."""
    return _integer(text, 1, "a positive integer")


def count(text: str) -> int:
    """An integer >= 0."""
    return _integer(text, 0, "an integer >= 0")


def seed(text: str) -> int:
    """A random seed: an integer in [0, 2**32)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}") from None
    if not 0 <= value < 2**32:
        raise argparse.ArgumentTypeError(f"expected an integer in [0, 2**32), got {text}")
    return value


class Formatter(argparse.RawDescriptionHelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
    """Descriptions as written, and every option's default in its help.

    Flags, required options and options whose default is "not given" say their default in
    their own words instead of ``(default: False)`` / ``(default: None)``.
    """

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.required or action.default is None or isinstance(action.default, bool):
            return action.help
        if isinstance(action, ListOption) and isinstance(action.default, tuple):
            return f"{action.help} (default: {' '.join(action.default)})"  # as it is typed
        return super()._get_help_string(action)


# --------------------------------------------------------------------------- shared flags
def add_overwrite(p: argparse.ArgumentParser) -> None:
    """``--overwrite``: the one flag that lifts :func:`check_output`'s refusal."""
    p.add_argument(
        "--overwrite",
        action="store_true",
        help="replace existing output files (default: an existing output is refused)",
    )


def add_progress(p: argparse.ArgumentParser, default: bool | None = None) -> None:
    """``--progress`` / ``--no-progress`` (default: bars only when stderr is a terminal)."""
    p.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=default,
        help="show progress bars on stderr (default: only when stderr is a terminal)"
        if default is None
        else "show progress bars on stderr",
    )


def check_output(
    args: argparse.Namespace,
    path: str | Path,
    inputs: tuple[str | Path | None, ...] = (),
    *,
    option: str = "-o/--output",
    suffixes: tuple[str, ...] | None = None,
) -> Path:
    """The one output rule of every command, checked before any work.

    The extension (``suffixes``; default: a table's, csv / parquet / jsonl), the folder and the
    permissions are checked, the output (and its sidecar) may not be one of ``inputs``, and an
    existing output (or sidecar) is refused unless the command was given ``--overwrite``
    (:func:`judgerisk._provenance.check_output_path`).
    """
    from judgerisk._provenance import TABLE_SUFFIXES, check_output_path

    ins = tuple(i for i in inputs if i is not None)
    return check_output_path(
        path, suffixes or TABLE_SUFFIXES, ins, option=option, overwrite=args.overwrite
    )


def write_output(
    args: argparse.Namespace,
    table: pd.DataFrame,
    path: str | Path,
    record: dict,
    settings: dict | None = None,
) -> Path:
    """Publish a table with its record finished with ``settings``: the other half of the rule.

    Written atomically, the table and its sidecar as one unit; without ``--overwrite`` (or
    ``--resume``, for a command that continues a run) onto free names only, so that of two
    commands racing for one new output exactly one writes it
    (:func:`judgerisk._provenance.write_table_with_record`).
    """
    from judgerisk._provenance import finish_record, write_table_with_record

    replace = bool(args.overwrite or getattr(args, "resume", False))
    return write_table_with_record(table, path, finish_record(record, settings), overwrite=replace)


#: Namespace entries that are the command line's machinery, not options of a command.
_MACHINERY = ("func", "command", "argv", "started")


def command_options(args: argparse.Namespace) -> dict[str, Any]:
    """Every option of the command as parsed (defaults included), without the machinery."""
    return {k: v for k, v in vars(args).items() if k not in _MACHINERY}


def command_record(args: argparse.Namespace, inputs: dict | None = None) -> dict:
    """The provenance record of this command line: the one shape every command writes.

    ``command`` is the argv (``["judgerisk", NAME, ...]``), ``parameters`` is ``{"command":
    NAME, **every option}`` (defaults included, nothing else), ``inputs`` maps a role to
    ``(path, rows)``; :func:`judgerisk._provenance.finish_record` adds the output's settings.
    """
    from judgerisk._provenance import make_record

    return make_record(
        ["judgerisk", *args.argv],
        {"command": args.command, **command_options(args)},
        inputs or {},
        args.started,
    )


def settings_from(cls: type[_S], options: dict[str, Any]) -> _S:
    """A settings object of :mod:`judgerisk.options` from the options (or record) naming its fields.

    Options it does not hold (the output, ``--overwrite``, ...) are left out, and fields the
    options do not name keep the settings' defaults: the one place a command's defaults are
    written, which its parser shows and its :meth:`Command.recompute` reads. Lists (a JSON
    record's) become tuples.
    """
    known = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    given = {k: tuple(v) if isinstance(v, list) else v for k, v in options.items() if k in known}
    return cls.from_parameters(given)  # type: ignore[attr-defined]


def say(args: argparse.Namespace, doing: str) -> None:
    """One line on stderr saying what the command does next (before a long step)."""
    print(f"judgerisk {args.command}: {doing} ...", file=sys.stderr, flush=True)


def panel_size(panel: pd.DataFrame) -> str:
    """``"N items x J judges x C conditions (R rows)"``."""
    return (
        f"{panel['item'].nunique()} items x {panel['judge'].nunique()} judges x "
        f"{panel['condition'].nunique()} conditions ({len(panel)} rows)"
    )


# --------------------------------------------------------------------------- the base class
class Command(abc.ABC):
    """One subcommand: its parser, its run and, for ``verify``, the recompute of its outputs.

    A subclass sets :attr:`name`, :attr:`help` and :attr:`description` (and :attr:`epilog`),
    adds its options in :meth:`add_arguments` and does the work in :meth:`run`. A command whose
    outputs ``judgerisk verify`` recomputes sets :attr:`inputs` (the roles of its input tables),
    and implements :meth:`recompute` (and :meth:`check_sizes`, the bounds of the work a record
    may ask for). The module holding it exports it as ``COMMAND`` and is listed in
    :data:`COMMANDS`.
    """

    name: str = ""
    help: str = ""
    description: str = ""
    epilog: str | None = None
    #: Whether ``judgerisk verify`` recomputes this command's outputs.
    recomputable: bool = False
    #: Whether building the options imports heavy code (``extract``: the backends' registry):
    #: then the parser is built in full only when this is the command (:meth:`register`).
    heavy: bool = False
    #: Input role -> "panel" (read with the data contract's checks), "panel, any conditions"
    #: (the same, conditions outside the contract's six allowed) or "table" (read as is): the
    #: tables ``verify`` loads for :meth:`check_sizes` and :meth:`recompute`.
    inputs: dict[str, str] = {}

    def register(
        self, sub: argparse._SubParsersAction, full: bool = True
    ) -> argparse.ArgumentParser:
        """Add this command's parser to the ``judgerisk`` subparsers.

        ``full=False`` adds only its name and help (``judgerisk --help`` of a :attr:`heavy`
        command, whose options are not built).
        """
        if not full:
            return sub.add_parser(self.name, help=self.help, add_help=False)
        p = sub.add_parser(
            self.name,
            help=self.help,
            description=self.description,
            epilog=self.epilog,
            formatter_class=Formatter,
        )
        self.add_arguments(p)
        p.set_defaults(func=self.run)
        return p

    def add_arguments(self, p: argparse.ArgumentParser) -> None:  # noqa: B027 (optional hook)
        """Add the command's arguments and options to its parser (none by default)."""

    @abc.abstractmethod
    def run(self, args: argparse.Namespace) -> int:
        """Do the work; returns the exit code."""

    # ---- what ``judgerisk verify`` asks of a command whose outputs it recomputes
    def load_inputs(self, record: dict) -> dict[str, pd.DataFrame]:
        """The input tables of a record (their sha256 already checked), by role."""
        import warnings

        from judgerisk.panel import load_panel, read_table

        out = {}
        for role, kind in self.inputs.items():
            entry = record["inputs"].get(role)
            if entry is None:  # an optional input (bpe's calibration)
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                if kind == "table":
                    out[role] = read_table(entry["path"])
                else:
                    conds = {} if kind == "panel" else {"conditions": None}
                    out[role] = load_panel(entry["path"], **conds)
        return out

    def check_sizes(self, record: dict, n_output: int, loaded: dict) -> list[str]:
        """Where the record's sizes disagree with the output, or ask for too much work."""
        return []

    def read_output(self, path: Path) -> pd.DataFrame:
        """The table of an output file that :meth:`recompute` reproduces."""
        from judgerisk.panel import read_table

        return read_table(path)

    def recompute(self, record: dict, loaded: dict) -> pd.DataFrame:
        """The output table recomputed from the record's parameters and input tables (a command
        whose :attr:`recomputable` is true overrides it; ``verify`` reads a ``TypeError`` as
        "cannot tell")."""
        raise TypeError(f"judgerisk verify does not recompute {self.name} outputs")

    def output_settings(self, table: pd.DataFrame, loaded: dict, record: dict) -> dict:
        """The ``settings`` the command writes into the record of ``table`` (its output, as
        :meth:`recompute` gives it), from its input tables ``loaded`` and ``record``'s
        parameters: :meth:`run` writes them, and ``verify`` compares them with the record's."""
        raise TypeError(f"judgerisk verify does not regenerate the settings of {self.name}")

    def compare_output(
        self, path: Path, record: dict, loaded: dict, rtol: float, atol: float
    ) -> list[str]:
        """What else of the output differs once its table reproduces (a report: its page)."""
        return []
