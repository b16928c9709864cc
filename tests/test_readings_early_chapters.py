"""Chapters 1, 2, 3, 6 and A1, and chapter 7's takeaway, never say what their tables deny.

The same check as ``test_readings_follow_tables.py``, for the chapters it leaves out: each
chapter runs at the book's small parameters and at another parameter set (the rerun an
exercise asks for, or another seed), and every generated sentence that names a direction, a
winner or a count is read against the table or the interval printed beside it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from judgerisk._book.render import glued_values
from tests.test_readings_follow_tables import (
    _SENTENCE,
    _have_data,
    _interval,
    _run,
    _table,
    _tables,
    _text,
)

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"


def _chapter(
    name: str, other: str, others: dict, needs_data: bool = False, needs: tuple[str, ...] = ()
):
    """A module fixture: chapter ``name`` run at its small parameters, then (id ``other``)
    with ``others`` on top of them; it gives the executed notebook, its glued values and its
    tables. ``needs``: modules the chapter imports from an extra (skipped without them)."""

    @pytest.fixture(scope="module", params=["small", other])
    def chapter(request, tmp_path_factory):
        for module in needs:
            pytest.importorskip(module, reason=f"the chapter needs {module} (the extract extra)")
        if needs_data and not _have_data():
            pytest.skip("the public LLMBar data are not found ($JUDGERISK_DATA)")
        out = tmp_path_factory.mktemp(f"{name[:2]}_{request.param.replace(' ', '_')}")
        nb = _run(NOTEBOOKS / name, out, {} if request.param == "small" else others)
        return nb, glued_values(nb), _tables(nb)

    return chapter


def _rows(tables, header: list[str]) -> dict[str, list[str]]:
    """The table whose header row is ``header``, by the first cell of its rows."""
    table = next(t for t in tables if t[0] == header)
    return {r[0]: r for r in table[1:] if any(r[1:])}


def _side(low: float, high: float, reference: float) -> str:
    return "above" if low > reference else "below" if high < reference else "covers"


# --------------------------------------------------------------------------- chapter 1
# the second run: exercise 1.2's rerun
panels_chapter = _chapter(
    "01_simulated_panels.md", "three judges", {"n_judges": 3, "n_items": 500, "seed": 1}
)


def test_the_hidden_error_reading_is_the_overview(panels_chapter):
    _, glued, tables = panels_chapter
    overview = _table(tables, "value")
    hidden = int(overview["high-consensus errors"][1])
    judges = _table(tables, "sigma")
    accuracy = [float(r[1]) for r in judges.values()]
    reading = _text(glued, "ch01_hc_reading")
    assert f"right on {min(accuracy):.3f} to {max(accuracy):.3f} of the items" in reading
    assert f"the majority vote on {overview['majority accuracy'][1]}" in reading
    assert re.search(rf"\b{hidden} items? (is|are) high-consensus errors?", reading), reading
    assert ("not necessarily right" in reading) == (hidden > 0), reading


def test_the_mechanism_reading_is_its_intervals(panels_chapter):
    _, glued, tables = panels_chapter
    rows = _table(tables, "share of high-consensus errors")
    hidden = int(_table(tables, "value")["high-consensus errors"][1])
    reading = _text(glued, "ch01_mechanism_reading")
    if hidden == 0:
        assert reading.startswith("there is no high-consensus error"), reading
        return
    shares = {name: float(r[3]) for name, r in rows.items()}
    top = max(shares, key=lambda name: shares[name])
    assert f"most common among the {hidden} high-consensus errors is {top} (" in reading
    sides: dict[str, list[str]] = {"above": [], "below": [], "covers": []}
    for name, r in rows.items():
        low, high = _interval(r[4])
        sides[_side(low, high, float(r[1]))].append(name)
    for word, key in (("Over-represented", "above"), ("under-represented", "below")):
        listed = re.search(rf"{word}[^:]*: ([^;]+);", reading).group(1)
        assert listed == (", ".join(sides[key]) or "none"), (word, listed, rows)
    assert reading.endswith(f"not shown to differ: {', '.join(sides['covers']) or 'none'}")


def test_the_consensus_wrong_solution_is_its_counts(panels_chapter):
    """Exercise 1.1's solution says "double" only as its exact ratio interval reads."""
    from scipy.stats import binomtest

    _, glued, _ = panels_chapter
    said = _text(glued, "ch01_ex11")
    x, y = map(
        int,
        re.search(
            r"gives (\d+) high-consensus errors and the doubled rate "
            r"[0-9.]+ gives (\d+)",
            said,
        ).groups(),
    )
    if x == 0:
        assert said.endswith("no ratio can be read"), said
        return
    ratio = float(re.search(r": ([0-9.]+) times as many", said).group(1))
    assert abs(ratio - y / x) <= 0.005, said
    exact = binomtest(y, x + y).proportion_ci(0.95, method="exact")
    low, high = exact.low / (1 - exact.low), exact.high / (1 - exact.high)
    assert f"interval [{low:.2f}, {high:.2f}]" in said, (said, low, high)
    word = {"above": "more than double", "below": "less than double"}
    assert f", {word.get(_side(low, high, 2.0), 'not shown to differ from double')}." in said
    x_cw, y_cw, x_rest, y_rest = map(
        int, re.search(r"Of them (\d+) and (\d+) .* items, (\d+) and (\d+) on", said).groups()
    )
    assert (x_cw + x_rest, y_cw + y_rest) == (x, y), said


