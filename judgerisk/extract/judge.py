"""The judge backend protocol: what extraction asks of an LLM judge, and its HF implementation.

Extraction needs two things from a judge (book chapter "Extracting log-probabilities"):

* the **verdict log-probabilities** of a batch of rendered prompts — log P("A") and log P("B")
  at the slot right after each prompt, over the full vocabulary;
* **generation** of short answers, for the verbalized-confidence and self-consistency baselines.

Both act on prompts already rendered by the judge's own chat template (:meth:`Judge.render`).
:class:`HFJudge` implements the protocol for a Hugging Face transformers causal LM and its
tokenizer; another backend (vLLM, llama.cpp, an API) implements the same four members and is then
accepted by :func:`~judgerisk.extract.extract_logprobs`,
:func:`~judgerisk.extract._generation.verbalized_confidence` and
:func:`~judgerisk.extract._generation.self_consistency` in place of ``model`` (with
``tokenizer=None``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple, Protocol, runtime_checkable

import numpy as np

from judgerisk._util.hashing import sha256_text
from judgerisk.extract._fingerprint import model_fingerprint
from judgerisk.extract._forward import AUTO_BATCH, iter_batches, left_pad, prepare_model
from judgerisk.extract._prompts import render_chats
from judgerisk.extract._tokens import VerdictTokens, encode_prompts, resolve_verdict_tokens

__all__ = [
    "GeneratingJudge",
    "HFJudge",
    "Judge",
    "JudgeAnswerError",
    "RunStopped",
    "VerdictLogprobs",
    "as_judge",
]


class JudgeAnswerError(ValueError):
    """A backend's answer that cannot be used (malformed, impossible, from another model).

    ``position`` is the index, in the :meth:`Judge.verdict_logprobs` call, of the prompt whose
    answer it was (None when not known); :func:`~judgerisk.extract._extract.run_judge` adds the
    item and condition to the message. A :class:`ValueError`: the command line exits with 2.
    """

    position: int | None = None


class RunStopped(RuntimeError):
    """A run that stopped before every prompt had its answer; the answered ones are kept.

    Raised by a backend (a server that asks to wait too long, too many prompts in a row with no
    answer, the run's deadline) or by :func:`~judgerisk.extract._extract.run_judge` when prompts
    were left unanswered. ``partial`` holds the answers of the call that stopped (its
    ``missing`` rows unanswered), which ``run_judge`` stores before re-raising, so rerunning
    the same command resumes. Exit code 1.
    """

    partial: VerdictLogprobs | None = None


def render_with_template(
    judge: Any, conversations: Sequence[list[dict]], assistant_prefill: str = ""
) -> list[str]:
    """A judge's prompts: its ``tokenizer``'s (or its ``chat_template``) chat template, thinking
    disabled, the assistant turn opened with ``assistant_prefill`` (the in-process judges and the
    OpenAI-compatible backend's completion endpoint render the same text)."""
    return render_chats(
        judge.tokenizer,
        list(conversations),
        enable_thinking=False,
        chat_template=judge.chat_template,
        assistant_prefill=assistant_prefill,
    )


class VerdictLogprobs(NamedTuple):
    """Verdict log-probabilities of a batch of prompts, in the order given.

    Attributes
    ----------
    logprobs : numpy.ndarray
        ``(n, 2)`` float64: log P(first verdict), log P(second verdict) at the verdict slot.
    prompt_tokens : numpy.ndarray
        ``(n,)`` int64 prompt lengths in the judge's tokens.
    tokens : VerdictTokens
        The resolved verdict tokens (ids and strings).
    bounded : numpy.ndarray or None
        ``(n, 2)`` bool, or None when every value is exact: True where a backend saw only the top-k
        list and the verdict was not in it, so the value is an upper bound (the k-th log-prob).
    missing : numpy.ndarray or None
        ``(n,)`` bool, or None when every prompt was answered: True where the backend got no
        answer (a server down for that prompt); those rows' values are NaN, they are not stored
        and a rerun asks for them again.
    """

    logprobs: np.ndarray
    prompt_tokens: np.ndarray
    tokens: VerdictTokens
    bounded: np.ndarray | None = None
    missing: np.ndarray | None = None


@runtime_checkable
class Judge(Protocol):
    """An LLM judge backend (structural type: any object with these members is a Judge).

    Optional members used by :func:`~judgerisk.extract._extract.run_judge` when present:
    ``describe() -> dict`` (what identifies the judge's numbers: model files' hash, dtype, chat
    template, server model; part of the resume manifest, so a resumed run with a different judge
    is refused) and ``chunk_size`` (prompts per :meth:`verdict_logprobs` call).
    """

    @property
    def name(self) -> str:
        """Judge name recorded in the panel table."""
        ...

    def render(
        self, conversations: Sequence[list[dict]], *, assistant_prefill: str = ""
    ) -> list[str]:
        """Render chat messages with the judge's chat template (thinking disabled)."""
        ...

    def verdict_logprobs(
        self, texts: Sequence[str], verdicts: tuple[str, str] = ("A", "B")
    ) -> VerdictLogprobs:
        """Log-probabilities of the two verdict strings right after each rendered prompt."""
        ...


@runtime_checkable
class GeneratingJudge(Judge, Protocol):
    """A :class:`Judge` that can also generate text, which the generation baselines need
    (:mod:`judgerisk.extract._generation`: verbalized confidence, self-consistency). A backend
    that only returns verdict log-probabilities (a server's top-k list) leaves it out."""

    def generate(
        self,
        texts: Sequence[str],
        *,
        max_new_tokens: int,
        do_sample: bool = False,
        temperature: float = 1.0,
        num_return_sequences: int = 1,
        seed: int | None = None,
    ) -> list[str]:
        """Continuations of each prompt (``num_return_sequences`` consecutive ones per prompt)."""
        ...


class HFJudge:
    """A Hugging Face transformers causal LM and its tokenizer as a :class:`Judge`.

    Parameters
    ----------
    model : transformers causal LM
    tokenizer : transformers tokenizer
        With a chat template, or pass ``chat_template``.
    name : str, optional
        Judge name (default: last component of the model's path).
    device, dtype : optional
        Where and in which precision to run (see :func:`judgerisk.extract._forward.prepare_model`);
        default: leave the model as loaded.
    chat_template : str, optional
        Jinja chat template overriding the tokenizer's.
    batch_size : int or "auto", default "auto"
        Rows per forward pass of :meth:`verdict_logprobs` (adaptive, see
        :func:`judgerisk.extract._forward.iter_batches`).
    generate_batch_size : int, default 8
        Prompts per :meth:`generate` call of the model.

    Notes
    -----
    One forward pass per prompt, last position only, float32 log-softmax over the full
    vocabulary; prompts are run longest first and returned in the order given.
    """

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        name: str | None = None,
        *,
        device: Any = None,
        dtype: Any = None,
        chat_template: str | None = None,
        batch_size: int | str = "auto",
        generate_batch_size: int = 8,
    ) -> None:
        self.model, self.input_device = prepare_model(model, device, dtype)
        self.tokenizer = tokenizer
        self.chat_template = chat_template
        self.batch_size = batch_size
        self.generate_batch_size = int(generate_batch_size)
        self._name = name
        self._described: dict | None = None
        auto = AUTO_BATCH.get(getattr(self.input_device, "type", "cpu"), AUTO_BATCH["cpu"])[0]
        self.chunk_size = auto if batch_size == "auto" else int(batch_size)
        pad = tokenizer.pad_token_id
        self.pad_id = int(pad if pad is not None else (tokenizer.eos_token_id or 0))

    @property
    def name(self) -> str:
        """Judge name (the given one, else the last component of the model's path)."""
        if self._name is not None:
            return str(self._name)
        model = self.model
        path = getattr(model, "name_or_path", None) or getattr(
            getattr(model, "config", None), "_name_or_path", ""
        )
        return str(path).rstrip("/").split("/")[-1] or type(model).__name__

    def describe(self) -> dict:
        """Backend, model files' SHA-256, dtype and chat template hash (the resume key)."""
        if self._described is None:
            template = self.chat_template
            if template is None:
                template = getattr(self.tokenizer, "chat_template", None)
            self._described = {
                "backend": "hf",
                **model_fingerprint(self.model),
                "dtype": str(next(self.model.parameters()).dtype).replace("torch.", ""),
                "chat_template_sha256": None if template is None else sha256_text(template),
            }
        return self._described

    def render(
        self, conversations: Sequence[list[dict]], *, assistant_prefill: str = ""
    ) -> list[str]:
        """Render with the tokenizer's (or the given) chat template, thinking disabled."""
        return render_with_template(self, conversations, assistant_prefill)

    def verdict_logprobs(
        self, texts: Sequence[str], verdicts: tuple[str, str] = ("A", "B")
    ) -> VerdictLogprobs:
        """Batched last-position log-probabilities of the two verdict tokens."""
        texts = list(texts)
        if not texts:
            raise ValueError("no prompts")
        vt = resolve_verdict_tokens(self.tokenizer, texts[0], verdicts)
        seqs = encode_prompts(self.tokenizer, texts)
        lengths = np.array([len(s) for s in seqs], dtype=np.int64)
        order = np.lexsort((np.arange(len(seqs)), -lengths))  # longest first, stable
        out = np.full((len(seqs), 2), np.nan)
        for pos, lp, _ in iter_batches(
            self.model,
            [seqs[k] for k in order],
            (vt.id_a, vt.id_b),
            batch_size=self.batch_size,
            pad_id=self.pad_id,
            device=self.input_device,
        ):
            out[order[pos]] = lp
        return VerdictLogprobs(out, lengths, vt)

    def generate(
        self,
        texts: Sequence[str],
        *,
        max_new_tokens: int,
        do_sample: bool = False,
        temperature: float = 1.0,
        num_return_sequences: int = 1,
        seed: int | None = None,
    ) -> list[str]:
        """Greedy or sampled continuations; sampling with ``seed`` leaves the caller's RNG intact.

        Sampling uses temperature ``temperature`` with no top-k / top-p truncation; with ``seed``
        the torch generator is seeded inside a forked RNG state, so the same seed on the same
        device gives the same samples.
        """
        import torch

        dev = self.input_device
        devices = [dev.index or 0] if getattr(dev, "type", "cpu") == "cuda" else []
        with torch.random.fork_rng(devices=devices, enabled=seed is not None):
            if seed is not None:
                torch.manual_seed(seed)
            return self._generate(
                list(texts),
                max_new_tokens=max_new_tokens,
                do_sample=do_sample,
                temperature=temperature,
                num_return_sequences=num_return_sequences,
                batch_size=self.generate_batch_size,
            )

    def _generate(
        self,
        texts: list[str],
        *,
        max_new_tokens: int,
        do_sample: bool,
        temperature: float,
        num_return_sequences: int,
        batch_size: int,
    ) -> list[str]:
        import torch

        seqs = encode_prompts(self.tokenizer, texts)
        outputs: list[str] = []
        kwargs: dict[str, Any] = {
            "max_new_tokens": max_new_tokens,
            "do_sample": do_sample,
            "num_return_sequences": num_return_sequences,
            "pad_token_id": self.pad_id,
        }
        if do_sample:
            kwargs.update(temperature=temperature, top_k=0, top_p=1.0)
        for start in range(0, len(seqs), batch_size):
            ids, mask = left_pad(seqs[start : start + batch_size], self.pad_id)
            with torch.inference_mode():
                gen = self.model.generate(
                    input_ids=ids.to(self.input_device),
                    attention_mask=mask.to(self.input_device),
                    **kwargs,
                )
            new = gen[:, ids.shape[1] :]
            outputs.extend(self.tokenizer.batch_decode(new, skip_special_tokens=True))
        return outputs


def as_judge(
    model: Any,
    tokenizer: Any = None,
    *,
    device: Any = None,
    dtype: Any = None,
    chat_template: str | None = None,
    generate_batch_size: int = 8,
) -> Judge:
    """``model`` itself when it is a :class:`Judge`, else an :class:`HFJudge` of model + tokenizer."""
    if isinstance(model, Judge):
        if tokenizer is not None:
            raise ValueError("pass tokenizer=None with a Judge (it brings its own)")
        return model
    if tokenizer is None:
        raise ValueError("a transformers model needs its tokenizer (or pass a Judge)")
    return HFJudge(
        model,
        tokenizer,
        device=device,
        dtype=dtype,
        chat_template=chat_template,
        generate_batch_size=generate_batch_size,
    )
