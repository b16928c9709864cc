"""Write the schema-built excerpts (FastChat, Arena-Hard, lm-eval, crowd-kit) of tests/data/importers.

These four tools keep their outputs out of their repositories (FastChat and Arena-Hard publish
judgments on the Hugging Face hub; lm-evaluation-harness and crowd-kit ship none), so the excerpts
are built here strictly in each writer's schema (see each folder's NOTE.md), with simulated
verdicts from a fixed seed. They are not real judge outputs. Run from the repository root:
``python tests/data/importers/make_schema_excerpts.py``.
"""

import json
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent
rng = np.random.default_rng(20261201)


def _jsonl(path: Path, records: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def _pick(probs: list[float], labels: list) -> object:
    return labels[rng.choice(len(labels), p=probs)]


# FastChat: fastchat/llm_judge/common.py play_a_match_pair (winners already in model names)
for judge in ("gpt-4", "claude-v1"):
    recs = []
    for qid in range(81, 101):
        g1 = _pick([0.55, 0.3, 0.12, 0.03], ["model_1", "model_2", "tie", "error"])
        g2 = (
            g1
            if rng.random() < 0.7
            else _pick([0.4, 0.4, 0.2, 0.0], ["model_1", "model_2", "tie", "error"])
        )
        tok = {"model_1": "[[A]]", "model_2": "[[B]]", "tie": "[[C]]", "error": "$ERROR$"}
        tok2 = {"model_1": "[[B]]", "model_2": "[[A]]", "tie": "[[C]]", "error": "$ERROR$"}
        recs.append(
            {
                "question_id": qid,
                "model_1": "vicuna-13b-v1.3",
                "model_2": "gpt-3.5-turbo",
                "g1_winner": g1,
                "g2_winner": g2,
                "judge": [judge, "pair-v2"],
                "g1_user_prompt": f"[User Question]\nquestion {qid}\n\n[The Start of Assistant A's Answer]\n...",
                "g1_judgment": f"Explanation. {tok[g1]}",
                "g2_user_prompt": f"[User Question]\nquestion {qid}\n\n[The Start of Assistant A's Answer]\n...",
                "g2_judgment": f"Explanation. {tok2[g2]}",
                "turn": 1,
                "tstamp": 1687221000.0 + qid,
            }
        )
    _jsonl(HERE / "fastchat" / "model_judgment" / f"{judge}_pair.jsonl", recs)

# Arena-Hard: gen_judgment.py, games[0] baseline = A, games[1] baseline = B, scores as shown
LEVELS = ["A>>B", "A>B", "A=B", "B>A", "B>>A"]
FLIP = dict(zip(LEVELS, LEVELS[::-1], strict=True))
for judge in ("gpt-4-1106-preview", "claude-3-opus-20240229"):
    recs = []
    for k in range(20):
        canon = _pick([0.1, 0.2, 0.2, 0.3, 0.2], LEVELS)  # original order: A = baseline
        g1 = canon if rng.random() < 0.03 * 25 else _pick([0.2] * 5, LEVELS)
        g2 = FLIP[canon] if rng.random() < 0.7 else _pick([0.2] * 5, LEVELS)
        g1 = None if rng.random() < 0.05 else g1
        recs.append(
            {
                "question_id": f"{k:04x}a1b2c3d4e5f6a7b8c9d0e1f2",
                "model": "llama-3-8b-instruct",
                "judge": judge,
                "games": [
                    {
                        "user_prompt": "<|User Prompt|>\n...",
                        "judgment": f"... [[{g1}]]",
                        "score": g1,
                    },
                    {
                        "user_prompt": "<|User Prompt|>\n...",
                        "judgment": f"... [[{g2}]]",
                        "score": g2,
                    },
                ],
            }
        )
    _jsonl(HERE / "arena_hard" / "model_judgment" / judge / "llama-3-8b-instruct.jsonl", recs)

# lm-evaluation-harness: evaluator.py / evaluation_tracker.py, --log_samples of a two-choice task
docs = [{"question": f"question {i}", "answer_a": f"a{i}", "answer_b": f"b{i}"} for i in range(24)]
gold = rng.integers(0, 2, size=len(docs))
for model in ("EleutherAI__pythia-1.4b", "EleutherAI__pythia-2.8b"):
    skill = 1.0 if "1.4b" in model else 1.8
    for task, swapped in (("pairjudge", False), ("pairjudge_swap", True)):
        recs = []
        for i, doc in enumerate(docs):
            target = int(gold[i]) ^ int(swapped)
            margin = skill * (1 if target == 0 else -1) + rng.normal(0, 1.5)
            ll = [-3.0 + margin / 2, -3.0 - margin / 2]
            recs.append(
                {
                    "doc_id": i,
                    "doc": doc,
                    "target": target,
                    "arguments": [[f"Q: {doc['question']}\nBetter answer:", f" {c}"] for c in "AB"],
                    "resps": [[[str(x), "False"]] for x in ll],
                    "filtered_resps": [[str(x), "False"] for x in ll],
                    "filter": "none",
                    "metrics": ["acc"],
                    "doc_hash": f"{i:064x}",
                    "prompt_hash": f"{i + 1000:064x}",
                    "target_hash": f"{target:064x}",
                    "acc": float((ll[0] > ll[1]) == (target == 0)),
                }
            )
        _jsonl(HERE / "lm_eval" / model / f"samples_{task}_2024-06-01T12-00-00.000000.jsonl", recs)

# crowd-kit: the (task, worker, label) table its aggregators fit on
lines = ["task,worker,label"]
for t in range(15):
    truth = "A" if rng.random() < 0.5 else "B"
    for w, acc in (("w1", 0.9), ("w2", 0.75), ("w3", 0.6), ("w4", 0.8)):
        label = truth if rng.random() < acc else ("B" if truth == "A" else "A")
        lines.append(f"t{t},{w},{label}")
(HERE / "crowdkit").mkdir(exist_ok=True)
(HERE / "crowdkit" / "labels.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")

# Arena-Hard v2.0: src/arenahard/gen_judgment.py, judgment() appends each game's result, or
# None when the judge call returned nothing; the regex of config/arena-hard-v2.0.yaml takes
# any [[...]] label of A, B, <, >, =, and show_result.py reads the ten spellings below.
# Its own generator, so that the excerpts above stay as they were.
rng_v2 = np.random.default_rng(20261202)
V2_LABELS = ["A>>B", "A>B", "A=B", "B>A", "B>>A", "A<<B", "A<B", "B=A", "B<A", "B<<A"]
CATEGORY_BASELINE = {
    "hard_prompt": "o3-mini-2025-01-31",
    "creative_writing": "gemini-2.0-flash-001",
}
recs = []
for k in range(24):
    category = "hard_prompt" if k % 3 else "creative_writing"
    games = []
    for g in range(2):
        if rng_v2.random() < 0.08:
            games.append(None)  # the judge call returned nothing
            continue
        score = V2_LABELS[k % 10] if g == 0 else V2_LABELS[int(rng_v2.integers(0, 10))]
        score = None if rng_v2.random() < 0.05 else score  # no label found in the judgment
        games.append(
            {
                "score": score,
                "judgment": {"answer": f"... My final verdict is: [[{score}]]"},
                "prompt": [
                    {"role": "system", "content": "..."},
                    {"role": "user", "content": "..."},
                ],
            }
        )
    recs.append(
        {
            "uid": f"{k:04x}5e6f7a8b9c0d",
            "category": category,
            "judge": "gpt-4.1",
            "model": "qwen3-8b",
            "baseline": CATEGORY_BASELINE[category],
            "games": games,
        }
    )
_jsonl(HERE / "arena_hard_v2" / "model_judgment" / "gpt-4.1" / "qwen3-8b.jsonl", recs)
