"""``judgerisk verify``: does an output reproduce from its provenance record?

:func:`verify` reads the record an output carries (:mod:`judgerisk._provenance`), checks it
field by field, checks that each input still exists with the recorded sha256, that the
command line the record shows agrees with its parameters and that its sizes agree with the
output (:mod:`judgerisk.report._record_checks`, and the bounds the command that wrote it sets:
:meth:`~judgerisk.cli.common.Command.check_sizes`, before any recomputation), recomputes the
output with that command's own :meth:`~judgerisk.cli.common.Command.recompute` from the recorded
parameters (read into the command's settings object, so no default is written here) and
compares every cell (a csv, and the csv a report embeds, read back exactly as written: numeric
columns as numbers, the others as their exact text, :func:`compare_csv`; a csv's text is read
byte for byte, so a ``\r\n`` inside a cell stays ``\r\n``), then regenerates the whole record
the command would write and compares it with the one read, field by field
(:func:`regenerated_record`, :func:`compare_records`: an edited setting, a forged
``extensions`` entry or an added field is named), except the fields it declares dynamic
(:data:`DYNAMIC_FIELDS`: the start and wall time, the machine, the code); a report must hold
nothing that could run or fetch (:func:`judgerisk._plots.escape.live_content`) and is
regenerated, and every visible word, number, figure and its markup (elements, attributes,
styles, scripts, where each text sits) compared (:mod:`judgerisk.report._check`). Scoring runs
BLAS on one thread (:mod:`judgerisk._util.determinism`), so the numbers are identical across
processes and BLAS thread counts; the tolerance only absorbs the text round trip of csv / jsonl
numbers.

Outcome: ``reproduced`` (exit code 0), ``differs`` (4, with the differing cells, after what
differs in the code: commit, uncommitted changes, runtime-registered methods), or
``cannot tell`` (5: an input is missing or changed, the record is malformed or absent, or the
output is a notebook or extraction folder, which are not recomputed): codes of their own,
shared with no runtime or usage error (:data:`judgerisk.cli.common.EXIT_CODES`). Differences in library
versions are warnings, not failures.
"""

from __future__ import annotations

import argparse
import io
import sys
import textwrap
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judgerisk._util.files import NotRegularFileError
from judgerisk._util.version import package_version
from judgerisk.cli.common import (
    COMMANDS,
    EXIT_CANNOT_TELL,
    EXIT_DIFFERS,
    EXIT_OK,
    Command,
    get_command,
    say,
)
from judgerisk.options import InputError

if TYPE_CHECKING:  # numpy and pandas are imported when a table is compared
    import pandas as pd

__all__ = [
    "COMMAND",
    "DYNAMIC_FIELDS",
    "RTOL",
    "ATOL",
    "RecordError",
    "Verification",
    "verify",
    "compare_tables",
    "compare_csv",
    "compare_records",
    "regenerated_record",
]

#: Relative and absolute tolerance of a numeric cell.
RTOL, ATOL = 1e-9, 1e-12
_MAX_SHOWN = 20

#: The fields of a provenance record that change from one run to the next and are checked
#: elsewhere, so :func:`compare_records` leaves them out (the one list; every other field of
#: the record read must equal the regenerated record's, and no other field may be present).
DYNAMIC_FIELDS: dict[str, str] = {
    "started": "the start time",
    "wall_s": "the wall time",
    "environment": "the machine: its platform and library versions (a warning names the "
    "versions that differ)",
    "judgerisk": "the code: judgerisk's version, git commit and uncommitted changes (named "
    "first when the output differs)",
    "settings.assumptions.inputs": "import: how the files were found (folders and patterns "
    "as given on the command line; the files themselves are the record's inputs)",
    "settings.assumptions.files": "import: the files read, named as on the command line (their "
    "full paths and sha256 are the record's inputs)",
}


@dataclass
class Verification:
    """What :func:`verify` found.

    Attributes
    ----------
    status : {"reproduced", "differs", "cannot tell"}
    messages : list of str
        The differing cells, or why it cannot tell.
    """

    status: str
    messages: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        return {"reproduced": EXIT_OK, "differs": EXIT_DIFFERS}.get(self.status, EXIT_CANNOT_TELL)


class RecordError(InputError):
    """A provenance record that is not what judgerisk writes (verify: cannot tell)."""


