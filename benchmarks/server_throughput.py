"""Requests per second of the openai backend against a local llama.cpp server, and the ratio to
the in-process path on the same prompts.

Starts ``python -m llama_cpp.server`` with the bundled judge (SmolLM2-135M-Instruct GGUF Q4_1) on
a free loopback port, extracts the same items under the chosen conditions through it with 1, 4
and 16 requests in flight, and in process (transformers, the GGUF de-quantised to float32), and
prints prompts per second and each server run's ratio to the in-process run. The server is
stopped whatever happens. Needs the ``server`` extra.

Usage::

    .venv/bin/python benchmarks/server_throughput.py                 # 4 items x 6 conditions
    .venv/bin/python benchmarks/server_throughput.py --items 16 --concurrency 1 4 16 --threads 2
"""

from __future__ import annotations

import argparse
import json
import time
import warnings


def _items(n):
    from judgerisk.datasets import data_root
    from judgerisk.testing import tiny_items

    root = data_root(required=False)
    if root is not None and (root / "llmbar").is_dir():
        from judgerisk.datasets.llmbar import load_llmbar_items

        return load_llmbar_items(root).head(n)[["item", "prompt", "answer_a", "answer_b", "gold"]]
    return tiny_items(n)


def _timed(judge, items, conditions):
    from judgerisk.extract._extract import run_judge

    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        panel = run_judge(judge, items, conditions)
    return panel, time.perf_counter() - t0


def main(argv=None) -> dict:
    """Run the benchmark; print and return the measurements."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=4)
    parser.add_argument("--conditions", nargs="+", default=None)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 16])
    parser.add_argument("--threads", type=int, default=2, help="server and torch threads")
    args = parser.parse_args(argv)

    import torch

    from judgerisk._book.diagnostics import extraction_agreement
    from judgerisk._book.local_server import LocalServer
    from judgerisk.extract._judges import SMOLLM2, bundled_gguf
    from judgerisk.extract.backends import load_tokenizer, open_judge
    from judgerisk.extract.remote import OpenAIJudge
    from judgerisk.panel import CONDITIONS

    torch.set_num_threads(args.threads)
    items = _items(args.items)
    conditions = tuple(args.conditions or CONDITIONS)
    n = len(items) * len(conditions)
    local, local_s = _timed(open_judge(SMOLLM2, "gguf"), items, conditions)
    result = {"prompts": n, "in_process_per_s": n / local_s, "server": {}}
    print(f"{n} prompts; in-process: {n / local_s:.2f} prompts/s ({local_s:.1f} s)")
    tokenizer = load_tokenizer(SMOLLM2)
    with LocalServer(bundled_gguf(SMOLLM2), n_threads=args.threads) as server:
        warm = OpenAIJudge(server.url, tokenizer=tokenizer, concurrency=1)
        _timed(warm, items.head(1), ("original",))  # load and warm the server
        for c in args.concurrency:
            judge = OpenAIJudge(server.url, tokenizer=tokenizer, concurrency=c)
            panel, secs = _timed(judge, items, conditions)
            agree = extraction_agreement(local, panel)
            result["server"][c] = {
                "per_s": n / secs,
                "ratio_to_in_process": local_s / secs,
                "max_abs_logit_diff": agree["max_abs_logit_diff"],
            }
            print(
                f"server, {c:2d} in flight: {n / secs:.2f} requests/s "
                f"({secs:.1f} s), ratio to in-process {local_s / secs:.2f}"
            )
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
