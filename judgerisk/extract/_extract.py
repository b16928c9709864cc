"""``extract_logprobs``: items -> prompts -> one forward pass each -> the panel table.

References
----------
Methods reference §1 (panel table, canonical orientation); the instance-level panel reliability paper
(verdict-token log-probabilities under six prompt conditions).
"""

from __future__ import annotations

import atexit
import os
import sys
import time
import warnings
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from judgerisk._util.hashing import sha256_text
from judgerisk._util.progress import progress_bar
from judgerisk.extract._forward import resolve_device
from judgerisk.extract._parts import (
    PART_COLUMNS,
    hold_folder,
    next_sequence,
    part_sequence,
    read_parts,
    read_served,
    record_served,
    write_manifest,
    write_part,
)
from judgerisk.extract._prompts import perturbation_settings, render_chats, rendered_prompts
from judgerisk.extract._tokens import encode_prompts, resolve_verdict_tokens
from judgerisk.extract.judge import HFJudge, Judge, JudgeAnswerError, RunStopped
from judgerisk.families import DECLARED, is_declared
from judgerisk.options import ANALYSIS, DEFAULT_TEMPLATE
from judgerisk.panel import CONDITIONS, validate_panel

__all__ = [
    "extract_logprobs",
    "run_judge",
    "shard_device",
    "prompt_sha256",
    "prepare_prompts",
    "canonical_logit",
]


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
    template: Any = DEFAULT_TEMPLATE,
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
    render = partial(render_chats, tokenizer, enable_thinking=False, chat_template=chat_template)
    items, tmpl, prompts = rendered_prompts(items, template, conditions, render, kind="verdict")
    pairs = prompts[["verdict_a", "verdict_b"]].drop_duplicates()
    if len(pairs) > 1:
        raise ValueError(
            f"the conditions {list(conditions)} read {len(pairs)} different verdict-token pairs "
            "(a label variant relabels the answers); prepare_prompts resolves one pair: use "
            "run_judge or extract_logprobs, which resolve each condition's own"
        )
    texts = list(prompts["text"])
    vt = resolve_verdict_tokens(tokenizer, texts[0], tmpl.verdict_tokens)
    prompts["input_ids"] = encode_prompts(tokenizer, texts)
    prompts["prompt_tokens"] = prompts["input_ids"].map(len).astype(np.int64)
    return items, prompts, vt, tmpl


def _dist_info():
    """(rank, world_size) of torch.distributed, initialising it once under torchrun.

    A process group created here stays up for later calls (re-creating the default group in the
    same torchrun store can hand ranks stale addresses) and is destroyed at interpreter exit.
    Outside torchrun (``WORLD_SIZE`` unset or 1) with torch not yet imported, torch is not
    imported at all: a remote judge (the openai backend) needs no torch.
    """
    if int(os.environ.get("WORLD_SIZE", "1")) <= 1 and "torch" not in sys.modules:
        return 0, 1
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


def shard_device(device: Any = None) -> Any:
    """The device of this process: ``device`` (default CUDA when available), under torchrun
    ``cuda:LOCAL_RANK``."""
    return _rank_device(device, _dist_info()[1])


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
    template: Any = DEFAULT_TEMPLATE,
    chat_template: str | None = None,
    min_verdict_mass: float = ANALYSIS.min_verdict_mass,
    seed: int = 0,
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
        Besides the template's own, any condition a perturbation family declares
        (``label1``, ``swap_label1``, ``format1``, ``verbosity1``, ...; :mod:`judgerisk.families`)
        is rendered from the items by that family.
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
    seed : int, default 0
        Perturbation seed of the families that draw (format, verbosity); recorded in the
        resume manifest when such a condition is run.

    Returns
    -------
    pandas.DataFrame
        A validated panel (see :func:`judgerisk.panel.validate_panel`): ``item, judge,
        condition, logit, p, verdict[, gold]`` plus ``swapped`` (judge saw B first),
        ``logprob_a, logprob_b`` (raw log-probabilities of the judge's "A" / "B" tokens over the
        full vocabulary, not canonical), ``verdict_mass`` (their total probability),
        ``prompt_tokens``, ``template``, ``template_hash``, ``token_a``, ``token_b`` (the verdict
        tokens the row was read from: a label variant has its own).

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
    if enable_thinking:
        raise ValueError(
            "enable_thinking=True: a thinking judge writes <think> before its verdict, so the "
            "first-token verdict log-probabilities would be meaningless. Extraction needs "
            "enable_thinking=False (the rendered prompt is checked)."
        )
    rank, world = _dist_info()
    if isinstance(model, Judge):
        if tokenizer is not None:
            raise ValueError("pass tokenizer=None with a Judge (it brings its own)")
        given = {"device": device, "dtype": dtype, "chat_template": chat_template}
        given = {k: v for k, v in given.items() if v is not None}
        if given:
            raise ValueError(
                f"{sorted(given)} cannot be applied to a ready Judge ({type(model).__name__}); "
                "set them when building it (e.g. HFJudge(..., dtype=...))"
            )
        backend = model
    else:
        backend = HFJudge(
            model,
            tokenizer,
            name=judge,
            device=_rank_device(device, world),
            dtype=dtype,
            chat_template=chat_template,
            batch_size=batch_size,
        )
    return run_judge(
        backend,
        items,
        conditions,
        judge=judge,
        chunk_size=None if isinstance(batch_size, str) else int(batch_size),
        out_dir=out_dir,
        progress=progress,
        template=template,
        min_verdict_mass=min_verdict_mass,
        seed=seed,
    )


