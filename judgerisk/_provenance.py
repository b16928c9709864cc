"""Provenance: one record of how an output was made, attached to every output.

A *provenance record* is a JSON-able dict made by :func:`make_record` (the one place that
builds it) and attached to what judgerisk writes:

========================  ==============================================================
output                    where the record goes
========================  ==============================================================
parquet table             the file's schema metadata, key ``judgerisk.provenance``
csv / jsonl table         a sidecar ``<file>.provenance.json`` next to it
HTML report               a ``<script type="application/json" id="judgerisk-provenance">``
executed notebook         ``metadata["judgerisk"]["provenance"]``
extraction manifest       the ``provenance`` field of ``manifest.json``
========================  ==============================================================

Fields: ``judgerisk`` (version; from a checkout the git commit and its uncommitted changes:
dirty or not, a sha256 of the diff, the changed files), ``extensions`` (methods registered from
outside judgerisk: plug-ins, runtime registrations), ``command`` (the exact
command line, or the API call), ``parameters`` (every parameter, defaults and seeds included),
``inputs`` (path, sha256, row count of each input), ``environment`` (python, platform and
the versions of numpy, scipy, pandas, scikit-learn, torch, transformers when installed),
``started`` (UTC, ISO 8601), ``wall_s`` and ``settings`` (what the output used: seeds run,
score column, alpha, threshold, feasibility, ...). ``judgerisk verify`` reads it back
(:mod:`judgerisk.cli.verify`).

Outputs are written atomically (:mod:`judgerisk._util.safe_write`): into a private temporary folder
created exclusively in the target's folder, then :func:`os.replace`, so a failure never leaves
a partial file and no planted link redirects the write; a table and its sidecar are published
as one unit.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shlex
import subprocess
import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

from judgerisk._util import json_text
from judgerisk._util.files import NotRegularFileError, check_regular
from judgerisk._util.hashing import sha256_file, sha256_path  # re-exported: records' hashes
from judgerisk._util.safe_write import atomic_write, atomic_write_group
from judgerisk._util.version import package_version
from judgerisk.panel import PanelError, write_table

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "PROVENANCE_KEY",
    "TABLE_SUFFIXES",
    "LIBRARIES",
    "OutputPathError",
    "sha256_file",
    "sha256_path",
    "library_versions",
    "git_commit",
    "git_changes",
    "runtime_extensions",
    "make_record",
    "finish_record",
    "command_text",
    "sidecar_path",
    "atomic_write",
    "check_output_path",
    "write_table_with_record",
    "write_chunks_with_record",
    "read_record",
    "html_record_tag",
]

PROVENANCE_KEY = "judgerisk.provenance"
LIBRARIES = ("numpy", "scipy", "pandas", "scikit-learn", "torch", "transformers")
_HTML_ID = "judgerisk-provenance"
#: The table files an output may be (by extension).
TABLE_SUFFIXES = (".csv", ".parquet", ".pq", ".jsonl", ".ndjson")
_SIDECAR_SUFFIXES = (".csv", ".jsonl", ".ndjson")  # tables whose record is a sidecar file
_HASHED_UNTRACKED = 1 << 20  # untracked files up to this size are hashed by content


class OutputPathError(PanelError):
    """An output path that cannot be written, or that would overwrite an input.

    A :class:`~judgerisk.panel.PanelError` (bad input from the user: exit code 2 in the
    command line), raised before any work starts; see :func:`check_output_path`.
    """


def library_versions() -> dict[str, str | None]:
    """Installed versions of python and :data:`LIBRARIES` (``None`` when not installed).

    Read with :func:`importlib.metadata.version`: nothing is imported (torch stays unloaded).
    """
    out: dict[str, str | None] = {"python": platform.python_version()}
    for name in LIBRARIES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def git_commit(path: str | Path | None = None) -> str | None:
    """The commit of the git checkout holding judgerisk (``None`` outside a checkout)."""
    root = Path(path) if path is not None else Path(__file__).resolve().parents[1]
    if not (root / ".git").exists():
        return None
    try:
        proc = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout.strip() or None if proc.returncode == 0 else None


def _git(root: Path, *args: str) -> bytes | None:
    try:
        proc = subprocess.run(["git", "-C", str(root), *args], capture_output=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout if proc.returncode == 0 else None


def git_changes(path: str | Path | None = None) -> dict | None:
    """Uncommitted changes of the git checkout holding judgerisk (``None`` outside one).

    Returns ``{"dirty": bool, "sha256": str | None, "files": [...]}``: whether tracked files
    differ from the commit or untracked files exist, a sha256 over ``git diff HEAD --binary``
    and the untracked files' names and bytes (size and modification time for files over
    1 MiB; ``None`` when clean), and the changed files (at most 50).
    """
    root = Path(path) if path is not None else Path(__file__).resolve().parents[1]
    if not (root / ".git").exists():
        return None
    status = _git(root, "status", "--porcelain", "--untracked-files=all")
    diff = _git(root, "diff", "HEAD", "--binary")
    if status is None or diff is None:
        return None
    lines = [ln[3:] for ln in status.decode("utf-8", "replace").splitlines() if ln.strip()]
    if not lines:
        return {"dirty": False, "sha256": None, "files": []}
    digest = hashlib.sha256(diff)
    untracked = [ln[3:] for ln in status.decode("utf-8", "replace").splitlines() if ln[:2] == "??"]
    for name in sorted(untracked):
        digest.update(name.encode("utf-8"))
        try:  # content of small files (code); size and time of large ones (data)
            info = (root / name).stat()
            small = info.st_size <= _HASHED_UNTRACKED
            mark = sha256_file(root / name) if small else f"{info.st_size}:{info.st_mtime_ns}"
            digest.update(mark.encode("ascii"))
        except OSError:
            pass
    return {"dirty": True, "sha256": digest.hexdigest(), "files": sorted(lines)[:50]}


def _origin(entry: object) -> str:
    """``module.qualname`` of a registry entry (a class or function, or the first one it holds)."""
    if not hasattr(entry, "__qualname__"):
        held = [v for v in getattr(entry, "__dict__", {}).values() if hasattr(v, "__qualname__")]
        if not held:
            return type(entry).__module__
        entry = held[0]
    return f"{getattr(entry, '__module__', '?')}.{getattr(entry, '__qualname__', '?')}"


def runtime_extensions() -> dict[str, dict[str, str]]:
    """The methods registered from outside judgerisk (plug-ins, runtime registrations).

    ``{registry: {name: "module.qualname"}}`` over every registry in use (risk scores,
    aggregation methods, data sets); entries defined in judgerisk itself are left out.
    """
    from judgerisk._util.registry import Registry

    out: dict[str, dict[str, str]] = {}
    for registry in Registry.instances():
        extra = {
            name: origin
            for name, entry in registry.items()
            if not (origin := _origin(entry)).startswith("judgerisk.")
        }
        if extra:
            out[registry.what] = extra
    return out


def _input_entry(path: str | Path, rows: int | None) -> dict:
    p = Path(path).resolve()
    return {"path": str(p), "sha256": sha256_path(p), "rows": None if rows is None else int(rows)}


def make_record(
    command: list[str] | str,
    parameters: dict,
    inputs: dict[str, tuple[str | Path, int | None]] | None = None,
    started: float | None = None,
) -> dict:
    """The provenance record of one run (the one place it is made).

    Parameters
    ----------
    command : list of str or str
        The command line as argv (``["judgerisk", "score", ...]``), or an API call's text
        (``"judgerisk.engine.certified.score_panel(...)"``).
    parameters : dict
        Every parameter of the run, defaults and seeds included (JSON-able values).
    inputs : dict, optional
        Role -> (path, row count) of each input file; hashed here.
    started : float, optional
        :func:`time.time` at the start (default: now).

    Returns
    -------
    dict
        See the module docstring; :func:`finish_record` adds the wall time and settings.
    """
    started = time.time() if started is None else started
    return {
        "judgerisk": {
            "version": package_version(),
            "git_commit": git_commit(),
            "git_changes": git_changes(),
        },
        "extensions": runtime_extensions(),
        "command": list(command) if not isinstance(command, str) else command,
        "parameters": _jsonable(parameters),
        "inputs": {role: _input_entry(p, n) for role, (p, n) in (inputs or {}).items()},
        "environment": {**library_versions(), "platform": platform.platform()},
        "started": datetime.fromtimestamp(started, tz=UTC).isoformat(timespec="seconds"),
        "_t0": started,
    }


def finish_record(record: dict, settings: dict | None = None) -> dict:
    """A copy of ``record`` with ``wall_s`` and the output's ``settings`` filled in."""
    out = {k: v for k, v in record.items() if k != "_t0"}
    out["wall_s"] = round(time.time() - record.get("_t0", time.time()), 3)
    out["settings"] = _jsonable(settings or {})
    return out


