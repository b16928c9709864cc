"""``extract_logprobs``: items -> prompts -> one forward pass each -> the panel table.

References
----------
Methods reference §1 (panel table, canonical orientation); the instance-level panel reliability paper
(verdict-token log-probabilities under six prompt conditions).
"""

from __future__ import annotations

import atexit
import os
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from judgerisk._progress import progress_bar
from judgerisk.extract.forward import iter_batches, prepare_model, resolve_device
from judgerisk.extract.judge import HFJudge, Judge
from judgerisk.extract.parts import next_sequence, read_parts, write_manifest, write_part
from judgerisk.extract.prompts import build_prompts, load_template, read_items, render_chats
from judgerisk.extract.tokens import encode_prompts, resolve_verdict_tokens
from judgerisk.panel import CONDITIONS, validate_panel

__all__ = ["extract_logprobs", "judge_name", "prepare_prompts", "canonical_logit"]


def judge_name(model: Any) -> str:
    """A judge name from the model's ``name_or_path`` (last path component)."""
    name = getattr(model, "name_or_path", None) or getattr(
        getattr(model, "config", None), "_name_or_path", ""
    )
    name = str(name).rstrip("/").split("/")[-1]
    return name or type(model).__name__


def canonical_logit(
    logprob_a: npt.ArrayLike, logprob_b: npt.ArrayLike, swapped: npt.ArrayLike
) -> np.ndarray:
    """Canonical log-odds that the original answer A wins.

    Notes
    -----
    .. math:: m = \\log P(\\text{"A"}) - \\log P(\\text{"B"}) \\quad\\text{(original order)}, \\qquad
              m = \\log P(\\text{"B"}) - \\log P(\\text{"A"}) \\quad\\text{(swapped order)},

    because after a swap the judge's "A" token names the original answer B (Methods reference §1).
    """
    la, lb = np.asarray(logprob_a, float), np.asarray(logprob_b, float)
    return np.where(np.asarray(swapped, bool), lb - la, la - lb)


def prepare_prompts(
    tokenizer: Any,
    items: Any,
    conditions: Sequence[str] = CONDITIONS,
    *,
    template: Any = "pairwise_v1",
    chat_template: str | None = None,
    enable_thinking: bool = False,
) -> tuple[pd.DataFrame, pd.DataFrame, Any, Any]:
    """Items -> rendered, tokenised prompts and resolved verdict ids.

    Returns
    -------
    (items, prompts, verdict_tokens, template)
        ``prompts`` has ``item, condition, swapped, rubric, messages, text, input_ids,
        prompt_tokens``.
    """
    if enable_thinking:
        raise ValueError(
            "enable_thinking=True: a thinking judge writes <think> before its verdict, so the "
            "first-token verdict log-probabilities would be meaningless. Extraction needs "
            "enable_thinking=False (the rendered prompt is checked)."
        )
    items = read_items(items)
    tmpl = load_template(template)
    if tmpl.kind != "verdict":
        raise ValueError(f"template {tmpl.name!r} is of kind {tmpl.kind!r}, need 'verdict'")
    prompts = build_prompts(items, tmpl, conditions)
    texts = render_chats(
        tokenizer,
        list(prompts["messages"]),
        enable_thinking=False,
        chat_template=chat_template,
        assistant_prefill=tmpl.assistant_prefill,
    )
    vt = resolve_verdict_tokens(tokenizer, texts[0], tmpl.verdict_tokens)
    prompts["text"] = texts
    prompts["input_ids"] = encode_prompts(tokenizer, texts)
    prompts["prompt_tokens"] = prompts["input_ids"].map(len).astype(np.int64)
    return items, prompts, vt, tmpl


def _dist_info():
    """(rank, world_size) of torch.distributed, initialising it once under torchrun.

    A process group created here stays up for later calls (re-creating the default group in the
    same torchrun store can hand ranks stale addresses) and is destroyed at interpreter exit.
    """
    import torch.distributed as dist

    if not dist.is_available():
        return 0, 1
    if dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    if int(os.environ.get("WORLD_SIZE", "1")) > 1:
        # gloo carries the small control messages (barrier, gathered tables) on any device
        dist.init_process_group(backend="gloo")
        atexit.register(_destroy_group)
        return dist.get_rank(), dist.get_world_size()
    return 0, 1


