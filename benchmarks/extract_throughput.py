"""Throughput of verdict-logprob extraction against the bare model forward and generate().

Prints, per model size, prompts/s and tokens/s of

* ``bare``      : the model's forward pass alone (``logits_to_keep=1``) on exactly the batches the
                  pipeline forms (same length-sorted order, same padding), inputs pre-built;
* ``pipeline``  : :func:`judgerisk.extract.extract_logprobs` end to end (prompt rendering,
                  tokenisation, batching, log-softmax, canonical table, validation);
* ``generate``  : ``model.generate(max_new_tokens=1, output_scores=True)`` on the same batches;

as ratios to ``bare`` measured in the same run (target: pipeline >= 0.90 x bare), and the padding
saved by sorting prompts by length (padded tokens with sorted vs input-order batches).

Sizes ``tiny``/``mid``/``large`` are random-weight models built on the spot; ``smollm2`` is the
real bundled judge (SmolLM2-135M-Instruct, float32) on LLMBar items (the shortest first-N of the
shared copy, else the synthetic items) with template ``pairwise_v2``, and its pipeline also writes
the resumable parts (``out_dir``) as a real run does.

Usage::

    .venv/bin/python benchmarks/extract_throughput.py --quick            # CPU, tiny + mid models
    .venv/bin/python benchmarks/extract_throughput.py                    # CPU, 192 prompts, best of 3
    .venv/bin/python benchmarks/extract_throughput.py --device cuda --dtype bfloat16 \
        --items 512 --sizes tiny,mid,large                               # on a GPU machine
    .venv/bin/python benchmarks/extract_throughput.py --sizes smollm2 --items 16 --threads 2
"""

from __future__ import annotations

import argparse
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

SIZES = {"tiny": (64, 2), "mid": (512, 8), "large": (1024, 16), "smollm2": None}


def _time(fn, repeat):
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _real_judge(n_items):
    from judgerisk.datasets import data_root
    from judgerisk.extract import SMOLLM2, load_judge
    from judgerisk.testing import tiny_items

    model, tok = load_judge(SMOLLM2, dtype="float32")
    root = data_root(required=False)
    if root is not None and (root / "llmbar" / "Dataset").is_dir():
        from judgerisk.datasets.llmbar import load_llmbar_items

        items = load_llmbar_items(root).head(n_items)
    else:
        items = tiny_items(n_items, seed=1)
    return model, tok, items, "pairwise_v2"


def _random_judge(size, n_items, tmp):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from judgerisk.testing import tiny_items, tiny_judge

    hidden, layers = SIZES[size]
    path = tiny_judge(
        Path(tmp) / size, hidden_size=hidden, num_layers=layers, num_heads=max(4, hidden // 64)
    )
    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path)
    return model, tok, tiny_items(n_items, seed=1), "pairwise_v1"