def prompt_sha256(texts: Sequence[str]) -> np.ndarray:
    """SHA-256 hex digest of each rendered prompt (the per-cell resume key)."""
    return np.array([sha256_text(t) for t in texts], dtype=object)


def run_judge(
    backend: Judge,
    items: Any,
    conditions: Sequence[str] = CONDITIONS,
    *,
    judge: str | None = None,
    chunk_size: int | None = None,
    out_dir: str | os.PathLike | None = None,
    progress: bool = False,
    template: Any = DEFAULT_TEMPLATE,
    min_verdict_mass: float = ANALYSIS.min_verdict_mass,
    provenance: dict | None = None,
    seed: int = 0,
) -> pd.DataFrame:
    """The one extraction loop: any :class:`Judge` over items, resumable, sharded, with progress.

    Every backend (in-process transformers, a GGUF file, an OpenAI-compatible server) is asked
    only for :meth:`Judge.verdict_logprobs` of chunks of rendered prompts; resume, torchrun
    sharding, progress, the verdict-mass diagnostic and the provenance record wrap that call.

    Parameters
    ----------
    backend : Judge
    items, conditions, out_dir, progress, template, min_verdict_mass, seed
        As in :func:`extract_logprobs`.
    judge : str, optional
        Judge name in the table (default ``backend.name``).
    chunk_size : int, optional
        Prompts per :meth:`Judge.verdict_logprobs` call and per result part (default: the
        backend's ``chunk_size`` attribute, else 16). A killed run loses at most one chunk.
    provenance : dict, optional
        The run's record (:func:`judgerisk._provenance.make_record`) kept in a new manifest
        (default: one made here from ``sys.argv`` with the manifest as parameters).

    Notes
    -----
    Resume key: ``out_dir/manifest.json`` holds the judge name, the template hash and the
    backend's :meth:`Judge.describe` (model files' SHA-256, dtype, chat template hash, server
    model); a different one is refused. Each stored cell carries the SHA-256 of its rendered
    prompt (item text + template + chat template + prefill), and a cell whose prompt changed is
    computed again. Cells whose verdict token was outside a server's top-k list hold the bound
    and are marked (``bounded_a``, ``bounded_b``; see :func:`extract_logprobs`). A run with a
    condition rendered by a perturbation family also records the perturbation seed and the
    families' versions (:func:`judgerisk.extract._prompts.perturbation_settings`), so a resumed
    run with another seed is refused. Each chunk of prompts shares one verdict-token pair (a
    label variant reads its own tokens).
    """
    items, tmpl, prompts = rendered_prompts(
        items, template, conditions, backend.render, kind="verdict", seed=seed
    )
    prompts["prompt_sha256"] = prompt_sha256(prompts["text"])
    name = str(judge) if judge is not None else backend.name
    rank, world = _dist_info()
    lengths = prompts["text"].str.len().to_numpy()
    order = np.lexsort((np.arange(len(prompts)), -lengths))  # longest first, stable
    mine = order[rank::world]
    manifest = {
        "judge": name,
        "template": tmpl.name,
        "template_hash": tmpl.hash,
        "verdicts": list(tmpl.verdict_tokens),
        "judge_backend": backend.describe() if hasattr(backend, "describe") else {},
    }
    perturbation = perturbation_settings(tmpl, tuple(conditions), seed)
    if perturbation is not None:  # absent for the template's own conditions: old runs resume
        manifest["perturbation"] = perturbation
    size = chunk_size or getattr(backend, "chunk_size", None) or 16
    collected = _run(
        backend,
        prompts,
        mine,
        tmpl,
        size,
        out_dir,
        rank,
        progress and rank == 0,
        manifest,
        provenance,
    )
    results = _gather(collected, out_dir, world)
    return _assemble(items, prompts, results, name, tmpl, min_verdict_mass)