def _destroy_group():
    import torch.distributed as dist

    if dist.is_initialized():
        dist.destroy_process_group()


def _rank_device(device, world: int):
    import torch

    local = int(os.environ.get("LOCAL_RANK", "0"))
    if device is None:
        device = "cuda" if torch.cuda.is_available() else None
    if device is not None:
        device = resolve_device(device)
        if device.type == "cuda" and device.index is None and world > 1:
            device = torch.device("cuda", local)
        if device.type == "cuda":
            torch.cuda.set_device(device)
    return device


def extract_logprobs(
    model: Any,
    tokenizer: Any,
    items: Any,
    judge: str | None = None,
    conditions: Sequence[str] = CONDITIONS,
    batch_size: int | str = "auto",
    device: Any = None,
    dtype: Any = None,
    enable_thinking: bool = False,
    out_dir: str | os.PathLike | None = None,
    progress: bool = False,
    *,
    template: Any = "pairwise_v1",
    chat_template: str | None = None,
    min_verdict_mass: float = 0.5,
) -> pd.DataFrame:
    """Verdict-token log-probabilities of a judge on every item under every condition.

    Parameters
    ----------
    model : transformers causal LM or Judge
        The judge (e.g. ``AutoModelForCausalLM.from_pretrained(path, dtype="bfloat16")``), or any
        :class:`~judgerisk.extract.judge.Judge` backend (then ``tokenizer=None``; an
        :class:`~judgerisk.extract.judge.HFJudge` runs the batched, resumable path below).
    tokenizer : transformers tokenizer or None
        Its tokenizer, with a chat template (or pass ``chat_template``); None with a Judge.
    items : DataFrame or path
        ``item, prompt, answer_a, answer_b[, gold]`` (DataFrame or .jsonl/.json/.csv/.parquet).
    judge : str, optional
        Judge name recorded in the table (default: last component of the model's path).
    conditions : sequence of str
        Conditions to run (default: the six of Methods reference §1); must include ``"original"``.
    batch_size : int or "auto"
        Rows per forward pass; ``"auto"`` adapts to the device and backs off on out-of-memory.
    device : str or torch.device, optional
        ``"cuda"``, ``"cpu"``, ...; default CUDA when available (each torchrun rank uses
        ``cuda:LOCAL_RANK``), otherwise the model's device.
    dtype : str or torch.dtype, optional
        Cast the model (``"bfloat16"``, ``"float16"``, ``"float32"``); default: leave as loaded.
        Logits are always upcast to float32 before normalising.
    enable_thinking : bool
        Must be False: the chat template is rendered with thinking disabled and the rendered
        prompt is checked for an open ``<think>`` block.
    out_dir : str or Path, optional
        Folder for resumable results (``manifest.json`` + ``parts/*.parquet``). A rerun skips
        finished prompts; each torchrun rank writes its own parts and all ranks read the merge.
    progress : bool
        Show a tqdm bar (prompts/s and tokens/s) on rank 0.
    template : str, Path, dict or Template
        Prompt template (default the shipped ``"pairwise_v1"``).
    chat_template : str, optional
        Jinja chat template overriding the tokenizer's (see ``PLAIN_CHAT_TEMPLATE``).
    min_verdict_mass : float
        Warn (with counts) when ``P("A") + P("B")`` is below this for some prompts.

    Returns
    -------
    pandas.DataFrame
        A validated panel (see :func:`judgerisk.panel.validate_panel`): ``item, judge,
        condition, logit, p, verdict[, gold]`` plus ``swapped`` (judge saw B first),
        ``logprob_a, logprob_b`` (raw log-probabilities of the judge's "A" / "B" tokens over the
        full vocabulary, not canonical), ``verdict_mass`` (their total probability),
        ``prompt_tokens``, ``template``, ``template_hash``, ``token_a``, ``token_b``.

    Notes
    -----
    One forward pass per prompt, last position only, float32 log-softmax over the full
    vocabulary. Canonical log-odds (Methods reference §1):

    .. math:: m_{ijc} = \\log P(A_i \\text{ wins}) - \\log P(B_i \\text{ wins}),

    i.e. ``logprob_a - logprob_b`` in the original order and ``logprob_b - logprob_a`` after a
    swap. Prompts are sorted longest first for batching (less padding) and the table is
    returned in panel order; a batch equals one-at-a-time within about 1e-5 in float32
    (left padding with position ids from the attention mask).

    References
    ----------
    The instance-level panel reliability paper (verdict-token logprobs under six conditions).
    """
    conditions = tuple(conditions)
    if "original" not in conditions:
        raise ValueError(f"conditions must include 'original', got {conditions}")
    if isinstance(model, Judge):
        if tokenizer is not None:
            raise ValueError("pass tokenizer=None with a Judge (it brings its own)")
        if not isinstance(model, HFJudge):
            return _extract_with_judge(
                model, items, conditions, judge, template, enable_thinking, min_verdict_mass
            )
        judge = judge if judge is not None else model.name
        chat_template = chat_template if chat_template is not None else model.chat_template
        model, tokenizer = model.model, model.tokenizer
    items, prompts, vt, tmpl = prepare_prompts(
        tokenizer,
        items,
        conditions,
        template=template,
        chat_template=chat_template,
        enable_thinking=enable_thinking,
    )
    rank, world = _dist_info()
    dev = _rank_device(device, world)
    model, in_dev = prepare_model(model, dev, dtype)
    judge = str(judge) if judge is not None else judge_name(model)
    pad_id = tokenizer.pad_token_id
    if pad_id is None:
        pad_id = tokenizer.eos_token_id if tokenizer.eos_token_id is not None else 0

    lengths = prompts["prompt_tokens"].to_numpy()
    order = np.lexsort((np.arange(len(prompts)), -lengths))  # longest first, stable
    mine = order[rank::world]
    results = _run(
        model,
        prompts,
        mine,
        vt,
        batch_size=batch_size,
        pad_id=pad_id,
        device=in_dev,
        out_dir=out_dir,
        rank=rank,
        progress=progress and rank == 0,
        manifest={
            "judge": judge,
            "template": tmpl.name,
            "template_hash": tmpl.hash,
            "token_a": vt.token_a,
            "token_b": vt.token_b,
            "id_a": vt.id_a,
            "id_b": vt.id_b,
        },
    )
    results = _gather(results, out_dir, world)
    return _assemble(items, prompts, results, judge, tmpl, vt, min_verdict_mass)