def command_text(record: dict) -> str:
    """The record's command as one shell line."""
    cmd = record.get("command", "")
    return cmd if isinstance(cmd, str) else shlex.join(cmd)


def _jsonable(obj):
    """Plain JSON types: numpy scalars to Python, tuples to lists, non-finite floats to None."""
    import math

    import numpy as np

    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None if math.isnan(obj) else ("inf" if obj > 0 else "-inf")
    if isinstance(obj, Path):
        return str(obj)
    return obj


def sidecar_path(path: str | Path) -> Path:
    """``<file>.provenance.json`` next to a csv / jsonl output."""
    path = Path(path)
    return path.with_name(path.name + ".provenance.json")


def check_output_path(
    path: str | Path,
    suffixes: tuple[str, ...] | None = TABLE_SUFFIXES,
    inputs: tuple[str | Path, ...] = (),
    option: str = "-o/--output",
    overwrite: bool = True,
) -> Path:
    """Check an output path before any work: extension, folder, writable, not an input.

    Parameters
    ----------
    path : path-like
    suffixes : tuple of str or None
        Allowed extensions (lower case); ``None`` allows any.
    inputs : tuple of path-like
        Files the run reads; the output (or its sidecar) must not resolve to any of them.
    option : str
        The option's name, for the message.
    overwrite : bool, default True
        ``False`` refuses an existing output (or its sidecar): the command line's rule,
        lifted by ``--overwrite``.

    Raises
    ------
    OutputPathError
        Naming the option, the path and what is wrong.
    """
    path = Path(path)
    targets = {path.resolve(), sidecar_path(path).resolve()}
    for inp in inputs:
        if inp is not None and Path(inp).resolve() in targets:
            raise OutputPathError(
                f"{option} {path} would overwrite the input {inp}; choose another output file"
            )
    if suffixes is not None and path.suffix.lower() not in suffixes:
        raise OutputPathError(
            f"{option} {path}: unsupported file type {path.suffix!r}; use " + ", ".join(suffixes)
        )
    folder = path.resolve().parent
    if not folder.is_dir():
        raise OutputPathError(f"{option} {path}: folder {folder} does not exist")
    side = sidecar_path(path) if path.suffix.lower() in _SIDECAR_SUFFIXES else None
    for target in (path, side):
        if target is None:
            continue
        if target.is_dir():
            raise OutputPathError(f"{option} {target}: is a folder, not a file")
        if target.exists() and not os.access(target, os.W_OK):
            raise OutputPathError(f"{option} {target}: not writable")
    for target in [] if overwrite else [t for t in (path, side) if t is not None]:
        if target.exists() or target.is_symlink():
            what = "" if target == path else f": its record {target}"
            raise OutputPathError(
                f"{option} {path}{what} exists; pass --overwrite to replace it, "
                "or choose another name"
            )
    if not os.access(folder, os.W_OK):
        raise OutputPathError(f"{option} {path}: not writable")
    return path


