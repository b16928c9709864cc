"""A chapter rerun at other parameters never says what its own table contradicts.

The conclusion once said "no threshold can accept them at α = 0.20" under a table where
that judge's BPE accepted 28.4 %: the sentence compared the pooled error rate with α while
SCOPE decides split by split. Each test here runs a chapter at two parameter sets (the
book's small ones, then those an exercise asks for) and reads every generated sentence
against the table printed beside it.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import nbformat
import pytest

from judgerisk._book import runbook
from judgerisk._book.render import glued_values
from judgerisk.datasets import available, data_root

ROOT = Path(__file__).resolve().parents[1]
CONCLUSION = ROOT / "notebooks" / "15_conclusion.md"


def _have_data() -> bool:
    root = data_root(None, required=False)
    return bool(root) and available("llmbar", root) and available("judgebench", root)


def _tables(nb) -> list[list[list[str]]]:
    """Every HTML table of the executed notebook, as rows of cell texts."""
    found = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            page = out.get("data", {}).get("text/html")
            if not page:
                continue
            page = "".join(page) if isinstance(page, list) else page
            page = re.sub(r"<style.*?</style>", "", page, flags=re.S)
            rows = [
                [
                    html.unescape(re.sub(r"<[^>]+>", "", c)).strip()
                    for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", r, flags=re.S)
                ]
                for r in re.findall(r"<tr.*?</tr>", page, flags=re.S)
            ]
            found.append(rows)
    return found


def _text(glued: dict, key: str) -> str:
    data = glued[key]
    return str(data.get("text/markdown") or data.get("text/plain"))


def _share(text: str) -> float:
    """``"28.4 %"`` -> 0.284; ``"none"`` -> 0.0."""
    return 0.0 if text.strip() == "none" else float(text.strip().rstrip(" %")) / 100


def _run(chapter: Path, out: Path, parameters: dict):
    """The chapter executed at its small parameters updated by ``parameters``."""
    path, _ = runbook.execute(chapter, out, profile="small", parameters=parameters)
    return nbformat.read(path, as_version=4)


@pytest.fixture(scope="module", params=[0.10, 0.20], ids=["alpha=0.10", "alpha=0.20"])
def conclusion(request, tmp_path_factory):
    if not _have_data():
        pytest.skip("the public LLMBar and JudgeBench data are not found ($JUDGERISK_DATA)")
    out = tmp_path_factory.mktemp(f"conclusion_{request.param}")
    nb = _run(CONCLUSION, out, {"alpha": request.param})
    certified = next(t for t in _tables(nb) if t and "guarantee met (α + 4 s.e.)" in t[0])
    rows = {(r[0], r[1].split(" (")[0]): r for r in certified[1:]}
    summary = next(t for t in _tables(nb) if t and "strongest baseline" in t[0])
    return request.param, glued_values(nb), rows, {r[0]: r for r in summary[1:]}


def test_the_bpe_reading_follows_the_split_by_split_table(conclusion):
    alpha, glued, rows, _ = conclusion
    table_share = float(rows[("LLMBar", "BPE")][2])
    reading = _text(glued, "ch15_two_reading")
    if table_share < 0.0005:
        assert "on none of the" in reading, reading
    else:
        assert "on none of the" not in reading, reading  # F1: the table accepts some
        found = re.search(r"accepted share of ([0-9.]+ %)", reading)
        assert found and abs(_share(found.group(1)) - table_share) <= 0.0006, reading
    assert f"α = {alpha:.2f}" in reading


def test_the_accepted_shares_in_the_prose_are_the_tables(conclusion):
    _, glued, rows, _ = conclusion
    for name in ("LLMBar", "JudgeBench"):
        key = name.lower()
        for score, suffix in (("SCUR", "coverage"), ("BPE", "bpe")):
            said = _share(_text(glued, f"ch15_{key}_cert_{suffix}"))
            assert abs(said - float(rows[(name, score)][2])) <= 0.0006, (name, score)


def test_the_verdict_words_are_the_tables(conclusion):
    _, glued, _, summary = conclusion
    for name in ("simulated", "LLMBar", "JudgeBench"):
        assert _text(glued, f"ch15_{name.lower()}_verdict") == summary[name][4]
    takeaway = _text(glued, "ch15_real_headline")
    for name in ("LLMBar", "JudgeBench"):
        assert f"{summary[name][4]} {summary[name][2]} on {name}" in takeaway


# --------------------------------------------------------------------------- chapter 12
FAMILIES = ROOT / "notebooks" / "12_perturbation_families.md"


def _interval(text: str) -> tuple[float, float]:
    """``"... [0.525, 0.595] ..."`` -> (0.525, 0.595): the first interval in the text."""
    found = re.search(r"\[([-+0-9.]+), ([-+0-9.]+)\]", text)
    assert found, text
    return float(found.group(1)), float(found.group(2))


@pytest.fixture(scope="module", params=["shipped", "own"])
def families(request, tmp_path_factory):
    """Chapter 12 at the book's small parameters on the shipped judge, then on a one-judge
    panel of a learner's own (exercise 12.3's ``panel_path``), with other seeds and levels."""
    from judgerisk.simulate import simulate_panel

    out = tmp_path_factory.mktemp(f"families_{request.param}")
    parameters: dict = {}
    if request.param == "own":
        conditions = ("original", "swap", "rubric1", "swap_rubric1", "label1", "swap_label1")
        own = simulate_panel(
            n_items=200, n_judges=1, seed=4, conditions=(*conditions, "verbosity1", "verbosity2")
        ).data
        own.to_csv(out / "mine.csv", index=False)
        parameters = {"panel_path": str(out / "mine.csv"), "seed": 3, "levels": [2.0, 8.0]}
    nb = _run(FAMILIES, out, parameters)
    return request.param, glued_values(nb), _tables(nb)


def _table(tables, header: str) -> dict[str, list[str]]:
    rows = next(t for t in tables if any(header in c for c in t[0]))
    return {r[0]: r for r in rows[1:] if len(r) > 1 and any(r[1:])}  # not the index's header


def test_the_lean_readings_are_the_position_table(families):
    _, glued, tables = families
    rows = _table(tables, "verdicts for the first answer")
    for key, label in (("ch12_lean_ab", "A/B"), ("ch12_label_reading", "1/2")):
        reading = _text(glued, key)
        low, high = _interval(reading)
        assert (f"{low:.3f}", f"{high:.3f}") == tuple(rows[label][5].strip("[]").split(", "))
        word = (
            "leans to the first"
            if low > 0.5
            else "leans to the second"
            if high < 0.5
            else "shows no lean"
        )
        assert reading.startswith(word), reading


def test_the_padding_reading_is_the_padding_table(families):
    _, glued, tables = families
    rows = _table(tables, "mean change of P(padded wins)")
    intervals = [_interval(r[4]) for r in rows.values()]
    reading = _text(glued, "ch12_pad_reading")
    sides = {1 if lo > 0 else -1 if hi < 0 else 0 for lo, hi in intervals}
    if 0 in sides:
        assert reading.startswith("not both separated from 0"), reading
    elif sides == {1}:
        assert reading.startswith("both towards"), reading
    elif sides == {-1}:
        assert reading.startswith("both away"), reading
    else:
        assert reading.startswith("of opposite signs"), reading


def test_the_best_family_reading_is_the_auroc_table(families):
    _, glued, tables = families
    rows = _table(tables, "vs S (order + rubric)")
    combined = ("S (order + rubric)", "S (all families)")
    fam = {k: v for k, v in rows.items() if k.startswith("S (") and k not in combined}
    best = max(fam, key=lambda k: float(fam[k][1]))
    low, _ = _interval(fam[best][2])
    reading = _text(glued, "ch12_real_best_reading")
    assert best in reading
    assert ("lies above 0.5" in reading) == (low > 0.5), reading
    assert ("stands out" in reading) == (low <= 0.5), reading


def test_the_recovery_reading_is_its_own_intervals(families):
    _, glued, _ = families
    reading = _text(glued, "ch12_recovery_reading")
    ahead = reading.split(": ", 1)[1].split(". In ")[0]
    for part in ahead.split("; "):
        if part != "none.":
            assert _interval(part)[0] > 0, part
    for part in re.findall(r"interval covers zero.*?: (.*?)\.(?: In |$)", reading):
        for one in part.split("; "):
            low, high = _interval(one)
            assert low <= 0 <= high, one


def test_a_learners_panel_is_not_described_as_the_shipped_one(families):
    which, glued, _ = families
    limits = _text(glued, "ch12_limits")
    assert ("SmolLM2" in limits) == (which == "shipped"), limits
    assert _text(glued, "ch12_real_own") == str(which == "own")


SCOPE_CHAPTER = ROOT / "notebooks" / "09_scope_validity.md"


@pytest.fixture(scope="module", params=["small", "other"])
def scope_chapter(request, tmp_path_factory):
    """Chapter 9 at the book's small parameters, then as exercise 9.1 reruns it (the shipped
    single-judge file as ``pairs_path``) at another seed and other levels."""
    if not _have_data():
        pytest.skip("the public JudgeBench data are not found ($JUDGERISK_DATA)")
    out = tmp_path_factory.mktemp(f"scope_{request.param}")
    own = {"pairs_path": str(ROOT / "notebooks" / "data" / "my_judge.csv"), "seed": 5}
    parameters = {} if request.param == "small" else {**own, "alphas": [0.1, 0.2, 0.3]}
    nb = _run(SCOPE_CHAPTER, out, parameters)
    return glued_values(nb), _tables(nb)


def test_the_heuristic_reading_is_its_row_and_standard_error(scope_chapter):
    from judgerisk.selective.protocol import VALID_SE

    glued, tables = scope_chapter
    row = _table(tables, "pooled error rate")["Heuristic"]  # the α = 0.10 view
    mean, se = float(row[2]), float(row[3])
    reading = _text(glued, "ch09_heur_reading")
    if mean > 0.10 + VALID_SE * se:
        assert reading.startswith("above α"), (mean, se, reading)
    elif mean + VALID_SE * se < 0.10:
        assert reading.startswith("below α"), (mean, se, reading)
    else:
        assert reading.startswith("within"), (mean, se, reading)


def test_the_ratio_reading_lists_the_levels_its_intervals_put_above(scope_chapter):
    from judgerisk.selective.protocol import VALID_SE

    glued, tables = scope_chapter
    rows = {
        a: r
        for a, r in _table(tables, "pooled errors / accepted").items()
        if r[4] != "no verdict accepted"  # no ratio where no split accepted anything
    }
    above = []
    for alpha, row in rows.items():
        low, _ = _interval(row[4])
        if low > float(alpha) and float(row[1]) <= float(alpha) + VALID_SE * float(row[2]):
            above.append(float(alpha))
    reading = _text(glued, "ch09_ratio_reading")
    listed = re.search(r"\(α = ([0-9., ]+)\)", reading)
    if above:
        assert listed, reading
        assert [float(a) for a in listed.group(1).split(", ")] == above, reading
    else:
        assert listed is None, reading
        if not any(_interval(r[4])[0] > float(a) for a, r in rows.items()):
            assert "does not lie above α at any" in reading, reading


BPE_CHAPTER = ROOT / "notebooks" / "08_bpe.md"


@pytest.fixture(scope="module", params=["small", "own"])
def bpe_chapter(request, tmp_path_factory):
    """Chapter 8 at the book's small parameters, then on the shipped single-judge file as a
    learner's ``pairs_path`` (exercise 8's rerun) at another seed."""
    if not _have_data():
        pytest.skip("the public JudgeBench data are not found ($JUDGERISK_DATA)")
    out = tmp_path_factory.mktemp(f"bpe_{request.param}")
    own = {"pairs_path": str(ROOT / "notebooks" / "data" / "my_judge.csv"), "seed": 2}
    parameters = {} if request.param == "small" else own
    nb = _run(BPE_CHAPTER, out, parameters)
    return glued_values(nb), _tables(nb)


def test_the_paired_readings_are_their_intervals(bpe_chapter):
    glued, tables = bpe_chapter
    rows = _table(tables, "BPE minus single pass")
    assert set(rows) == {"ECE", "AUROC"}
    verdict = _text(glued, "ch08_sim_verdict")
    for metric, row in rows.items():
        low, high = _interval(row[2])
        better, worse = (high < 0, low > 0) if row[1] == "lower" else (low > 0, high < 0)
        expected = "BPE better" if better else "single pass better" if worse else None
        assert row[3] == (expected or "no difference shown"), row
        clause = verdict.split(" and ")[0 if metric == "ECE" else 1]
        assert row[2] in clause, (row, verdict)  # the sentence quotes its own interval
        if expected is None:
            assert "not shown to differ" in clause, (row, verdict)
        else:
            assert ("better" if better else "worse") in clause, (row, verdict)


RETENTION_CHAPTER = ROOT / "notebooks" / "07_aggregators_retention.md"


@pytest.mark.parametrize("seed", [0, 3])
def test_the_retention_reading_follows_its_seed_range(tmp_path, seed):
    """Chapter 7's LLMBar retention sentence says "helps" only when every seed gains."""
    if not _have_data():
        pytest.skip("the public LLMBar data are not found ($JUDGERISK_DATA)")
    parameters = {"real_data": True, "seed": seed}
    glued = glued_values(_run(RETENTION_CHAPTER, tmp_path, parameters))
    text = _text(glued, "ch07_retention_text")
    best = _text(glued, "ch07_best_vs_rule")
    low, high = _interval(best)
    if low > 0:
        assert "is more accurate than the best aggregation rule" in best, best
        _check_blind_spot(best)
    elif high < 0:
        assert best.startswith("the best aggregation rule"), best
    else:
        assert "not shown to differ" in best and "together" not in best, best
    ranges = [
        (float(lo), float(hi)) for lo, hi in re.findall(r"from ([-+0-9.]+) to ([-+0-9.]+)", text)
    ]
    assert len(ranges) == 2, text
    if all(lo > 0 for lo, _ in ranges):
        assert text.startswith("Retention helps"), text
    elif all(hi < 0 for _, hi in ranges):
        assert text.startswith("Retention lowers"), text
    else:
        assert text.startswith("Retention is not shown to help"), text
    assert "because" not in text  # no cause that the page does not compute


