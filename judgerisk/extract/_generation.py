"""Generation-based baselines for the BPE chapter: verbalized confidence and self-consistency.

Both generate text with a :class:`~judgerisk.extract.judge.Judge` (a transformers model and its
tokenizer are wrapped in :class:`~judgerisk.extract.judge.HFJudge`) instead of reading verdict
logprobs, and both return a
per-(item, condition) table whose ``p`` is canonical (probability that the original answer A
wins), with NaN where nothing usable came back (counted in a warning, never dropped).

References
----------
The SCOPE paper (baselines: verbalized confidence, self-consistency); Methods reference §1, §7.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from judgerisk.extract._prompts import rendered_prompts
from judgerisk.extract.judge import GeneratingJudge, as_judge
from judgerisk.options import DEFAULT_TEMPLATE

__all__ = ["parse_verbalized", "parse_choice", "verbalized_confidence", "self_consistency"]

_VERBAL = re.compile(
    r"\b([AB])\b[^0-9A-Za-z]{0,12}?(?:confidence\W{0,3})?(\d{1,3}(?:\.\d+)?)\s*%?", re.IGNORECASE
)
_CHOICE = re.compile(r"^\W*([AB])\b")


def parse_verbalized(texts: Sequence[str]) -> pd.DataFrame:
    """Parse "A 85" style answers into a choice and a confidence in [0, 1].

    Parameters
    ----------
    texts : sequence of str

    Returns
    -------
    pandas.DataFrame
        ``choice`` ("A"/"B" as displayed, or NA) and ``confidence`` (float, NaN when unparsable or
        the number is outside 0-100).
    """
    choice, conf = [], []
    for text in texts:
        m = _VERBAL.search(str(text))
        value = float(m.group(2)) if m else np.nan
        ok = m is not None and 0.0 <= value <= 100.0
        choice.append(m.group(1).upper() if ok and m is not None else None)
        conf.append(value / 100.0 if ok else np.nan)
    return pd.DataFrame({"choice": pd.array(choice, dtype=object), "confidence": conf})


def parse_choice(texts: Sequence[str]) -> np.ndarray:
    """First verdict letter of each generated text: 1 for "A", 0 for "B", -1 when none."""
    out = np.full(len(texts), -1, dtype=np.int8)
    for k, text in enumerate(texts):
        m = _CHOICE.match(str(text))
        if m:
            out[k] = 1 if m.group(1).upper() == "A" else 0
    return out


def _setup(model, tokenizer, items, conditions, template, chat_template, device, dtype, batch):
    """A Judge (``model`` itself, or an HFJudge of model + tokenizer) and the rendered prompts."""
    judge = as_judge(
        model,
        tokenizer,
        device=device,
        dtype=dtype,
        chat_template=chat_template,
        generate_batch_size=batch,
    )
    if not isinstance(judge, GeneratingJudge):
        raise ValueError(
            f"judge {judge.name!r} ({type(judge).__name__}) returns verdict log-probabilities "
            "only and cannot generate text; run the generation baselines with an in-process "
            "judge (an HFJudge, the hf or gguf backend)"
        )
    _, tmpl, prompts = rendered_prompts(items, template, conditions, judge.render)
    return prompts, tmpl, judge


def _forced_choices(prompts: pd.DataFrame, choices: pd.DataFrame) -> list[str]:
    need = {"item", "condition", "choice"}
    if not need <= set(choices.columns):
        raise ValueError(f"choices needs columns {sorted(need)}, got {list(choices.columns)}")
    keyed = choices.set_index(["item", "condition"])["choice"]
    if not keyed.index.is_unique:
        raise ValueError("choices has duplicate (item, condition) rows")
    got = keyed.reindex(pd.MultiIndex.from_frame(prompts[["item", "condition"]]))
    bad = ~got.isin(["A", "B"]).to_numpy()
    if bad.any():
        rows = prompts.loc[bad, ["item", "condition"]].head(5).to_dict("records")
        raise ValueError(
            f"choices gives no 'A'/'B' for {int(bad.sum())} prompt(s), e.g. {rows} "
            f"(values {sorted(set(map(str, got[bad])))[:5]})"
        )
    return [str(c) for c in got]


def verbalized_confidence(
    model: Any,
    tokenizer: Any,
    items: Any,
    judge: str | None = None,
    conditions: Sequence[str] = ("original",),
    *,
    template: Any = "verbalized_v1",
    max_new_tokens: int = 12,
    batch_size: int = 8,
    device: Any = None,
    dtype: Any = None,
    chat_template: str | None = None,
    choices: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Verbalized-confidence baseline: the judge names a winner and a 0-100 confidence (greedy).

    Parameters
    ----------
    choices : DataFrame, optional
        ``item, condition, choice`` with the *displayed* letter ("A"/"B") the judge chose, e.g.
        its greedy verdict from :func:`judgerisk.extract.extract_logprobs`. When given, the
        assistant turn starts with that letter and the judge only writes its confidence (small
        judges that cannot produce "A 85" on their own still state a number after their letter).

    Returns
    -------
    pandas.DataFrame
        ``item, judge, condition, swapped, response, choice, confidence, p, template,
        template_hash``; ``p`` is the canonical probability that the original A wins:

        .. math:: p = c \\text{ if the chosen answer is original A, else } 1 - c,

        with c the stated confidence / 100. Unparsable answers give NaN and one warning with
        their count.
    """
    prompts, tmpl, jdg = _setup(
        model, tokenizer, items, conditions, template, chat_template, device, dtype, batch_size
    )
    texts = list(prompts["text"])
    forced = None
    if choices is not None:
        forced = _forced_choices(prompts, choices)
        texts = [t + c for t, c in zip(texts, forced, strict=True)]
    texts = jdg.generate(texts, max_new_tokens=max_new_tokens, do_sample=False)
    if forced is not None:
        texts = [c + t for c, t in zip(forced, texts, strict=True)]
    parsed = parse_verbalized(texts)
    swapped = prompts["swapped"].to_numpy(bool)
    displayed_a = parsed["choice"].to_numpy() == "A"
    conf = parsed["confidence"].to_numpy(float)
    p_display_a = np.where(displayed_a, conf, 1.0 - conf)
    p = np.where(swapped, 1.0 - p_display_a, p_display_a)
    bad = np.isnan(p)
    if bad.any():
        warnings.warn(
            f"verbalized confidence: {int(bad.sum())} of {len(p)} responses could not "
            "be parsed (p = NaN)",
            stacklevel=2,
        )
    canon_choice = np.where(  # type: ignore[call-overload,unused-ignore]  # numpy<2.5 stubs lack None
        parsed["choice"].isna(), None, np.where(displayed_a != swapped, "A", "B")
    )
    return pd.DataFrame(
        {
            "item": prompts["item"],
            "judge": judge or jdg.name,
            "condition": prompts["condition"],
            "swapped": swapped,
            "response": texts,
            "choice": canon_choice,
            "confidence": conf,
            "p": p,
            "template": tmpl.name,
            "template_hash": tmpl.hash,
        }
    )


