"""Resumable result parts: atomic parquet writes, a run manifest, corrupt-part detection.

Layout of an output folder::

    out_dir/manifest.json                       judge, template hash, verdict ids, ... of the run
    out_dir/served.json                         a server's model and fingerprint (openai backend)
    out_dir/parts/part-r000-000000-n16.parquet  one file per finished batch (rank, sequence, rows)
    out_dir/.judgerisk-lock-r000                held by the run writing rank 0's parts

A part is written to a private temporary folder and published onto a free name
(:func:`judgerisk._util.safe_write.atomic_write` with ``exclusive=True``), so a visible part is always
complete and never replaced; a killed run loses at most the batch in flight. A part that cannot
be read, has the wrong row count or columns, or holds non-finite values is renamed ``*.corrupt``
(with a warning) and its prompts are computed again.

One run at a time: :func:`hold_folder` takes an exclusive lock (``flock``, released by the
system when the process ends, SIGKILL included) for each rank, so a second run on the same
folder is refused while the first runs (:class:`FolderInUseError`), and the manifest and
``served.json`` are published exclusively (the first writer's copy is the one compared).
"""

from __future__ import annotations

import json
import os
import re
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd

from judgerisk._util.safe_write import OutputExistsError, atomic_write
from judgerisk.options import InputError

__all__ = [
    "FolderInUseError",
    "PART_COLUMNS",
    "SERVED_FILE",
    "hold_folder",
    "next_sequence",
    "part_sequence",
    "read_parts",
    "read_served",
    "record_served",
    "write_manifest",
    "write_part",
]

#: What a server said it served (``model``, ``system_fingerprint``), pinned by the first answer.
SERVED_FILE = "served.json"
_LOCK = ".judgerisk-lock-r{rank:03d}"


class FolderInUseError(InputError):
    """Another extraction run holds the output folder (same rank)."""


@contextmanager
def hold_folder(out_dir: Path, rank: int = 0) -> Iterator[None]:
    """Hold ``out_dir`` for this run's ``rank`` (an exclusive ``flock``) within the block.

    Raises
    ------
    FolderInUseError
        When another process holds it (naming that process).
    """
    try:
        import fcntl
    except ImportError:  # no flock here: exclusive part names still keep every part
        yield
        return
    path = Path(out_dir) / _LOCK.format(rank=rank)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "another process"
            raise FolderInUseError(
                f"--out {out_dir}: another extraction run (pid {holder}) is writing there; wait "
                "for it to finish (then rerun to resume), or choose another folder"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode("ascii"), 0)
        yield
    finally:
        os.close(fd)  # releases the lock


def read_served(out_dir: Path) -> dict | None:
    """The identity recorded in ``out_dir/served.json``, or None when there is none."""
    path = Path(out_dir) / SERVED_FILE
    if not path.is_file():
        return None
    try:
        served = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"{path}: cannot read it ({exc}); use a new output folder") from None
    if not isinstance(served, dict):
        raise InputError(f"{path}: not a JSON object; use a new output folder")
    return served


def record_served(out_dir: Path, identity: dict) -> dict:
    """Record ``identity`` in ``out_dir/served.json`` unless one is recorded; the recorded one.

    Published exclusively: of two runs racing to record, the first one's is kept and returned
    to both.
    """
    text = json.dumps(identity, indent=2, sort_keys=True) + "\n"
    try:
        atomic_write(
            Path(out_dir) / SERVED_FILE,
            lambda tmp: tmp.write_text(text, encoding="utf-8"),
            exclusive=True,
        )
    except OutputExistsError:
        return read_served(out_dir) or identity
    return identity


PART_COLUMNS = (
    "item",
    "condition",
    "prompt_sha256",
    "logprob_a",
    "logprob_b",
    "bounded_a",
    "bounded_b",
    "prompt_tokens",
    "token_a",
    "token_b",
)
_PART_RE = re.compile(r"^part-r(\d+)-(\d+)-n(\d+)\.parquet$")


