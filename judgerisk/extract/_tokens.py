"""Verdict-token resolution: which vocabulary ids are the judge's "A" and "B" at the verdict slot.

Byte-level BPE vocabularies hold both ``A`` and ``ĠA`` (" A"); SentencePiece holds ``▁A``. The id
that matters is the one the judge would emit right after the rendered prompt, so it is found by
encoding ``prefix + "A"`` against ``prefix`` and taking the one new token.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["VerdictTokens", "resolve_verdict_tokens", "encode_prompt", "encode_prompts"]


@dataclass(frozen=True)
class VerdictTokens:
    """Resolved verdict-token ids.

    Attributes
    ----------
    id_a, id_b : int
        Vocabulary ids of the first- and second-displayed-answer verdicts at the verdict slot.
    token_a, token_b : str
        Their vocabulary strings (e.g. ``"A"`` or ``"ĠA"``).
    """

    id_a: int
    id_b: int
    token_a: str
    token_b: str


def encode_prompt(tokenizer: Any, text: str) -> list[int]:
    """Token ids of a rendered chat prompt, without adding special tokens a second time.

    Chat templates already write the BOS token; encoding with ``add_special_tokens=True`` would
    prepend a second one. Raises ValueError if the text still starts with two BOS tokens.
    """
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    bos = tokenizer.bos_token_id
    if bos is not None and len(ids) >= 2 and ids[0] == bos and ids[1] == bos:
        raise ValueError(
            "the rendered prompt starts with two BOS tokens; the chat template and the text both "
            "add one. Remove the BOS from the template text or the messages."
        )
    return ids


def encode_prompts(tokenizer: Any, texts: list[str]) -> list[list[int]]:
    """Batch version of :func:`encode_prompt` (one tokenizer call for all texts)."""
    if not texts:
        return []
    ids = tokenizer(list(texts), add_special_tokens=False)["input_ids"]
    bos = tokenizer.bos_token_id
    if bos is not None:
        double = [k for k, s in enumerate(ids) if len(s) >= 2 and s[0] == bos and s[1] == bos]
        if double:
            raise ValueError(
                f"{len(double)} rendered prompt(s) start with two BOS tokens (first at position "
                f"{double[0]}); the chat template and the text both add one. Remove the BOS from "
                "the template text or the messages."
            )
    return [list(s) for s in ids]


def _one_token(tokenizer, prefix: str, prefix_ids: list[int], verdict: str) -> int:
    full = encode_prompt(tokenizer, prefix + verdict)
    if full[: len(prefix_ids)] != prefix_ids or len(full) != len(prefix_ids) + 1:
        new = full[len(prefix_ids) :] if full[: len(prefix_ids)] == prefix_ids else full[-3:]
        raise ValueError(
            f"the verdict {verdict!r} is not a single token at the verdict slot: appending it to "
            f"the prompt gives tokens {tokenizer.convert_ids_to_tokens(new)} (the prompt end "
            "merges with it or it splits). Change the verdict strings, the assistant prefill or "
            "the template."
        )
    return int(full[-1])


def resolve_verdict_tokens(
    tokenizer: Any, prefix: str, verdicts: tuple[str, str] = ("A", "B")
) -> VerdictTokens:
    """Resolve the two verdict ids at the slot right after ``prefix``.

    Parameters
    ----------
    tokenizer : transformers tokenizer
    prefix : str
        A rendered prompt (chat template + generation prompt + prefill).
    verdicts : pair of str
        Verdict strings for the first and second displayed answer.

    Returns
    -------
    VerdictTokens

    Raises
    ------
    ValueError
        If a verdict is not exactly one token at the slot, or both verdicts map to the same id.
    """
    prefix_ids = encode_prompt(tokenizer, prefix)
    id_a = _one_token(tokenizer, prefix, prefix_ids, verdicts[0])
    id_b = _one_token(tokenizer, prefix, prefix_ids, verdicts[1])
    if id_a == id_b:
        raise ValueError(
            f"verdicts {verdicts[0]!r} and {verdicts[1]!r} resolve to the same token id {id_a}"
        )
    tok_a, tok_b = tokenizer.convert_ids_to_tokens([id_a, id_b])
    return VerdictTokens(id_a, id_b, tok_a, tok_b)
