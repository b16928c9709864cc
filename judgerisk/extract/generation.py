"""Generation-based baselines for the BPE chapter: verbalized confidence and self-consistency.

Both sample text with ``model.generate`` instead of reading verdict logprobs, and both return a
per-(item, condition) table whose ``p`` is canonical (probability that the original answer A
wins), with NaN where nothing usable came back (counted in a warning, never dropped).

References
----------
The SCOPE paper (baselines: verbalized confidence, self-consistency); METHODS.md §1, §7.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd

from judgerisk.extract.extract import judge_name
from judgerisk.extract.forward import left_pad, prepare_model
from judgerisk.extract.prompts import build_prompts, load_template, read_items, render_chats
from judgerisk.extract.tokens import encode_prompts

__all__ = ["parse_verbalized", "parse_choice", "verbalized_confidence", "self_consistency"]

_VERBAL = re.compile(
    r"\b([AB])\b[^0-9A-Za-z]{0,12}?(?:confidence\W{0,3})?(\d{1,3}(?:\.\d+)?)\s*%?", re.IGNORECASE
)
_CHOICE = re.compile(r"^\W*([AB])\b")


def parse_verbalized(texts) -> pd.DataFrame:
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
        choice.append(m.group(1).upper() if ok else None)
        conf.append(value / 100.0 if ok else np.nan)
    return pd.DataFrame({"choice": pd.array(choice, dtype=object), "confidence": conf})


def parse_choice(texts) -> np.ndarray:
    """First verdict letter of each generated text: 1 for "A", 0 for "B", -1 when none."""
    out = np.full(len(texts), -1, dtype=np.int8)
    for k, text in enumerate(texts):
        m = _CHOICE.match(str(text))
        if m:
            out[k] = 1 if m.group(1).upper() == "A" else 0
    return out


def _generate(
    model,
    tokenizer,
    texts,
    *,
    device,
    batch_size,
    max_new_tokens,
    do_sample,
    temperature,
    num_return_sequences,
):
    import torch

    pad_id = tokenizer.pad_token_id
    pad_id = pad_id if pad_id is not None else (tokenizer.eos_token_id or 0)
    seqs = encode_prompts(tokenizer, texts)
    outputs = []
    for start in range(0, len(seqs), batch_size):
        ids, mask = left_pad(seqs[start : start + batch_size], pad_id)
        kwargs = {
            "max_new_tokens": max_new_tokens,
            "do_sample": do_sample,
            "num_return_sequences": num_return_sequences,
            "pad_token_id": pad_id,
        }
        if do_sample:
            kwargs.update(temperature=temperature, top_k=0, top_p=1.0)
        with torch.inference_mode():
            gen = model.generate(input_ids=ids.to(device), attention_mask=mask.to(device), **kwargs)
        new = gen[:, ids.shape[1] :]
        outputs.extend(tokenizer.batch_decode(new, skip_special_tokens=True))
    return outputs


def _setup(model, tokenizer, items, conditions, template, chat_template, device, dtype):
    items = read_items(items)
    tmpl = load_template(template)
    prompts = build_prompts(items, tmpl, conditions)
    prompts["text"] = render_chats(
        tokenizer,
        list(prompts["messages"]),
        enable_thinking=False,
        chat_template=chat_template,
        assistant_prefill=tmpl.assistant_prefill,
    )
    model, in_dev = prepare_model(model, device, dtype)
    return prompts, tmpl, model, in_dev


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
    model,
    tokenizer,
    items,
    judge=None,
    conditions=("original",),
    *,
    template="verbalized_v1",
    max_new_tokens: int = 12,
    batch_size: int = 8,
    device=None,
    dtype=None,
    chat_template=None,
    choices=None,
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
    prompts, tmpl, model, dev = _setup(
        model, tokenizer, items, conditions, template, chat_template, device, dtype
    )
    texts = list(prompts["text"])
    forced = None
    if choices is not None:
        forced = _forced_choices(prompts, choices)
        texts = [t + c for t, c in zip(texts, forced, strict=True)]
    texts = _generate(
        model,
        tokenizer,
        texts,
        device=dev,
        batch_size=batch_size,
        max_new_tokens=max_new_tokens,
        do_sample=False,
        temperature=1.0,
        num_return_sequences=1,
    )
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
    canon_choice = np.where(
        parsed["choice"].isna(), None, np.where(displayed_a != swapped, "A", "B")
    )
    return pd.DataFrame(
        {
            "item": prompts["item"],
            "judge": judge or judge_name(model),
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
    model,
    tokenizer,
    items,
    judge=None,
    conditions=("original",),
    *,
    k: int = 5,
    temperature: float = 0.7,
    seed: int = 0,
    template="pairwise_v1",
    max_new_tokens: int = 2,
    batch_size: int = 8,
    device=None,
    dtype=None,
    chat_template=None,
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
    import torch

    if k < 1 or temperature <= 0:
        raise ValueError(f"need k >= 1 and temperature > 0, got k={k}, temperature={temperature}")
    prompts, tmpl, model, dev = _setup(
        model, tokenizer, items, conditions, template, chat_template, device, dtype
    )
    devices = [dev.index or 0] if dev.type == "cuda" else []
    with torch.random.fork_rng(devices=devices):
        torch.manual_seed(seed)
        texts = _generate(
            model,
            tokenizer,
            list(prompts["text"]),
            device=dev,
            batch_size=batch_size,
            max_new_tokens=max_new_tokens,
            do_sample=True,
            temperature=temperature,
            num_return_sequences=k,
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
            "judge": judge or judge_name(model),
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