def write_manifest(out_dir: Path, manifest: dict, provenance: dict | None = None) -> None:
    """Write ``manifest.json`` or check it against an existing one.

    The manifest holds what identifies the numbers (judge, template hash, and the judge's
    :meth:`~judgerisk.extract.judge.Judge.describe`: model files' hash, dtype, chat template);
    each stored cell also carries the SHA-256 of its rendered prompt, so a changed item text is
    recomputed. A new manifest also holds the run's provenance record under ``"provenance"``
    (:func:`judgerisk._provenance.make_record`: version, command line, library versions, start
    time; default: made here from ``sys.argv`` with the manifest as parameters). A resumed run
    keeps the first run's record; the record is not part of the comparison.

    A run with conditions rendered by perturbation families records their seed and versions
    under ``"perturbation"``; a folder may gain such conditions later (the record is added or
    extended), but not under another seed or another version of a family it holds.

    Raises
    ------
    ValueError
        If the folder holds results of a different run (judge, template, model, dtype, chat
        template, perturbation seed or family version differ), naming the differing fields.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "manifest.json"
    if not path.exists():
        if provenance is None:
            from judgerisk._provenance import finish_record, make_record

            argv = [Path(sys.argv[0]).name or "python", *sys.argv[1:]]
            provenance = finish_record(make_record(argv, manifest))
        stored = {**manifest, "provenance": provenance}
        text = json.dumps(stored, indent=2, sort_keys=True, default=str) + "\n"
        try:
            atomic_write(path, lambda tmp: tmp.write_text(text, encoding="utf-8"), exclusive=True)
            return
        except OutputExistsError:
            pass  # another run (rank) published first: compare with its manifest
    old = json.loads(path.read_text(encoding="utf-8"))
    diff = {
        k: (old.get(k), v)
        for k, v in manifest.items()
        if k not in ("provenance", _PERTURBATION) and old.get(k) != v
    }
    ok, merged = _merge_perturbation(old.get(_PERTURBATION), manifest.get(_PERTURBATION))
    if not ok:
        diff[_PERTURBATION] = (old.get(_PERTURBATION), manifest.get(_PERTURBATION))
    if diff:
        raise ValueError(
            f"{out_dir} holds results of a different run; differing fields (old, new): {diff}. "
            "Use a new output folder."
        )
    if merged != old.get(_PERTURBATION):  # a first family-rendered condition in this folder
        stored = {**old, _PERTURBATION: merged}
        text = json.dumps(stored, indent=2, sort_keys=True, default=str) + "\n"
        atomic_write(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))


_PERTURBATION = "perturbation"


def _merge_perturbation(old: dict | None, new: dict | None) -> tuple[bool, dict | None]:
    """``(compatible, the stored perturbation record after a run with new)``.

    A folder may gain conditions rendered by perturbation families: the first such run adds
    the record, later ones add their families. The seed must stay the same, and so must the
    version of every family both runs render (a changed rendering is a different run).
    """
    if old is None or new is None:
        return True, old if new is None else new
    if old.get("seed") != new.get("seed"):
        return False, old
    families = dict(old.get("families", {}))
    for name, spec in new.get("families", {}).items():
        if name in families and families[name] != spec:
            return False, old
        families[name] = spec
    return True, {**old, "families": dict(sorted(families.items()))}


def next_sequence(parts_dir: Path, rank: int) -> int:
    """First unused part sequence number of ``rank`` (parts of earlier runs are kept)."""
    seqs = [
        int(m.group(2))
        for p in parts_dir.glob("part-*.parquet")
        if (m := _PART_RE.match(p.name)) and int(m.group(1)) == rank
    ]
    return max(seqs, default=-1) + 1


def write_part(parts_dir: Path, rank: int, seq: int, frame: pd.DataFrame) -> Path:
    """Atomically write one finished batch as ``part-r{rank}-{seq}-n{rows}.parquet``.

    Published onto a free name only: when ``seq`` is taken (another run wrote that part
    meanwhile), the next free sequence number of ``rank`` is used, so no part is ever replaced.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    parts_dir.mkdir(parents=True, exist_ok=True)
    table = pa.Table.from_pandas(frame[list(PART_COLUMNS)], preserve_index=False)
    for _ in range(100):
        path = parts_dir / f"part-r{rank:03d}-{seq:06d}-n{len(frame)}.parquet"
        try:
            atomic_write(path, lambda tmp: pq.write_table(table, tmp), exclusive=True)
            return path
        except OutputExistsError:
            seq = max(seq + 1, next_sequence(parts_dir, rank))
    raise OutputExistsError(f"{parts_dir}: no free part name after 100 tries")


def part_sequence(path: Path) -> int:
    """The sequence number in a part's file name."""
    m = _PART_RE.match(Path(path).name)
    if m is None:
        raise ValueError(f"{path}: not a part file name")
    return int(m.group(2))


def _check_part(path: Path, n: int) -> pd.DataFrame:
    frame = pd.read_parquet(path)
    if len(frame) != n:
        raise ValueError(f"{len(frame)} rows, name says {n}")
    missing = [c for c in PART_COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"missing columns {missing}")
    lp = frame[["logprob_a", "logprob_b"]].to_numpy(dtype=np.float64)
    if not np.isfinite(lp).all() or (lp > 0).any():
        raise ValueError("non-finite or positive log-probabilities")
    return frame


def read_parts(out_dir: str | os.PathLike) -> pd.DataFrame:
    """Read and merge all valid parts of an output folder (all ranks).

    Corrupt parts are renamed ``*.corrupt`` with a warning and left out, so their prompts count
    as not done (a part of an older layout, without prompt hashes, is set aside the same way). An
    (item, condition, prompt hash) found in several parts keeps its first occurrence
    (by file name), with a warning giving the count.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`PART_COLUMNS` (empty if there are no parts).
    """
    parts_dir = Path(out_dir) / "parts"
    frames, bad = [], []
    for path in sorted(parts_dir.glob("part-*.parquet")) if parts_dir.exists() else []:
        m = _PART_RE.match(path.name)
        try:
            if m is None:
                raise ValueError("unexpected file name")
            frames.append(_check_part(path, int(m.group(3))))
        except FileNotFoundError:
            continue  # renamed by another rank meanwhile
        except Exception as exc:  # any unreadable file is a corrupt part
            bad.append(f"{path.name} ({type(exc).__name__}: {exc})"[:200])
            try:
                os.replace(path, path.with_name(path.name + ".corrupt"))
            except FileNotFoundError:
                pass
    if bad:
        warnings.warn(
            f"{len(bad)} corrupt result part(s) set aside as *.corrupt and redone: {bad[:5]}",
            stacklevel=2,
        )
    if not frames:
        return pd.DataFrame({c: [] for c in PART_COLUMNS})
    out = pd.concat(frames, ignore_index=True)
    dup = out.duplicated(["item", "condition", "prompt_sha256"], keep="first")
    if dup.any():
        warnings.warn(
            f"{int(dup.sum())} (item, condition, prompt) result(s) appear in more than one part; "
            "keeping the first",
            stacklevel=2,
        )
        out = out.loc[~dup].reset_index(drop=True)
    return out
