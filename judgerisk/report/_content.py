"""What the panel report says: readable risk, certified verdicts, notes and cautions.

The report notebook (``judgerisk/report/templates/panel_report.md``, rendered by :mod:`judgerisk.report.build`)
answers the question a user brings, *which verdicts can I trust?*, with these helpers:

- :func:`riskiest_table`: the riskiest items with their rank and percentile beside the score,
  printed with enough digits that the listed scores differ (SCUR crowds near 1 on a panel with
  many confident errors, where three decimals all read ``1.000``);
- :func:`certify_unlabelled`: when part of the panel carries gold, the labelled items calibrate
  SCOPE (:func:`judgerisk.engine.certified.select_items`) and the unlabelled verdicts are accepted or
  abstained on at the chosen α; :func:`certified_text` says what was certified and the coverage
  paid;
- :func:`show_warnings_as_notes`: warnings raised while the report runs become sentences of the
  report (never a raw ``UserWarning`` with the kernel's temporary path); a book chapter uses
  :func:`warnings_as_notes` around a step it expects to warn, as note admonitions;
- :func:`small_sample_caution`: a caution, with its numbers, when the labelled items or the
  errors among them are too few for the AUROC and certification tables;
- :func:`reproduce_html`: the closing "Reproduce this report" section from the run's record.
"""

from __future__ import annotations

import contextlib
import html
import math
import warnings
from collections.abc import Iterable, Iterator
from typing import Any, TextIO

import numpy as np
import pandas as pd

from judgerisk._plots.escape import NO_MATH, html_items, html_text

__all__ = [
    "MIN_LABELLED",
    "MIN_ERRORS",
    "risk_digits",
    "format_risk",
    "format_complement",
    "riskiest_table",
    "note_text",
    "note_html",
    "show_warnings_as_notes",
    "warnings_as_notes",
    "certify_unlabelled",
    "certification_check",
    "certified_text",
    "certified_verdicts_html",
    "auroc_standard_error",
    "small_sample_caution",
    "reproduce_html",
]

#: Fewer labelled items than this draws the small-sample caution.
MIN_LABELLED = 100
#: Fewer errors (or fewer correct verdicts) than this among the labelled items draws it too.
MIN_ERRORS = 10


def risk_digits(values: Iterable[float], least: int = 3, most: int = 6) -> int:
    """Fewest decimals (at least ``least``) at which distinct ``values`` print distinct.

    Values equal in floating point stay equal; ``most`` bounds the digits for values that differ
    only further down (SCUR near 1: :func:`riskiest_table` then also prints ``1 − score``).
    """
    v = np.asarray([x for x in values if np.isfinite(x)], dtype=float)
    n_distinct = len(np.unique(v))
    for d in range(least, most + 1):
        if len(np.unique(np.round(v, d))) == n_distinct:
            return d
    return most


def format_risk(value: float, digits: int) -> str:
    """A risk score printed with ``digits`` decimals (an empty cell for a missing score)."""
    return "" if not np.isfinite(value) else f"{value:.{digits}f}"


def format_complement(value: float) -> str:
    """``1 − value`` in scientific notation, two significant digits: how far a score near 1 is
    from 1 (for SCUR, the product of the signals' complements :math:`\\prod_X (1 - z^X)`)."""
    return "" if not np.isfinite(value) else f"{1.0 - value:.1e}"


def _rank_and_percentile(risk: pd.Series) -> pd.DataFrame:
    """Rank (1 = riskiest) and the share of scored items strictly less risky, in percent."""
    scored = risk.dropna()
    rank = scored.rank(ascending=False, method="min").astype(int)
    below = scored.rank(ascending=True, method="min") - 1
    return pd.DataFrame({"rank": rank, "riskier than (%)": (100 * below / len(scored)).round(1)})


def riskiest_table(
    scores: pd.DataFrame, n: int = 10, score: str = "scur", columns: Iterable[str] = ()
) -> pd.DataFrame:
    """The ``n`` riskiest items: score, rank, percentile, then ``columns``.

    Parameters
    ----------
    scores : pandas.DataFrame
        A :func:`judgerisk.engine.certified.score_panel` table (items as index).
    n : int, default 10
        Items listed.
    score : str, default "scur"
        The risk column (larger = riskier).
    columns : iterable of str
        Further columns shown after the rank (numbers rounded to 3 decimals).

    Returns
    -------
    pandas.DataFrame
        The score as text with :func:`risk_digits` decimals over the listed items; when the
        score lies in [0, 1] and some listed items still print alike, ``1 − score`` in
        scientific notation (:func:`format_complement`), which tells them apart; ``rank``
        (1 = riskiest, ties share the best rank; "of N" in the header) and ``riskier than (%)``:
        the share of the N scored items with a strictly lower score.
    """
    risk = pd.to_numeric(scores[score], errors="coerce")
    top = risk.dropna().sort_values(ascending=False, kind="stable").head(n)
    digits = risk_digits(top.to_numpy())
    ranks = _rank_and_percentile(risk).loc[top.index]
    out = pd.DataFrame({score: [format_risk(v, digits) for v in top]}, index=top.index)
    crowded = out[score].nunique() < top.nunique()
    if crowded and top.between(0, 1).all():
        out[f"1 − {score}"] = [format_complement(v) for v in top]
    out[f"rank (of {int(risk.notna().sum())})"] = ranks["rank"]
    out["riskier than (%)"] = ranks["riskier than (%)"]
    extra = [c for c in columns if c in scores.columns and c != score]
    return out.join(scores.loc[top.index, extra].round(3))