# --------------------------------------------------------------------------- chapter 2
# about 35 s a run (a real 135M judge reads the live items); then two live items, more tiny
# items and another seed
extraction_chapter = _chapter(
    "02_extracting_logprobs.md",
    "more live items",
    {"n_items": 6, "n_live": 2, "seed": 1},
    needs_data=True,
    needs=("torch", "transformers"),
)


def test_the_live_items_are_counted_as_shown(extraction_chapter):
    _, glued, tables = extraction_chapter
    live = next(t for t in tables if t[0] == ["item", "subset", "gold"])[1:]
    which = _text(glued, "ch02_live_which")
    subsets = re.search(r"of the (\d+) subsets", which) or re.search(r"each of the (\d+)", which)
    n_subsets = int(subsets.group(1))
    assert len({r[1] for r in live}) == len(live)  # one item per subset
    if len(live) < n_subsets:
        assert which.startswith(f"the shortest item of {len(live)} of the {n_subsets}"), which
    else:
        assert which.startswith("the shortest item of each"), which


def test_the_flip_pairs_are_the_tables(extraction_chapter):
    _, glued, tables = extraction_chapter
    flips = next(t for t in tables if t[0][:2] == ["family", "pair"])[1:]
    counts = {f: sum(r[0] == f for r in flips) for f in ("order", "rubric")}
    said = _text(glued, "ch02_flip_pairs")
    assert f"over the family's {counts['order']} and {counts['rubric']} pairs" in said, said


def test_the_position_readings_are_the_first_shown_interval(extraction_chapter):
    _, glued, tables = extraction_chapter
    rates = _table(tables, "chose the first-shown answer")
    pooled = sum(float(r[2]) for r in rates.values()) / len(rates)  # 419 prompts each
    low, high = _interval(_text(glued, "ch02_first_ci"))
    assert low - 0.0005 <= pooled <= high + 0.0005, (pooled, low, high)
    side = _side(low, high, 0.5)
    first = _text(glued, "ch02_first_reading")
    order = _text(glued, "ch02_order_reading")
    if side == "above":
        assert first.endswith("reads first") and "the first answer" in order, (first, order)
    elif side == "below":
        assert first.endswith("reads second") and "the second answer" in order, (first, order)
    else:
        assert "not shown" in first and "not shown" in order, (first, order)


def test_the_mass_readings_are_their_medians(extraction_chapter):
    _, glued, _ = extraction_chapter
    least = float(_text(glued, "ch02_mass_v2_full_min"))
    assert _text(glued, "ch02_mass_reading").startswith(
        "with the prefill the judge puts nearly all" if least >= 0.9 else "even with"
    )
    warning = _text(glued, "ch02_tiny_warning")
    quoted = re.search(r"\(median ([0-9.e+-]+);", warning).group(1)
    assert f"{float(_text(glued, 'ch02_tiny_mass')):.3g}" == quoted, (warning, quoted)


# --------------------------------------------------------------------------- chapter 3
# the second run: exercise 3.1's rerun
lmm_chapter = _chapter("03_latent_measurement_model.md", "500 items", {"n_items": 500, "seed": 1})


def test_the_residual_reading_is_the_scale_table(lmm_chapter):
    _, glued, tables = lmm_chapter
    rows = _table(tables, "simulator's σ_j")
    fitted, plain, true = ([float(r[k]) for r in rows.values()] for k in (1, 2, 3))
    above = sum(f > t for f, t in zip(fitted, true, strict=True))
    closer = sum(abs(p - t) < abs(f - t) for f, p, t in zip(fitted, plain, true, strict=True))
    reading = _text(glued, "ch03_sigma_reading")
    n = len(rows)
    assert f"above the simulator's noise sd for {above} of the {n} judges" in reading
    assert f"closer to the simulator's value for {closer} of the {n} judges" in reading
    assert ("carries the mechanisms" in reading) == (2 * closer > n), reading


