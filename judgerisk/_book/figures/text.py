"""Text of the comparisons: intervals as strings, interval tables and direction sentences.

The studies compute the numbers and the rule's verdict (:func:`judgerisk._book.studies.paired.verdict`,
:data:`judgerisk._book.studies.paired.BEATS_RULE`); this module only writes them as text for the book
and the reports, so a sentence cannot say more than its interval does.

References
----------
- B. Efron and R. Tibshirani, *An Introduction to the Bootstrap*, 1993 (percentile interval).
- "Can We Trust This Evaluation? Instance-Level Reliability of LLM-as-a-Judge", Section 4
  and Appendix D (AUROC on all, high-consensus and matched-vote items).
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from judgerisk._book.studies.ablation import FULL
from judgerisk._book.studies.paired import best_rows, verdict
from judgerisk.engine.analysis import SUBSET_NAMES
from judgerisk.families import parse_condition

__all__ = [
    "comparison_sentences",
    "condition_words",
    "direction_sentence",
    "direction_sentences",
    "format_interval",
    "interval_table",
    "pair_words",
    "plural",
    "verdict_phrase",
]


def format_interval(diff: float, low: float, high: float, digits: int = 3) -> str:
    """``"+0.030 [-0.022, +0.082]"``: a difference with its interval (``digits`` decimals).

    Examples
    --------
    >>> format_interval(0.05, -0.01, 0.11)
    '+0.050 [-0.010, +0.110]'
    """
    return f"{diff:+.{digits}f} [{low:+.{digits}f}, {high:+.{digits}f}]"


def plural(n: int, noun: str, nouns: str | None = None) -> str:
    """``"1 repetition"``, ``"3 repetitions"``: a count with its noun spelled out, never "(s)".

    Parameters
    ----------
    n : int
    noun : str
        The singular.
    nouns : str, optional
        The plural when it is not ``noun + "s"`` (``plural(2, "this", "these")``).

    Examples
    --------
    >>> plural(1, "time"), plural(3, "time"), plural(0, "cell"), plural(2, "entry", "entries")
    ('1 time', '3 times', '0 cells', '2 entries')
    """
    word = noun if n == 1 else (nouns if nouns is not None else noun + "s")
    return f"{n} {word}"


def condition_words(name: str) -> str:
    """A condition in words: its answer order, then its prompt (Methods reference: the
    original condition is the original answer order with the standard prompt).

    A name no family declares is returned as it is.

    Examples
    --------
    >>> condition_words("original"), condition_words("swap_rubric1")
    ('original order, standard prompt', 'swapped order, rubric 1')
    """
    spec = parse_condition(name)
    if spec is None:
        return name
    order = "swapped order" if spec.swapped else "original order"
    prompt = "standard prompt" if spec.family is None else f"{spec.family} {spec.variant}"
    return f"{order}, {prompt}"


def pair_words(pair: str) -> str:
    """A pair of :func:`judgerisk.engine.describe.flip_rates` (``"c vs c'"``) in words: what
    changes between the two conditions, then what they share.

    Examples
    --------
    >>> pair_words("swap_rubric1 vs rubric1"), pair_words("rubric1 vs original")
    ('both orders, rubric 1', 'rubric 1 vs standard prompt, original order')
    """
    first, _, second = pair.partition(" vs ")
    if parse_condition(first) is None or parse_condition(second) is None:
        return pair
    order, prompt = condition_words(first).split(", ")
    other_order, other_prompt = condition_words(second).split(", ")
    if prompt == other_prompt:
        return f"both orders, {prompt}"
    if order == other_order:
        return f"{prompt} vs {other_prompt}, {order}"
    return f"{condition_words(first)} vs {condition_words(second)}"


def interval_table(table: pd.DataFrame, label: Callable[[str], str] = str) -> pd.DataFrame:
    """A comparison table as text, method x subset: ``"diff [low, high]"``.

    Parameters
    ----------
    table : pandas.DataFrame
        Output of :func:`judgerisk._book.studies.paired.compare_scores`.
    label : callable, default str
        Display name of a method key (e.g. :func:`judgerisk._plots.style.label`).
    """
    cells = table.assign(
        cell=[format_interval(d, lo, hi) for d, lo, hi in table[["diff", "low", "high"]].values],
        method=table["method"].map(label),
        subset=table["subset"].map(lambda s: SUBSET_NAMES.get(s, s)),
    )
    return cells.pivot(index="method", columns="subset", values="cell").reindex(
        index=list(dict.fromkeys(cells["method"])), columns=list(dict.fromkeys(cells["subset"]))
    )


def comparison_sentences(
    table: pd.DataFrame, reference: str = "SCUR", label: Callable[[str], str] = str
) -> list[str]:
    """One sentence per subset: the reference against its strongest competitor, by the rule.

    Parameters
    ----------
    table : pandas.DataFrame
        Output of :func:`judgerisk._book.studies.paired.compare_scores`.
    reference : str, default "SCUR"
        Display name of the reference score.
    label : callable, default str
        Display name of a method key.

    Returns
    -------
    list of str
        E.g. ``"all items (366 items, 177 errors): SCUR 0.636 ties with PE 0.607, difference
        +0.030 [-0.022, +0.082]; it beats 2 of 4 others"``, the verb chosen by
        :data:`judgerisk._book.studies.paired.BEATS_RULE`.
    """
    lines = []
    for subset, row in best_rows(table).iterrows():
        grp = table[table["subset"] == subset]
        n_beats = int((grp["verdict"] == "beats").sum())
        n_trails = int((grp["verdict"] == "trails").sum())
        lines.append(
            f"{SUBSET_NAMES.get(subset, subset)} ({row['n_items']} items, {row['n_errors']} "
            f"errors): {reference} {row['auroc_ref']:.3f} {row['verdict']} the strongest other "
            f"score, {label(row['method'])} {row['auroc']:.3f}, difference "
            f"{format_interval(row['diff'], row['low'], row['high'])}; it beats {n_beats} and "
            f"trails {n_trails} of the {len(grp)} scores compared"
        )
    return lines


def verdict_phrase(verdict: str, *, beats: str, ties: str, trails: str) -> str:
    """A sentence's own wording of a verdict of :data:`judgerisk._book.studies.paired.BEATS_RULE`.

    The one map from the three verdicts to the words a sentence uses for them ("raises",
    "lowers", ...), so that a sentence words all three and an unknown verdict is an error.

    Parameters
    ----------
    verdict : {"beats", "ties with", "trails"}
        The rule's verdict (:func:`judgerisk._book.studies.paired.verdict`).
    beats, ties, trails : str
        The words for each verdict.

    Examples
    --------
    >>> verdict_phrase("trails", beats="raises", ties="does not move", trails="lowers")
    'lowers'
    """
    words = {"beats": beats, "ties with": ties, "trails": trails}
    if verdict not in words:
        raise ValueError(f"verdict must be one of {list(words)}, got {verdict!r}")
    return words[verdict]


def direction_sentence(a: str, b: str, diff: float, low: float, high: float) -> str:
    """``"C+S beats U+C+S by +0.060 [+0.020, +0.100]"`` for AUROC(a) - AUROC(b) and its interval.

    The verb follows :data:`judgerisk._book.studies.paired.BEATS_RULE`, so the sentence cannot say
    more than the interval does.

    Examples
    --------
    >>> direction_sentence("C+S", "U+C+S", 0.06, 0.02, 0.10)
    'C+S beats U+C+S by +0.060 [+0.020, +0.100]'
    """
    v = verdict(low, high)
    joint = " by " if v != "ties with" else ", difference "
    return f"{a} {v} {b}{joint}{format_interval(diff, low, high)}"


def direction_sentences(table: pd.DataFrame, subset: str = "all") -> list[str]:
    """One :func:`direction_sentence` per row of an ablation or option table, for one subset.

    Parameters
    ----------
    table : pandas.DataFrame
        Output of :func:`judgerisk._book.studies.ablation.ablation_table` (each combination against
        ``U+C+S``; the difference is turned round so that the combination is the subject) or of
        :func:`judgerisk._book.studies.ablation.option_table` (each option against the default, the
        paper's reading).
    subset : str, default "all"
    """
    rows = table[table["subset"] == subset]
    if "option" in rows.columns:
        return [
            direction_sentence(r.option, "the paper's reading", r.diff, r.low, r.high)
            for r in rows.itertuples()
        ]
    return [direction_sentence(r.method, FULL, -r.diff, -r.high, -r.low) for r in rows.itertuples()]
