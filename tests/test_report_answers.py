"""The report answers "which verdicts can I trust?": readable risk, certified verdicts, notes.

Unit tests of :mod:`judgerisk.report._content`, then one report on a small, partly labelled panel
without a swap condition (the case that used to print a raw ``UserWarning`` with the kernel's
temporary path, full tables with no caution, and certify nothing).
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest

from judgerisk.engine.certified import select_items
from judgerisk.report._content import (
    MIN_ERRORS,
    MIN_LABELLED,
    auroc_standard_error,
    certified_text,
    certify_unlabelled,
    note_text,
    risk_digits,
    riskiest_table,
    small_sample_caution,
)


def test_risk_digits_separate_values_that_round_alike():
    assert risk_digits([0.1, 0.25, 0.9]) == 3
    assert risk_digits([0.99951, 0.99962, 0.99987]) == 4
    assert risk_digits([0.9999991, 0.9999993]) == 6  # capped: the table adds 1 - score
    assert risk_digits([1.0, 1.0, 0.5]) == 3  # equal values stay equal


def _scores(n: int = 50, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    risk = 1 - rng.uniform(0, 1, n) ** 4  # crowded near 1, as SCUR on a hard panel
    verdict = rng.choice(["A", "B"], n)
    wrong = rng.uniform(size=n) < risk * 0.3
    gold = np.where(wrong, np.where(verdict == "A", "B", "A"), verdict).astype(object)
    return pd.DataFrame(
        {"scur": risk, "majority": verdict, "gold": gold, "pe": risk / 2},
        index=pd.Index(range(n), name="item"),
    )


def test_riskiest_table_ranks_and_tells_the_top_items_apart():
    scores = _scores(200)
    table = riskiest_table(scores, 10, "scur", ["pe", "majority", "missing"])
    assert list(table.columns) == [
        "scur",
        "1 − scur",
        "rank (of 200)",
        "riskier than (%)",
        "pe",
        "majority",
    ]
    shown = table["scur"] + " " + table["1 − scur"]
    assert shown.is_unique, "the printed scores of the top items must differ"
    assert not table["scur"].is_unique, "this panel crowds at 1 (else 1 - scur is not needed)"
    assert list(table["rank (of 200)"]) == list(range(1, 11))
    top = scores["scur"].idxmax()
    assert table.index[0] == top
    assert table.loc[top, "riskier than (%)"] == pytest.approx(100 * 199 / 200, abs=0.05)
    printed = table["scur"].astype(float).to_numpy()
    assert np.allclose(printed, scores["scur"].sort_values(ascending=False).head(10), atol=1e-3)


def test_riskiest_table_ties_share_the_best_rank():
    scores = pd.DataFrame({"scur": [1.0, 1.0, 0.5, np.nan]}, index=pd.Index([3, 1, 2, 4]))
    table = riskiest_table(scores, 3)
    assert list(table["rank (of 3)"]) == [1, 1, 3]
    assert list(table["scur"]) == ["1.000", "1.000", "0.500"]
    assert "1 − scur" not in table.columns  # equal values are a tie, not crowding


def test_riskiest_table_tells_saturated_scores_apart():
    risk = [1 - 3e-15, 1 - 4e-14, 1 - 2e-9, 0.2]
    table = riskiest_table(pd.DataFrame({"scur": risk}), 4)
    assert list(table["scur"])[:3] == ["1.000000"] * 3
    assert list(table["1 − scur"]) == [f"{1 - r:.1e}" for r in risk]
    assert table["1 − scur"].is_unique


def test_note_text_is_a_sentence():
    assert note_text("the panel has no 'swap'  condition") == "The panel has no 'swap' condition."
    assert note_text("Done.") == "Done."


def test_certify_unlabelled_matches_select_items_and_says_so():
    scores = _scores(300, seed=1)
    scores.loc[scores.index[120:], "gold"] = None  # 120 labelled, 180 to decide
    decisions, notes = certify_unlabelled(scores, alpha=0.2)
    labelled = scores["gold"].notna()
    cal = pd.DataFrame({"item": scores.index[labelled], "gold": scores["gold"][labelled]})
    expected = select_items(scores, cal, alpha=0.2)
    pd.testing.assert_frame_equal(decisions, expected)
    assert notes == []
    text = certified_text(decisions, scores)
    n_acc = int(expected["accepted"].sum())
    assert f"{n_acc} of the 180 unlabelled verdicts are certified" in text
    assert f"coverage {n_acc / 180:.1%}" in text
    lam = float(expected["threshold"].iloc[0])
    printed = float(re.search(r"SCUR ≤ ([0-9]+\.[0-9]+)", text).group(1))
    risk = scores["scur"]
    assert risk[risk > lam].min() > printed >= risk[risk <= lam].max()


def test_infeasible_certificate_is_a_sentence_not_a_warning():
    scores = _scores(40, seed=2)
    scores["gold"] = np.where(scores["majority"] == "A", "B", "A")  # every verdict wrong
    scores.loc[scores.index[20:], "gold"] = None
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing escapes as a warning
        decisions, notes = certify_unlabelled(scores, alpha=0.1)
    assert not decisions["feasible"].iloc[0]
    assert notes and notes[0][0].isupper() and notes[0].endswith(".")
    assert "none of the 20 unlabelled verdicts is certified" in certified_text(decisions, scores)


def test_auroc_standard_error_matches_hanley_mcneil():
    # Hanley & McNeil (1982), Table 2 example: A = 0.8 with 50 positives and 50 negatives
    a, q1, q2 = 0.8, 0.8 / 1.2, 2 * 0.64 / 1.8
    expected = np.sqrt((a * (1 - a) + 49 * (q1 - a**2) + 49 * (q2 - a**2)) / 2500)
    assert auroc_standard_error(0.8, 50, 50) == pytest.approx(expected)
    assert auroc_standard_error(0.8, 1, 29) > 5 * auroc_standard_error(0.8, 50, 50)
    assert np.isnan(auroc_standard_error(0.8, 0, 30))


def test_small_sample_caution_gives_its_numbers():
    text = small_sample_caution(30, 1, 0.1)
    se = auroc_standard_error(0.5, 1, 29)
    assert se == pytest.approx(np.sqrt((0.25 + 28 * (0.5 / 1.5 - 0.25)) / 29))
    assert "30 item(s) carry gold" in text and "wrong on 1 of them" in text
    assert f"give or take {se:.2f}" in text and "at least 10 calibration items" in text
    assert small_sample_caution(MIN_LABELLED, MIN_ERRORS, 0.1) is None
    assert small_sample_caution(5000, MIN_ERRORS - 1, 0.1) is not None
    assert "undefined" in small_sample_caution(40, 0, 0.1)


def test_report_on_a_small_partly_labelled_panel(simulated_panel, tmp_path):
    from judgerisk.report.build import embedded_scores, render_report

    panel = simulated_panel(n_items=80, seed=5)
    panel = panel[~panel["condition"].str.startswith("swap")].copy()
    unlabelled = panel["item"] >= 40
    panel["gold"] = panel["gold"].astype(object)
    panel.loc[unlabelled, "gold"] = None
    path = tmp_path / "panel.csv"
    panel.to_csv(path, index=False)
    out = render_report(path, tmp_path / "report.html", parameters={"n_splits": 50})
    page = out.read_text(encoding="utf-8")
    # no raw warning: neither its category nor the kernel's temporary files
    without_input = page.replace(str(path), "PANEL").replace(str(tmp_path), "DIR")
    for raw in ("Warning", "UserWarning", "/tmp", "ipykernel", "judgerisk-report-"):
        assert raw not in without_input, f"{raw!r} in the report"
    assert re.search(r"<strong>Note:</strong> The panel has no \S{1,6}swap\S{1,6} condition", page)
    # the unlabelled verdicts are certified with the same numbers as judgerisk select
    scores = embedded_scores(out).set_index("item")
    decisions, _ = certify_unlabelled(scores, alpha=0.1)
    n_acc = int(decisions["accepted"].sum())
    assert f"{n_acc} of the 40 unlabelled verdicts are certified" in page
    # 40 labelled items: too few for the tables, and the page says so with its numbers
    n_err = int(decisions.loc[decisions["role"] == "calibration", "error"].sum())
    assert "Caution: small sample" in page
    assert f"40 item(s) carry gold and the majority verdict is wrong on {n_err} of them" in page
    assert "rank (of 80)" in page and "riskier than (%)" in page
    # a random slice: the certificate's check is a note, with the abstention floor
    assert "Abstention floor:" in page and "The certificate does not apply" not in page
    # what the slice buys: the estimates side by side and the plan command
    assert "What a labelled slice buys" in page and "prediction-powered (PPI++)" in page
    assert "--plan 100 -o plan.csv" in page
