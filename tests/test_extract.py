"""Tests of verdict-logprob extraction on the tiny offline judge (in-process)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
torch.set_num_threads(1)  # 2 threads on a shared 2-core machine run many times slower

from judgerisk.extract import (  # noqa: E402
    PLAIN_CHAT_TEMPLATE,
    build_prompts,
    canonical_logit,
    extract_logprobs,
    list_templates,
    load_template,
    parse_verbalized,
    read_items,
    render_chat,
    resolve_verdict_tokens,
    self_consistency,
    verbalized_confidence,
)
from judgerisk.extract._forward import iter_batches, resolve_dtype  # noqa: E402
from judgerisk.panel import CONDITIONS, validate_panel  # noqa: E402
from judgerisk.testing import short_template, tiny_items, tiny_judge  # noqa: E402

# Golden values: tiny_judge(seed=0) on tiny_items(3), pairwise_v1, one prompt at a time, float32.
# Generated once with this code and checked identical across two independent builds.
GOLDEN = [
    (0, "original", 178, -8.068485, -6.335363),
    (0, "swap", 178, -8.364504, -6.831896),
    (1, "original", 176, -7.652795, -7.339207),
    (1, "swap", 176, -7.540910, -6.811277),
    (2, "original", 164, -7.996600, -8.245912),
    (2, "swap", 164, -9.097037, -8.864880),
]
GOLDEN_ATOL = 1e-4  # float32 forward; covers BLAS/thread-count differences
BATCH_ATOL = 1e-5  # batched (left-padded) vs one-at-a-time, float32


@pytest.fixture(scope="module")
def judge(tmp_path_factory):
    path = tiny_judge(tmp_path_factory.mktemp("tiny"))
    tok = transformers.AutoTokenizer.from_pretrained(path)
    model = transformers.AutoModelForCausalLM.from_pretrained(path)
    return model, tok


def _extract(model, tok, items, **kw):
    kw.setdefault("template", short_template())  # short prompts keep the tests fast
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="low verdict mass")
        return extract_logprobs(model, tok, items, **kw)


@pytest.fixture(scope="module")
def full(judge):
    model, tok = judge
    return _extract(model, tok, tiny_items(4), batch_size=16)


def test_golden_values(judge):
    model, tok = judge
    panel = _extract(
        model,
        tok,
        tiny_items(3),
        conditions=("original", "swap"),
        batch_size=1,
        template="pairwise_v1",
    )
    got = panel.set_index(["item", "condition"])
    for item, cond, ntok, la, lb in GOLDEN:
        row = got.loc[(item, cond)]
        assert row["prompt_tokens"] == ntok
        assert row["logprob_a"] == pytest.approx(la, abs=GOLDEN_ATOL)
        assert row["logprob_b"] == pytest.approx(lb, abs=GOLDEN_ATOL)


def test_panel_contract_and_coverage(full):
    items = tiny_items(4)
    assert len(full) == len(items) * len(CONDITIONS)
    assert not full.duplicated(["item", "condition"]).any()
    assert set(full["condition"]) == set(CONDITIONS)
    pd.testing.assert_frame_equal(validate_panel(full), full)
    for col in (
        "logprob_a",
        "logprob_b",
        "verdict_mass",
        "prompt_tokens",
        "template",
        "template_hash",
        "judge",
        "gold",
    ):
        assert col in full.columns
    assert (full["logprob_a"] < 0).all() and (full["logprob_b"] < 0).all()
    np.testing.assert_allclose(
        full["verdict_mass"], np.exp(full["logprob_a"]) + np.exp(full["logprob_b"])
    )
    assert full["template"].eq("short_v1").all()
    assert full["template_hash"].eq(load_template(short_template()).hash).all()
    assert load_template(short_template()).hash != load_template("pairwise_v1").hash
    gold = full.groupby("item")["gold"].first()
    assert gold.to_dict() == dict(zip(items["item"], items["gold"], strict=True))


def test_swap_mapping(full):
    swapped = full["condition"].str.startswith("swap").to_numpy()
    assert (full["swapped"].to_numpy() == swapped).all()
    la, lb = full["logprob_a"].to_numpy(), full["logprob_b"].to_numpy()
    p_token_b = np.exp(lb) / (np.exp(la) + np.exp(lb))
    p_token_a = 1 - p_token_b
    np.testing.assert_allclose(full["p"].to_numpy()[swapped], p_token_b[swapped], rtol=1e-9)
    np.testing.assert_allclose(full["p"].to_numpy()[~swapped], p_token_a[~swapped], rtol=1e-9)
    assert canonical_logit([-1.0], [-3.0], [True])[0] == -2.0
    assert canonical_logit([-1.0], [-3.0], [False])[0] == 2.0


def test_swapped_prompt_shows_b_first():
    items = read_items(tiny_items(2))
    prompts = build_prompts(items, load_template(), ("original", "swap"))
    for _, row in prompts.iterrows():
        it = items.set_index("item").loc[row["item"]]
        user = row["messages"][1]["content"]
        a_pos, b_pos = user.index(it["answer_a"]), user.index(it["answer_b"])
        assert (a_pos > b_pos) == row["swapped"]


def test_batched_equals_one_at_a_time(judge, full):
    model, tok = judge
    conds = ("original", "swap_rubric2")
    ref = full[full["condition"].isin(conds)].reset_index(drop=True)
    single = _extract(model, tok, tiny_items(3), batch_size=1, conditions=conds)
    auto = _extract(model, tok, tiny_items(4), batch_size="auto", conditions=conds)
    for other in (single, auto):
        part = ref.iloc[: len(other)]
        np.testing.assert_allclose(other["logprob_a"], part["logprob_a"], atol=BATCH_ATOL)
        np.testing.assert_allclose(other["logprob_b"], part["logprob_b"], atol=BATCH_ATOL)
        assert other[["item", "condition"]].equals(part[["item", "condition"]])
    # left padding really happened: prompt lengths differ within the batch
    assert full["prompt_tokens"].nunique() > 1


def test_input_order_and_string_ids(judge, full):
    model, tok = judge
    items = tiny_items(4).iloc[::-1]
    items["item"] = "q" + items["item"].astype(str)
    out = _extract(model, tok, items, batch_size=4, conditions=("original", "swap"))
    ref = full[full["condition"].isin(["original", "swap"])]
    got = out.assign(item=out["item"].str[1:].astype(int)).sort_values(["item", "condition"])
    ref = ref.sort_values(["item", "condition"])
    np.testing.assert_allclose(got["logit"], ref["logit"], atol=BATCH_ATOL)


class _FakeOOM(torch.nn.Module):
    """Wraps a model; raises an injected out-of-memory error for batches above `limit`."""

    def __init__(self, inner, limit, error=None):
        super().__init__()
        self.inner, self.limit, self.calls = inner, limit, []
        self.error = error or torch.OutOfMemoryError("CUDA out of memory (injected)")

    def get_input_embeddings(self):
        return self.inner.get_input_embeddings()

    def forward(
        self, input_ids, attention_mask=None, position_ids=None, use_cache=None, logits_to_keep=0
    ):
        self.calls.append(input_ids.shape[0])
        if input_ids.shape[0] > self.limit:
            raise self.error
        return self.inner(
            input_ids=input_ids,
            attention_mask=attention_mask,
            position_ids=position_ids,
            use_cache=use_cache,
            logits_to_keep=logits_to_keep,
        )


def test_oom_backoff(judge, full):
    model, tok = judge
    fake = _FakeOOM(model, limit=3)
    with pytest.warns(UserWarning, match="out of memory with a batch of 12"):
        out = _extract(fake, tok, tiny_items(2), batch_size=16)
    assert fake.calls[:3] == [12, 6, 3] and max(fake.calls[3:]) <= 3
    np.testing.assert_allclose(out["logit"], full["logit"][:12], atol=BATCH_ATOL)
    # an OOM on a single prompt, and any other error, propagate
    with pytest.raises(torch.OutOfMemoryError):
        _extract(_FakeOOM(model, limit=0), tok, tiny_items(1), batch_size=4)
    with pytest.raises(RuntimeError, match="boom"):
        _extract(_FakeOOM(model, limit=0, error=RuntimeError("boom")), tok, tiny_items(1))


def test_iter_batches_token_cap(judge):
    model, _ = judge
    seqs = [[5] * n for n in (40, 30, 20, 10, 5)]
    sizes = [len(pos) for pos, _, _ in iter_batches(model, seqs, (5, 6), batch_size=2)]
    assert sizes == [2, 2, 1]
    with pytest.raises(ValueError, match="batch_size"):
        next(iter_batches(model, seqs, (5, 6), batch_size=0))


def test_verdict_token_resolution(judge):
    _, tok = judge
    text = render_chat(tok, load_template().messages("q", "a", "b", "standard"))
    vt = resolve_verdict_tokens(tok, text)
    assert (vt.token_a, vt.token_b) == ("A", "B")
    # after a space the judge's token would be "ĠA": prefix + " " does not end at a token boundary
    with pytest.raises(ValueError, match="not a single token"):
        resolve_verdict_tokens(tok, text + " ")
    vt_space = resolve_verdict_tokens(tok, text, (" A", " B"))
    assert vt_space.token_a == "ĠA" and vt_space.id_a != vt.id_a
    with pytest.raises(ValueError, match="not a single token"):
        resolve_verdict_tokens(tok, text, ("Answer A", "Answer B"))
    with pytest.raises(ValueError, match="same token id"):
        resolve_verdict_tokens(tok, text, ("A", "A"))


def test_chat_template_checks(judge, tmp_path):
    model, tok = judge
    msgs = load_template().messages("q", "a", "b", "standard")
    bare = transformers.AutoTokenizer.from_pretrained(
        tiny_judge(tmp_path / "b", chat_template=None)
    )
    with pytest.raises(ValueError, match="no chat template"):
        render_chat(bare, msgs)
    assert render_chat(bare, msgs, chat_template=PLAIN_CHAT_TEMPLATE).endswith("Assistant:")
    out = _extract(
        model, bare, tiny_items(2), conditions=("original",), chat_template=PLAIN_CHAT_TEMPLATE
    )
    assert len(out) == 2
    # thinking: refused when asked, detected when the template opens <think> regardless
    with pytest.raises(ValueError, match="enable_thinking"):
        _extract(model, tok, tiny_items(2), enable_thinking=True)
    with pytest.raises(ValueError, match="<think>"):
        render_chat(tok, msgs, enable_thinking=True)
    always = tok.chat_template.replace(
        "{% if enable_thinking is defined and enable_thinking %}<think>\n{% endif %}", "<think>\n"
    )
    with pytest.raises(ValueError, match="<think> block"):
        render_chat(tok, msgs, chat_template=always)
    closed = always.replace("<think>\n", "<think>\n\n</think>\n\n")
    assert render_chat(tok, msgs, chat_template=closed).endswith("</think>\n\n")
    # no double BOS: the template writes BOS once and encoding adds none
    text = render_chat(tok, msgs)
    ids = tok(text, add_special_tokens=False)["input_ids"]
    assert ids[0] == tok.bos_token_id and ids[1] != tok.bos_token_id
    double = "{{ bos_token }}" + tok.chat_template
    with pytest.raises(ValueError, match="two BOS"):
        _extract(model, tok, tiny_items(1), chat_template=double)


def test_bad_items(judge):
    model, tok = judge
    items = tiny_items(3)
    with pytest.raises(ValueError, match=r"missing column\(s\) \['answer_b'\]"):
        read_items(items.drop(columns="answer_b"))
    empty = items.copy()
    empty.loc[1, "answer_a"] = "  "
    with pytest.raises(ValueError, match="'answer_a' is empty or missing for 1 item"):
        read_items(empty)
    dup = items.copy()
    dup.loc[2, "item"] = 0
    with pytest.raises(ValueError, match="duplicate item ids"):
        read_items(dup)
    gold = items.assign(gold=["A", "C", "B"])
    with pytest.raises(ValueError, match="'gold' must be 'A' or 'B'"):
        read_items(gold)
    with pytest.raises(ValueError, match="not defined by template"):
        _extract(model, tok, items, conditions=("original", "shuffle"))
    with pytest.raises(ValueError, match="must include 'original'"):
        _extract(model, tok, items, conditions=("swap",))


def test_items_from_jsonl(judge, full, tmp_path):
    model, tok = judge
    path = tmp_path / "items.jsonl"
    tiny_items(4).to_json(path, orient="records", lines=True)
    out = _extract(model, tok, path, conditions=("original",), batch_size=16)
    ref = full[full["condition"] == "original"].reset_index(drop=True)
    np.testing.assert_allclose(out["logit"], ref["logit"], atol=BATCH_ATOL)


def test_low_mass_warning_and_templates(judge):
    model, tok = judge
    with pytest.warns(UserWarning, match=r"low verdict mass: 2 of 2 prompts"):
        extract_logprobs(
            model, tok, tiny_items(2), conditions=("original",), template=short_template()
        )
    assert {"pairwise_v1", "verbalized_v1"} <= set(list_templates())
    rec = dict(load_template().record, version=2)
    assert load_template(rec).hash != load_template().hash
    with pytest.raises(ValueError, match="unknown template"):
        load_template("nope")


def test_dtype_names():
    assert resolve_dtype("bf16") is torch.bfloat16
    assert resolve_dtype("float16") is torch.float16
    assert resolve_dtype(None) is None
    with pytest.raises(ValueError, match="unknown dtype"):
        resolve_dtype("int3")


def test_parse_verbalized():
    got = parse_verbalized(["A 85", "B, confidence: 60%", "I think A", "b 100", "A 150", ""])
    assert got["choice"].fillna("-").tolist() == ["A", "B", "-", "B", "-", "-"]
    np.testing.assert_allclose(got["confidence"], [0.85, 0.60, np.nan, 1.0, np.nan, np.nan])


def test_generation_baselines(judge):
    model, tok = judge
    items = tiny_items(2)
    sc1 = self_consistency(model, tok, items, conditions=("original", "swap"), k=4, seed=3)
    sc2 = self_consistency(model, tok, items, conditions=("original", "swap"), k=4, seed=3)
    pd.testing.assert_frame_equal(sc1, sc2)
    assert (sc1["n_a"] + sc1["n_b"] + sc1["n_invalid"] == 4).all()
    ok = sc1["p"].notna()
    assert ((sc1.loc[ok, "p"] >= 0) & (sc1.loc[ok, "p"] <= 1)).all()
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        vc = verbalized_confidence(model, tok, items, max_new_tokens=4)
    assert len(vc) == 2 and {"response", "choice", "confidence", "p"} <= set(vc.columns)
    n_nan = int(vc["p"].isna().sum())
    if n_nan:
        assert any(f"{n_nan} of 2 responses could not be parsed" in str(w.message) for w in rec)
