"""One figure style: one display name and one colour per method, used by every chart.

Every figure in the book and in the reports looks a method up here, so SCUR has the same
colour and the same name in every chapter. :func:`use_style` sets the shared matplotlib
defaults (resolution, font sizes) once per session.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import matplotlib as mpl
from matplotlib.ticker import FuncFormatter, NullFormatter

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "COLUMN_WIDTH",
    "FIGURE_DPI",
    "MIN_FONT",
    "STYLES",
    "MethodStyle",
    "color",
    "grid_shape",
    "judge_colors",
    "label",
    "log_scale",
    "palette",
    "power_of_ten",
    "registered_styles",
    "subplots",
    "use_style",
]

#: Resolution of every raster figure (dots per inch).
FIGURE_DPI = 150
#: Widest figure, in inches. The book's text column is about 690 CSS pixels; a figure of this
#: width drawn at :data:`FIGURE_DPI` is shown at about 0.7 of its size, so 10-point text
#: appears at about 9.5 points and no label is smaller than 9 points as displayed.
COLUMN_WIDTH = 6.8
#: Smallest font size (points) used anywhere in a figure.
MIN_FONT = 9
#: At most this many panels side by side at column width.
MAX_COLUMNS = 2


@dataclass(frozen=True)
class MethodStyle:
    """Display name and colour of one method."""

    label: str
    color: str


_GREY = "#777777"

#: What the book plots besides the registered methods, by its key in the result tables. The
#: aggregators, risk scores and selectors carry their display name and colour in their registry entries
#: (``register_aggregator(..., label=, color=)``, ``register_risk_score(..., label=, color=)``);
#: :func:`label` and :func:`color` read them there.
STYLES: dict[str, MethodStyle] = {
    # one judge: confidence scores
    "bpe": MethodStyle("BPE", "#dd8452"),  # not red: it is drawn next to SCUR in chapter 11
    "predictive_probability": MethodStyle("Single-pass probability", "#4c72b0"),
    "swap_and_aggregate": MethodStyle("Swap and aggregate", "#55a868"),
    "verbalized_confidence": MethodStyle("Verbalized confidence", "#8172b2"),
    "self_consistency": MethodStyle("Self-consistency", "#937860"),
    # outcomes
    "correct": MethodStyle("verdict right", "#55a868"),
    "error": MethodStyle("verdict wrong", "#c44e52"),
    # one judge's sensitivity combined over families (the chapter on perturbation families)
    "s_paper": MethodStyle("S (order + rubric)", "#4d4d4d"),
    "s_all": MethodStyle("S (all families)", "#17becf"),
    "reference": MethodStyle("reference items", "#4c72b0"),
    "evaluation": MethodStyle("evaluation items", "#dd8452"),
}

#: Judges get colours from this cycle, in sorted order of their names (never by position in
#: one plot), so a judge keeps its colour across the panels of a figure and across chapters.
_JUDGE_CYCLE = (
    "#4c72b0",
    "#dd8452",
    "#55a868",
    "#c44e52",
    "#8172b2",
    "#937860",
    "#da8bc3",
    "#8c8c8c",
    "#ccb974",
    "#64b5cd",
)


def registered_styles() -> dict[str, MethodStyle]:
    """Display name and colour of every registered aggregator, risk score and perturbation
    family, read from the registry entries (so a method registered at run time or by a
    plug-in is named and coloured like the built-ins), followed by :data:`STYLES`."""
    from judgerisk.aggregators._base import AGGREGATORS, get_aggregator
    from judgerisk.families import FAMILIES
    from judgerisk.risk.registry import RISK_SCORES, get_risk_score
    from judgerisk.selective.registry import SELECTORS, get_selector

    out: dict[str, MethodStyle] = {
        name: MethodStyle(family.label or name, family.color or _GREY)
        for name, family in FAMILIES.items()
    }
    for name in SELECTORS:
        sel = get_selector(name)
        out[name] = MethodStyle(sel.label or name, sel.color or _GREY)
    for name in RISK_SCORES:
        score = get_risk_score(name)
        out[name] = MethodStyle(score.label or name, score.color or _GREY)
    for name in AGGREGATORS:
        cls = get_aggregator(name)
        out[name] = MethodStyle(cls.display_name or name, cls.color or _GREY)
    return {**out, **STYLES}


def _lookup(key: object) -> MethodStyle | None:
    """The style of ``key``; a display name such as ``"SCUR (panel)"`` finds its method too."""
    key = str(key)
    styles = registered_styles()
    if key in styles:
        return styles[key]
    head = key.split(" (")[0].strip()
    for k, st in styles.items():
        if head.lower() in (k.lower(), st.label.lower()):
            return st
    return None


def label(key: str) -> str:
    """Display name of a method (the key itself when it is not registered)."""
    style = registered_styles().get(str(key))
    return style.label if style is not None else str(key)


def color(key: str) -> str:
    """Colour of a method or of a display name that starts with one (grey when unknown)."""
    style = _lookup(key)
    return style.color if style is not None else _GREY


def judge_colors(judges: Iterable[object]) -> dict[str, str]:
    """``{judge: colour}``, assigned in sorted order of the names (stable across figures)."""
    names = sorted({str(j) for j in judges})
    return {j: _JUDGE_CYCLE[k % len(_JUDGE_CYCLE)] for k, j in enumerate(names)}


def palette(keys: Iterable[str]) -> dict[str, str]:
    """``{display name: colour}`` for seaborn's ``palette=`` argument."""
    return {label(k): color(k) for k in keys}