def self_consistency(
    model: Any,
    tokenizer: Any,
    items: Any,
    judge: str | None = None,
    conditions: Sequence[str] = ("original",),
    *,
    k: int = 5,
    temperature: float = 0.7,
    seed: int = 0,
    template: Any = DEFAULT_TEMPLATE,
    max_new_tokens: int = 2,
    batch_size: int = 8,
    device: Any = None,
    dtype: Any = None,
    chat_template: str | None = None,
) -> pd.DataFrame:
    """Self-consistency baseline: k sampled verdicts at temperature T, vote share of original A.

    Returns
    -------
    pandas.DataFrame
        ``item, judge, condition, swapped, n_a, n_b, n_invalid, p, k, temperature, template,
        template_hash`` with counts in canonical orientation and

        .. math:: p = n_A / (n_A + n_B),

        NaN (with a counted warning) when no sample starts with a verdict letter.

    Notes
    -----
    Sampling uses torch's generator seeded with ``seed`` inside a forked RNG state, so the same
    seed on the same device gives the same samples and the caller's RNG is untouched.
    """
    if k < 1 or temperature <= 0:
        raise ValueError(f"need k >= 1 and temperature > 0, got k={k}, temperature={temperature}")
    prompts, tmpl, jdg = _setup(
        model, tokenizer, items, conditions, template, chat_template, device, dtype, batch_size
    )
    texts = jdg.generate(
        list(prompts["text"]),
        max_new_tokens=max_new_tokens,
        do_sample=True,
        temperature=temperature,
        num_return_sequences=k,
        seed=seed,
    )
    votes = parse_choice(texts).reshape(len(prompts), k)
    swapped = prompts["swapped"].to_numpy(bool)[:, None]
    canon_a = np.where(votes < 0, -1, np.where(swapped, 1 - votes, votes))
    n_a, n_b = (canon_a == 1).sum(1), (canon_a == 0).sum(1)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.where(n_a + n_b > 0, n_a / np.maximum(n_a + n_b, 1), np.nan)
    bad = np.isnan(p)
    if bad.any():
        warnings.warn(
            f"self-consistency: {int(bad.sum())} of {len(p)} prompts had no parsable "
            f"verdict in {k} samples (p = NaN)",
            stacklevel=2,
        )
    return pd.DataFrame(
        {
            "item": prompts["item"],
            "judge": judge or jdg.name,
            "condition": prompts["condition"],
            "swapped": swapped[:, 0],
            "n_a": n_a,
            "n_b": n_b,
            "n_invalid": k - n_a - n_b,
            "p": p,
            "k": k,
            "temperature": temperature,
            "template": tmpl.name,
            "template_hash": tmpl.hash,
        }
    )
