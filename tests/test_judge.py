"""The Judge protocol: a backend that is not transformers flows through extraction unchanged."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
torch.set_num_threads(1)

from judgerisk.extract import (  # noqa: E402
    HFJudge,
    Judge,
    VerdictLogprobs,
    as_judge,
    extract_logprobs,
    self_consistency,
    verbalized_confidence,
)
from judgerisk.testing import short_template, tiny_items, tiny_judge  # noqa: E402


class ForeignJudge:
    """A toy backend: delegates to an HFJudge without being one (as a vLLM or API judge would)."""

    def __init__(self, inner: HFJudge) -> None:
        self.inner = inner
        self.calls = 0

    @property
    def name(self) -> str:
        return "foreign"

    def render(self, conversations, *, assistant_prefill=""):
        return self.inner.render(conversations, assistant_prefill=assistant_prefill)

    def verdict_logprobs(self, texts, verdicts=("A", "B")) -> VerdictLogprobs:
        self.calls += 1
        return self.inner.verdict_logprobs(texts, verdicts)

    def generate(self, texts, **kw):
        return self.inner.generate(texts, **kw)


@pytest.fixture(scope="module")
def hf(tmp_path_factory):
    path = tiny_judge(tmp_path_factory.mktemp("tiny"))
    tok = transformers.AutoTokenizer.from_pretrained(path)
    model = transformers.AutoModelForCausalLM.from_pretrained(path)
    return model, tok


def _quiet(fn, *args, **kw):
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="low verdict mass|verbalized|self-consistency")
        return fn(*args, **kw)


def test_protocol_membership(hf):
    model, tok = hf
    hfj = HFJudge(model, tok, name="tiny")
    assert isinstance(hfj, Judge) and isinstance(ForeignJudge(hfj), Judge)
    assert not isinstance(model, Judge)
    assert as_judge(hfj) is hfj and isinstance(as_judge(model, tok), HFJudge)
    with pytest.raises(ValueError, match="tokenizer"):
        as_judge(model)


def test_foreign_judge_equals_transformers_path(hf):
    model, tok = hf
    items = tiny_items(3)
    kw = dict(conditions=("original", "swap"), template=short_template(), batch_size=1)
    ref = _quiet(extract_logprobs, model, tok, items, **kw)
    foreign = ForeignJudge(HFJudge(model, tok))
    got = _quiet(
        extract_logprobs, foreign, None, items, conditions=kw["conditions"], template=kw["template"]
    )
    assert foreign.calls == 1
    assert (got["judge"] == "foreign").all()
    cols = ["item", "condition", "swapped", "prompt_tokens", "token_a", "token_b"]
    assert got[cols].equals(ref[cols])
    np.testing.assert_allclose(got["logit"], ref["logit"], atol=1e-5)
    wrapped = _quiet(extract_logprobs, HFJudge(model, tok, name="w"), None, items, **kw)
    np.testing.assert_allclose(wrapped["logit"], ref["logit"], atol=1e-6)
    assert (wrapped["judge"] == "w").all()


def test_generation_baselines_accept_a_judge(hf):
    model, tok = hf
    items = tiny_items(2)
    foreign = ForeignJudge(HFJudge(model, tok))
    a = _quiet(verbalized_confidence, foreign, None, items, max_new_tokens=3)
    b = _quiet(verbalized_confidence, model, tok, items, max_new_tokens=3)
    assert a["response"].tolist() == b["response"].tolist() and (a["judge"] == "foreign").all()
    s1 = _quiet(self_consistency, foreign, None, items, k=2, seed=5)
    s2 = _quiet(self_consistency, model, tok, items, k=2, seed=5)
    assert s1[["n_a", "n_b", "n_invalid"]].equals(s2[["n_a", "n_b", "n_invalid"]])


class ScoringOnlyJudge:
    """A backend with verdict log-probabilities and no text generation (a server's top-k API)."""

    def __init__(self, inner: HFJudge) -> None:
        self.inner = inner

    name = "scoring-only"

    def render(self, conversations, *, assistant_prefill=""):
        return self.inner.render(conversations, assistant_prefill=assistant_prefill)

    def verdict_logprobs(self, texts, verdicts=("A", "B")) -> VerdictLogprobs:
        return self.inner.verdict_logprobs(texts, verdicts)


def test_a_judge_without_generate_is_refused_by_the_generation_baselines(hf):
    from judgerisk.extract.judge import GeneratingJudge

    model, tok = hf
    scoring = ScoringOnlyJudge(HFJudge(model, tok))
    assert isinstance(scoring, Judge) and not isinstance(scoring, GeneratingJudge)
    with pytest.raises(ValueError, match="'scoring-only' .* cannot generate text"):
        verbalized_confidence(scoring, None, tiny_items(2), max_new_tokens=3)