def _check_blind_spot(best: str) -> None:
    """The "beats" reading's cause is its own counts: the discordant items give the paired
    difference, and "the other judges make together" is read from the printed interval."""
    n_seen = int(re.search(r"paired over the (\d+) items", best).group(1))
    discordant = r"wrong on (\d+) items and wrong where it is right on (\d+)"
    only, reverse = map(int, re.search(discordant, best).groups())
    diff = float(best.split(" by ")[1].split(" ")[0])
    assert abs(diff - (only - reverse) / n_seen) <= 0.0011, best  # discrete verdicts
    most, of = map(int, re.search(r"on (\d+) of those (\d+) items most", best).groups())
    assert of == only, best
    s_low, s_high = map(float, re.search(r"interval \[([0-9.]+), ([0-9.]+)\]", best).groups())
    assert s_low <= most / of <= s_high, best
    if s_low > 0.5:
        assert best.endswith("the other judges make together, and the rule sides with them")
    elif s_high < 0.5:
        assert best.endswith("mostly not ones the other judges make together"), best
    else:
        assert best.endswith("is not shown"), best


HC_CHAPTER = ROOT / "notebooks" / "05_high_consensus.md"
_SENTENCE = re.compile(
    r"- (?P<subset>[a-z ]+) \(\d+ items, \d+ errors\): SCUR [0-9.]+ (?P<verb>beats|ties with|"
    r"trails) the strongest other score, (?P<other>.+?) [0-9.]+, difference (?P<ci>\S+ \[\S+, "
    r"\S+\]); it beats (?P<beats>\d+) and trails (?P<trails>\d+) of the (?P<n>\d+) scores"
)


