"""Hostile names in every field give inert pages (issue 33, item 2: one escaping rule).

A panel whose judges, items and file name are scripts, Markdown links and images,
``javascript:`` URLs, ``<img onerror>``, attribute-breaking quotes and TeX, and whose notes
(warnings that quote a judge) carry them too, is rendered through the panel report, the one-judge
report and a ``judgerisk run`` page. Each page is parsed (:mod:`html.parser`) and must hold no
live element: no script but the data-block record (and, on the run page, its local MathJax and
its set-up), no event-handler attribute, no ``javascript:`` or external URL, no frame or object,
no TeX that MathJax would typeset; every hostile name must still be shown as its text.
"""

from __future__ import annotations

import html
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from judgerisk._plots.escape import (
    html_text,
    live_content,
    markdown_code,
    markdown_text,
    plot_text,
)

JUDGES = [
    '<script>alert("J1")</script>',
    "<img src=x onerror=alert(2)>",
    "[j](javascript:alert(3))",
    '"><svg onload=alert(4)>',
    r"$\href{javascript:alert(5)}{j5}$",
    "![p](http://evil.example/j.png)",
]
ITEMS = [
    "[c{}](javascript:alert(1))",
    "![p{}](http://evil.example/{}.png)",
    "<iframe src=http://evil.example/{}>",
    "' onmouseover='alert({})",
    r"$\href{{javascript:alert({})}}{{x}}$",
    "<a href=javascript:alert({})>a</a>",
]
FILE = 'x<img src=x onerror=alert(9)>"[f](javascript:alert(1))'


def hostile_panel(n_items: int = 150, n_judges: int = 6, seed: int = 0) -> pd.DataFrame:
    """A simulated panel (original and swap) renamed with hostile judges and item ids.

    Two thirds of the items carry gold; the last judge's swap verdicts are left unflipped, so
    that the orientation note quotes its name; the second judge (``<img onerror>``) is always
    right, so that it is the best single judge that chapter 11 and the reports name.
    """
    from judgerisk.simulate import simulate_panel

    data = simulate_panel(
        n_items=n_items, n_judges=n_judges, conditions=("original", "swap"), seed=seed
    ).data
    judges = {f"J{k + 1}": JUDGES[k % len(JUDGES)] for k in range(n_judges)}
    items = {i: ITEMS[i % len(ITEMS)].format(*(i,) * 3) for i in range(n_items)}
    out = data.assign(judge=data["judge"].map(judges), item=data["item"].map(items))
    raw = (out["judge"] == JUDGES[n_judges - 1]) & (out["condition"] == "swap")
    out.loc[raw, "logit"] = -out.loc[raw, "logit"]
    best = out["judge"] == JUDGES[1]  # always right: the single judge chapter 11 names
    out.loc[best, "logit"] = np.where(out.loc[best, "gold"] == "A", 3.0, -3.0)
    out = out.drop(columns=["p", "verdict"])
    out["gold"] = out["gold"].where(data["item"] % 3 != 0)
    return out


def assert_inert(page: str, scripts=(), shown=()) -> None:
    """No live content in ``page``, and each text of ``shown`` is in it as text."""
    live = live_content(page, scripts)
    assert not live, "live content in the page:\n" + "\n".join(live)
    text = html.unescape(page)
    for name in shown:
        assert name in text  # shown as text, not dropped


def test_the_finder_finds_every_kind_of_live_element():
    page = (
        "<p>ok</p><script>x()</script><img src=x onerror=alert(1)>"
        "<a href='javascript:alert(1)'>a</a><img src='http://evil.example/p.png'>"
        "<iframe src='data:text/html,x'></iframe><object data='x'></object>"
        "<meta http-equiv='refresh' content='0;url=http://x'>"
        "<div style='background:url(http://x)'></div><a href=' JaVa\tScRiPt:x'>b</a>"
    )
    found = "\n".join(live_content(page))
    for kind in (
        "<script> 'x()'",
        "<img onerror=...> event handler",
        "<a href='javascript:alert(1)'> script URL",
        "external URL",
        "<iframe> element",
        "<object> element",
        "<meta> element",
        "loads a resource",
        "ScRiPt:x'> script URL",
    ):
        assert kind in found, found
    inert = (
        '<p>ok</p><script type="application/json" id="rec">{"a": 1}</script>'
        "<img src='data:image/png;base64,AAAA'><a href='#x'>x</a>"
        "<a download='s.csv' href='data:text/csv;base64,AAAA'>csv</a>"
    )
    assert live_content(inert) == []
    mathjax = '<script src="file:///m/es5/tex-chtml.js"></script>'
    assert live_content(mathjax + r"<p>$\href{javascript:x}{y}$</p>")
    assert not live_content(mathjax + r"<p class='mathjax_ignore'>$\href{x}{y}$</p>")
    assert not live_content(mathjax + r"<code>$\href{x}{y}$</code>")


