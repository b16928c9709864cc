"""The package's one file hash and one text hash (SHA-256, hex).

Provenance records hash their inputs with :func:`sha256_file`; extraction fingerprints model
files with it and keys each stored cell by :func:`sha256_text` of its rendered prompt; item ids
and template versions are prefixes of :func:`sha256_text`.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from judgerisk._util.files import check_regular

__all__ = ["sha256_file", "sha256_path", "sha256_text"]


def sha256_file(path: str | Path, chunk: int = 1 << 20) -> str:
    """Hex SHA-256 of a file's bytes (read in ``chunk``-byte blocks)."""
    digest = hashlib.sha256()
    with open(check_regular(path), "rb") as fh:
        while block := fh.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def sha256_path(path: str | Path) -> str:
    """:func:`sha256_file` of a file; of a folder (a partitioned parquet dataset), the SHA-256 of
    the lines ``<relative path> <sha256_file>`` of its files in sorted order (files and folders
    whose name starts with ``.`` or ``_``, which pyarrow's datasets skip, are left out)."""
    root = Path(path)
    if not root.is_dir():
        return sha256_file(root)
    digest = hashlib.sha256()
    for file in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = file.relative_to(root)
        if any(part.startswith((".", "_")) for part in rel.parts):
            continue
        digest.update(f"{rel.as_posix()} {sha256_file(file)}\n".encode())
    return digest.hexdigest()


def sha256_text(text: str) -> str:
    """Hex SHA-256 of a text's UTF-8 bytes.

    Examples
    --------
    >>> sha256_text("")[:12]
    'e3b0c44298fc'
    """
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
