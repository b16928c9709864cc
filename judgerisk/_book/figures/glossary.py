"""The one wording of the risk scores' definitions, for the glossary page and the chapters.

The book's "Glossary" page defines every term; a chapter that restates a definition (the
conclusion, a solution) pastes it from here (``glue(..., Markdown(define("PE")))``), and
``tests/test_glossary.py`` checks that the glossary page says the same words, so a page cannot
define PE as the entropy of the vote (which is VE).

References
----------
- "Can We Trust This Evaluation? Instance-Level Reliability of LLM-as-a-Judge", Section 3
  (U, C, S and SCUR) and Section 4 (the baselines PE, VE, MSP and DS entropy).
"""

from __future__ import annotations

__all__ = ["DEFINITIONS", "define"]

#: Term -> its definition, as the glossary page states it (plain text, no MyST roles).
DEFINITIONS: dict[str, str] = {
    "PE": (
        "Predictive entropy of the panel: the binary entropy of the judges' mean probability "
        "that A wins in the original condition."
    ),
    "VE": (
        "Vote entropy: the binary entropy of the share of judges voting for A in the original "
        "condition."
    ),
    "MSP": (
        "Maximum softmax probability, turned into a risk: the mean over judges of "
        "1 − max(p, 1 − p) in the original condition."
    ),
    "U": (
        "The ambiguity signal of SCUR: the binary entropy of the panel's mean held-out "
        "probability that A wins."
    ),
    "C": (
        "The conflict signal of SCUR: the mean, over an item's cells, of the cross-entropy "
        "between each judge's observed probability and its leave-one-judge-out (LOJO) "
        "prediction."
    ),
    "S": (
        "The sensitivity signal of SCUR: for each perturbation family (the answer order, the "
        "rubric, the labels, ...), $S^F$ is the mean, over judges, of |p − p′|, the change in "
        "a judge's probability that A wins between two conditions that differ by that "
        "perturbation, and $z^S$ is the maximum of their normalised values."
    ),
}


def define(term: str, lower: bool = False) -> str:
    """The glossary's definition of ``term`` (``lower``: first letter in lower case, to follow
    a colon or a dash inside a sentence).

    >>> define("VE").split(":")[0], define("PE", lower=True).split(":")[0]
    ('Vote entropy', 'predictive entropy of the panel')
    """
    try:
        text = DEFINITIONS[term]
    except KeyError:
        raise KeyError(f"no definition of {term!r}; defined: {sorted(DEFINITIONS)}") from None
    return text[0].lower() + text[1:] if lower else text
