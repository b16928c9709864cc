"""One figure style: one display name and one colour per method, used by every chart.

Every figure in the book and in the reports looks a method up here, so SCUR has the same
colour and the same name in every chapter. :func:`use_style` sets the shared matplotlib
defaults (resolution, font sizes) once per session.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import matplotlib as mpl

__all__ = [
    "FIGURE_DPI",
    "STYLES",
    "MethodStyle",
    "color",
    "label",
    "palette",
    "register",
    "use_style",
]

#: Resolution of every raster figure (dots per inch).
FIGURE_DPI = 150


@dataclass(frozen=True)
class MethodStyle:
    """Display name and colour of one method."""

    label: str
    color: str


_GREY = "#777777"

#: Every method the book plots, by its key in the result tables.
STYLES: dict[str, MethodStyle] = {
    # panel risk scores: SCUR, its components and the baselines
    "scur": MethodStyle("SCUR", "#c44e52"),
    "U": MethodStyle("U (uncertainty)", "#dd8452"),
    "C": MethodStyle("C (conflict)", "#da8bc3"),
    "S_order": MethodStyle("S (order)", "#8c8c8c"),
    "S_rubric": MethodStyle("S (rubric)", "#ccb974"),
    "pe": MethodStyle("PE", "#4c72b0"),
    "ve": MethodStyle("VE", "#55a868"),
    "msp": MethodStyle("MSP", "#8172b2"),
    "ds_entropy": MethodStyle("DS entropy", "#937860"),
    # aggregators
    "majority": MethodStyle("Majority vote", "#4c72b0"),
    "dawid_skene": MethodStyle("Dawid–Skene", "#937860"),
    "mace": MethodStyle("MACE", "#55a868"),
    "glad": MethodStyle("GLAD", "#8172b2"),
    "care": MethodStyle("CARE", "#dd8452"),
    # one judge: confidence scores
    "bpe": MethodStyle("BPE", "#c44e52"),
    "predictive_probability": MethodStyle("Single-pass probability", "#4c72b0"),
    "swap_and_aggregate": MethodStyle("Swap and aggregate", "#55a868"),
    "verbalized_confidence": MethodStyle("Verbalized confidence", "#8172b2"),
    "self_consistency": MethodStyle("Self-consistency", "#937860"),
    # one judge: selectors
    "scope": MethodStyle("SCOPE", "#c44e52"),
    "naive": MethodStyle("Naive", "#4c72b0"),
    "heuristic": MethodStyle("Heuristic", "#55a868"),
    "vanilla": MethodStyle("Vanilla", "#8c8c8c"),
    "toe": MethodStyle("Trust-or-Escalate", "#8172b2"),
}


def register(key: str, label: str | None = None, color: str | None = None) -> None:
    """Give a method registered elsewhere (an aggregator, a risk score) its name and colour.

    An existing entry is kept (the built-in methods' look does not change); without ``label``
    and ``color`` nothing is added, and the key and grey are used.
    """
    if key not in STYLES and (label is not None or color is not None):
        STYLES[key] = MethodStyle(label or key, color or _GREY)


def label(key: str) -> str:
    """Display name of a method (the key itself when it is not registered)."""
    style = STYLES.get(key)
    return style.label if style is not None else str(key)


def color(key: str) -> str:
    """Colour of a method (grey when it is not registered)."""
    style = STYLES.get(key)
    return style.color if style is not None else _GREY


def palette(keys: Iterable[str]) -> dict[str, str]:
    """``{display name: colour}`` for seaborn's ``palette=`` argument."""
    return {label(k): color(k) for k in keys}


def use_style() -> None:
    """Set the shared matplotlib defaults: resolution and font sizes readable at column width."""
    mpl.rcParams.update(
        {
            "figure.dpi": FIGURE_DPI,
            "savefig.dpi": FIGURE_DPI,
            "font.size": 10,
            "axes.titlesize": 11,
            "axes.labelsize": 10,
            "legend.fontsize": 9,
            "xtick.labelsize": 9,
            "ytick.labelsize": 9,
        }
    )
