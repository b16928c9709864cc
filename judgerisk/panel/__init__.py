"""The panel data contract: one tidy long table of judges' verdict log-odds.

A *panel* is a :class:`pandas.DataFrame` with one row per observed cell
(item, judge, condition). Every probability is **canonical**: the probability that the
*original* answer A of the item wins, whatever order the judge saw. After an order swap
the judge's "A" token refers to the original answer B, so the canonical probability of a
swapped prompt is ``P(token "B")``.

========== =========================================================================
column     meaning
========== =========================================================================
item       item id (any hashable scalar; the simulator uses ints)
judge      judge name (str)
condition  a declared condition name (:mod:`judgerisk.families`): ``"original"`` is the
           unperturbed prompt, ``"swap"`` its order swap, ``F<k>`` / ``swap_F<k>`` variant
           k of perturbation family F (``rubric1``, ``label1``, ``swap_format2``, ...)
logit      m = log P(A) - log P(B) over the two verdict tokens, canonical, in [-20, 20]
p          sigmoid(logit), canonical
verdict    1 if logit > 0 (A wins), 0 if logit < 0, 0.5 if logit == 0 (a tie: half a vote each)
gold       "A" / "B" (optional; read only for evaluation)
========== =========================================================================

The package splits the contract by concern, one module each:

- :mod:`~judgerisk.panel._contract`: the contract's checks, run once where a panel enters
  (:func:`validate_panel`, :func:`check_scorable`) and the input error :class:`PanelError`;
- :mod:`~judgerisk.panel._files`: reading and writing (:func:`load_panel`, :func:`save_panel`);
- :mod:`~judgerisk.panel._reshape`: item x judge tables, votes, gold labels, integer codes;
- :mod:`~judgerisk.panel._pairs`: one judge in both answer orders;
- :mod:`~judgerisk.panel._cell_table`: an item x judge table held by its observed cells;
- :mod:`~judgerisk.panel._overlap`: which judges share items.

References
----------
Methods reference §1 (the judgerisk methods specification, after the instance-level panel
reliability paper and the SCOPE paper).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

#: Where each name of the facade lives. Importing a submodule (``judgerisk.panel._cell_table``)
#: runs this file, so it imports nothing itself: each name is imported on first use.
_LAZY: dict[str, str] = {
    "CONDITIONS": "judgerisk.panel._contract",
    "DECLARED": "judgerisk.panel._contract",
    "FAMILIES": "judgerisk.panel._contract",
    "LOGIT_CLIP": "judgerisk.panel._contract",
    "ORIGINAL": "judgerisk.panel._contract",
    "PanelError": "judgerisk.panel._contract",
    "PanelFileNotFoundError": "judgerisk.panel._contract",
    "check_scorable": "judgerisk.panel._contract",
    "refuse_unscorable": "judgerisk.panel._contract",
    "validate_panel": "judgerisk.panel._contract",
    "validate_scores": "judgerisk.panel._contract",
    "warn_ties_and_orientation": "judgerisk.panel._contract",
    "load_panel": "judgerisk.panel._files",
    "read_table": "judgerisk.panel._files",
    "save_panel": "judgerisk.panel._files",
    "write_table": "judgerisk.panel._files",
    "PAIR_COLUMNS": "judgerisk.panel._pairs",
    "both_orders": "judgerisk.panel._pairs",
    "order_pairs": "judgerisk.panel._pairs",
    "pairs_to_panel": "judgerisk.panel._pairs",
    "PanelArrays": "judgerisk.panel._reshape",
    "cell_table": "judgerisk.panel._reshape",
    "encode_panel": "judgerisk.panel._reshape",
    "gold_labels": "judgerisk.panel._reshape",
    "to_long": "judgerisk.panel._reshape",
    "to_wide": "judgerisk.panel._reshape",
    "verdicts": "judgerisk.panel._reshape",
    "wide_table": "judgerisk.panel._reshape",
}

if TYPE_CHECKING:
    from judgerisk.panel._contract import (
        CONDITIONS,
        DECLARED,
        FAMILIES,
        LOGIT_CLIP,
        ORIGINAL,
        PanelError,
        PanelFileNotFoundError,
        check_scorable,
        refuse_unscorable,
        validate_panel,
        validate_scores,
        warn_ties_and_orientation,
    )
    from judgerisk.panel._files import load_panel, read_table, save_panel, write_table
    from judgerisk.panel._pairs import PAIR_COLUMNS, both_orders, order_pairs, pairs_to_panel
    from judgerisk.panel._reshape import (
        PanelArrays,
        cell_table,
        encode_panel,
        gold_labels,
        to_long,
        to_wide,
        verdicts,
        wide_table,
    )

__all__ = [
    "CONDITIONS",
    "DECLARED",
    "ORIGINAL",
    "FAMILIES",
    "LOGIT_CLIP",
    "PanelError",
    "PanelFileNotFoundError",
    "PanelArrays",
    "validate_panel",
    "validate_scores",
    "load_panel",
    "save_panel",
    "read_table",
    "write_table",
    "to_wide",
    "cell_table",
    "wide_table",
    "to_long",
    "verdicts",
    "gold_labels",
    "encode_panel",
    "check_scorable",
    "refuse_unscorable",
    "warn_ties_and_orientation",
    "PAIR_COLUMNS",
    "both_orders",
    "order_pairs",
    "pairs_to_panel",
]


def __getattr__(name: str) -> Any:
    """Import a name of the facade from its module on first use (see :data:`_LAZY`)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'judgerisk.panel' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