@pytest.fixture(scope="module", params=["small", "other"])
def consensus_chapter(request, tmp_path_factory):
    """Chapter 5 at the book's small parameters, then at another seed and panel size."""
    out = tmp_path_factory.mktemp(f"consensus_{request.param}")
    parameters = {} if request.param == "small" else {"seed": 4, "n_items": 250}
    nb = _run(HC_CHAPTER, out, parameters)
    markdown = [
        "".join(o["data"]["text/markdown"])
        for c in nb.cells
        for o in c.get("outputs", [])
        if "text/markdown" in o.get("data", {})
    ]
    sentences = [m for text in markdown for m in _SENTENCE.finditer(text)]
    return glued_values(nb), _tables(nb), sentences


def _verb(low: float, high: float) -> str:
    return "beats" if low > 0 else "trails" if high < 0 else "ties with"


def test_each_comparison_sentence_is_its_column_of_intervals(consensus_chapter):
    glued, tables, sentences = consensus_chapter
    table = next(t for t in tables if t and any("[" in c for r in t[1:] for c in r[1:]))
    header, rows = table[0], {r[0]: r for r in table[1:]}
    assert len(sentences) == len(header) - 1  # one sentence per subset
    for found in sentences:
        column = header.index(found["subset"])
        cells = {name: _interval(row[column]) for name, row in rows.items()}
        verbs = [_verb(*ci) for ci in cells.values()]
        assert found["ci"] == rows[found["other"]][column], found.group(0)
        assert found["verb"] == _verb(*cells[found["other"]]), found.group(0)
        assert int(found["beats"]) == verbs.count("beats"), found.group(0)
        assert int(found["trails"]) == verbs.count("trails"), found.group(0)
        assert int(found["n"]) == len(cells)
        # the strongest other score: the smallest difference of the column
        diffs = {name: float(row[column].split(" ")[0]) for name, row in rows.items()}
        assert diffs[found["other"]] == min(diffs.values()), found.group(0)
    hc = next(f for f in sentences if f["subset"] == "high vote consensus")
    assert _text(glued, "ch05_hc_verdict").strip("'") == hc["verb"]
    assert _text(glued, "ch05_hc_diff").strip("'") == hc["ci"]


