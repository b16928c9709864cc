"""No figure draws raw mathtext: the log axes' ticks read 10⁻³, not a dollar-wrapped TeX string.

:func:`judgerisk._plots.style.use_style` turns ``text.parse_math`` off (names from the user's
files are drawn as they are), so any label that holds mathtext is drawn verbatim. The check
reads the figure's text objects after a draw, not the PNG.
"""

from __future__ import annotations

import re
from types import SimpleNamespace

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.text import Text  # noqa: E402

from judgerisk._book.figures.lmm import plot_convergence, plot_drift  # noqa: E402
from judgerisk._plots import style  # noqa: E402

_MATHTEXT = re.compile(r"\\mathdefault|\$[^$]*[\\^_{][^$]*\$")


def raw_mathtext(fig: Figure) -> list[str]:
    """The texts of ``fig`` that would be drawn as raw mathtext (TeX between dollars, unparsed)."""
    fig.canvas.draw()
    texts = [t for t in fig.findobj(Text) if t.get_visible() and t.get_text()]
    return [
        t.get_text() for t in texts if not t.get_parse_math() and _MATHTEXT.search(t.get_text())
    ]


def _drifts() -> dict[str, SimpleNamespace]:
    sweeps = pd.RangeIndex(1, 400, name="sweep")
    decay = np.exp(-np.arange(1, 400) / 30.0)
    trace = pd.DataFrame({"offset": 1e-1 * decay, "rel_criterion": 1e-2 * decay}, index=sweeps)
    return {"0%": SimpleNamespace(trace=trace), "20%": SimpleNamespace(trace=trace * 3)}


def _models() -> dict[str, SimpleNamespace]:
    hist = pd.Series(1000.0 + np.exp(-np.arange(200) / 10.0), index=pd.RangeIndex(200))
    return {
        "plain sweeps": SimpleNamespace(histories_={0: hist, 1: hist + 1e-3}, tol_obj=1e-7),
        "Anderson": SimpleNamespace(histories_={0: hist.iloc[:40]}, tol_obj=1e-7),
    }


@pytest.mark.parametrize("draw", ["drift", "convergence"])
def test_appendix_log_axes_show_powers_of_ten_as_text(draw):
    style.use_style()
    if draw == "drift":
        axes = plot_drift(_drifts(), tol_obj=1e-7)
    else:
        axes = [plot_convergence(_models())]  # type: ignore[arg-type]
    fig = axes[0].figure
    assert raw_mathtext(fig) == []
    labels = [t.get_text() for ax in axes for t in ax.get_yticklabels() if t.get_text()]
    assert labels and all(re.fullmatch(r"10[⁻]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+", s) for s in labels), labels
    plt.close(fig)


def test_the_check_sees_matplotlibs_own_log_labels():
    style.use_style()
    fig, ax = plt.subplots()
    ax.semilogy([1, 2, 3], [1e-3, 1e-1, 1e1])
    assert any("mathdefault" in s for s in raw_mathtext(fig))  # what the appendix showed
    plt.close(fig)


def test_power_of_ten_labels_decades_and_others():
    assert [style.power_of_ten(v) for v in (1e-9, 0.01, 1.0, 1e3)] == ["10⁻⁹", "10⁻²", "10⁰", "10³"]
    assert style.power_of_ten(0.5) == "0.5"
    assert style.power_of_ten(0.0) == ""
