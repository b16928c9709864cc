"""Judge backends by name: ``hf`` (transformers), ``gguf`` (a GGUF file in-process), ``openai``.

:func:`open_judge` builds a :class:`~judgerisk.extract.judge.Judge` from a backend name and its
options; ``judgerisk extract --backend NAME`` calls it. A new engine registers a factory with
:func:`register_backend`, or from its own package through the entry-point group
``judgerisk.judge_backends`` (CONTRIBUTING, "Add a judge backend").

A backend declares its own options (:class:`BackendOption`: ``register_backend(...,
options=...)``, or an ``options`` attribute of the factory or class): each is a keyword of its
factory and an option ``--NAME`` of ``judgerisk extract``, which shows it under the backends that
take it and passes it only to them (:func:`backend_options`). Every factory also receives
``chat_template`` and ``name`` (``--chat-template``, ``--judge``).
"""

from __future__ import annotations

import argparse
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judgerisk._util.registry import Registry
from judgerisk.extract.http_client import (
    DEFAULT_MAX_FAILURES,
    DEFAULT_MAX_WAIT,
    MAX_RETRIES,
    MAX_TIMEOUT,
)
from judgerisk.extract.judge import HFJudge, Judge

__all__ = [
    "JUDGE_BACKENDS",
    "BackendOption",
    "backend_options",
    "open_judge",
    "register_backend",
    "unregister_backend",
    "load_tokenizer",
]

Factory = Callable[..., Judge]


def _positive(kind: type, high: float = math.inf) -> Callable[[str], Any]:
    """An option type: a finite number of ``kind`` greater than 0 (and at most ``high``)."""

    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            value = 0
        if not (value > 0 and math.isfinite(value) and value <= high):
            bound = "" if high == math.inf else f" up to {high:g}"
            raise argparse.ArgumentTypeError(f"expected a positive number{bound}, got {text!r}")
        return value

    parse.__name__ = kind.__name__
    return parse


def _retries(text: str) -> int:
    """An option type: retries, a whole number from 0 to :data:`MAX_RETRIES`."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= MAX_RETRIES:
        raise argparse.ArgumentTypeError(
            f"expected a whole number from 0 to {MAX_RETRIES}, got {text!r}"
        )
    return value


@dataclass(frozen=True)
class BackendOption:
    """One option a judge backend takes: a keyword of its factory, ``--NAME`` on the command line.

    Attributes
    ----------
    name : str
        The factory's keyword (``"base_url"``); the command line's flag is ``--base-url``.
    help : str
        One line for ``judgerisk extract --help``.
    default : object, default None
        The value the factory gets when the option is not given (recorded with the run).
    type : callable, optional
        Turns the command line's text into the value (``int``, ...); default: the text.
    choices : tuple, optional
        The allowed values.
    metavar : str, optional
        The value's name in the help.
    """

    name: str
    help: str
    default: Any = None
    type: Callable[[str], Any] | None = None
    choices: tuple[Any, ...] | None = None
    metavar: str | None = None

    @property
    def flag(self) -> str:
        """The command-line flag: ``--`` and the name with dashes."""
        return "--" + self.name.replace("_", "-")


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
#: The options each registered backend declared (:func:`register_backend`).
_OPTIONS: dict[str, tuple[BackendOption, ...]] = {}


def _adopt(name: str, obj: Any) -> None:
    """Register a plug-in's factory (entry-point group ``judgerisk.judge_backends``)."""
    register_backend(name, obj)


def register_backend(
    name: str, factory: Factory, options: Sequence[BackendOption] | None = None
) -> Factory:
    """Make ``factory(model, **options)`` available as ``open_judge(model, backend=name)``.

    Parameters
    ----------
    name : str
        The backend's name (``judgerisk extract --backend NAME``).
    factory : callable
        ``factory(model, *, chat_template=None, name=None, **options) -> Judge`` (a class
        with that constructor works too).
    options : sequence of BackendOption, optional
        The options it takes, which ``judgerisk extract`` offers as ``--NAME`` flags
        (default: the factory's ``options`` attribute, else none).
    """
    if not callable(factory):
        raise TypeError(f"a judge backend must be a callable factory, got {factory!r}")
    declared = tuple(getattr(factory, "options", ()) if options is None else options)
    bad = [o for o in declared if not isinstance(o, BackendOption)]
    if bad:
        raise TypeError(f"judge backend {name!r}: options must be BackendOption, got {bad[:3]}")
    added = _REGISTRY.add(str(name), factory)
    _OPTIONS[str(name)] = declared
    return added