def write_table_with_record(
    df: pd.DataFrame, path: str | Path, record: dict | None, *, overwrite: bool = True
) -> Path:
    """Write a table atomically (by extension), with its provenance record attached.

    Parquet keeps the record in the schema metadata (key :data:`PROVENANCE_KEY`); csv and
    jsonl get the sidecar :func:`sidecar_path`, published with the table as one unit
    (:func:`judgerisk._util.safe_write.atomic_write_group`: no failure leaves one without the other).
    ``overwrite=False`` (the command line without ``--overwrite``) publishes onto free names
    only: when another process wrote the table or its sidecar meanwhile, nothing is replaced
    and :class:`judgerisk._util.safe_write.OutputExistsError` is raised.
    """
    exclusive = not overwrite
    path = Path(path)
    suffix = path.suffix.lower()
    text = json.dumps(record, indent=2, sort_keys=True) if record is not None else None
    if suffix in (".parquet", ".pq"):
        import pyarrow as pa
        import pyarrow.parquet as pq

        def _write(tmp: Path) -> None:
            table = pa.Table.from_pandas(df, preserve_index=False)
            pq.write_table(table.replace_schema_metadata(_with_record(table.schema, text)), tmp)

        return atomic_write(path, _write, exclusive=exclusive)
    if text is None:
        return write_table(df, path, exclusive=exclusive)
    atomic_write_group(
        [
            (path, lambda tmp: write_table(df, tmp)),
            (sidecar_path(path), lambda tmp: tmp.write_text(text + "\n", "utf-8")),
        ],
        exclusive=exclusive,
    )
    return path


def _with_record(schema, text: str | None) -> dict:
    """A parquet schema's metadata with the record's text under :data:`PROVENANCE_KEY`."""
    meta = dict(schema.metadata or {})
    if text is not None:
        meta[PROVENANCE_KEY.encode()] = text.encode("utf-8")
    return meta