# --------------------------------------------------------------------------- chapter 6
# the second run: another seed and panel size
matched_chapter = _chapter("06_matched_votes.md", "other", {"seed": 3, "n_items": 400})


def _sentences(nb) -> list[re.Match]:
    """The comparison sentences the notebook printed (chapter 5's form)."""
    markdown = [
        "".join(o["data"]["text/markdown"])
        for c in nb.cells
        for o in c.get("outputs", [])
        if "text/markdown" in o.get("data", {})
    ]
    return [m for text in markdown for m in _SENTENCE.finditer(text)]


def test_the_matched_sentences_are_their_intervals(matched_chapter):
    nb, _, tables = matched_chapter
    sentences = _sentences(nb)
    table = next(t for t in tables if t and any("[" in c for r in t[1:] for c in r[1:]))
    header, rows = table[0], {r[0]: r for r in table[1:]}
    assert [s["subset"] for s in sentences] == header[1:]
    for found in sentences:
        column = header.index(found["subset"])
        cells = {name: _interval(row[column]) for name, row in rows.items()}
        sides = [_side(lo, hi, 0.0) for lo, hi in cells.values()]
        assert found["ci"] == rows[found["other"]][column], found.group(0)
        verb = {"above": "beats", "below": "trails", "covers": "ties with"}
        assert found["verb"] == verb[_side(*cells[found["other"]], 0.0)], found.group(0)
        assert (int(found["beats"]), int(found["trails"])) == (
            sides.count("above"),
            sides.count("below"),
        )


def test_the_ds_reading_is_its_matched_difference(matched_chapter):
    nb, glued, tables = matched_chapter
    sentences = _sentences(nb)
    table = next(t for t in tables if t and any("[" in c for r in t[1:] for c in r[1:]))
    column = table[0].index("matched vote patterns")
    diff = float(next(r for r in table[1:] if r[0] == "DS entropy")[column].split(" ")[0])
    matched = next(s for s in sentences if s["subset"] == "matched vote patterns")
    scur = float(re.search(r"SCUR ([0-9.]+)", matched.group(0)).group(1))
    reading = _text(glued, "ch06_ds_reading")
    if reading.startswith("stays at exactly 0.5"):
        assert abs(scur - diff - 0.5) <= 0.0011, (scur, diff)
    else:
        said = float(re.match(r"is ([0-9.]+),", reading).group(1))
        assert abs(said - (scur - diff)) <= 0.0011, (said, scur, diff)


# --------------------------------------------------------------------------- appendix A1
# the second run: exercise A1.1's rerun (another seed), on more items
numerics_chapter = _chapter("A1_lmm_numerics.md", "other", {"n_items": 400, "seed": 1})


def test_the_solver_readings_are_their_numbers(numerics_chapter):
    _, glued, tables = numerics_chapter
    solvers = _rows(tables, ["", "F", "criterion", "sweeps"])
    plain, fast = int(solvers["plain sweeps"][3]), int(solvers["Anderson"][3])
    fewer = _text(glued, "a1_fewer")
    if plain / fast >= 2:
        assert fewer.endswith(f"needs {plain / fast:.0f} times fewer sweeps than the plain one")
    else:
        assert "not shown to need fewer" in fewer, fewer
    same = float(_text(glued, "a1_mu_diff")) < 1e-3
    assert _text(glued, "a1_same_fit").startswith("below" if same else "not below")


def test_the_drift_readings_are_their_numbers(numerics_chapter):
    _, glued, _ = numerics_chapter

    def value(key: str) -> float:
        return float(_text(glued, f"a1_drift_{key}"))

    still = value("rel_10") > 1e-7
    assert ("end the budget without meeting it" in _text(glued, "a1_budget_reading")) == still
    assert _text(glued, "a1_still_moving").startswith("The rule is right" if still else "Here")
    farther = value("offset_10") / value("offset_full")
    said = _text(glued, "a1_farther")
    if farther >= 2:
        assert f"{farther:.0f} times farther" in said, said
    else:
        assert "do not leave" in said, said


def test_the_restart_verdict_is_the_restart_table(numerics_chapter):
    _, glued, tables = numerics_chapter
    header = ["", "converged", "max sweeps", "largest |Δp̂|", "criterion range"]
    same = all(float(r[3]) < 1e-3 for r in _rows(tables, header).values())
    assert _text(glued, "a1_restart_verdict").startswith("never" if same else "do find")
    assert _text(glued, "a1_restart_takeaway").startswith(
        "Restarts end at the same fit" if same else "Restarts do not always"
    )