def _field(record: object, dotted: str, kind: type | tuple[type, ...] = object) -> Any:
    """``record[a][b]...`` for ``dotted = "a.b..."``, or a :class:`RecordError` naming it."""
    value = record
    for i, key in enumerate(dotted.split(".")):
        where = ".".join(dotted.split(".")[:i]) or "the record"
        if not isinstance(value, dict):
            raise RecordError(f"the provenance record's {where} is not a JSON object")
        if key not in value:
            raise RecordError(f"the provenance record has no field {dotted!r}")
        value = value[key]
    if not isinstance(value, kind) or isinstance(value, bool) and kind in (int, float):
        raise RecordError(
            f"the provenance record's field {dotted!r} has the wrong type "
            f"({type(value).__name__}: {str(value)[:60]!r})"
        )
    return value


def _check_inputs(record: dict) -> list[str]:
    from judgerisk._provenance import sha256_path

    problems = []
    for role in _field(record, "inputs", dict):
        path = Path(_field(record, f"inputs.{role}.path", str))
        recorded = _field(record, f"inputs.{role}.sha256", str)
        if not (path.is_file() or path.is_dir()):  # a folder: a partitioned parquet panel
            problems.append(f"input {role} {path} is missing")
        elif (now := sha256_path(path)) != recorded:
            problems.append(f"input {role} {path} has changed: sha256 {now} (recorded {recorded})")
    return problems


def _warn_versions(record: dict) -> None:
    from judgerisk._provenance import library_versions

    now = library_versions()
    then = record.get("environment")
    then = then if isinstance(then, dict) else {}
    differ = {k: (then.get(k), v) for k, v in now.items() if k in then and then.get(k) != v}
    about = record.get("judgerisk")
    recorded = about.get("version") if isinstance(about, dict) else None
    if recorded and recorded != package_version():
        differ["judgerisk"] = (recorded, package_version())
    if differ:
        text = ", ".join(f"{k} {a} -> {b}" for k, (a, b) in differ.items())
        warnings.warn(f"library versions differ from the recorded run: {text}", stacklevel=3)


def _cell_text(value) -> str:
    import numpy as np

    if isinstance(value, float | np.floating):
        return "NaN" if np.isnan(value) else repr(float(value))
    return repr(value.item() if isinstance(value, np.generic) else value)


def compare_tables(
    output: pd.DataFrame, recomputed: pd.DataFrame, rtol: float = RTOL, atol: float = ATOL
) -> list[str]:
    """The cells of ``output`` that differ from ``recomputed`` (row by row, column by column).

    Numbers agree within ``|a - b| <= atol + rtol |b|`` (NaN equals NaN); other values agree
    when their text agrees. Returns one line per differing cell (at most twenty, then a
    count), or per missing / extra column or row count.
    """
    import numpy as np
    import pandas as pd

    problems = []
    if len(output) != len(recomputed):
        return [f"{len(output)} rows in the output, {len(recomputed)} recomputed"]
    for col in recomputed.columns.difference(output.columns):
        problems.append(f"column {col!r} is missing from the output")
    for col in output.columns.difference(recomputed.columns):
        problems.append(f"column {col!r} is not in the recomputed table")
    keys = output["item"].astype(str).to_numpy() if "item" in output.columns else None
    n_diff = 0
    for col in [c for c in recomputed.columns if c in output.columns]:
        a, b = output[col], recomputed[col]
        if pd.api.types.is_numeric_dtype(b) and not pd.api.types.is_bool_dtype(b):
            x = pd.to_numeric(a, errors="coerce").to_numpy(np.float64)
            y = b.to_numpy(np.float64)
            same = np.isclose(x, y, rtol=rtol, atol=atol, equal_nan=True)
        else:
            x, y = a.to_numpy(object), b.to_numpy(object)
            same = np.array(
                [(pd.isna(u) and pd.isna(v)) or str(u) == str(v) for u, v in zip(x, y, strict=True)]
            )
        for i in np.flatnonzero(~same):
            n_diff += 1
            if n_diff <= _MAX_SHOWN:
                where = f"row {i}" + (f" (item {keys[i]})" if keys is not None else "")
                problems.append(
                    f"{where}, column {col!r}: {_cell_text(x[i])} in the output, "
                    f"{_cell_text(y[i])} recomputed (tolerance rtol={rtol:g}, atol={atol:g})"
                )
    if n_diff > _MAX_SHOWN:
        problems.append(f"... and {n_diff - _MAX_SHOWN} more differing cell(s)")
    return problems


