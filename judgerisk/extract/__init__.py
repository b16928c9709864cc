"""Verdict-logprob extraction from any judge engine: items -> prompts -> panel table.

Main entry points: :func:`extract_logprobs` (a transformers model or any Judge) and
:func:`run_judge` (the one extraction loop every backend goes through); :func:`open_judge` builds
a judge by backend name (``hf``, ``gguf``, ``openai``). Prompts are versioned data
(``judgerisk/extract/templates/*.json``); generation baselines (verbalized confidence,
self-consistency) live in :mod:`judgerisk.extract._generation`.
"""

from judgerisk.extract._extract import (
    canonical_logit,
    extract_logprobs,
    prepare_prompts,
    run_judge,
)
from judgerisk.extract._forward import AUTO_BATCH, last_logprobs, left_pad
from judgerisk.extract._generation import parse_verbalized, self_consistency, verbalized_confidence
from judgerisk.extract._judges import BUNDLED_JUDGES, SMOLLM2, bundled_gguf, load_judge
from judgerisk.extract._parts import read_parts
from judgerisk.extract._prompts import (
    PLAIN_CHAT_TEMPLATE,
    Template,
    build_prompts,
    list_templates,
    load_template,
    read_items,
    render_chat,
    render_chats,
)
from judgerisk.extract._tokens import VerdictTokens, encode_prompt, resolve_verdict_tokens
from judgerisk.extract.backends import JUDGE_BACKENDS, open_judge, register_backend
from judgerisk.extract.judge import HFJudge, Judge, VerdictLogprobs, as_judge
from judgerisk.extract.remote import OpenAIJudge

__all__ = [
    "JUDGE_BACKENDS",
    "OpenAIJudge",
    "open_judge",
    "register_backend",
    "run_judge",
    "HFJudge",
    "Judge",
    "VerdictLogprobs",
    "as_judge",
    "AUTO_BATCH",
    "BUNDLED_JUDGES",
    "SMOLLM2",
    "bundled_gguf",
    "load_judge",
    "PLAIN_CHAT_TEMPLATE",
    "Template",
    "VerdictTokens",
    "build_prompts",
    "canonical_logit",
    "encode_prompt",
    "extract_logprobs",
    "last_logprobs",
    "left_pad",
    "list_templates",
    "load_template",
    "parse_verbalized",
    "prepare_prompts",
    "read_items",
    "read_parts",
    "render_chat",
    "render_chats",
    "resolve_verdict_tokens",
    "self_consistency",
    "verbalized_confidence",
]
