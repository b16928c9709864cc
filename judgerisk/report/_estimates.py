"""The reports' "What a labelled slice buys" section and their certificate check, as HTML.

Both reports (the panel's and one judge's) show the three estimates of one quantity side by
side (the judge-only plug-in, the labelled items alone, and the prediction-powered ones:
:func:`judgerisk.engine.estimates.estimate_panel`), what the labels are worth, and the
command that plans the next labels; and before they certify, whether the labelled items'
risk scores are exchangeable with the others' (:func:`judgerisk.estimate.exchangeability.check_certificate`),
with the abstention floor. Item ids never enter this HTML; every number is formatted here.
"""

from __future__ import annotations

from html import escape

import numpy as np
import pandas as pd

from judgerisk.estimate.exchangeability import check_certificate, floor_sentence
from judgerisk.options import EXCHANGEABILITY

__all__ = ["certificate_check_html", "decisions_certificate", "labelled_slice_html"]

#: How each method reads in the reports.
METHOD_NAMES = {
    "judge": "judge-only (the panel's own estimate)",
    "labelled": "labelled items only",
    "ppi": "prediction-powered (PPI++)",
    "ppi_stratified": "prediction-powered, within risk strata",
    "ppi_multi": "prediction-powered, several proxies (cross-fitted)",
    "labelled_ipw": "labelled items only, weighted",
    "ppi_active": "prediction-powered, weighted (active)",
}


def decisions_certificate(decisions: pd.DataFrame, alpha: float, score: str = "scur") -> dict:
    """:func:`~judgerisk.estimate.exchangeability.check_certificate` of a
    :func:`~judgerisk.engine.certified.select_items` table (the settings of
    :data:`judgerisk.options.EXCHANGEABILITY`)."""
    x = EXCHANGEABILITY
    return check_certificate(
        decisions["score"],
        decisions["role"] == "calibration",
        decisions["error"],
        alpha,
        score,
        x.level,
        x.n_permutations,
        x.seed,
    )


def certificate_check_html(check: dict, alpha: float) -> str:
    """The check's verdict (a warning when the certificate does not apply) and the floor."""
    head = "Note" if check["applies"] else "The certificate does not apply"
    where = (
        ""
        if check["applies"]
        else (
            ' The histogram under "Per-item risk" shows the two distributions: the labelled '
            "items (right and wrong verdicts) against the unlabelled ones (no gold)."
        )
    )
    reason = check["reason"].removeprefix("the certificate does not apply: ")
    return (
        f"<p><strong>{head}:</strong> {escape(reason)}.{escape(where)}</p>"
        f"<p><strong>Abstention floor:</strong> {escape(floor_sentence(check, alpha))}.</p>"
    )


def labelled_slice_html(table: pd.DataFrame, quantity: str, command_panel: str = "PANEL") -> str:
    """The three estimates of ``quantity`` side by side, what the labels are worth, the plan.

    Parameters
    ----------
    table : pandas.DataFrame
        An :func:`~judgerisk.engine.estimates.estimate_panel` table.
    quantity : str
        The quantity shown (e.g. ``"accuracy:majority"``).
    command_panel : str
        The panel's name in the suggested command.
    """
    rows = table[table["quantity"] == quantity]
    if rows.empty:
        return f"<p>No estimate of {escape(quantity)}.</p>"
    level = float(rows["level"].iloc[0])
    n, big_n = int(rows["n_labelled"].iloc[0]), int(rows["n_unlabelled"].iloc[0])
    body = []
    for r in rows.itertuples():
        interval = (
            "no valid interval" if not np.isfinite(r.width) else (f"[{r.lower:.3f}, {r.upper:.3f}]")
        )
        worth = "" if not np.isfinite(r.effective_labels) else f"{r.effective_labels:.0f}"
        body.append(
            f"<tr><td>{escape(METHOD_NAMES.get(r.method, r.method))}</td>"
            f"<td>{r.estimate:.3f}</td><td>{interval}</td><td>{worth}</td></tr>"
        )
    head = (
        f"<tr><th>estimate of {escape(quantity)}</th><th>value</th>"
        f"<th>{level:.0%} interval</th><th>worth (labels)</th></tr>"
    )
    ppi = rows[rows["method"].isin(("ppi", "ppi_stratified", "ppi_multi", "ppi_active"))]
    best = ppi.loc[ppi["width"].idxmin()] if ppi["width"].notna().any() else None
    text = (
        f"<p>{n} labelled and {big_n} unlabelled items. The judge-only estimate reads the "
        "panel's own confidence and has no valid interval; the labelled items alone are "
        "unbiased but see only the slice; prediction-powered inference corrects the panel's "
        'estimate with the slice (book chapter "From risk to estimates").</p>'
    )
    if best is not None:
        text += (
            f"<p>The narrowest valid interval ({escape(METHOD_NAMES.get(best['method'], ''))}) "
            f"is {best['width_ratio']:.0%} of the labelled-only width: the predictions make the "
            f"{n} labels worth about {best['effective_labels']:.0f}.</p>"
        )
    plan = (
        f"<p>To choose the next labels by risk: <code>judgerisk estimate "
        f"{escape(command_panel)} --plan 100 -o plan.csv</code> (then label those items, add "
        f"their gold and run <code>judgerisk estimate {escape(command_panel)} --inclusion "
        "plan.csv -o estimates.csv</code>).</p>"
    )
    return f"{text}<table>{head}{''.join(body)}</table>{plan}"