def _id_kinds(ids: pd.Series) -> set[str]:
    return {"text" if isinstance(v, str) else "numbers" for v in pd.unique(ids)}


def _check_id_kinds(stored: pd.Series, wanted: pd.Series, out_dir) -> None:
    """Refuse, before any prompt is run, a folder whose results name items by ids of another
    type than these items' (text ids against numbers: no stored result could match)."""
    other = _id_kinds(stored) - _id_kinds(wanted)
    if other:
        shown = [
            v for v in pd.unique(stored) if ("text" if isinstance(v, str) else "numbers") in other
        ]
        raise ValueError(
            f"{out_dir}: holds results of items whose ids are {' and '.join(sorted(other))} "
            f"({', '.join(map(repr, shown[:3]))}), but these items' ids are "
            f"{' and '.join(sorted(_id_kinds(wanted)))}: they are another run's; pass another "
            "--out folder, or the items whose results it holds"
        )


def _pending(prompts, positions, out_dir):
    """Positions whose (item, condition, prompt hash) has no stored result; warn about stale ones."""
    done = read_parts(out_dir)
    if not len(done):
        return positions
    _check_id_kinds(done["item"], prompts["item"], out_dir)
    key = ["item", "condition", "prompt_sha256"]
    finished = pd.MultiIndex.from_frame(done[key].astype(object))
    wanted = pd.MultiIndex.from_frame(prompts[key].iloc[positions].astype(object))
    stale = pd.MultiIndex.from_frame(done[key[:2]].astype(object)).isin(
        pd.MultiIndex.from_frame(prompts[key[:2]].astype(object))
    ) & ~finished.isin(pd.MultiIndex.from_frame(prompts[key].astype(object)))
    if stale.any():
        warnings.warn(
            f"{int(stale.sum())} stored result(s) in {out_dir} were computed from a different "
            "prompt (item text, template or chat template changed); they are computed again",
            stacklevel=4,
        )
    return positions[~wanted.isin(finished)]


def _run(backend, prompts, positions, tmpl, size, out_dir, rank, progress, manifest, provenance):
    if out_dir is None:
        return _compute(backend, prompts, positions, tmpl, size, None, rank, progress)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    with hold_folder(out_dir, rank):  # a second run on this folder is refused meanwhile
        write_manifest(out_dir, manifest, provenance)
        (out_dir / "parts").mkdir(parents=True, exist_ok=True)
        positions = _pending(prompts, positions, out_dir)
        served = read_served(out_dir)
        if served is not None and hasattr(backend, "expect_served"):
            backend.expect_served(served)
        return _compute(backend, prompts, positions, tmpl, size, out_dir, rank, progress)


def _record_served(backend, out_dir) -> None:
    """Keep what the server said it served in ``out_dir`` (before the first part is written);
    a different identity recorded by a racing run is refused by the backend."""
    identity = backend.served_identity() if hasattr(backend, "served_identity") else None
    if identity is not None:
        recorded = record_served(out_dir, identity)
        if recorded != identity:
            backend.expect_served(recorded)


def _answers(backend, prompts, rows, verdicts):
    """``backend.verdict_logprobs`` of the prompts at ``rows`` (one verdict pair); a
    :class:`JudgeAnswerError` names the item and condition of the prompt whose answer it was."""
    texts = prompts["text"].to_numpy()
    try:
        return backend.verdict_logprobs(list(texts[rows]), verdicts)
    except JudgeAnswerError as exc:
        if exc.position is not None and 0 <= exc.position < len(rows):
            row = prompts.iloc[rows[exc.position]]
            exc.args = (f"item {row['item']}, condition {row['condition']}: {exc}",)
        raise