def _extract_with_judge(judge, items, conditions, name, template, enable_thinking, min_mass):
    """The backend-neutral path: render, ask the Judge for verdict log-probs, assemble."""
    if enable_thinking:
        raise ValueError("enable_thinking must be False for verdict log-probabilities")
    items = read_items(items)
    tmpl = load_template(template)
    if tmpl.kind != "verdict":
        raise ValueError(f"template {tmpl.name!r} is of kind {tmpl.kind!r}, need 'verdict'")
    prompts = build_prompts(items, tmpl, conditions)
    prompts["text"] = judge.render(
        list(prompts["messages"]), assistant_prefill=tmpl.assistant_prefill
    )
    res = judge.verdict_logprobs(list(prompts["text"]), tuple(tmpl.verdict_tokens))
    prompts["prompt_tokens"] = np.asarray(res.prompt_tokens, dtype=np.int64)
    results = pd.DataFrame(
        {
            "item": prompts["item"].to_numpy(),
            "condition": prompts["condition"].to_numpy(),
            "logprob_a": res.logprobs[:, 0],
            "logprob_b": res.logprobs[:, 1],
            "prompt_tokens": prompts["prompt_tokens"].to_numpy(),
        }
    )
    name = str(name) if name is not None else judge.name
    return _assemble(items, prompts, results, name, tmpl, res.tokens, min_mass)