def _csv_text(path: Path) -> str | None:
    """The csv text of an output (a csv file, or the score table a report embeds), or None.

    Read byte for byte (no newline translation): a cell holding ``\r\n`` keeps it.
    """
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return path.read_bytes().decode("utf-8")
    if suffix in (".html", ".htm"):
        from judgerisk.report.build import embedded_csv

        return embedded_csv(path)
    return None


def _text_columns(csv: str) -> pd.DataFrame:
    """Every field of a csv exactly as written (no type inference, no NA values)."""
    import pandas as pd

    return pd.read_csv(io.StringIO(csv), dtype=str, keep_default_na=False, na_values=[])


def compare_csv(
    text: str, recomputed: pd.DataFrame, rtol: float = RTOL, atol: float = ATOL
) -> list[str]:
    """:func:`compare_tables` of a csv's text against the table recomputed.

    Numeric columns of ``recomputed`` are compared as numbers (an empty field is NaN); every
    other column as the exact text the csv writer gives the recomputed value (``"0089"``
    stays ``"0089"``, ``"None"`` and ``"NA"`` are text, an empty field is a missing value), so
    a csv read back never changes a value by inferring its type.
    """
    import numpy as np
    import pandas as pd

    output = _text_columns(text)
    expected = _text_columns(recomputed.to_csv(index=False))
    for col in recomputed.columns:
        values = recomputed[col]
        numeric = pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values)
        if numeric and col in output.columns:
            expected[col] = values.to_numpy()
            output[col] = pd.to_numeric(output[col].replace("", np.nan), errors="coerce")
    return compare_tables(output, expected, rtol, atol)


def regenerated_record(
    record: dict,
    command: Command,
    recomputed: pd.DataFrame,
    loaded: dict,
    parser: argparse.ArgumentParser,
) -> dict:
    """The record ``command`` would write for ``recomputed``, from the record read.

    The command line is the record's (:func:`~judgerisk.report._record_checks.check_command`
    checked it against the parameters), and the parameters are that command line parsed again
    (the options the record names: one it leaves out, as a record written before the option
    existed does, takes its default); each input is the recorded path with its sha256 now and
    its recorded row count (checked against the input); ``extensions`` are the methods
    registered now, in the registries the record names (a registry the recorded run never
    read is not compared); ``settings`` are the command's
    (:meth:`~judgerisk.cli.common.Command.output_settings`). The :data:`DYNAMIC_FIELDS` are
    copied from the record.
    """
    import json

    from judgerisk._provenance import finish_record, runtime_extensions
    from judgerisk.cli.common import command_options

    params = record["parameters"]
    cmd = record["command"]
    if isinstance(cmd, list) and cmd[:1] == ["judgerisk"]:
        import contextlib
        import io as _io

        with contextlib.redirect_stderr(_io.StringIO()), contextlib.redirect_stdout(_io.StringIO()):
            args = parser.parse_args([str(a) for a in cmd[1:]])
        parsed = {"command": args.command, **command_options(args)}
        # a parameter the record leaves out (written before it existed) takes its default
        given = params if isinstance(params, dict) else {}
        params = {k: v for k, v in parsed.items() if k in given}
    inputs = {  # each sha256 was checked against the file before (step 2)
        role: {"path": entry["path"], "sha256": entry["sha256"], "rows": entry.get("rows")}
        for role, entry in record["inputs"].items()
    }
    recorded = record.get("extensions")
    now = runtime_extensions()
    names = recorded if isinstance(recorded, dict) else {}
    out = {
        **{k: record[k] for k in DYNAMIC_FIELDS if "." not in k and k in record},
        "extensions": {what: now.get(what, {}) for what in names},
        "command": cmd,
        "parameters": params,
        "inputs": inputs,
    }
    settings = command.output_settings(recomputed, loaded, record)
    out = finish_record({**out, "_t0": 0.0}, settings)
    out["wall_s"] = record.get("wall_s")
    return json.loads(json.dumps(out, default=str))  # the types a record read back has


