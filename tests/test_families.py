"""Perturbation families as data: names, pairs, ordering, the registry and each rendering."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judgerisk.extract._prompts import build_prompts, load_template
from judgerisk.families import (
    DECLARED,
    FAMILIES,
    Draw,
    Family,
    check_conditions,
    condition_order,
    family_pairs,
    is_declared,
    parse_condition,
    register_family,
    reported_families,
    swapped_twin,
    unregister_family,
)
from judgerisk.families._builtin import LABEL_SETS, NEUTRAL_SENTENCES
from judgerisk.families._layout import LAYOUTS, applicable_layouts
from judgerisk.options import CONDITIONS
from judgerisk.testing import short_template, tiny_items

#: The paper's families, as the data contract listed them before they became data.
PAPER = {
    "order": [("swap", "original"), ("swap_rubric1", "rubric1"), ("swap_rubric2", "rubric2")],
    "rubric": [
        ("rubric1", "original"),
        ("rubric2", "original"),
        ("swap_rubric1", "swap"),
        ("swap_rubric2", "swap"),
    ],
}


def test_builtin_families_and_the_paper_pairs():
    assert list(FAMILIES)[:5] == ["order", "rubric", "label", "format", "verbosity"]
    assert family_pairs(CONDITIONS) == PAPER
    assert [f for f in FAMILIES if FAMILIES[f].core] == ["order", "rubric"]
    for name, family in FAMILIES.items():  # each states its invariance, and why
        assert "Invariance" in (type(family).__doc__ or "") and family.invariance, name


def test_condition_names_parse_by_the_convention():
    assert parse_condition("label1").family == "label"
    spec = parse_condition("swap_verbosity2")
    assert (spec.swapped, spec.family, spec.variant) == (True, "verbosity", 2)
    assert parse_condition("original").family is None and parse_condition("swap").swapped
    for bad in ("label0", "label", "order1", "swap_swap", "shuffle1", "Label1", "swap_", 3):
        assert not is_declared(bad), bad
    assert "format12" in DECLARED and "cot" not in DECLARED
    assert swapped_twin("label2") == "swap_label2" and swapped_twin("swap") == "original"


def test_pairs_of_new_families_and_the_order_family_grows():
    conds = (*CONDITIONS, "label1", "swap_label1", "format1", "verbosity1", "verbosity2")
    pairs = family_pairs(conds)
    assert pairs["order"] == [*PAPER["order"], ("swap_label1", "label1")]
    assert pairs["label"] == [("label1", "original"), ("swap_label1", "swap")]
    assert pairs["format"] == [("format1", "original")]
    assert pairs["verbosity"] == [("verbosity1", "original"), ("verbosity2", "original")]
    assert family_pairs(("original", "swap_label1")) == {}  # no partner present
    assert reported_families(("original", "swap")) == ["order", "rubric"]
    assert reported_families(("original", "format2")) == ["order", "rubric", "format"]


def test_canonical_condition_order():
    shuffled = ["verbosity2", "swap_label1", "zzz", "rubric2", "label1", "swap", "original"]
    assert condition_order(shuffled) == [
        "original",
        "swap",
        "rubric2",
        "label1",
        "swap_label1",
        "verbosity2",
        "zzz",
    ]
    assert condition_order(reversed(CONDITIONS)) == list(CONDITIONS)


def test_check_conditions_names_the_problem():
    assert check_conditions(["original", "label2"]) == ("original", "label2")
    with pytest.raises(ValueError, match="unknown condition name"):
        check_conditions(["original", "labels1"])
    with pytest.raises(ValueError, match="must include 'original'"):
        check_conditions(["swap"])
    with pytest.raises(ValueError, match="unique"):
        check_conditions(["original", "label1", "label1"])


class _Courtesy(Family):
    """Courtesy: a polite request before the task. Invariance: politeness is not an answer.

    Not named ``tone``: CONTRIBUTING.md's recipe 7 adds a family of that name.
    """

    name, label = "courtesy", "courtesy change"

    def perturb(self, parts, variant, draw):
        return parts.note("polite", prompt="Please. " * variant + parts.prompt)


def test_register_a_family_in_a_session():
    register_family(_Courtesy())
    try:
        assert "courtesy" in FAMILIES and is_declared("swap_courtesy2")
        assert family_pairs(("original", "swap", "courtesy1", "swap_courtesy1"))["courtesy"] == [
            ("courtesy1", "original"),
            ("swap_courtesy1", "swap"),
        ]
        prompts = build_prompts(tiny_items(1), load_template(), ("original", "courtesy2"))
        assert prompts.loc[1, "messages"][1]["content"].count("Please. ") == 2
    finally:
        unregister_family("courtesy")
    assert not is_declared("courtesy1")


@pytest.mark.parametrize("name", ["swap_x", "original", "Bad", "tail_", "x1", ""])
def test_family_names_are_checked(name):
    family = _Courtesy()
    family.name = name
    with pytest.raises(ValueError):
        register_family(family)


def test_draws_are_deterministic_and_per_item():
    a, b = Draw(0, "format", "item-1"), Draw(0, "format", "item-1")
    assert [a("k", 7) for _ in range(3)] == [b("k", 7)] * 3
    assert len({Draw(0, "format", i)("k", 1000) for i in range(50)}) > 40
    assert Draw(1, "format", "item-1")("k", 10**9) != a("k", 10**9)
    assert sorted(a.sample("s", 4, 4)) == [0, 1, 2, 3]
    with pytest.raises(ValueError):
        a("k", 0)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab .!?\n\t-1")), max_size=60))
def test_layouts_keep_every_word(text):
    for _, op in LAYOUTS:
        assert op(text).split() == text.split()


def test_applicable_layouts_change_the_text():
    text = "First point. Second point.\n- a list\n- of items"
    options = applicable_layouts(text)
    assert len(options) == len(LAYOUTS)
    assert all(op(text) != text for _, op in options)
    assert [name for name, _ in applicable_layouts("word")] == ["indented by four spaces"]


def _row(prompts, cond):
    return prompts.loc[(prompts["condition"] == cond) & (prompts["item"] == 0)].iloc[0]


def test_label_family_relabels_the_template_not_the_item():
    items = tiny_items(2)
    items.loc[0, "prompt"] = "Is A or B the grade? A question."
    prompts = build_prompts(items, load_template("pairwise_v1"), ("original", "label1", "label2"))
    one = _row(prompts, "label1")
    system, user = (m["content"] for m in one["messages"])
    assert "Return exactly one character: 1 or 2." in system
    assert "[Answer 1]" in user and "[Answer 2]" in user and "Reply with 1 or 2." in user
    assert "Is A or B the grade? A question." in user  # the task is never touched
    assert (one["verdict_a"], one["verdict_b"], one["label_first"]) == ("1", "2", "1")
    assert _row(prompts, "label2")["verdict_a"] == "a"
    assert LABEL_SETS[1] == ("1", "2")


def test_digit_labels_move_the_verdict_space_into_the_prefill():
    prompts = build_prompts(tiny_items(1), load_template("pairwise_v2"), ("original", "label1"))
    orig, one = _row(prompts, "original"), _row(prompts, "label1")
    assert (orig["prefill"] + orig["verdict_a"]).endswith("[Answer A")
    assert one["prefill"] + one["verdict_a"] == orig["prefill"] + " 1"
    letters = _row(
        build_prompts(tiny_items(1), load_template("pairwise_v2"), ("label2",)), "label2"
    )
    assert letters["verdict_a"] == " a"


def test_label_family_needs_labels_in_the_user_message():
    record = {**short_template(), "user": "{prompt}\n1) {answer_a}\n2) {answer_b}"}
    with pytest.raises(ValueError, match="does not show the labels"):
        build_prompts(tiny_items(1), load_template(record), ("label1",))
    with pytest.raises(ValueError, match="variants"):
        build_prompts(tiny_items(1), load_template(), ("label9",))


def test_verbosity_pads_one_answer_with_the_same_content_free_sentence():
    items = tiny_items(4)
    prompts = build_prompts(items, load_template(), ("verbosity1", "verbosity2", "verbosity3"))
    for item, a, b in zip(items["item"], items["answer_a"], items["answer_b"], strict=True):
        rows = prompts[prompts["item"] == item].set_index("condition")
        one, two, three = rows.loc["verbosity1"], rows.loc["verbosity2"], rows.loc["verbosity3"]
        assert one["answer_b"] == b and one["answer_a"].startswith(a + " ")
        assert two["answer_a"] == a and two["answer_b"].startswith(b + " ")
        assert one["answer_a"][len(a) + 1 :] == two["answer_b"][len(b) + 1 :]  # same words
        assert one["answer_a"][len(a) + 1 :] in NEUTRAL_SENTENCES
        assert three["answer_a"].count(".") - a.count(".") == 2  # two sentences


def test_format_changes_layout_only_and_follows_the_seed():
    items = tiny_items(8)
    items["answer_a"] = items["answer_a"] + " Second sentence.\nThird line."
    tmpl = load_template()
    first = build_prompts(items, tmpl, ("format1", "format2"), seed=0)
    again = build_prompts(items, tmpl, ("format1", "format2"), seed=0)
    other = build_prompts(items, tmpl, ("format1", "format2"), seed=1)
    assert first.equals(again)
    assert not first["answer_a"].equals(other["answer_a"])
    merged = first.merge(items, on="item", suffixes=("", "_item"))
    for side in ("answer_a", "answer_b"):
        assert (merged[side] != merged[f"{side}_item"]).all()
        assert (merged[side].str.split() == merged[f"{side}_item"].str.split()).all()


def test_a_template_condition_wins_over_its_family():
    prompts = build_prompts(tiny_items(1), load_template(), CONDITIONS)
    assert (prompts["perturbation"] == "").all()
    record = short_template()
    record["conditions"] = {**record["conditions"], "label1": {"swap": True, "rubric": "rubric1"}}
    table = _row(build_prompts(tiny_items(1), load_template(record), ("label1",)), "label1")
    assert table["swapped"] and table["verdict_a"] == "A" and table["rubric"] == "rubric1"
    with pytest.raises(ValueError, match="rubric named 'rubric3'"):
        build_prompts(tiny_items(1), load_template(), ("rubric3",))