DECISIONS_CHAPTER = ROOT / "notebooks" / "11_certified_panel_decisions.md"


@pytest.fixture(scope="module", params=["small", "other"])
def decisions_chapter(request, tmp_path_factory):
    """Chapter 11 at the book's small parameters, then at another seed with fewer splits."""
    out = tmp_path_factory.mktemp(f"decisions_{request.param}")
    parameters = {} if request.param == "small" else {"seed": 2, "n_splits": 300}
    nb = _run(DECISIONS_CHAPTER, out, parameters)
    return glued_values(nb), _tables(nb)


def test_the_naive_reading_is_the_naive_table(decisions_chapter):
    from judgerisk.selective.protocol import VALID_SE

    glued, tables = decisions_chapter
    table = next(t for t in tables if t and len(t[0]) == 5 and "s.e. of the mean" in t[0])
    over, levels, score = [], 0, None
    for row in table[2:]:
        score = row[0] if not row[0].startswith("0.") else score
        cells = row[1:] if row[0] == score else row
        if score != "SCUR (panel)":
            continue
        alpha, risk, se = float(cells[0]), float(cells[2]), float(cells[3])
        levels += 1
        if risk > alpha + VALID_SE * se:
            over.append(risk - alpha)
    reading = _text(glued, "ch11_naive_reading")
    assert f"of the {levels} levels" in reading
    if over:
        assert reading.startswith(f"exceeds α + {VALID_SE:.0f} s.e."), reading
        assert f"at {len(over)} of the {levels} levels" in reading, (over, reading)
    else:
        assert reading.startswith("does not exceed"), reading


