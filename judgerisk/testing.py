"""Offline test fixtures: a tiny random-weight Llama-style judge built without any download.

The tiny judge is a real Hugging Face causal language model (``LlamaForCausalLM``) with random
weights and a small byte-level BPE tokenizer trained on a fixed corpus, saved with
``save_pretrained`` so it reloads through ``AutoModelForCausalLM`` / ``AutoTokenizer`` exactly as a
real judge does. Its verdicts are meaningless; it exists so that the extraction pipeline, the tests,
the chapter and users without a GPU can run end to end.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["TINY_CHAT_TEMPLATE", "short_template", "tiny_items", "tiny_judge"]

#: Chat template of the tiny judge. It opens a ``<think>`` block only when the caller asks for
#: thinking (``enable_thinking=True``), like the templates of hybrid reasoning models.
TINY_CHAT_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}<|end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|assistant|>\n"
    "{% if enable_thinking is defined and enable_thinking %}<think>\n{% endif %}{% endif %}"
)

_SPECIAL = ["<pad>", "<s>", "</s>", "<|system|>", "<|user|>", "<|assistant|>", "<|end|>"]
_ADDED = ["<think>", "</think>"]

_CORPUS = [
    "You are an impartial evaluator. Return exactly one character: A or B. Do not explain.",
    "Which answer is better? Reply with A or B.",
    "Answer A",
    "Answer B",
    "A",
    "B",
    " A",
    " B",
    "Task",
    "Rubric",
    "Verdict: A",
    "Verdict: B",
    "Judge which answer follows the instruction more helpfully, honestly and accurately.",
    "Prefer the answer that is factually correct and complete.",
    "Prefer the answer that a careful expert would give; ignore length and style.",
    "What is the capital of France? Paris is the capital of France. Lyon is the capital.",
    "Write a haiku about the sea. Waves fold into foam, salt wind carries gull voices.",
    "How many legs does a spider have? A spider has eight legs. Spiders have six legs.",
    "Explain photosynthesis briefly. Plants turn light, water and carbon dioxide into sugar.",
    "Confidence: 0 10 20 30 40 50 60 70 80 90 100 percent. The better answer is A with 85.",
    "The quick brown fox jumps over the lazy dog. 1234567890 (){}[]<>.,;:!?'\"-+*/=%#&_",
]


def _train_tokenizer(vocab_size: int):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=_SPECIAL,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(_CORPUS, trainer=trainer)
    return tok


def tiny_judge(
    path: str | os.PathLike,
    seed: int = 0,
    *,
    hidden_size: int = 64,
    num_layers: int = 2,
    num_heads: int = 4,
    intermediate_size: int | None = None,
    vocab_size: int = 512,
    initializer_range: float = 0.2,
    chat_template: str | None = TINY_CHAT_TEMPLATE,
    load: bool = False,
) -> Any:
    """Build and save a tiny random-weight Llama-style judge (model + tokenizer), offline.

    Parameters
    ----------
    path : str or Path
        Folder to write (created if needed). Reload it with ``AutoModelForCausalLM.from_pretrained``
        and ``AutoTokenizer.from_pretrained``.
    seed : int
        Seed of the weight initialisation; the same seed gives bit-identical weights.
    hidden_size, num_layers, num_heads, intermediate_size : int
        Model size (``intermediate_size`` defaults to ``2 * hidden_size``). The defaults give a model
        of about 0.1 M parameters; ``hidden_size=512, num_layers=8`` gives a mid-size benchmark model.
    initializer_range : float
        Standard deviation of the random weights (larger than a trained model's 0.02 so that
        the tiny judge's verdicts vary visibly between prompts).
    vocab_size : int
        Target size of the byte-level BPE vocabulary (at least 256 + special tokens).
    chat_template : str or None
        Jinja chat template stored with the tokenizer; ``None`` saves a tokenizer without one (to
        exercise the missing-template error).
    load : bool
        If True, also load and return ``(model, tokenizer)`` (model in eval mode, float32, CPU).

    Returns
    -------
    Path or tuple
        The folder, or ``(model, tokenizer)`` when ``load=True``.

    Notes
    -----
    ``A`` and ``B`` are single tokens, as are ``ĠA`` / ``ĠB`` (" A", " B"): the two spellings a
    byte-level BPE judge can emit, which makes the verdict-slot pitfall visible on this model too.
    """
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    raw = _train_tokenizer(vocab_size)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=raw,
        bos_token="<s>",
        eos_token="</s>",
        pad_token="<pad>",
        additional_special_tokens=_SPECIAL[3:],
        clean_up_tokenization_spaces=False,
        model_max_length=4096,
    )
    tokenizer.add_tokens(_ADDED)
    tokenizer.padding_side = "left"
    if chat_template is not None:
        tokenizer.chat_template = chat_template
    tokenizer.save_pretrained(path)

    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        intermediate_size=intermediate_size or 2 * hidden_size,
        num_hidden_layers=num_layers,
        num_attention_heads=num_heads,
        num_key_value_heads=num_heads,
        max_position_embeddings=4096,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=False,
        initializer_range=initializer_range,
        dtype="float32",
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = LlamaForCausalLM(config)
    model.eval()
    model.save_pretrained(path)
    (path / "judgerisk_tiny.json").write_text(
        json.dumps({"seed": seed, "hidden_size": hidden_size, "num_layers": num_layers}) + "\n"
    )
    if load:
        return model, tokenizer
    return path


def tiny_items(n: int = 8, seed: int = 0) -> pd.DataFrame:
    """A small items table (``item, prompt, answer_a, answer_b, gold``) for tests and examples.

    Parameters
    ----------
    n : int
        Number of items.
    seed : int
        Seed of the choice of texts and gold labels; item ``i`` depends only on ``(seed, i)``,
        so ``tiny_items(k)`` is the first ``k`` rows of ``tiny_items(n)``.

    Returns
    -------
    pandas.DataFrame
    """
    import numpy as np
    import pandas as pd

    questions = [
        (
            "What is the capital of France?",
            "Paris is the capital of France.",
            "Lyon is the capital.",
        ),
        ("How many legs does a spider have?", "A spider has eight legs.", "Spiders have six legs."),
        (
            "Write a haiku about the sea.",
            "Waves fold into foam, salt wind carries gull voices.",
            "The sea is big.",
        ),
        (
            "Explain photosynthesis briefly.",
            "Plants turn light, water and carbon dioxide into sugar and oxygen.",
            "Plants eat soil.",
        ),
    ]
    rows = []
    for i in range(n):  # one generator per item: tiny_items(k) is a prefix of tiny_items(n)
        rng = np.random.default_rng([seed, i])
        q, good, bad = questions[int(rng.integers(0, len(questions)))]
        flip = bool(rng.random() < 0.5)
        pad = " Please answer." * int(rng.integers(0, 4))
        a, b = (bad, good) if flip else (good, bad)
        rows.append(
            {
                "item": i,
                "prompt": q + pad,
                "answer_a": a,
                "answer_b": b,
                "gold": "B" if flip else "A",
            }
        )
    return pd.DataFrame(rows)


def short_template() -> dict:
    """A compact variant of the ``pairwise_v1`` record (name ``"short_v1"``) for fast tests.

    Same system message, conditions and verdict tokens, with a terse user message and rubrics,
    so prompts are about a third as long.

    Returns
    -------
    dict
        A template record, usable wherever a template is accepted.
    """
    from judgerisk.extract._prompts import load_template
    from judgerisk.options import DEFAULT_TEMPLATE

    record = dict(load_template(DEFAULT_TEMPLATE).record)
    record.update(
        name="short_v1",
        user="{rubric}\nQ: {prompt}\nA: {answer_a}\nB: {answer_b}",
        rubrics={"standard": "Better?", "rubric1": "More correct?", "rubric2": "Expert pick?"},
    )
    return record