def bench(size, n_items, batch_size, device, dtype, repeat, tmp, generate=True):
    import torch

    from judgerisk.extract import extract_logprobs, left_pad, prepare_prompts
    from judgerisk.extract._forward import prepare_model, resolve_device

    real = size == "smollm2"
    if real:
        model, tok, items, template = _real_judge(n_items)
    else:
        model, tok, items, template = _random_judge(size, n_items, tmp)
    model, dev = prepare_model(model, resolve_device(device), dtype)
    _, prompts, vt, _ = prepare_prompts(tok, items, template=template)
    seqs = list(prompts["input_ids"])
    lengths = np.array([len(s) for s in seqs])
    order = np.lexsort((np.arange(len(seqs)), -lengths))
    batches = [order[k : k + batch_size] for k in range(0, len(order), batch_size)]
    pad = tok.pad_token_id
    built = [left_pad([seqs[i] for i in b], pad) for b in batches]
    built = [(i.to(dev), m.to(dev)) for i, m in built]
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)

    def bare():
        with torch.inference_mode():
            for ids, mask in built:
                pos = (mask.cumsum(-1) - 1).clamp_min(0)
                model(
                    input_ids=ids,
                    attention_mask=mask,
                    position_ids=pos,
                    use_cache=False,
                    logits_to_keep=1,
                )
        sync()

    runs = iter(range(10**6))

    def pipeline():
        # the real judge writes its resumable parts to a fresh folder, as a real run does
        out = Path(tmp) / f"parts-{size}-{next(runs)}" if real else None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            extract_logprobs(
                model,
                tok,
                items,
                batch_size=batch_size,
                device=dev,
                template=template,
                out_dir=out,
            )
        sync()

    def gen():
        with torch.inference_mode():
            for ids, mask in built:
                model.generate(
                    input_ids=ids,
                    attention_mask=mask,
                    max_new_tokens=1,
                    do_sample=False,
                    output_scores=True,
                    return_dict_in_generate=True,
                    pad_token_id=pad,
                )
        sync()

    bare()  # warm-up
    t_bare, t_pipe = _time(bare, repeat), _time(pipeline, repeat)
    t_gen = _time(gen, repeat) if generate else np.nan
    n, ntok = len(seqs), int(lengths.sum())
    padded_sorted = sum(len(b) * lengths[b].max() for b in batches)
    unsorted = [np.arange(k, min(k + batch_size, n)) for k in range(0, n, batch_size)]
    padded_input = sum(len(b) * lengths[b].max() for b in unsorted)
    return {
        "size": size,
        "params_M": sum(p.numel() for p in model.parameters()) / 1e6,
        "prompts": n,
        "mean_tokens": ntok / n,
        "bare_prompts_s": n / t_bare,
        "bare_tokens_s": ntok / t_bare,
        "pipe_prompts_s": n / t_pipe,
        "pipe_tokens_s": ntok / t_pipe,
        "gen_prompts_s": n / t_gen,
        "pipe_over_bare": t_bare / t_pipe,
        "gen_over_bare": t_bare / t_gen,
        "pad_frac_sorted": 1 - ntok / padded_sorted,
        "pad_frac_input_order": 1 - ntok / padded_input,
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="few items, one repeat")
    parser.add_argument("--items", type=int, default=None, help="items (x6 conditions)")
    parser.add_argument("--sizes", default="tiny,mid", help=f"comma list of {list(SIZES)}")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtype", default=None)
    parser.add_argument(
        "--generate",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="also time generate(max_new_tokens=1)",
    )
    parser.add_argument("--repeat", type=int, default=None)
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch CPU threads (1: stable on shared machines; 0: torch default)",
    )
    args = parser.parse_args(argv)
    import torch

    if args.threads > 0:
        torch.set_num_threads(args.threads)

    n_items = args.items or (8 if args.quick else 32)
    repeat = args.repeat or (1 if args.quick else 3)
    print(
        f"torch {torch.__version__}, device {args.device}, dtype {args.dtype or 'float32'}, "
        f"threads {torch.get_num_threads()}, batch {args.batch_size}, best of {repeat}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.sizes.split(","):
            r = bench(
                size, n_items, args.batch_size, args.device, args.dtype, repeat, tmp, args.generate
            )
            print(
                f"[{r['size']}] {r['params_M']:.2f}M params, {r['prompts']} prompts, "
                f"{r['mean_tokens']:.0f} tokens/prompt"
            )
            print(
                f"  bare forward : {r['bare_prompts_s']:8.1f} prompts/s "
                f"{r['bare_tokens_s']:10.0f} tokens/s"
            )
            print(
                f"  pipeline     : {r['pipe_prompts_s']:8.1f} prompts/s "
                f"{r['pipe_tokens_s']:10.0f} tokens/s  ratio to bare {r['pipe_over_bare']:.3f} "
                f"(target >= 0.90)"
            )
            print(
                f"  generate(1)  : {r['gen_prompts_s']:8.1f} prompts/s"
                f"{'':21s}ratio to bare {r['gen_over_bare']:.3f}"
            )
            print(
                f"  padding      : {r['pad_frac_sorted']:.1%} of batch tokens with length "
                f"sorting vs {r['pad_frac_input_order']:.1%} in input order"
            )


if __name__ == "__main__":
    main()