def note_text(message: object) -> str:
    """A warning's message as a sentence of the report: capitalised, ending in a full stop."""
    text = " ".join(str(message).split())
    if not text:
        return text
    text = text[0].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."


def note_html(message: object, admonition: bool = False) -> str:
    """A note as HTML: the report's "**Note:** <message>." paragraph, or (``admonition``) a
    note admonition of a book page, styled by the book's theme.

    The message is escaped, and on a book page kept from MathJax (class
    :data:`~judgerisk._plots.escape.NO_MATH`): a warning may quote a judge or item name from the
    user's file.
    """
    text = html.escape(note_text(message))
    if admonition:
        return (
            '<div class="admonition note"><p class="admonition-title">Note</p>'
            f'<p class="{NO_MATH}">{text}</p></div>'
        )
    return f"<p><strong>Note:</strong> {text}</p>"


def show_warnings_as_notes(admonition: bool = False) -> None:
    """Route every warning shown in this (notebook) process to a note (:func:`note_html`).

    Replaces :func:`warnings.showwarning`: a warning then reads "**Note:** <its message>." in the
    page (with ``admonition``, as a note admonition of a book page), with no category, source
    line or file path (the kernel's temporary files, the build machine's folders).
    """
    from IPython.display import HTML, display

    def show(
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: TextIO | None = None,
        line: str | None = None,
    ) -> None:
        display(HTML(note_html(message, admonition)))

    warnings.showwarning = show


@contextlib.contextmanager
def warnings_as_notes(admonition: bool = True) -> Iterator[None]:
    """Within the block, warnings are shown as notes (:func:`show_warnings_as_notes`), each
    distinct message once.

    For a book chapter whose step is expected to warn (a real panel's ties or a judge that looks
    unflipped, found again each time the panel is scored): the reader gets the checks' findings
    as sentences of the page, while a warning anywhere else still reaches stderr, where the
    book's page checks refuse it.
    """
    previous = warnings.showwarning
    show_warnings_as_notes(admonition)
    note, seen = warnings.showwarning, set()

    def once(message: Warning | str, *args: Any, **kwargs: Any) -> None:
        if str(message) not in seen:
            seen.add(str(message))
            note(message, *args, **kwargs)

    warnings.showwarning = once
    try:
        yield
    finally:
        warnings.showwarning = previous


def certify_unlabelled(
    scores: pd.DataFrame, alpha: float, score: str = "scur", verdict: str = "majority"
) -> tuple[pd.DataFrame, list[str]]:
    """Certified decisions on the unlabelled items, calibrated on the labelled ones.

    The labelled items (``gold`` given) are SCOPE's calibration set and every other scored item
    is decided by :func:`judgerisk.engine.certified.select_items`: accepted when its risk is at most
    the threshold :math:`\\hat\\lambda`, abstained on otherwise. On exchangeable items the mean
    false discovery proportion over calibration draws (the share of wrong verdicts among the
    accepted ones, 0 when none is accepted) is at most α ("SCOPE: Selective Conformal
    Optimized Pairwise Evaluation", §2.3; the book's chapter "Certified panel decisions").

    Returns
    -------
    decisions : pandas.DataFrame
        :func:`~judgerisk.engine.certified.select_items`' table (``attrs`` hold the threshold).
    notes : list of str
        Its warnings (e.g. no feasible threshold), as sentences for the report.
    """
    from judgerisk.engine.certified import select_items

    labelled = scores["gold"].notna()
    calibration = pd.DataFrame({"item": scores.index[labelled], "gold": scores["gold"][labelled]})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        decisions = select_items(scores, calibration, alpha=alpha, score=score, verdict=verdict)
    return decisions, [note_text(w.message) for w in caught]