def _unanswered(n_left: int, n_total: int, out_dir, first=None, last: str | None = None) -> str:
    """The sentence of a run that left prompts unanswered: how many, the first, what is kept."""
    where = (
        "" if first is None else f" (first: item {first['item']}, condition {first['condition']})"
    )
    kept = (
        "nothing is kept (no out_dir)"
        if out_dir is None
        else f"the answered ones are kept in {out_dir}, and rerunning the same command asks "
        "only for the others"
    )
    failure = f"; last failure: {last}" if last else ""
    return f"{n_left} of {n_total} prompts have no answer{where}{failure}; {kept}"


def _compute(backend, prompts, positions, tmpl, size, out_dir, rank, progress):
    """Ask the backend chunk by chunk and store each chunk's answers (the resumable part).

    Prompts a backend marks ``missing`` are not stored; a :class:`RunStopped` from the backend
    stores its ``partial`` answers first. Either way the run then ends with a
    :class:`RunStopped` counting the prompts left, so a rerun resumes with them.
    """
    parts_dir = None if out_dir is None else out_dir / "parts"
    collected = []
    seq_no = next_sequence(parts_dir, rank) if parts_dir is not None else 0
    bar = progress_bar(total=len(positions), unit="prompt", enabled=progress, desc="extract")
    n_tok, t0 = 0, time.perf_counter()
    n_missing, n_answered, first, served = 0, 0, None, False
    try:
        for rows, verdicts in _chunks(prompts, positions, size):
            stopped = None
            try:
                res = _answers(backend, prompts, rows, verdicts)
            except RunStopped as exc:
                if exc.partial is None:
                    raise
                res, stopped = exc.partial, exc
            missing = np.zeros(len(rows), bool) if res.missing is None else np.asarray(res.missing)
            if missing.any() and first is None:
                first = prompts.iloc[rows[np.flatnonzero(missing)[0]]]
            n_missing += int(missing.sum())
            bounded = res.bounded if res.bounded is not None else np.zeros((len(rows), 2), bool)
            frame = pd.DataFrame(
                {
                    "item": prompts["item"].to_numpy()[rows],
                    "condition": prompts["condition"].to_numpy()[rows],
                    "prompt_sha256": prompts["prompt_sha256"].to_numpy()[rows],
                    "logprob_a": np.asarray(res.logprobs, float)[:, 0],
                    "logprob_b": np.asarray(res.logprobs, float)[:, 1],
                    "bounded_a": bounded[:, 0],
                    "bounded_b": bounded[:, 1],
                    "prompt_tokens": np.asarray(res.prompt_tokens, np.int64),
                    "token_a": res.tokens.token_a,
                    "token_b": res.tokens.token_b,
                }
            )[~missing]
            if parts_dir is not None and len(frame):
                if not served:
                    _record_served(backend, out_dir)
                    served = True
                seq_no = part_sequence(write_part(parts_dir, rank, seq_no, frame)) + 1
            elif parts_dir is None:
                collected.append(frame)
            n_answered += len(frame)
            n_tok += int(frame["prompt_tokens"].sum())
            bar.update(len(rows))
            bar.set_postfix(tok_s=f"{n_tok / max(time.perf_counter() - t0, 1e-9):.0f}")
            if stopped is not None:
                left = len(positions) - n_answered
                raise RunStopped(f"{stopped}. {_unanswered(left, len(positions), out_dir)}")
    finally:
        bar.close()
    if n_missing:
        last = getattr(backend, "last_failure", None)
        raise RunStopped(_unanswered(n_missing, len(positions), out_dir, first, last))
    return collected


def _chunks(prompts: pd.DataFrame, positions: np.ndarray, size: int):
    """``(rows, verdicts)`` chunks of at most ``size`` positions sharing one verdict pair,
    in the order of ``positions`` within each pair (pairs in order of first appearance)."""
    pair = pd.MultiIndex.from_frame(prompts[["verdict_a", "verdict_b"]]).to_numpy()[positions]
    for verdicts in dict.fromkeys(pair):
        mine = positions[np.array([p == verdicts for p in pair], dtype=bool)]
        for start in range(0, len(mine), size):
            yield mine[start : start + size], (str(verdicts[0]), str(verdicts[1]))


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
        return pd.DataFrame({c: [] for c in PART_COLUMNS})
    return pd.concat(collected, ignore_index=True)