def test_paired_accuracy_difference_is_the_difference_of_the_shares():
    import numpy as np

    from judgerisk._book.studies.paired import paired_accuracy_difference

    rng = np.random.default_rng(0)
    a = (rng.random(300) < 0.8).astype(float)
    b = np.where(rng.random(300) < 0.9, a, 1 - a)  # b agrees with a on most items
    b[:5] = 0.5  # ties count half
    d, lo, hi = paired_accuracy_difference(a, b, n_boot=500)
    assert d == pytest.approx(a.mean() - b.mean())
    assert lo <= d <= hi
    assert paired_accuracy_difference(a, a, n_boot=50) == (0.0, 0.0, 0.0)
    with pytest.raises(ValueError, match="same items"):
        paired_accuracy_difference(a, b[:10])
    with pytest.raises(ValueError, match="no NaN"):
        paired_accuracy_difference(a, np.full(300, 2.0))


SIGNALS_CHAPTER = ROOT / "notebooks" / "04_scur_signals.md"


@pytest.mark.parametrize("seed", [0, 3])
def test_the_carrier_reading_is_its_row_of_the_ablation(tmp_path, seed):
    """Chapter 4's "which signal carries SCUR on real data" against the ablation intervals."""
    if not _have_data():
        pytest.skip("the public LLMBar data are not found ($JUDGERISK_DATA)")
    nb = _run(SIGNALS_CHAPTER, tmp_path, {"seed": seed})
    glued = glued_values(nb)
    table = next(t for t in _tables(nb) if len(t) > 1 and t[1][:2] == ["", "method"])
    column = table[0].index("all evaluation items")
    rows, dataset = {}, None
    for row in table[2:]:
        if len(row) == len(table[0]):  # a data set's first row names it
            dataset, row = row[0], row[1:]
        rows[(dataset, row[0])] = row[column - 1]
    real = _text(glued, "ch04_real")
    pairs = {s: "+".join(x for x in "UCS" if x != s) for s in "UCS"}
    costs = {s: _interval(rows[(real, p)]) for s, p in pairs.items() if (real, p) in rows}
    diffs = {s: float(rows[(real, pairs[s])].split(" ")[0]) for s in costs}
    carrier = _text(glued, "ch04_carrier")
    assert diffs[carrier] == min(diffs.values()), (carrier, diffs)  # removing it costs the most
    assert _text(glued, "ch04_carrier_cost") == rows[(real, pairs[carrier])]
    verdict = _text(glued, "ch04_carrier_verdict")
    if costs[carrier][1] < 0:  # U+C+S beats the pair without the carrier
        assert verdict.startswith("a gain the interval confirms"), verdict
    else:
        assert "includes no gain" in verdict, verdict
