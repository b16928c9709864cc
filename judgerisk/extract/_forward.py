"""Batched last-position forward passes: devices, dtypes, padding, batch planning, OOM back-off.

One forward pass per prompt, keeping only the last position's logits (``logits_to_keep=1``),
upcast to float32 before the log-softmax over the full vocabulary. Batches are left-padded with
an attention mask and position ids derived from it, so every row's last position is a real token
and a batch equals one-at-a-time within floating-point tolerance.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

__all__ = [
    "resolve_device",
    "resolve_dtype",
    "prepare_model",
    "input_device",
    "left_pad",
    "last_logprobs",
    "iter_batches",
    "is_oom",
    "AUTO_BATCH",
]

#: Starting limits of ``batch_size="auto"`` per device type: (max rows, max padded tokens).
#: Batches shrink by half on an out-of-memory error and stay at the smaller size.
AUTO_BATCH = {"cuda": (64, 32768), "cpu": (16, 8192), "mps": (16, 8192)}

_DTYPES = {
    "float32": "float32",
    "fp32": "float32",
    "float": "float32",
    "bfloat16": "bfloat16",
    "bf16": "bfloat16",
    "float16": "float16",
    "fp16": "float16",
    "half": "float16",
}


def resolve_device(device: Any = None) -> Any:
    """A ``torch.device``: the given one, else CUDA when available, else CPU."""
    import torch

    if device is None:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    device = torch.device(device)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {device} requested but CUDA is not available")
    return device


def resolve_dtype(dtype: Any = None) -> Any:
    """A ``torch.dtype`` from a name ("bfloat16", "bf16", "float16", "fp16", "float32") or None."""
    import torch

    if dtype is None or isinstance(dtype, torch.dtype):
        return dtype
    name = _DTYPES.get(str(dtype).lower().replace("torch.", ""))
    if name is None:
        raise ValueError(f"unknown dtype {dtype!r}; use one of {sorted(set(_DTYPES))}")
    return getattr(torch, name)


def prepare_model(model: Any, device: Any = None, dtype: Any = None) -> tuple[Any, Any]:
    """Put the model in eval mode on ``device`` / ``dtype``; return ``(model, input_device)``.

    A model dispatched over several devices (``hf_device_map``) is not moved; inputs go to the
    device of its input embeddings. ``device=None`` keeps the model where it is.
    """
    import torch

    dtype = resolve_dtype(dtype)
    if getattr(model, "hf_device_map", None):
        if dtype is not None and next(model.parameters()).dtype != dtype:
            raise ValueError("a model dispatched with device_map cannot change dtype; load it so")
    else:
        if device is not None:
            device = resolve_device(device)
            model = model.to(device)
        if dtype is not None:
            if dtype != torch.float32 and next(model.parameters()).device.type == "cpu":
                warnings.warn(
                    f"{dtype} on CPU is slow and less exact; float32 is recommended on CPU",
                    stacklevel=3,
                )
            model = model.to(dtype)
    model.eval()
    return model, input_device(model)


def input_device(model: Any) -> Any:
    """Device that the model's input ids must live on."""
    emb = model.get_input_embeddings() if hasattr(model, "get_input_embeddings") else None
    if emb is not None and hasattr(emb, "weight"):
        return emb.weight.device
    return next(model.parameters()).device


def left_pad(seqs: Sequence[Sequence[int]], pad_id: int) -> tuple[Any, Any]:
    """Left-pad token-id lists into ``(input_ids, attention_mask)`` int64 tensors."""
    import torch

    width = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), width), int(pad_id), dtype=torch.long)
    mask = torch.zeros((len(seqs), width), dtype=torch.long)
    for r, s in enumerate(seqs):
        if len(s):
            ids[r, width - len(s) :] = torch.as_tensor(s, dtype=torch.long)
            mask[r, width - len(s) :] = 1
    return ids, mask


def _forward_kwargs(model) -> set:
    try:
        return set(inspect.signature(model.forward).parameters)
    except (TypeError, ValueError):
        return set()


