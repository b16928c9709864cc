"""One table formatter: integers as integers, three decimals, no raw index."""

from __future__ import annotations

import pandas as pd

from judgerisk._plots.tables import format_number, format_table


def test_format_number():
    assert format_number(2000) == "2000"
    assert format_number(0.0456) == "0.046"
    assert format_number(4.56e-7) == "0.000"
    assert format_number(float("nan")) == "–"
    assert format_number(True) == "yes"


def test_counts_print_as_integers_and_rates_with_three_decimals():
    df = pd.DataFrame({"items": [2000.0, 419.0], "rate": [4.56e-2, 1.0]})
    html = format_table(df).to_html()
    assert ">2000<" in html and ">419<" in html
    assert ">0.046<" in html and ">1.000<" in html
    assert "e-0" not in html and "2000.000" not in html


def test_raw_index_hidden_named_index_shown():
    plain = format_table(pd.DataFrame({"x": [1.5, 2.5]})).to_html()
    assert "row_heading" not in plain
    named = format_table(pd.DataFrame({"x": [1.5]}, index=pd.Index(["a"], name="k"))).to_html()
    assert "row_heading" in named


def test_long_tables_are_cut_with_a_note_or_scroll():
    df = pd.DataFrame({"x": range(50)})
    cut = format_table(df, max_rows=10).to_html()
    assert "first 10 of 50 rows" in cut and cut.count("<tr>") <= 12
    scroll = format_table(df, max_rows=10, scroll=True).to_html()
    assert "jr-scroll-table" in scroll and scroll.count("<tr>") >= 50


def test_a_series_of_mixed_quantities_is_formatted_per_cell():
    s = pd.Series({"items": 300.0, "share": 0.78}, name="value")
    html = format_table(s).to_html()
    assert ">300<" in html and ">0.780<" in html


def test_headers_are_words_not_code_names():
    df = pd.DataFrame({"coverage_mean": [0.5], "n_items": [3], "SCUR": [0.1], "q_x": [1.0]})
    html = format_table(df.rename_axis("risk_se")).to_html()
    for words in ("accepted share", ">items<", "SCUR", "q x"):
        assert words in html
    assert "coverage_mean" not in html and "n_items" not in html
