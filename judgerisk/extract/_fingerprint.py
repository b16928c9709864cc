"""What identifies a judge's numbers: SHA-256 of its model files (or weights) and of texts.

A resumed extraction reuses a stored cell only when the judge that made it is the same: same
model files, dtype and chat template (book chapter "Extracting log-probabilities", resume).
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path
from typing import Any

from judgerisk._util.hashing import sha256_file

__all__ = ["model_fingerprint", "model_files", "files_sha256"]

#: Files of a Hugging Face model folder that determine its outputs.
_MODEL_GLOBS = ("*.safetensors", "*.bin", "*.gguf", "*.json", "*.model", "*.txt", "*.jinja")


@functools.lru_cache(maxsize=64)
def _file_digest(path: str, size: int, mtime_ns: int) -> str:
    """:func:`~judgerisk._util.hashing.sha256_file`, cached per path, size and mtime."""
    return sha256_file(path)


def files_sha256(paths: list[Path]) -> str:
    """One SHA-256 over the files' names and contents (in name order; cached per size and mtime)."""
    digest = hashlib.sha256()
    for path in sorted(paths, key=lambda p: p.name):
        st = path.stat()
        digest.update(
            f"{path.name}\0{_file_digest(str(path), st.st_size, st.st_mtime_ns)}\0".encode()
        )
    return digest.hexdigest()


def model_files(model: Any) -> list[Path]:
    """The local files a loaded model came from (empty when unknown).

    A bundled judge name maps to its GGUF file; a ``.gguf`` path is itself; a folder gives its
    weights, configuration and tokenizer files.
    """
    from judgerisk.extract._judges import BUNDLED_JUDGES, bundled_gguf

    name = str(getattr(model, "name_or_path", "") or "")
    if name in BUNDLED_JUDGES:
        return [bundled_gguf(name)]
    path = Path(name).expanduser() if name else None
    if path is None or not path.exists():
        return []
    if path.is_file():
        return [path]
    return sorted({f for g in _MODEL_GLOBS for f in path.glob(g) if f.is_file()})


def model_fingerprint(model: Any) -> dict:
    """``{"model": name, "model_sha256": digest, "model_hashed": "files" | "weights"}``.

    The digest covers the model's local files when they are known, else the bytes of its weights
    in their current dtype and device order (a model built in memory).
    """
    name = str(getattr(model, "name_or_path", "") or type(model).__name__)
    files = model_files(model)
    if files:
        return {"model": name, "model_sha256": files_sha256(files), "model_hashed": "files"}
    digest = hashlib.sha256()
    for key, tensor in sorted(model.state_dict().items()):
        digest.update(key.encode())
        digest.update(tensor.detach().float().cpu().contiguous().numpy().tobytes())
    return {"model": name, "model_sha256": digest.hexdigest(), "model_hashed": "weights"}