def test_the_missing_cells_solution_is_its_fit(numerics_chapter):
    """Exercise A1.2's solution calls the two fits the same only below the appendix's 1e-3."""
    _, glued, _ = numerics_chapter
    said = _text(glued, "a1_ex12")
    rule = r"(met the stopping rule|stopped without meeting the stopping rule) after \d+ sweeps"
    assert len(re.findall(rule, said)) == 2, said
    diff, word = re.search(r"margins is ([0-9.e+-]+) logits, (below|not below) the", said).groups()
    if f"{1e-3:.1e}" != diff:  # a printed 1.0e-03 may lie on either side
        assert word == ("below" if float(diff) < 1e-3 else "not below"), said


# --------------------------------------------------------------------------- chapter 7
@pytest.mark.parametrize("seed", [0, 3])
def test_the_retention_takeaway_is_the_paired_interval(tmp_path, seed):
    """Chapter 7's takeaway on LLMBar quotes and reads the section's paired interval."""
    if not _have_data():
        pytest.skip("the public LLMBar data are not found ($JUDGERISK_DATA)")
    nb = _run(
        NOTEBOOKS / "07_aggregators_retention.md", tmp_path, {"real_data": True, "seed": seed}
    )
    glued = glued_values(nb)
    best, takeaway = _text(glued, "ch07_best_vs_rule"), _text(glued, "ch07_takeaway_best")
    ci = re.search(r"[-+][0-9.]+ \[[-+0-9., ]+\]", best).group(0)
    assert ci in takeaway, (best, takeaway)
    low, high = _interval(ci)
    if low > 0:
        assert re.search(r"best single judge \(.+\) is more accurate", takeaway), takeaway
    elif high < 0:
        assert re.search(r"best rule \(.+\) is more accurate", takeaway), takeaway
    else:
        assert "not shown to differ" in takeaway, takeaway
    _check_spammer_solutions(glued)


def _check_spammer_solutions(glued: dict) -> None:
    """Solutions 7.1 and 7.2 read their own counts and weights."""
    said = _text(glued, "ch07_ex71")
    share = r"(\d+) of (\d+) .*?\(([0-9.]+)%, interval \[([0-9.]+)%, ([0-9.]+)%\]\)"
    (k0, n0, s0, lo0, hi0), (k1, n1, s1, lo1, hi1) = re.findall(share, said)
    for k, n, s, lo, hi in ((k0, n0, s0, lo0, hi0), (k1, n1, s1, lo1, hi1)):
        assert f"{int(k) / int(n):.1%}" == f"{s}%" and float(lo) <= float(s) <= float(hi)
    more, fewer = float(lo1) > float(hi0), float(hi1) < float(lo0)  # one more spammer: 1
    word = "more" if more else "fewer" if fewer else "not shown to differ"
    assert said.split("): ")[-1].startswith(word), said
    said = _text(glued, "ch07_ex72")
    least, last, reading = re.search(
        r"is (\S+)'s \([0-9.]+\) and the last judge, a spammer, is (\S+): (.+)$", said
    ).groups()
    assert reading == ("the same judge" if least == last else "not the same judge"), said
    assert "the last one" in _text(glued, "ch07_spammers")


def test_a_run_without_spammers_says_there_is_none(tmp_path):
    """``--param n_spammers=0`` (the chapter invites it): no sentence looks for a spammer."""
    params = {"n_spammers": 0, "n_items": 300, "n_seeds": 2, "n_boot": 200, "real_data": False}
    glued = glued_values(_run(NOTEBOOKS / "07_aggregators_retention.md", tmp_path, params))
    assert "no judge that ignores the item" in _text(glued, "ch07_spammers")
    said = _text(glued, "ch07_ex72")
    assert "simulates no spammer" in said and "same judge" not in said, said
    assert "with 0 spammers" in _text(glued, "ch07_ex71")


def test_share_interval_is_the_exact_binomial_interval():
    from scipy.stats import binomtest

    from judgerisk._book.studies.shares import share_interval

    for k, n in ((0, 7), (3, 7), (7, 7), (26, 300), (299, 300)):
        exact = binomtest(k, n).proportion_ci(0.95, method="exact")
        assert share_interval(k, n) == pytest.approx((exact.low, exact.high), abs=1e-9), (k, n)
    with pytest.raises(ValueError, match="0 <= k <= n"):
        share_interval(8, 7)