def last_logprobs(
    model: Any, input_ids: Any, attention_mask: Any, token_ids: Sequence[int]
) -> np.ndarray:
    """Log-probabilities of ``token_ids`` at the last position, over the full vocabulary.

    Parameters
    ----------
    model : causal LM
    input_ids, attention_mask : torch.Tensor
        Left-padded batch on the model's input device.
    token_ids : sequence of int
        Vocabulary ids to read (e.g. the two verdict ids).

    Returns
    -------
    numpy.ndarray
        float64 array ``(batch, len(token_ids))``.

    Notes
    -----
    ``log p_t = z_t - logsumexp(z)`` computed in float32 from the last position's logits; the
    position ids are ``cumsum(mask) - 1`` so left padding does not shift positions.
    """
    import torch

    params = _forward_kwargs(model)
    kwargs = {"input_ids": input_ids, "attention_mask": attention_mask}
    if "position_ids" in params:
        kwargs["position_ids"] = (attention_mask.cumsum(-1) - 1).clamp_min(0)
    if "use_cache" in params:
        kwargs["use_cache"] = False
    if "logits_to_keep" in params:
        kwargs["logits_to_keep"] = 1
    with torch.inference_mode():
        out = model(**kwargs)
        logits = out.logits if hasattr(out, "logits") else out[0]
        last = logits[:, -1, :].float()
        logp = torch.log_softmax(last, dim=-1)
        picked = logp[:, torch.as_tensor(list(token_ids), device=logp.device)]
    return picked.cpu().numpy().astype(np.float64)


def is_oom(exc: BaseException) -> bool:
    """True for an out-of-memory error (CUDA, MPS or the CPU allocator)."""
    import torch

    if isinstance(exc, torch.OutOfMemoryError):
        return True
    msg = str(exc).lower()
    return isinstance(exc, RuntimeError) and (
        "out of memory" in msg or "can't allocate memory" in msg
    )


def _free_memory(device) -> None:
    import gc

    import torch

    gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()


def iter_batches(
    model: Any,
    seqs: Sequence[Sequence[int]],
    token_ids: Sequence[int],
    *,
    batch_size: int | str = "auto",
    pad_id: int = 0,
    device: Any = None,
) -> Iterator[tuple[np.ndarray, np.ndarray, int]]:
    """Run :func:`last_logprobs` over ``seqs`` in the given order, adapting the batch size.

    Parameters
    ----------
    model : causal LM
    seqs : sequence of token-id lists
        Prompts, already sorted by the caller (longest first keeps batches tight and puts the
        largest batch first, so an out-of-memory error surfaces early).
    token_ids : sequence of int
    batch_size : int or "auto"
        Maximum rows per batch. ``"auto"`` starts from :data:`AUTO_BATCH` for the device type and
        also caps padded tokens (rows x longest prompt).
    pad_id : int
        Padding id (masked out; any valid id works).
    device : torch.device
        Input device (default: the model's).

    Yields
    ------
    (positions, logprobs, n_tokens)
        Positions into ``seqs`` of the batch, their ``(rows, len(token_ids))`` log-probabilities
        and the batch's count of real tokens.

    Notes
    -----
    On an out-of-memory error the batch is retried with half the rows (and half the token cap),
    with a warning; the smaller size is kept for the rest of the run. A single prompt that does
    not fit raises the original error.
    """
    device = device if device is not None else input_device(model)
    if batch_size == "auto":
        max_rows, max_tokens = AUTO_BATCH.get(device.type, AUTO_BATCH["cpu"])
    else:
        if not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive int or 'auto', got {batch_size!r}")
        max_rows, max_tokens = int(batch_size), None
    lengths = np.array([len(s) for s in seqs])
    if (lengths == 0).any():
        raise ValueError(f"empty prompts at positions {np.flatnonzero(lengths == 0)[:10].tolist()}")
    start = 0
    while start < len(seqs):
        rows = min(max_rows, len(seqs) - start)
        if max_tokens is not None:
            width = int(lengths[start : start + rows].max())
            rows = max(1, min(rows, max_tokens // width))
        pos = np.arange(start, start + rows)
        batch = [seqs[int(k)] for k in pos]
        ids, mask = left_pad(batch, pad_id)
        try:
            lp = last_logprobs(model, ids.to(device), mask.to(device), token_ids)
        except Exception as exc:
            if not is_oom(exc) or rows == 1:
                raise
            del exc
            _free_memory(device)
            max_rows = max(1, rows // 2)
            max_tokens = None if max_tokens is None else max(1, max_tokens // 2)
            warnings.warn(
                f"out of memory with a batch of {rows} prompts (longest {int(lengths[pos].max())} "
                f"tokens); retrying with batches of at most {max_rows}",
                stacklevel=2,
            )
            continue
        start += rows
        yield pos, lp, int(lengths[pos].sum())