@pytest.mark.parametrize("name", [*JUDGES, *(i.format(1, 1, 1) for i in ITEMS), FILE])
def test_markdown_and_html_text_render_as_the_literal_text(name):
    import mistune

    for markup in (markdown_text(name), markdown_code(name)):
        rendered = mistune.html(markup)
        assert not live_content(rendered), rendered
        assert (
            html.unescape(rendered)
            .replace("<code>", "")
            .replace("</code>", "")
            .strip()
            .removeprefix("<p>")
            .removesuffix("</p>")
            == name
        )
    assert html.unescape(html_text(name)) == name
    assert "<" not in html_text(name) and '"' not in html_text(name)


def test_plot_text_shows_dollars_as_text():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.set_title(plot_text(r"$\frac{x"))  # malformed mathtext: an error when parsed
    fig.canvas.draw()
    plt.close(fig)


def test_format_table_escapes_values_labels_names_and_caption():
    from judgerisk._plots.tables import format_table

    df = pd.DataFrame(
        {"score": [0.5, 0.25], "judge": JUDGES[:2]},
        index=pd.Index(ITEMS[:2], name=JUDGES[2]),
    )
    df.columns = pd.Index(["score", JUDGES[3]], name=JUDGES[0])
    page = format_table(df, caption=JUDGES[1]).to_html()
    assert not live_content(page), page
    assert html.unescape(page).count("<script>") == 2  # a cell and the header name, as text
    assert "mathjax_ignore" in page


@pytest.fixture(scope="module")
def hostile_files(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("hostile")
    panel = hostile_panel()
    files = {"panel": folder / f"{FILE}.csv"}
    panel.to_csv(files["panel"], index=False)
    one = panel[panel["judge"] == JUDGES[0]]
    files["one"] = folder / f"one {FILE}.csv"
    one.to_csv(files["one"], index=False)
    return files


@pytest.mark.parametrize("which", ["panel", "one"])
def test_reports_on_hostile_names_are_inert(hostile_files, tmp_path, which):
    from judgerisk.report.build import render_report

    out = render_report(
        hostile_files[which], tmp_path / "r.html", parameters={"n_splits": 20, "alpha": 0.2}
    )
    page = out.read_text(encoding="utf-8")
    shown = [FILE, JUDGES[0], "The certified verdicts", "](javascript:alert(", "<iframe src="]
    if which == "panel":  # the orientation note quotes the judge; the tables name them all
        shown += [f"{JUDGES[-1]!r}: its verdicts in 'swap'", *JUDGES]
    assert_inert(page, shown=shown)


def test_a_run_page_on_hostile_names_is_inert(hostile_files, tmp_path, monkeypatch):
    from judgerisk import cli
    from judgerisk._book import render

    monkeypatch.chdir(tmp_path)
    argv = ["run", "11", "--small", "--param", f"panel_path={hostile_files['panel']}"]
    assert cli.main([*argv, "--param", "real_data=False", "-o", "ch11.html"]) == 0
    page = (tmp_path / "ch11.html").read_text(encoding="utf-8")
    # the page's own scripts: MathJax's configuration and its bundle, inline (no file:// URL)
    assert_inert(page, scripts=[render.MATHJAX_CONFIG, render.mathjax_code()], shown=[FILE])
    assert f"BPE ({JUDGES[1]})" in html.unescape(page)  # the table's row label, as text
    assert f"<code>{html_text(JUDGES[1])}</code>" in page  # the glued name, as text
    assert not (tmp_path / "ch11.ipynb").exists()  # -o names the one file written


def test_a_book_note_quoting_a_name_is_not_typeset():
    """A warning shown as a note admonition on a book page quotes the judge's name as text."""
    from judgerisk.report._content import note_html

    mathjax = '<script src="file:///m/es5/tex-chtml.js"></script>'
    for name in (JUDGES[4], ITEMS[4].format(1, 1, 1)):
        note = note_html(f"judge '{name}': its verdicts in 'swap' disagree", admonition=True)
        assert not live_content(mathjax + note), note
        assert name in html.unescape(note)
