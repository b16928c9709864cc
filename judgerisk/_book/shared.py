"""What the chapters and the recipes call of the library's private modules, under one name.

The library keeps these helpers private (a ``_``-prefixed module, CONTRIBUTING, "Private
modules"): the figure style, the table formatting and the estimators' display names the report
shares with the book, the orientation check's evidence, the cross-fitting splits, and the
extraction steps the shipped data's recipes (``recipes/``) run one by one. Code outside the package imports public modules and the
book's own folder only, so a chapter or a recipe reaches them here; they are not part of the API
page and may change with the book.
"""

from __future__ import annotations

from judgerisk._orientation import POSITION_BIAS, orientation_evidence, tie_message
from judgerisk._plots import style
from judgerisk._plots.certified import (
    CERTIFIED_HEADERS,
    certified_table,
    plot_certified_summary,
    plot_fdp_spread,
    validity_cells,
)
from judgerisk._plots.escape import markdown_code
from judgerisk._plots.tables import format_number, format_table
from judgerisk._splits import DEFAULT_REPEATS, split_items
from judgerisk.extract._extract import prompt_sha256
from judgerisk.extract._parts import next_sequence, write_part
from judgerisk.extract._prompts import rendered_prompts
from judgerisk.report._estimates import METHOD_NAMES

__all__ = [
    "CERTIFIED_HEADERS",
    "DEFAULT_REPEATS",
    "METHOD_NAMES",
    "POSITION_BIAS",
    "certified_table",
    "format_number",
    "format_table",
    "markdown_code",
    "next_sequence",
    "orientation_evidence",
    "plot_certified_summary",
    "plot_fdp_spread",
    "prompt_sha256",
    "rendered_prompts",
    "split_items",
    "style",
    "tie_message",
    "validity_cells",
    "write_part",
]