def write_chunks_with_record(
    chunks: Iterable[pd.DataFrame],
    path: str | Path,
    record: Callable[[], dict | None],
    *,
    overwrite: bool = True,
) -> Path:
    """:func:`write_table_with_record` for a table that comes in chunks, one in memory at a time.

    The chunks are written one after the other (csv: the header once; jsonl: a line per row;
    parquet: each chunk a part first, then one file whose schema unifies the parts': a column
    missing from a whole chunk takes the other chunks' type), then ``record()`` is called
    (the counts of the output are known only then) and published with the table, atomically
    and with the same ``overwrite`` rule. Read back, the file equals the chunks' concatenation
    written by :func:`write_table_with_record`.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".jsonl", ".ndjson", ".parquet", ".pq"):
        raise PanelError(
            f"unsupported file type {suffix!r} for {path}; use .csv, .parquet or .jsonl"
        )
    exclusive = not overwrite
    if suffix in (".parquet", ".pq"):
        return atomic_write(
            path, lambda tmp: _parquet_parts(chunks, tmp, record), exclusive=exclusive
        )

    def _text(tmp: Path) -> None:
        with open(tmp, "w", encoding="utf-8", newline="") as fh:
            for k, chunk in enumerate(chunks):
                if suffix == ".csv":
                    chunk.to_csv(fh, index=False, header=k == 0)
                else:
                    chunk.to_json(fh, orient="records", lines=True, double_precision=15)

    finished: list[dict | None] = []

    def _sidecar(tmp: Path) -> None:
        finished.append(record())
        tmp.write_text(json.dumps(finished[0], indent=2, sort_keys=True) + "\n", "utf-8")

    atomic_write_group([(path, _text), (sidecar_path(path), _sidecar)], exclusive=exclusive)
    return path


def _parquet_parts(
    chunks: Iterable[pd.DataFrame], tmp: Path, record: Callable[[], dict | None]
) -> None:
    """Write ``chunks`` to ``tmp`` as one parquet file through part files beside it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    parts, schemas = [], []
    for k, chunk in enumerate(chunks):
        table = pa.Table.from_pandas(chunk, preserve_index=False)
        part = tmp.with_name(f"{tmp.name}.part{k}")
        pq.write_table(table, part)
        parts.append(part)
        schemas.append(table.schema)
    if not parts:
        raise PanelError(f"{tmp.name}: nothing to write")
    schema = pa.unify_schemas(schemas)
    found = record()
    text = json.dumps(found, indent=2, sort_keys=True) if found is not None else None
    schema = schema.with_metadata(_with_record(schemas[0], text))
    with pq.ParquetWriter(tmp, schema) as writer:
        for part in parts:
            writer.write_table(pq.read_table(part).cast(schema))
            part.unlink()


def html_record_tag(record: dict) -> str:
    """The ``<script>`` element that carries a record inside an HTML page."""
    text = json.dumps(record, sort_keys=True).replace("<", "\\u003c")  # no markup in it
    return f'<script type="application/json" id="{_HTML_ID}">{text}</script>'


def read_record(path: str | Path) -> dict:
    """The provenance record attached to an output (table, report, notebook, manifest).

    Raises
    ------
    judgerisk.panel.PanelError
        When the file is missing or carries no record.
    judgerisk._util.files.NotRegularFileError
        When the file or its sidecar is a FIFO, a device or a socket (nothing is read).
    """
    path = check_regular(path)  # a FIFO, device or socket: refused before any read
    err = PanelError
    if not path.is_file():
        raise err(f"{path}: file not found")
    suffix = path.suffix.lower()
    try:
        if suffix in (".parquet", ".pq"):
            import pyarrow.parquet as pq

            meta = pq.read_schema(path).metadata or {}
            raw = meta.get(PROVENANCE_KEY.encode())
            if raw is None:  # a file written part by part holds it in its footer's metadata
                raw = (pq.read_metadata(path).metadata or {}).get(PROVENANCE_KEY.encode())
            if raw is not None:
                return json_text.loads(raw.decode("utf-8"))
        elif suffix in (".html", ".htm"):
            text = path.read_text(encoding="utf-8")
            start = text.find(f'id="{_HTML_ID}">')
            if start >= 0:
                start = text.index(">", start) + 1
                end = text.index("</script>", start)
                return json_text.loads(text[start:end].replace("<\\/", "</"))
        elif suffix == ".ipynb":
            nb = json_text.loads(path.read_text(encoding="utf-8"))
            rec = nb.get("metadata", {}).get("judgerisk", {}).get("provenance")
            if rec is not None:
                return rec
        elif path.name == "manifest.json":
            rec = json_text.loads(path.read_text(encoding="utf-8")).get("provenance")
            if rec is not None:
                return rec
        else:
            side = check_regular(sidecar_path(path), "its provenance sidecar")
            if side.is_file():
                return json_text.loads(side.read_text(encoding="utf-8"))
    except NotRegularFileError:  # its sidecar is a FIFO: named as such, never read
        raise
    except (OSError, ValueError) as exc:
        raise err(f"{path}: cannot read its provenance record ({exc})") from None
    raise err(f"{path}: no provenance record (not written by judgerisk, or the sidecar is gone)")
