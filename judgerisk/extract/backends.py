"""Judge backends by name: ``hf`` (transformers), ``gguf`` (a GGUF file in-process), ``openai``.

:func:`open_judge` builds a :class:`~judgerisk.extract.judge.Judge` from a backend name and its
options; ``judgerisk extract --backend NAME`` calls it. A new engine registers a factory with
:func:`register_backend`, or from its own package through the entry-point group
``judgerisk.judge_backends`` (CONTRIBUTING, "Add a judge backend").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from judgerisk._registry import Registry
from judgerisk.extract.judge import HFJudge, Judge

__all__ = ["JUDGE_BACKENDS", "open_judge", "register_backend", "load_tokenizer"]

Factory = Callable[..., Judge]

#: The built-in backends (registered at the end of this module), then the plug-ins of the
#: entry-point group ``judgerisk.judge_backends`` (each a factory ``(model, **options) -> Judge``).
_REGISTRY: Registry[Factory] = Registry(
    "judge backend",
    builtins={"hf": __name__, "gguf": __name__, "openai": __name__},
    group="judgerisk.judge_backends",
    adopt=lambda name, obj: _adopt(name, obj),
)
#: Registered backend names (a live view): ``hf``, ``gguf``, ``openai`` and the plug-ins.
JUDGE_BACKENDS: Sequence[str] = _REGISTRY.names()


def _adopt(name: str, obj: Any) -> None:
    """Register a plug-in's factory (entry-point group ``judgerisk.judge_backends``)."""
    register_backend(name, obj)


def register_backend(name: str, factory: Factory) -> Factory:
    """Make ``factory(model, **options)`` available as ``open_judge(model, backend=name)``."""
    if not callable(factory):
        raise TypeError(f"a judge backend must be a callable factory, got {factory!r}")
    return _REGISTRY.add(str(name), factory)


_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[\w.-]+)?$")


def _local_path(model: str) -> Path | None:
    """The path a model string names, or None for a hub id; a missing path fails at once."""
    path = Path(model).expanduser()
    if path.exists():
        return path
    if model in _bundled() or (_HUB_ID.match(model) and not model.lower().endswith(".gguf")):
        return None
    raise FileNotFoundError(f"model {model!r}: no such file or folder (nor a bundled judge name)")


def _from_hub(loader: Any, model: str, **kwargs: Any) -> Any:
    """``loader.from_pretrained`` from the local cache only (no network, fails at once)."""
    try:
        return loader.from_pretrained(model, local_files_only=True, **kwargs)
    except OSError:
        raise FileNotFoundError(
            f"model {model!r} is not a folder, a .gguf file, a bundled judge "
            f"{sorted(_bundled())} or a hub id in the local cache (nothing is downloaded)"
        ) from None


def load_tokenizer(model: str, chat_template: str | None = None) -> Any:
    """The tokenizer of a bundled judge, a ``.gguf`` file, a model folder or a cached hub id."""
    from transformers import AutoTokenizer

    from judgerisk.extract.judges import BUNDLED_JUDGES, bundled_gguf

    if model in BUNDLED_JUDGES or str(model).lower().endswith(".gguf"):
        path = bundled_gguf(model) if model in BUNDLED_JUDGES else Path(model).expanduser()
        if not path.is_file():
            raise FileNotFoundError(f"tokenizer {model!r}: no such .gguf file")
        return AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    local = _local_path(str(model))
    return _from_hub(AutoTokenizer, str(local or model))


def _hf(
    model: Any,
    *,
    device: Any = None,
    dtype: Any = None,
    chat_template: str | None = None,
    batch_size: int | str = "auto",
    name: str | None = None,
    **unused: Any,
) -> Judge:
    """In-process transformers judge: a bundled name, a folder, a ``.gguf`` file or a cached hub id."""
    _no_options("hf", unused)
    from judgerisk.extract.judges import load_judge

    model = str(model)
    path = _local_path(model)
    if path is None and model not in _bundled():
        from transformers import AutoModelForCausalLM, AutoTokenizer

        from judgerisk.extract.forward import resolve_dtype

        kwargs = {} if dtype is None else {"dtype": resolve_dtype(dtype)}
        tok = _from_hub(AutoTokenizer, model)
        lm = _from_hub(AutoModelForCausalLM, model, **kwargs)
    else:
        lm, tok = load_judge(model, device="cpu", dtype=dtype or "float32")
    return HFJudge(
        lm,
        tok,
        name=name,
        device=device,
        dtype=dtype,
        chat_template=chat_template,
        batch_size=batch_size,
    )


def _gguf(model: Any, **options: Any) -> Judge:
    """A GGUF file (or a bundled judge) de-quantised and run in-process by transformers."""
    model = str(model)
    if model not in _bundled() and not model.lower().endswith(".gguf"):
        raise ValueError(
            f"--backend gguf needs a .gguf file or a bundled judge name, got {model!r}"
        )
    return _hf(model, **options)


def _openai(
    model: Any,
    *,
    base_url: str | None = None,
    tokenizer: str | None = None,
    chat_template: str | None = None,
    endpoint: str = "completions",
    name: str | None = None,
    **options: Any,
) -> Judge:
    """A server with an OpenAI-compatible API; ``tokenizer`` (name or path) renders prompts."""
    from judgerisk.extract.remote import OpenAIJudge

    if not base_url:
        raise ValueError("--backend openai needs --base-url (e.g. http://127.0.0.1:8000)")
    options = {k: v for k, v in options.items() if k not in ("device", "dtype", "batch_size")}
    tok = load_tokenizer(tokenizer) if tokenizer else None
    return OpenAIJudge(
        base_url,
        model,
        tokenizer=tok,
        chat_template=chat_template,
        endpoint=endpoint,
        name=name,
        **options,
    )


def _bundled() -> dict:
    from judgerisk.extract.judges import BUNDLED_JUDGES

    return BUNDLED_JUDGES


def _no_options(backend: str, unused: dict) -> None:
    given = {k: v for k, v in unused.items() if v is not None}
    if given:
        raise ValueError(f"--backend {backend} does not take {sorted(given)}")


register_backend("hf", _hf)
register_backend("gguf", _gguf)
register_backend("openai", _openai)


def open_judge(model: Any, backend: str | Factory = "hf", **options: Any) -> Judge:
    """A :class:`~judgerisk.extract.judge.Judge` from a backend name and its options.

    Parameters
    ----------
    model : str
        ``hf``/``gguf``: a bundled judge name (``"smollm2-135m"``), a model folder, a ``.gguf``
        file or a hub id already in the local cache (nothing is downloaded). ``openai``: the
        model name the server knows (None: its first listed model).
    backend : str or callable
        A name of :data:`JUDGE_BACKENDS`, or a factory ``(model, **options) -> Judge`` itself.
    **options
        The backend's options (``device, dtype, chat_template, batch_size, name`` for ``hf`` and
        ``gguf``; those of :class:`~judgerisk.extract.remote.OpenAIJudge` plus ``base_url`` and
        ``tokenizer`` for ``openai``).
    """
    factory = backend if callable(backend) else _REGISTRY.get(backend)
    return factory(model, **options)
