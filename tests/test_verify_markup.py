"""``judgerisk verify`` compares what a reader sees, markup included (issue 33, item 3).

It caught edited text, numbers, figures, records and the csv, but four markup tamperings gave
"reproduced": a script that rewrites the numbers on load, a style rule that hides a cell and
shows another value, a ``hidden`` attribute on a table, an invisible link over the whole page.
And a csv read back with type inference gave a false "differs" on a correct ``import`` output
whose text columns hold ``"0089"`` or ``"None"``.
"""

from __future__ import annotations

import json
import re

import pytest

from judgerisk.cli import EXIT_DIFFERS, EXIT_OK, main
from judgerisk.cli.verify import ATOL, RTOL, compare_csv
from judgerisk.report._check import compare_visible, page_markup


@pytest.fixture(scope="module")
def report_page(tmp_path_factory, simulated_panel):
    from judgerisk.report.build import render_report

    folder = tmp_path_factory.mktemp("report")
    panel = simulated_panel(n_items=90, n_judges=4, seed=5)
    panel["gold"] = panel["gold"].where(panel["item"] % 2 == 0)
    src = folder / "panel.csv"
    panel.to_csv(src, index=False)
    out = render_report(src, folder / "report.html", parameters={"n_splits": 20, "n_seeds": 1})
    return out


def _script(page: str) -> str:
    js = "document.querySelectorAll('td').forEach(c => { c.textContent = '0.001'; });"
    return page.replace("</body>", f"<script>{js}</script></body>", 1)


def _style(page: str) -> str:
    # hide the first data cell and show another value in its place
    rule = "td.data.row0.col0{font-size:0} td.data.row0.col0::after{content:'0.999';font-size:1rem}"
    return page.replace("</style>", rule + "</style>", 1)


def _hidden(page: str) -> str:
    return page.replace("<table", "<table hidden", 1)


def _link(page: str) -> str:
    # no text of its own and a same-page target: no word changes and nothing is fetched
    link = '<a href="#" style="position:fixed;inset:0;opacity:0;z-index:9"></a>'
    return re.sub(r"<body>", "<body>" + link, page, count=1)


def _moved(page: str) -> str:
    """Two adjacent cells' text merged into the first: the same words, another table."""
    return re.sub(
        r"(<td[^>]*>)([^<]+)(</td>\s*<td[^>]*>)([^<]+)(</td>)", r"\1\2 \4\3\5", page, count=1
    )


TAMPERINGS = {"script": _script, "style": _style, "hidden": _hidden, "link": _link}


def test_the_page_markup_leaves_out_only_the_dynamic_parts(report_page):
    page = report_page.read_text(encoding="utf-8")
    tokens = page_markup(page)
    text = "\n".join(tokens)
    assert not re.search(r"T_[0-9a-f]{5}", text)  # pandas' random table ids
    assert "base64,…" in text and "(the provenance record)" in text
    assert any(t.startswith("<table") for t in tokens) and any("style text" in t for t in tokens)


@pytest.mark.parametrize("kind", [*TAMPERINGS, "moved"])
def test_each_markup_tampering_is_a_difference(report_page, kind):
    page = report_page.read_text(encoding="utf-8")
    tampered = (TAMPERINGS.get(kind) or _moved)(page)
    assert tampered != page
    assert compare_visible(page, page, RTOL, ATOL) == []
    problems = compare_visible(tampered, page, RTOL, ATOL)
    assert problems, kind
    assert any(p.startswith(("markup:", "live content")) for p in problems), problems
    if kind in ("script", "link"):  # what could run or cover the page is named first
        assert problems[0].startswith("live content") or kind == "link"


def test_verify_says_differs_for_each_markup_tampering(report_page, tmp_path, capsys):
    page = report_page.read_text(encoding="utf-8")
    assert main(["verify", str(report_page)]) == EXIT_OK
    for kind in TAMPERINGS:
        bad = tmp_path / f"{kind}.html"
        bad.write_text(TAMPERINGS[kind](page), encoding="utf-8")
        assert main(["verify", str(bad)]) == EXIT_DIFFERS, kind
        err = capsys.readouterr().err
        assert "does not reproduce" in err and ("markup" in err or "live content" in err), err


def _fastchat(path, model_1: str, model_2: str):
    records = [
        {
            "question_id": q,
            "model_1": model_1,
            "model_2": model_2,
            "g1_winner": "model_1",
            "g2_winner": "model_2" if q % 2 else "model_1",
            "judge": [judge, "pair-v2"],
            "turn": 1,
        }
        for q in range(1, 4)
        for judge in ("gpt-4", "claude")
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_text_columns_are_read_back_exactly(tmp_path, suffix):
    """Model names "0089" and "None" are text: a correct import output reproduces."""
    src = _fastchat(tmp_path / "judgments.jsonl", "0089", "None")
    out = tmp_path / f"panel{suffix}"
    assert main(["import", "fastchat", str(src), "-o", str(out)]) == EXIT_OK
    assert main(["verify", str(out)]) == EXIT_OK


def test_compare_csv_reads_fields_as_written():
    import pandas as pd

    recomputed = pd.DataFrame(
        {"item": ["0089", "NA"], "score": [0.5, float("nan")], "note": ["None", None]}
    )
    text = recomputed.to_csv(index=False)
    assert compare_csv(text, recomputed) == []
    edited = text.replace("0089", "89")
    assert any(
        "'89' in the output, '0089' recomputed" in p for p in compare_csv(edited, recomputed)
    )
    assert compare_csv(text.replace("None", ""), recomputed)  # text "None" is not missing