def use_style() -> None:
    """Set the shared matplotlib defaults: resolution and font sizes readable at column width.

    Called by every figure function of :mod:`judgerisk._plots` (through :func:`subplots`), so
    a chapter needs no set-up of its own. Text is never read as mathtext unless a label asks
    for it (``parse_math=True``): judge names and item ids from the user's files are drawn as
    they are, a ``$`` included (:mod:`judgerisk._plots.escape`).
    """
    mpl.rcParams.update(
        {
            "text.parse_math": False,
            "figure.dpi": FIGURE_DPI,
            "savefig.dpi": FIGURE_DPI,
            "figure.figsize": (COLUMN_WIDTH, 3.6),
            "font.size": 10,
            "axes.titlesize": 10,
            "axes.labelsize": 10,
            "legend.fontsize": MIN_FONT,
            "legend.title_fontsize": MIN_FONT,
            "figure.titlesize": 10,
            "xtick.labelsize": MIN_FONT,
            "ytick.labelsize": MIN_FONT,
        }
    )


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def power_of_ten(value: float, _pos: object = None) -> str:
    """A log axis's tick label as plain text: ``"10⁻³"`` for 0.001, ``"0.5"`` off the decades.

    Matplotlib's own log formatter writes the decades as mathtext (``10^{-3}`` in dollars), which
    :func:`use_style` does not parse (``text.parse_math`` is off so that names from the
    user's files are drawn as they are); Unicode superscripts need no parsing.

    >>> power_of_ten(1e-3), power_of_ten(1.0), power_of_ten(100.0), power_of_ten(0.5)
    ('10⁻³', '10⁰', '10²', '0.5')
    """
    if not value > 0:
        return ""
    exponent = round(math.log10(value))
    if math.isclose(value, 10.0**exponent, rel_tol=1e-9):
        return "10" + str(exponent).translate(_SUPERSCRIPT)
    return f"{value:.2g}"


def log_scale(ax: Any, axis: str = "y") -> None:
    """Put ``axis`` (``"x"`` or ``"y"``) of ``ax`` on a log scale labelled by :func:`power_of_ten`.

    The decades carry the labels; the minor ticks carry none (the default minor labels are
    mathtext too).
    """
    getattr(ax, f"set_{axis}scale")("log")
    target = ax.yaxis if axis == "y" else ax.xaxis
    target.set_major_formatter(FuncFormatter(power_of_ten))
    target.set_minor_formatter(NullFormatter())


def subplots(
    nrows: int = 1,
    ncols: int = 1,
    height: float | None = None,
    width: float | None = None,
    **kwargs: Any,
) -> tuple[Figure, Any]:
    """``plt.subplots`` at column width in the shared style (constrained layout).

    Parameters
    ----------
    nrows, ncols : int
        Grid; ``ncols`` is at most :data:`MAX_COLUMNS` (wider rows cannot be read at column
        width: use more rows).
    height : float, optional
        Figure height in inches (default 3.4 per row).
    width : float, optional
        Figure width in inches, at most :data:`COLUMN_WIDTH` (the default).
    **kwargs
        Passed to :func:`matplotlib.pyplot.subplots`.
    """
    import matplotlib.pyplot as plt

    if ncols > MAX_COLUMNS:
        raise ValueError(f"at most {MAX_COLUMNS} panels side by side, got {ncols}")
    use_style()
    width = COLUMN_WIDTH if width is None else min(float(width), COLUMN_WIDTH)
    height = 3.4 * nrows if height is None else float(height)
    kwargs.setdefault("layout", "constrained")
    return plt.subplots(nrows, ncols, figsize=(width, height), **kwargs)


def grid_shape(n: int) -> tuple[int, int]:
    """Rows and columns for ``n`` panels with at most :data:`MAX_COLUMNS` side by side."""
    ncols = min(n, MAX_COLUMNS)
    return -(-n // ncols), ncols