def unregister_backend(name: str) -> None:
    """Remove a registered backend (for tests and interactive sessions); unknown names pass."""
    _REGISTRY.remove(name)
    _OPTIONS.pop(name, None)


def backend_options(name: str) -> tuple[BackendOption, ...]:
    """The options the backend ``name`` declared (an unknown name lists the backends)."""
    _REGISTRY.get(name)
    return _OPTIONS.get(name, ())


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

    from judgerisk.extract._judges import BUNDLED_JUDGES, bundled_gguf

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
    """In-process transformers judge: a bundled name, a folder, a ``.gguf`` file or a cached hub id.

    ``device`` None is CUDA when there is one; under torchrun, each rank's own device.
    """
    _no_options("hf", unused)
    from judgerisk.extract._extract import shard_device
    from judgerisk.extract._judges import load_judge

    if model is None:
        raise ValueError(
            "an in-process judge needs a model (--model: a bundled name, a folder, a .gguf file)"
        )
    device = shard_device(device)
    model = str(model)
    path = _local_path(model)
    if path is None and model not in _bundled():
        from transformers import AutoModelForCausalLM, AutoTokenizer

        from judgerisk.extract._forward import resolve_dtype

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
    if model is None:
        return _hf(model, **options)  # the same message: a model is needed
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
    from judgerisk.extract._judges import BUNDLED_JUDGES

    return BUNDLED_JUDGES


def _no_options(backend: str, unused: dict) -> None:
    given = {k: v for k, v in unused.items() if v is not None}
    if given:
        raise ValueError(f"--backend {backend} does not take {sorted(given)}")


#: The options of the in-process backends (``hf``, ``gguf``).
LOCAL_OPTIONS = (
    BackendOption(
        "device", "cuda, cuda:1, cpu (default: cuda if any; under torchrun, each rank's)"
    ),
    BackendOption("dtype", "bfloat16, float16 or float32"),
    BackendOption("batch_size", "prompts per forward pass, or 'auto'", default="auto"),
)
#: The options of a server with an OpenAI-compatible API.
OPENAI_OPTIONS = (
    BackendOption("base_url", "server root, e.g. http://127.0.0.1:8000"),
    BackendOption(
        "tokenizer",
        "the judge's tokenizer (bundled name, folder, .gguf, cached hub id); needed by the "
        "completion endpoint",
    ),
    BackendOption(
        "endpoint",
        "completions: judgerisk renders the prompt (exact verdict slot); chat: the server does",
        default="completions",
        choices=("completions", "chat"),
    ),
    BackendOption(
        "api_key_env",
        "environment variable holding the API key (the key is never recorded)",
        metavar="VAR",
    ),
    BackendOption("concurrency", "requests in flight", default=4, type=_positive(int)),
    BackendOption(
        "timeout",
        "seconds for a whole try of one request (connect, send, answer)",
        default=60.0,
        type=_positive(float, MAX_TIMEOUT),
    ),
    BackendOption(
        "retries",
        "retries on timeout, 408/409/425/429, 5xx (waits capped at --max-wait; no redirect is "
        "followed)",
        default=4,
        type=_retries,
    ),
    BackendOption(
        "max_wait",
        "longest wait in seconds between two tries; a server whose Retry-After asks for more "
        "stops the run at once (resume by rerunning the command)",
        default=DEFAULT_MAX_WAIT,
        type=_positive(float, MAX_TIMEOUT),
    ),
    BackendOption(
        "max_failures",
        "prompts in a row with no answer (after their retries) that stop the run",
        default=DEFAULT_MAX_FAILURES,
        type=_positive(int),
    ),
    BackendOption(
        "deadline",
        "seconds the whole run may take; it stops when they pass (default: no deadline)",
        type=_positive(float, 1e9),
    ),
    BackendOption("top_logprobs", "top-k list size", default=20, type=_positive(int)),
)

register_backend("hf", _hf, LOCAL_OPTIONS)
register_backend("gguf", _gguf, LOCAL_OPTIONS)
register_backend("openai", _openai, OPENAI_OPTIONS)


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
        ``chat_template`` and ``name`` (every backend), and the backend's own options
        (:func:`backend_options`: :data:`LOCAL_OPTIONS` for ``hf`` and ``gguf``,
        :data:`OPENAI_OPTIONS` for ``openai``).
    """
    factory = backend if callable(backend) else _REGISTRY.get(backend)
    return factory(model, **options)