def _assemble(items, prompts, results, judge, tmpl, min_verdict_mass):
    meta = prompts[
        ["item", "condition", "swapped", "prompt_sha256", "verdict_a", "verdict_b"]
    ].copy()
    res = results.copy()
    res["item"] = res["item"].astype(meta["item"].dtype)
    res["condition"] = res["condition"].astype(meta["condition"].dtype)
    key3 = ["item", "condition", "prompt_sha256"]
    current = pd.MultiIndex.from_frame(meta[key3].astype(object))
    keep = pd.MultiIndex.from_frame(res[key3].astype(object)).isin(current)
    cells = pd.MultiIndex.from_frame(meta[key3[:2]].astype(object))
    extra = int((~pd.MultiIndex.from_frame(res[key3[:2]].astype(object)).isin(cells)).sum())
    merged = meta.merge(res.loc[keep], on=key3, how="left", validate="one_to_one")
    missing = merged["logprob_a"].isna().to_numpy()
    if missing.any():
        raise RuntimeError(
            f"{int(missing.sum())} of {len(merged)} prompts have no result (a rank failed?); "
            f"first: {merged.loc[missing, ['item', 'condition']].head(5).to_dict('records')}. "
            "Rerun with the same out_dir to finish them."
        )
    if extra > 0:
        warnings.warn(
            f"{extra} stored result(s) in out_dir are not in this request; ignored", stacklevel=3
        )
    tokens = merged[["verdict_a", "verdict_b", "token_a", "token_b"]].drop_duplicates()
    if tokens[["verdict_a", "verdict_b"]].duplicated().any():
        raise RuntimeError(
            "the same verdict strings resolved to different tokens between prompts: "
            f"{tokens.to_dict('records')[:5]}; a changed tokenizer? Use a new output folder."
        )
    merged["bounded"] = merged["bounded_a"].astype(bool) | merged["bounded_b"].astype(bool)
    la, lb = merged["logprob_a"].to_numpy(float), merged["logprob_b"].to_numpy(float)
    merged["logit"] = canonical_logit(la, lb, merged["swapped"].to_numpy())
    merged["verdict_mass"] = np.exp(la) + np.exp(lb)
    one = tokens.iloc[0] if len(tokens) == 1 else None
    mass = (
        f"P('{one['token_a']}') + P('{one['token_b']}')"
        if one is not None
        else "P(first verdict) + P(second verdict)"
    )
    _mass_diagnostic(merged, mass, min_verdict_mass)
    merged["judge"] = judge
    merged["template"] = tmpl.name
    merged["template_hash"] = tmpl.hash
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
            "bounded",
            "prompt_tokens",
            "template",
            "template_hash",
            "token_a",
            "token_b",
        ]
    )
    allowed = DECLARED if all(is_declared(c) for c in pd.unique(prompts["condition"])) else None
    merged["prompt_tokens"] = merged["prompt_tokens"].astype(np.int64)
    return validate_panel(merged[cols], conditions=allowed)


def _mass_diagnostic(merged, mass, min_verdict_mass):
    """Warn (with counts by condition) about low verdict mass and top-k bounded cells."""
    low = merged["verdict_mass"].to_numpy() < min_verdict_mass
    bounded = merged["bounded"].to_numpy()
    if low.any():
        by_cond = merged.loc[low, "condition"].value_counts().to_dict()
        warnings.warn(
            f"low verdict mass: {int(low.sum())} of {len(merged)} prompts give {mass} "
            f"< {min_verdict_mass} (median "
            f"{float(np.median(merged['verdict_mass'])):.3g}; by condition {by_cond}). The judge "
            "may not be answering with a verdict token at this slot.",
            stacklevel=4,
        )
    if bounded.any():
        by_cond = merged.loc[bounded, "condition"].value_counts().to_dict()
        warnings.warn(
            f"top-k bound: in {int(bounded.sum())} of {len(merged)} prompts a verdict token was "
            f"not in the server's top-k list (by condition {by_cond}); its log-probability is "
            "the k-th one (an upper bound), so the logit there is a bound toward the listed "
            "verdict (column 'bounded'). Ask for more top log-probabilities to remove it.",
            stacklevel=4,
        )