def _dotted(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _same(a: Any, b: Any) -> bool:
    import math

    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return math.isclose(a, b, rel_tol=RTOL, abs_tol=ATOL)
    return bool(a == b)


def compare_records(read: Any, regenerated: Any, path: str = "") -> list[str]:
    """Where the record read differs from the regenerated one, one line per field (dotted).

    A field in one and not the other is named; values are compared exactly, numbers within
    :data:`RTOL`, :data:`ATOL`; the :data:`DYNAMIC_FIELDS` are left out.
    """
    if path in DYNAMIC_FIELDS:
        return []
    if isinstance(read, dict) and isinstance(regenerated, dict):
        problems = []
        for key in [*regenerated, *(k for k in read if k not in regenerated)]:
            where = _dotted(path, str(key))
            if where in DYNAMIC_FIELDS:
                continue
            if key not in read:
                problems.append(
                    f"record field {where!r} is missing (regenerated: {_shown(regenerated[key])})"
                )
            elif key not in regenerated:
                problems.append(
                    f"record field {where!r} is not one judgerisk writes here "
                    f"({_shown(read[key])} in the record)"
                )
            else:
                problems += compare_records(read[key], regenerated[key], where)
        return problems
    if isinstance(read, list) and isinstance(regenerated, list) and len(read) == len(regenerated):
        return [
            p
            for k, (a, b) in enumerate(zip(read, regenerated, strict=True))
            for p in compare_records(a, b, f"{path}[{k}]")
        ]
    if _same(read, regenerated):
        return []
    return [
        f"record field {path!r}: {_shown(read)} in the record, {_shown(regenerated)} regenerated"
    ]


def _shown(value: Any) -> str:
    import json

    text = json.dumps(value, default=str, sort_keys=True)
    return text if len(text) <= 80 else text[:77] + "..."


def _not_recomputable(path: Path, command: object, n_inputs: int) -> Verification:
    what = {".ipynb": "an executed notebook", ".json": "an extraction folder's manifest"}
    kind = what.get(path.suffix.lower(), f"an output of {command!r}")
    recomputed = [n for n in COMMANDS if get_command(n).recomputable]
    return Verification(
        "cannot tell",
        [
            f"{path} is {kind}: its record names the run and its {n_inputs} input(s) still "
            "have their recorded sha256, but judgerisk verify recomputes only the outputs of "
            f"{', '.join(recomputed)}; rerun it (judgerisk run, judgerisk extract) and compare"
        ],
    )


def _reproduces(path: Path, record: dict, parser: argparse.ArgumentParser) -> Verification:
    """The checks after the record was read (any malformed field raises RecordError)."""
    from judgerisk.report._record_checks import (
        check_command,
        check_input_rows,
        environment_differences,
    )

    if not isinstance(record, dict):
        raise RecordError(f"{path}: the provenance record is not a JSON object")
    problems = _check_inputs(record)
    if problems:
        return Verification("cannot tell", problems)
    name = _field(record, "parameters", dict).get("command")
    command = get_command(name) if isinstance(name, str) and name in COMMANDS else None
    if command is None or not command.recomputable or path.suffix.lower() in (".ipynb", ".json"):
        return _not_recomputable(path, name, len(record["inputs"]))
    _warn_versions(record)
    table = command.read_output(path)
    problems = check_command(record, parser)
    if problems:
        return Verification("differs", problems)
    loaded = command.load_inputs(record)
    try:
        problems = check_input_rows(record, loaded)
        problems += command.check_sizes(record, len(table), loaded)
    except ValueError as exc:
        problems = [str(exc)]
    if problems:
        return Verification("differs", ["not recomputed: " + p for p in problems])
    hints = environment_differences(record)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            recomputed = command.recompute(record, loaded)
    except KeyError as exc:
        return Verification("cannot tell", [*hints, f"the record has no parameter {exc}"])
    except (ValueError, TypeError) as exc:  # InputError (bad data or record) is a ValueError
        return Verification("cannot tell", [*hints, f"recomputing failed: {exc}"])
    text = _csv_text(path)
    diff = compare_tables(table, recomputed) if text is None else compare_csv(text, recomputed)
    if not diff:
        try:
            regenerated = regenerated_record(record, command, recomputed, loaded, parser)
        except TypeError as exc:  # a command that does not regenerate its settings
            return Verification("cannot tell", [*hints, str(exc)])
        diff = compare_records(record, regenerated)
    if not diff:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            diff = command.compare_output(path, record, loaded, RTOL, ATOL)
    return Verification("differs", [*hints, *diff]) if diff else Verification("reproduced")


def verify(output: str | Path, *, parser: argparse.ArgumentParser | None = None) -> Verification:
    """Check that an output reproduces from its provenance record.

    In order: the record is a JSON object with the fields judgerisk writes (a key given twice
    is refused); each input has its recorded sha256; the command line the record shows agrees
    with its parameters; the record's sizes agree with the output and bound the work
    (:mod:`judgerisk.report._record_checks`); then the output is recomputed and every cell
    compared (within :data:`RTOL`, :data:`ATOL`; a csv's text columns exactly as written,
    :func:`compare_csv`). A report must then hold no live content (no script but its JSON
    record, no event handler, no ``javascript:`` or external URL, no frame or object:
    :func:`judgerisk._plots.escape.live_content`), and it is regenerated and compared word by
    word, figure by figure (pixels) and element by element: the markup, attributes, style
    and script text and where each text sits, with only pandas' random table ids, the image
    data, the embedded table's data and the record's JSON left out
    (:func:`judgerisk.report._check.compare_visible`). When recomputing fails or differs, what
    differs in the code (git commit, uncommitted changes, runtime-registered methods) is
    named first.

    Parameters
    ----------
    output : path-like
        A score or decision table (parquet, or csv / jsonl with its sidecar), a simulated
        panel, or an HTML report. Notebooks and extraction manifests get their inputs
        checked and "cannot tell" (they are not recomputed).
    parser : argparse.ArgumentParser, optional
        The ``judgerisk`` command-line parser against which a record's command line is parsed
        and compared with its parameters (default: :func:`judgerisk.cli._app.build_parser`).

    Returns
    -------
    Verification
        ``status`` and ``messages``; ``exit_code`` is 0, 4 or 5
        (:data:`judgerisk.cli.common.EXIT_CODES`).

    Raises
    ------
    judgerisk._util.files.NotRegularFileError
        When the output or its sidecar is a FIFO, a device or a socket (nothing is read; the
        command line exits with 2, as for any bad input).

    Warns
    -----
    UserWarning
        When the library versions differ from the recorded ones.
    """
    from judgerisk._provenance import read_record

    if parser is None:
        from judgerisk.cli._app import build_parser

        parser = build_parser(extract=False)
    path = Path(output)
    try:
        return _reproduces(path, read_record(path), parser)
    except NotRegularFileError:  # the output or its sidecar is a FIFO: bad input, exit 2
        raise
    except InputError as exc:  # an unreadable file or record (a PanelError, a RecordError)
        return Verification("cannot tell", [str(exc)])


class Verify(Command):
    name = "verify"
    help = "check that an output reproduces from its provenance record"
    description = textwrap.dedent(
        """\
        Read the provenance record of a report, a score table, a decision table, a BPE
        table, an imported or a simulated panel, check that each input still has its
        recorded sha256 and that the record's command line and sizes agree with it,
        recompute the output with the recorded parameters and compare every cell (a
        report: every visible number and figure of the page regenerated). Notebooks and
        extraction folders: cannot tell.
        Exit 0: reproduced. Exit 4: some cells differ (listed, with the tolerance).
        Exit 5: cannot tell (an input is missing or changed, or no record).
        Different library versions are a warning, not a failure."""
    )
    epilog = "example:\n  judgerisk verify report.html\n  judgerisk verify scores.csv"

    def add_arguments(self, p: argparse.ArgumentParser) -> None:
        p.add_argument("output", help="a judgerisk output (.html, .csv, .parquet, .jsonl)")

    def run(self, args: argparse.Namespace) -> int:
        say(args, f"checking the inputs of {args.output} and recomputing it from its record")
        result = verify(args.output)
        if result.status == "reproduced":
            print(f"{args.output}: reproduced", file=sys.stderr)
            return result.exit_code
        head = "does not reproduce" if result.status == "differs" else "cannot tell"
        print(f"{args.output}: {head}:", file=sys.stderr)
        for line in result.messages:
            print(f"  {line}", file=sys.stderr)
        return result.exit_code


COMMAND = Verify()
