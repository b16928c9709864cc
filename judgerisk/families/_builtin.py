"""The built-in perturbation families: order, rubric, label, format and verbosity.

Each family's docstring states the invariance it tests and why the canonical verdict (the
probability that the *original* answer A wins) should not change under it. The first two are
the paper's; the other three follow the perturbations practitioners' reliability suites apply
(answer labels, layout, padding), written so that a verdict that moves under them moves for a
reason that has nothing to do with the answers' merit.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from judgerisk.families._base import (
    Draw,
    Family,
    PromptParts,
    condition_order,
    register_family,
    swapped_twin,
)
from judgerisk.families._layout import applicable_layouts

__all__ = [
    "LABEL_SETS",
    "NEUTRAL_SENTENCES",
    "FormatFamily",
    "LabelFamily",
    "OrderFamily",
    "RubricFamily",
    "VerbosityFamily",
]


class OrderFamily(Family):
    """Order: the two answers change places.

    Invariance: the better answer is better wherever it is shown. After the swap the judge's
    first-position token names the original answer B, so the canonical probability is read
    from the other token (Methods reference §1); a judge whose canonical probability moves
    with the swap prefers a position, not an answer (position bias). Its pairs are every
    condition and its swapped twin present: ``(swap, original)``, ``(swap_F<k>, F<k>)``.
    """

    name = "order"
    invariance = "the better answer wins wherever it is shown"
    label = "order swap"
    color = "#4c72b0"
    signal_label = "S (order)"
    signal_color = "#8c8c8c"
    core = True
    has_variants = False

    def pairs(self, conditions: Iterable[str]) -> list[tuple[str, str]]:
        present = condition_order(conditions)
        out = []
        for c in present:
            twin = swapped_twin(c)
            if c.startswith("swap") and twin in present:
                out.append((c, twin))
        return out


class RubricFamily(Family):
    """Rubric: the judging instruction is reworded (variant ``k`` uses the template's rubric
    ``rubric<k>``).

    Invariance: the rewordings ask for the same quality (a helpful, correct, faithful answer),
    so the better answer stays better; a verdict that moves with the wording depends on how
    the criterion is phrased, not on the answers.
    """

    name = "rubric"
    invariance = "rewordings of the criterion ask for the same quality"
    label = "rubric change"
    color = "#dd8452"
    signal_label = "S (rubric)"
    signal_color = "#ccb974"
    core = True

    def perturb(self, parts: PromptParts, variant: int, draw: Draw) -> PromptParts:
        name = f"rubric{int(variant)}"
        if name not in parts.rubrics:
            raise ValueError(
                f"condition {self.condition(variant)!r} needs a rubric named {name!r}; the "
                f"template's rubrics are {sorted(parts.rubrics)}"
            )
        return parts.note(f"rubric {name}", rubric=parts.rubrics[name])


#: The answer labels of the ``label`` family's variants (first shown, second shown).
LABEL_SETS: dict[int, tuple[str, str]] = {1: ("1", "2"), 2: ("a", "b"), 3: ("X", "Y")}


def _standalone(labels: tuple[str, ...]) -> re.Pattern:
    words = "|".join(re.escape(w) for w in sorted(labels, key=len, reverse=True))
    return re.compile(rf"(?<![A-Za-z0-9_])({words})(?![A-Za-z0-9_])")


class LabelFamily(Family):
    """Label: the answers are shown under other labels (variant 1: ``1``/``2``, 2: ``a``/``b``,
    3: ``X``/``Y``, :data:`LABEL_SETS`), and the verdict is read from the new tokens.

    Invariance: a label is a name, not a quality; the verdict for the first-shown answer is read
    from its new token and mapped back to the canonical A exactly as before, so the canonical
    probability should not move. A judge that moves prefers a token (``A`` over ``B``, a first
    letter over a digit), a bias that the order swap alone confounds with position.

    Every stand-alone occurrence of the template's labels (its verdict strings without their
    spaces, ``A`` and ``B``) in the system message, the user message skeleton and the assistant
    prefill is replaced, and the verdict strings with them; the task, the answers and the
    rubrics are never touched. A template that uses its label letter as a word in that text
    should use other labels. Digit labels are read without a leading space (a verdict string
    ``" A"`` becomes ``"1"`` and the space ends the prefill), because tokenizers split a digit
    from the space before it; the prompt's text is the same.
    """

    name = "label"
    invariance = "a label is a name, not a quality"
    label = "answer labels"
    color = "#55a868"
    signal_label = "S (label)"
    signal_color = "#64b5cd"

    def perturb(self, parts: PromptParts, variant: int, draw: Draw) -> PromptParts:
        if variant not in LABEL_SETS:
            raise ValueError(
                f"condition {self.condition(variant)!r}: the label family has the variants "
                f"{sorted(LABEL_SETS)} ({', '.join('/'.join(v) for v in LABEL_SETS.values())})"
            )
        new = LABEL_SETS[variant]
        old = parts.labels
        pattern = _standalone(old)
        mapping = dict(zip(old, new, strict=True))
        if not all(re.search(_standalone((w,)), parts.user) for w in old):
            raise ValueError(
                f"condition {self.condition(variant)!r}: the template's user message does not "
                f"show the labels {list(old)} as words, so they cannot be replaced"
            )

        def sub(text: str) -> str:
            return pattern.sub(lambda m: mapping[m.group(1)], text)

        verdicts = tuple(sub(t) for t in parts.verdict_tokens)
        if verdicts == parts.verdict_tokens:
            raise ValueError(
                f"condition {self.condition(variant)!r}: the verdict strings "
                f"{list(parts.verdict_tokens)} do not hold the labels {list(old)}"
            )
        prefill = sub(parts.assistant_prefill)
        if all(w.isdigit() for w in new) and prefill and all(t.startswith(" ") for t in verdicts):
            # tokenizers split a digit from the space before it: the space ends the prefill
            prefill, verdicts = prefill + " ", tuple(t[1:] for t in verdicts)
        return parts.note(
            f"labels {'/'.join(old)} -> {'/'.join(new)}",
            system=sub(parts.system),
            user=sub(parts.user),
            assistant_prefill=prefill,
            verdict_tokens=verdicts,
            labels=new,
        )


class FormatFamily(Family):
    """Format: each answer's layout changes, never its words (variant ``k`` is one draw).

    Each answer gets one whitespace-only operation drawn from those that change it (a sentence
    per line, lines joined into prose, blank lines, indentation, wide sentence gaps:
    :data:`judgerisk.families._layout.LAYOUTS`), deterministically from the perturbation seed,
    the variant and the item. Invariance: the words and their order are unchanged, so the
    content is the same; a verdict that moves rewards presentation.
    """

    name = "format"
    invariance = "the same words in another layout say the same"
    label = "layout change"
    color = "#8172b2"
    signal_label = "S (format)"
    signal_color = "#a6761d"
    seeded = True

    def perturb(self, parts: PromptParts, variant: int, draw: Draw) -> PromptParts:
        changed = {}
        notes = []
        for side in ("a", "b"):
            text = getattr(parts, f"answer_{side}")
            options = applicable_layouts(text)
            what, op = options[draw(f"layout {variant} {side}", len(options))]
            changed[f"answer_{side}"] = op(text)
            notes.append(f"{side.upper()}: {what}")
        return parts.note("; ".join(notes), **changed)


#: Content-free sentences the ``verbosity`` family appends (they say nothing about the task).
NEUTRAL_SENTENCES: tuple[str, ...] = (
    "I hope this helps.",
    "Let me know if you have any other questions.",
    "This is my response to the request above.",
    "Thank you for reading.",
)
#: The largest verbosity variant: ``2m - 1`` and ``2m`` add ``m`` sentences, at most all of them.
MAX_VERBOSITY = 2 * len(NEUTRAL_SENTENCES)


class VerbosityFamily(Family):
    """Verbosity: a neutral, content-free sentence is appended to one answer.

    Variant ``k`` pads answer A when ``k`` is odd and answer B when it is even, with
    ``(k + 1) // 2`` sentences drawn from :data:`NEUTRAL_SENTENCES` (deterministically from the
    seed and the item; variants ``2m - 1`` and ``2m`` add the same words): ``verbosity1`` pads A,
    ``verbosity2`` pads B with the same sentence; ``k`` runs to :data:`MAX_VERBOSITY` (8: all
    four sentences), a larger ``k`` is refused. Invariance: the added
    words carry no information about the task, so the better answer stays better; a judge that
    rewards length moves towards the padded answer, in opposite directions in the two
    variants, which separates length bias from noise.
    """

    name = "verbosity"
    invariance = "a content-free sentence adds nothing to an answer"
    label = "padding"
    color = "#937860"
    signal_label = "S (verbosity)"
    signal_color = "#e7298a"
    seeded = True

    def perturb(self, parts: PromptParts, variant: int, draw: Draw) -> PromptParts:
        if variant > MAX_VERBOSITY:
            raise ValueError(
                f"condition {self.condition(variant)!r}: the verbosity family has "
                f"{len(NEUTRAL_SENTENCES)} neutral sentences, so its variants are 1 to "
                f"{MAX_VERBOSITY} (verbosity{MAX_VERBOSITY - 1} and verbosity{MAX_VERBOSITY} "
                f"pad all {len(NEUTRAL_SENTENCES)}); a larger k would pad the same sentences again"
            )
        side = "a" if variant % 2 else "b"
        count = (variant + 1) // 2
        picked = draw.sample(f"sentences {count}", len(NEUTRAL_SENTENCES), count)
        extra = " ".join(NEUTRAL_SENTENCES[k] for k in picked)
        text = getattr(parts, f"answer_{side}")
        padded = text + ("\n\n" if "\n" in text else " ") + extra
        return parts.note(f"{side.upper()} + {extra!r}", **{f"answer_{side}": padded})

    def simulation_sign(self, variant: int) -> float | None:
        return 1.0 if variant % 2 else -1.0


for _family in (OrderFamily(), RubricFamily(), LabelFamily(), FormatFamily(), VerbosityFamily()):
    register_family(_family)