def _run(
    model, prompts, positions, vt, *, batch_size, pad_id, device, out_dir, rank, progress, manifest
):
    keys = prompts[["item", "condition"]]
    parts_dir = None
    if out_dir is not None:
        out_dir = Path(out_dir)
        write_manifest(out_dir, manifest)
        parts_dir = out_dir / "parts"
        parts_dir.mkdir(parents=True, exist_ok=True)
        done = read_parts(out_dir)
        if len(done):
            finished = pd.MultiIndex.from_frame(done[["item", "condition"]].astype(object))
            mine_keys = pd.MultiIndex.from_frame(keys.iloc[positions].astype(object))
            positions = positions[~mine_keys.isin(finished)]
    seqs = prompts["input_ids"].to_numpy()[positions]
    collected = []
    seq_no = next_sequence(parts_dir, rank) if parts_dir is not None else 0
    bar = progress_bar(total=len(positions), unit="prompt", enabled=progress, desc="extract")
    n_tok, t0 = 0, time.perf_counter()
    try:
        for pos, lp, ntok in iter_batches(
            model, seqs, (vt.id_a, vt.id_b), batch_size=batch_size, pad_id=pad_id, device=device
        ):
            rows = positions[pos]
            frame = pd.DataFrame(
                {
                    "item": keys["item"].to_numpy()[rows],
                    "condition": keys["condition"].to_numpy()[rows],
                    "logprob_a": lp[:, 0],
                    "logprob_b": lp[:, 1],
                    "prompt_tokens": prompts["prompt_tokens"].to_numpy()[rows],
                }
            )
            if parts_dir is not None:
                write_part(parts_dir, rank, seq_no, frame)
                seq_no += 1
            else:
                collected.append(frame)
            n_tok += ntok
            bar.update(len(rows))
            bar.set_postfix(tok_s=f"{n_tok / max(time.perf_counter() - t0, 1e-9):.0f}")
    finally:
        bar.close()
    return collected


def _gather(collected, out_dir, world):
    if world > 1:
        import torch.distributed as dist

        if out_dir is None:
            everyone = [None] * world
            dist.all_gather_object(everyone, collected)
            collected = [f for frames in everyone for f in frames]
        else:
            dist.barrier()
    if out_dir is not None:
        return read_parts(out_dir)
    if not collected:
        return pd.DataFrame(
            columns=["item", "condition", "logprob_a", "logprob_b", "prompt_tokens"]
        )
    return pd.concat(collected, ignore_index=True)


def _assemble(items, prompts, results, judge, tmpl, vt, min_verdict_mass):
    meta = prompts[["item", "condition", "swapped"]].copy()
    res = results.drop(columns="prompt_tokens").copy()
    res["item"] = res["item"].astype(meta["item"].dtype)
    res["condition"] = res["condition"].astype(meta["condition"].dtype)
    merged = meta.merge(res, on=["item", "condition"], how="left", validate="one_to_one")
    merged["prompt_tokens"] = prompts["prompt_tokens"].to_numpy()
    missing = merged["logprob_a"].isna().to_numpy()
    if missing.any():
        raise RuntimeError(
            f"{int(missing.sum())} of {len(merged)} prompts have no result (a rank failed?); "
            f"first: {merged.loc[missing, ['item', 'condition']].head(5).to_dict('records')}. "
            "Rerun with the same out_dir to finish them."
        )
    extra = len(res) - len(merged)
    if extra > 0:
        warnings.warn(
            f"{extra} stored result(s) in out_dir are not in this request; ignored", stacklevel=3
        )
    la, lb = merged["logprob_a"].to_numpy(float), merged["logprob_b"].to_numpy(float)
    merged["logit"] = canonical_logit(la, lb, merged["swapped"].to_numpy())
    merged["verdict_mass"] = np.exp(la) + np.exp(lb)
    low = merged["verdict_mass"].to_numpy() < min_verdict_mass
    if low.any():
        by_cond = merged.loc[low, "condition"].value_counts().to_dict()
        warnings.warn(
            f"low verdict mass: {int(low.sum())} of {len(merged)} prompts give P('{vt.token_a}') "
            f"+ P('{vt.token_b}') < {min_verdict_mass} (median "
            f"{float(np.median(merged['verdict_mass'])):.3g}; by condition {by_cond}). The judge "
            "may not be answering with a verdict token at this slot.",
            stacklevel=3,
        )
    merged["judge"] = judge
    merged["template"] = tmpl.name
    merged["template_hash"] = tmpl.hash
    merged["token_a"], merged["token_b"] = vt.token_a, vt.token_b
    if "gold" in items.columns and items["gold"].notna().all():
        merged["gold"] = merged["item"].map(dict(zip(items["item"], items["gold"], strict=True)))
    cols = (
        ["item", "judge", "condition", "logit"]
        + (["gold"] if "gold" in merged else [])
        + [
            "swapped",
            "logprob_a",
            "logprob_b",
            "verdict_mass",
            "prompt_tokens",
            "template",
            "template_hash",
            "token_a",
            "token_b",
        ]
    )
    allowed = CONDITIONS if set(prompts["condition"]) <= set(CONDITIONS) else None
    return validate_panel(merged[cols], conditions=allowed)
