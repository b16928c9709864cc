"""Reading and writing panels and tables: csv, parquet and jsonl, by extension.

:func:`read_table` reads a table as given (ids kept as written), :func:`load_panel` reads and
validates a panel (the one place a panel file enters), :func:`write_table` and
:func:`save_panel` write atomically (:func:`judgerisk._util.safe_write.atomic_write`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd

from judgerisk._util import json_text
from judgerisk._util.files import check_regular, float_overflow_message
from judgerisk._util.safe_write import atomic_write
from judgerisk.families import DECLARED, DeclaredConditions
from judgerisk.panel._contract import (
    PanelError,
    PanelFileNotFoundError,
    validate_frame,
)

__all__ = [
    "read_table",
    "write_table",
    "load_panel",
    "save_panel",
    "jsonl_chunks",
]

_ID_COLUMNS = ("item", "judge", "condition", "gold")
_INT_TEXT = re.compile(r"^-?(0|[1-9][0-9]*)$")


def _ids_as_given(df: pd.DataFrame) -> pd.DataFrame:
    """csv ids read as text; an item column of plain integers (no leading zero) becomes int."""
    if "item" in df.columns and pd.api.types.is_string_dtype(df["item"]):
        text = df["item"]
        if text.notna().all():
            # each distinct id checked once (a panel repeats an item judges x conditions times)
            codes, ids = pd.factorize(text)
            if all(_INT_TEXT.match(str(v)) for v in ids):
                as_int = pd.to_numeric(pd.Series(ids), errors="coerce")
                if as_int.notna().all() and (as_int.abs() < 2**53).all():
                    df["item"] = as_int.to_numpy(dtype=np.int64)[codes]
    return df


#: pandas' default missing-value markers, applied to every csv column except the names.
_CSV_NA = (
    "", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
    "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null",
)  # fmt: skip
#: Columns of names: only an empty field is missing there (a judge may be called "NA").
_NAME_COLUMNS = ("item", "judge", "condition")


def _read_csv(path: Path, sep: str = ",") -> pd.DataFrame:
    """A csv (``sep=","``) or a tab-separated table (``sep="\\t"``, ``.tsv``), ids as given."""
    header = pd.read_csv(path, sep=sep, header=None, nrows=1, dtype=str, keep_default_na=False)
    names = [str(v) for v in header.iloc[0]] if len(header) else []
    seen = {name for name in names if names.count(name) > 1}
    if seen:
        name = sorted(seen)[0]
        where = [i + 1 for i, n in enumerate(names) if n == name]
        raise PanelError(
            f"{path}: column {name!r} appears {len(where)} times in the header (columns "
            f"{where}); keep one"
        )
    dtype = {c: str for c in _ID_COLUMNS if c in names}
    na = {c: [""] if c in _NAME_COLUMNS else list(_CSV_NA) for c in names}
    table = pd.read_csv(path, sep=sep, dtype=dtype, keep_default_na=False, na_values=na)
    _check_last_row(path, len(names), len(table), sep)
    return _ids_as_given(table)


def _check_last_row(path: Path, n_columns: int, n_rows: int, sep: str = ",") -> None:
    """Refuse a csv cut off in its last row (no final newline and fewer fields than the header).

    pandas fills a short row's missing fields with NaN, so a file cut short by an interrupted
    write or download would otherwise lose the last row's values silently (an optional ``gold``
    simply vanishes).
    """
    import csv

    with open(path, "rb") as f:
        f.seek(0, 2)
        size = f.tell()
        f.seek(max(0, size - 65536))
        tail = f.read()
    if not n_rows or not tail or tail.endswith((b"\n", b"\r")):
        return
    last = tail.rsplit(b"\n", 1)[-1].decode("utf-8", errors="replace")
    if last.count('"') % 2:  # inside a quoted field that spans lines: cannot tell, keep it
        return
    fields = next(csv.reader([last], delimiter=sep), [])
    if len(fields) < n_columns:
        raise PanelError(
            f"{path}: the file ends in the middle of row {n_rows - 1} (its last line has "
            f"{len(fields)} of the header's {n_columns} fields and no line end): it looks "
            "truncated; write it again"
        )


def _read_jsonl(path: Path) -> pd.DataFrame:
    """jsonl with values as given (``"007"`` stays text); a broken line is named."""
    rows = list(_jsonl_records(path))
    if not rows:
        raise PanelError(f"{path}: the file holds no records")
    return pd.DataFrame.from_records(rows)


def jsonl_chunks(path: str | Path, size: int) -> Iterator[pd.DataFrame]:
    """A jsonl file read ``size`` records at a time, each chunk as :func:`read_table` reads
    the whole file (values as given; a broken line named by its number)."""
    path = Path(path)
    rows: list[dict] = []
    seen = False
    for row in _jsonl_records(path):
        rows.append(row)
        if len(rows) == size:
            seen = True
            yield pd.DataFrame.from_records(rows)
            rows = []
    if rows:
        yield pd.DataFrame.from_records(rows)
    elif not seen:
        raise PanelError(f"{path}: the file holds no records")


def _jsonl_records(path: Path) -> Iterator[dict]:
    """The records of a jsonl file, one per non-blank line, checked line by line."""
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                row = json_text.loads(line)
            except json_text.DuplicateKeyError as exc:
                raise PanelError(f"{path}: line {lineno} has the key {exc.key!r} twice") from None
            except json.JSONDecodeError as exc:
                raise PanelError(
                    f"{path}: line {lineno} is not valid JSON ({exc.msg} at column {exc.colno}): "
                    f"{line.strip()[:80]!r}"
                ) from None
            except json_text.NestingError as exc:
                raise PanelError(f"{path}: line {lineno}: {json_text.problem(exc)}") from None
            if not isinstance(row, dict):
                raise PanelError(
                    f"{path}: line {lineno} is not a JSON object (one record per line): "
                    f"{line.strip()[:80]!r}"
                )
            for key in _ID_COLUMNS:
                if isinstance(row.get(key), dict | list):
                    kind = "an object" if isinstance(row[key], dict) else "a list"
                    raise PanelError(
                        f"{path}: line {lineno}: '{key}' is {kind} ({json.dumps(row[key])[:60]}); "
                        "ids must be numbers or text"
                    )
            yield row


_READERS = {
    ".csv": _read_csv,
    ".tsv": lambda path: _read_csv(path, sep="\t"),
    ".parquet": pd.read_parquet,
    ".pq": pd.read_parquet,
    ".jsonl": _read_jsonl,
    ".ndjson": _read_jsonl,
}


def _write_csv(df: pd.DataFrame, path: Path) -> None:
    """``df.to_csv(path, index=False)``, byte for byte, with its float64 columns written faster.

    pandas writes a float64 value as ``str`` of the numpy float, the shortest text that reads
    back to the same number, which is Python's ``repr`` of it (``1e-05``, ``-0.0``, ``inf``),
    and a NaN as an empty field. Here each distinct value (by its bits: ``0.0`` and ``-0.0``
    stay apart) is formatted once: a score table repeats many of its values (ECDF levels,
    posteriors), and formatting was most of the time of writing 20,000 items.
    """
    out = df.copy(deep=False)
    for at, dtype in enumerate(df.dtypes):
        if dtype == np.float64:
            out.isetitem(at, _float_text(df.iloc[:, at].to_numpy()))
    out.to_csv(path, index=False)


def _float_text(values: np.ndarray) -> np.ndarray:
    """The csv text of float64 values: ``repr`` of each distinct value, ``""`` for NaN."""
    code, distinct = pd.factorize(values.view(np.int64))
    text = np.array([repr(v) for v in distinct.view(np.float64).tolist()], dtype=object)
    out = text[code]
    out[np.isnan(values)] = ""
    return out


_WRITERS = {
    ".csv": _write_csv,
    ".parquet": lambda df, path: df.to_parquet(path, index=False),
    ".pq": lambda df, path: df.to_parquet(path, index=False),
    ".jsonl": lambda df, path: df.to_json(path, orient="records", lines=True, double_precision=15),
    ".ndjson": lambda df, path: df.to_json(path, orient="records", lines=True, double_precision=15),
}


def _format_of(path: Path, table: dict) -> str:
    suffix = path.suffix.lower()
    if suffix not in table:
        kinds = ".csv, .tsv, .parquet or .jsonl" if ".tsv" in table else ".csv, .parquet or .jsonl"
        raise PanelError(f"unsupported file type {suffix!r} for {path}; use {kinds}")
    return suffix


def read_table(path: str | Path) -> pd.DataFrame:
    """Read a csv, tsv (tab-separated), parquet or jsonl table (by extension), without validating it.

    Ids are kept as given: csv id columns (``item, judge, condition, gold``) are read as
    text, and an item column of plain integers becomes integers (``"007"`` stays
    ``"007"``); in the name columns (``item, judge, condition``) only an empty field is
    missing, so a judge called ``"NA"``, ``"None"`` or ``"null"`` keeps its name; jsonl
    values keep their JSON types.

    Raises
    ------
    PanelError
        Naming the file for a missing file, a folder, an empty or unreadable file, a
        column given twice (csv header, jsonl key), an id that is a JSON object or list, or a
        broken jsonl line (with its number).
    """
    path = check_regular(path)  # a FIFO, device or socket: refused before any read
    suffix = _format_of(path, _READERS)
    if path.is_dir():
        raise PanelError(f"{path}: is a folder, not a {suffix} file")
    if not path.is_file():
        raise PanelFileNotFoundError(f"{path}: file not found")
    if path.stat().st_size == 0:
        raise PanelError(f"{path}: the file is empty")
    try:
        return _READERS[suffix](path)
    except PanelError:
        raise
    except OverflowError as exc:  # older pandas overflow in the reader, newer ones later on
        raise PanelError(f"{path}: {float_overflow_message(str(exc))}") from None
    except (ValueError, OSError, UnicodeDecodeError, pd.errors.ParserError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise PanelError(f"{path}: cannot read it as {suffix} ({first})") from None
    except Exception as exc:  # noqa: BLE001 - pyarrow and friends raise their own types
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        raise PanelError(
            f"{path}: cannot read it as {suffix} ({type(exc).__name__}: {first})"
        ) from None


def write_table(df: pd.DataFrame, path: str | Path, *, exclusive: bool = False) -> Path:
    """Write a table as csv, parquet or jsonl (by extension), without the index, atomically.

    ``exclusive=True`` never replaces an existing ``path``
    (:class:`judgerisk._util.safe_write.OutputExistsError`; see :func:`atomic_write`).
    """
    path = Path(path)
    writer = _WRITERS[_format_of(path, _WRITERS)]
    return atomic_write(path, lambda tmp: writer(df, tmp), exclusive=exclusive)


def load_panel(
    path: str | Path, conditions: tuple[str, ...] | DeclaredConditions | None = DECLARED
) -> pd.DataFrame:
    """Read a panel from csv, parquet or jsonl (by extension) and validate it.

    Parameters
    ----------
    path : str or pathlib.Path
        ``.csv``, ``.parquet`` / ``.pq`` or ``.jsonl`` / ``.ndjson`` file.
    conditions : tuple of str or None
        Passed to :func:`validate_panel`.

    Returns
    -------
    pandas.DataFrame
        The validated panel.

    Raises
    ------
    PanelError
        From :func:`read_table` or :func:`validate_panel`, prefixed with the file's path.
    """
    table = read_table(path)
    try:  # the table read is this function's own: validated without a copy
        return validate_frame(table, conditions, copy=False)
    except PanelError as exc:  # name the file; rows are 0-based data rows (file line = row + 2)
        raise type(exc)(f"{path}: {exc}") from None


def save_panel(panel: pd.DataFrame, path: str | Path) -> Path:
    """Write a panel as csv, parquet or jsonl (by extension); the inverse of :func:`load_panel`."""
    return write_table(panel, path)