def certification_check(
    panel: pd.DataFrame,
    scores: pd.DataFrame,
    alpha: float,
    n_splits: int,
    aggregators: Iterable[str] | None = None,
    certified_scores: Iterable[str] | None = None,
) -> pd.DataFrame:
    """The report's check of its certified decisions on the labelled items, one row per split.

    :func:`judgerisk.engine.certified.certify_panel` at every α of
    :data:`judgerisk.selective.protocol.ALPHAS` and ``alpha``, over ``n_splits`` random
    calibration/test halves of the labelled items, for the certified verdict (the first of the
    reported ``aggregators``) and the certified risk scores that ``scores`` holds
    (``certified_scores``; ``None``: :data:`judgerisk.risk.registry.CERTIFIED`). The mean
    test FDP over the splits is at most α on exchangeable items (SCOPE, §2.3; the book's
    chapter "Certified panel decisions").
    """
    from judgerisk.aggregators._base import reported_aggregators
    from judgerisk.engine.certified import certify_panel
    from judgerisk.risk.registry import CERTIFIED
    from judgerisk.selective.protocol import ALPHAS

    verdict = reported_aggregators(None if aggregators is None else list(aggregators))[0]
    wanted = CERTIFIED if certified_scores is None else tuple(certified_scores)
    return certify_panel(
        panel,
        alphas=sorted(set(ALPHAS) | {float(alpha)}),
        n_splits=n_splits,
        scores=scores,
        verdict=verdict,
        panel_scores=[c for c in wanted if c in scores.columns],
    )


def certified_text(
    decisions: pd.DataFrame,
    scores: pd.DataFrame,
    score: str = "scur",
    who: str = "the majority verdict",
) -> str:
    """What :func:`certify_unlabelled` certified, in words, with the coverage paid.

    The threshold is printed with enough decimals to tell it from the closest scores on either
    side, and as the rank of the riskiest accepted item. ``who`` names the certified verdict
    (the one-judge report: "the judge's bidirectional verdict").
    """
    test = decisions[decisions["role"] == "test"]
    cal = decisions[decisions["role"] == "calibration"]
    alpha = float(decisions["alpha"].iloc[0])
    n_test, n_acc = len(test), int(test["accepted"].sum())
    head = (
        f"{len(cal)} items carry gold; they calibrate SCOPE at α = {alpha:g} "
        f"({who} is wrong on {int(cal['error'].sum())} of them). "
    )
    if not bool(decisions["feasible"].iloc[0]):
        return head + (
            f"No threshold meets the calibration condition, so none of the {n_test} unlabelled "
            "verdicts is certified: label more items, or allow a larger α."
        )
    lam = float(decisions["threshold"].iloc[0])
    risk = pd.to_numeric(scores[score], errors="coerce").dropna()
    bound = _bound_text(lam, risk, score)
    coverage = n_acc / n_test if n_test else float("nan")
    return head + (
        f"**{n_acc} of the {n_test} unlabelled verdicts are certified** (coverage "
        f"{coverage:.1%}): the mean false discovery proportion over calibration draws (the "
        "share of wrong verdicts among those accepted, averaged over draws of the labelled "
        f"items) is at most {alpha:.0%}. They are those with {bound}. "
        f"The other {n_test - n_acc} are abstained on: check them by hand, or label more items "
        "to calibrate a higher threshold."
    )


def certified_verdicts_html(
    accepted: pd.DataFrame, order: str = "least risky first", limit: int = 500
) -> str:
    """The certified verdicts as an HTML list: each verdict, its count and its items' ids.

    Built as escaped HTML, never Markdown (:mod:`judgerisk._plots.escape`): an item id is shown
    as the text it is, whatever it holds (``[c](javascript:...)``, ``<img onerror=...>``).
    At most ``limit`` ids per verdict are listed, then how many more.
    """
    rows = "".join(
        f"<li>verdict <strong>{html_text(v)}</strong> ({len(group)}): "
        f"{html_items(group['item'], limit)}</li>"
        for v, group in accepted.groupby("verdict")
    )
    return f"<p>The certified verdicts, {html_text(order)}:</p><ul class='{NO_MATH}'>{rows}</ul>"


def _bound_text(lam: float, risk: pd.Series, score: str) -> str:
    """The threshold as "≤ x": ``x`` rounded up, with the fewest decimals that keep every score
    above the threshold above ``x`` (so the sentence names exactly the accepted items)."""
    above = risk[risk > lam].min() if (risk > lam).any() else np.inf
    if not np.isfinite(lam):
        return f"{score.upper()} of any value"
    digits = risk_digits([lam, above] if np.isfinite(above) else [lam])
    x = math.ceil(lam * 10**digits) / 10**digits
    while x >= above and digits < 15:
        digits += 1
        x = math.ceil(lam * 10**digits) / 10**digits
    text = f"{score.upper()} ≤ {x:.{digits}f}"
    if digits > 6 and 0 <= lam <= 1:  # crowding at 1: the complement reads better
        text += f" (1 − {score.upper()} ≥ {format_complement(lam)})"
    return text


def auroc_standard_error(auc: float, n_errors: int, n_correct: int) -> float:
    """Hanley and McNeil's (1982) standard error of an AUROC from ``n_errors`` positives.

    :math:`SE^2 = [A(1-A) + (n_1 - 1)(Q_1 - A^2) + (n_0 - 1)(Q_2 - A^2)] / (n_1 n_0)`, with
    :math:`Q_1 = A/(2-A)`, :math:`Q_2 = 2A^2/(1+A)` (Hanley & McNeil, *Radiology* 143, 1982).
    """
    if n_errors < 1 or n_correct < 1 or not np.isfinite(auc):
        return float("nan")
    q1, q2 = auc / (2 - auc), 2 * auc**2 / (1 + auc)
    var = auc * (1 - auc) + (n_errors - 1) * (q1 - auc**2) + (n_correct - 1) * (q2 - auc**2)
    return math.sqrt(max(var, 0.0) / (n_errors * n_correct))


def small_sample_caution(
    n_labelled: int, n_errors: int, alpha: float, who: str = "the majority verdict"
) -> str | None:
    """A caution when the labelled items are too few for the report's AUROC and SCOPE tables.

    Drawn when fewer than :data:`MIN_LABELLED` items carry gold, or fewer than
    :data:`MIN_ERRORS` of them are errors (or correct). It gives the counts, the standard error
    of the AUROC of a score that ranks no better than chance (:func:`auroc_standard_error` at
    0.5: how far such a score's AUROC strays on this sample) and the calibration size SCOPE
    needs at α: with no error at all it accepts nothing below :math:`\\lceil 1/\\alpha \\rceil`
    calibration items.

    Returns
    -------
    str or None
        Markdown, or ``None`` when the sample is large enough.
    """
    n_correct = n_labelled - n_errors
    if n_labelled >= MIN_LABELLED and min(n_errors, n_correct) >= MIN_ERRORS:
        return None
    se = auroc_standard_error(0.5, n_errors, n_correct)
    auroc_part = (
        f"With {n_errors} error(s) and {n_correct} correct verdict(s), a score that ranks no "
        f"better than chance has an AUROC of 0.5 give or take {se:.2f} (one standard error, "
        "Hanley & McNeil, 1982): differences smaller than that in the ranking table mean "
        "nothing."
        if np.isfinite(se)
        else "With no error (or no correct verdict) among them, the AUROC is undefined."
    )
    need = math.ceil(1 / alpha)
    return (
        f"**Caution: small sample.** {n_labelled} item(s) carry gold and {who} "
        f"is wrong on {n_errors} of them. {auroc_part} SCOPE accepts nothing at α = {alpha:g} "
        f"until at least {need} calibration items are right, and the check below calibrates on "
        f"half of the {n_labelled}. The certificate still holds for the mean false discovery proportion over "
        "calibration draws, but with so few "
        "labels it varies a lot from one labelled sample to another: read the certified count "
        "and the tables below as an illustration, not as evidence, and label at least "
        f"{MIN_LABELLED} items, with at least {MIN_ERRORS} errors among them, before relying on "
        "them."
    )


def reproduce_html(provenance: dict | None) -> str:
    """The "Reproduce this report" section: command, input checksums, parameters, versions.

    Every string from the record is escaped, so a file name cannot inject markup.
    """
    esc = html.escape
    if provenance is None:
        return "<p>Run from the notebook itself: no command line to show.</p>"
    env = provenance["environment"]
    inputs = "".join(
        f"<li>{esc(str(role))}: <code>{esc(str(entry['path']))}</code>, sha256 "
        f"<code>{esc(str(entry['sha256']))}</code>, {esc(str(entry['rows']))} rows</li>"
        for role, entry in sorted(provenance["inputs"].items())
    )
    libs = ", ".join(f"{k} {v}" for k, v in sorted(env.items()) if v and k != "platform")
    version = provenance["judgerisk"]["version"]
    commit = provenance["judgerisk"].get("git_commit")
    params = ", ".join(f"{k}={v!r}" for k, v in sorted(provenance["parameters"].items()))
    return (
        "<p>This report was produced by</p>"
        f"<pre>{esc(provenance['command_text'])}</pre>"
        f"<p>with judgerisk {esc(str(version))}"
        f"{esc(f' (commit {commit[:12]})') if commit else ''}, "
        f"started {esc(str(provenance['started']))}.</p><p>Input:</p><ul>{inputs}</ul>"
        f"<p>Parameters: {esc(params)}.</p>"
        f"<p>Versions: {esc(libs)}; {esc(str(env['platform']))}.</p>"
        "<p>Run the same command to regenerate it, or <code>judgerisk verify REPORT.html</code> "
        "to check that it reproduces (the input's checksum, every score recomputed, and every "
        "word, number, figure and element of this page regenerated and compared).</p>"
    )
