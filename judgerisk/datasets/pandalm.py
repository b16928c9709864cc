"""PandaLM's human-annotated test set: two judges, one order, three human annotators.

Where to get the data
---------------------
The original files are in https://github.com/WeOpenML/PandaLM (Apache-2.0; commit
``3871806e72b4832f815ecafd24d3503c73403f48`` was used by judgerisk), under ``data/``:
``testset-v1.json`` (999 items with ``annotator1..3``), ``gpt-3.5-turbo-testset-v1.json`` and
``pandalm-7b-testset-v1.json`` (the two judges' verdicts, aligned by ``idx``). Put the three files in
``<root>/pandalm/``, where ``<root>`` is the ``path`` argument, else ``$JUDGERISK_DATA``; there
is no built-in location, so with neither the loader stops with an error naming
``JUDGERISK_DATA`` (``path`` may also be the ``pandalm`` folder itself).

How the verdicts become a panel
-------------------------------
The judges ran **one order only** and give **no probabilities**, so the panel has only the
``original`` condition (no S component of SCUR) and the 0/1 verdicts are smoothed like LLMBar's
(:func:`judgerisk.datasets.llmbar.smooth_verdicts`): ``p = 1 - ε`` when response1 (answer A) wins,
``p = ε`` when response2 wins.

* **Judge ties** (``"Tie"`` from gpt-3.5-turbo, ``0`` from PandaLM-7B): with ``judge_ties="half"``
  (default) a tie is ``p = 0.5`` (logit 0: no preference, which is what the latent model should see);
  its binary verdict then counts as B by the panel contract (``logit == 0`` is B). With
  ``judge_ties="missing"`` a tie is a missing cell instead.
* **"garbage"** (gpt-3.5-turbo output that could not be parsed) is always a missing cell, counted and
  reported with a warning (``panel.attrs["missing_cells"]``).
* **Gold** is the human majority over the three annotators (every item has at least two agreeing).
  A majority of ``0`` (the two responses are similar) gives no A/B gold: with ``gold_ties="drop"``
  (default) those items are removed with a warning giving their number; with ``gold_ties="keep"`` all
  items are kept and the panel has no ``gold`` column (the human label is still in ``human_label``).
* The three annotators are **not** judges by default (gold is made from them, so scoring them would
  leak the label); ``include_humans=True`` adds them as judges ``human1..human3`` for descriptive
  agreement analyses only.

Extra columns on every row: ``human_label`` ("A", "B" or "tie"), ``human_agreement`` (2 or 3 of 3),
``cmp_key`` (the two models that wrote the responses).

References
----------
Wang, Y. et al. (2024). PandaLM: An Automatic Evaluation Benchmark for LLM Instruction Tuning
Optimization. ICLR 2024. arXiv:2306.05087.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from judgerisk.datasets._missing import report_missing_cells
from judgerisk.datasets._paths import data_root
from judgerisk.datasets._registry import register_dataset
from judgerisk.datasets.llmbar import smooth_verdicts
from judgerisk.panel import validate_panel

__all__ = ["PANDALM_JUDGES", "load_pandalm_table", "load_pandalm_panel"]

#: Judge names used in the panel, with the file and field each comes from.
PANDALM_JUDGES = {
    "gpt-3.5-turbo": ("gpt-3.5-turbo-testset-v1.json", "gpt_result"),
    "PandaLM-7B": ("pandalm-7b-testset-v1.json", "pandalm_result"),
}
_TESTSET = "testset-v1.json"
# raw label -> 1 (response1 = A), 2 (response2 = B), 0 (tie); anything else is unparseable
_LABELS = {"1": 1, "2": 2, "0": 0, "tie": 0}


def _pandalm_root(path: str | Path | None) -> Path:
    root = data_root(path)
    for cand in (root / "pandalm", root):
        if (cand / _TESTSET).is_file():
            return cand
    raise FileNotFoundError(
        f"no PandaLM data under {root}: expected {root / 'pandalm' / _TESTSET} (download data/ from "
        "https://github.com/WeOpenML/PandaLM and put it in `pandalm/` under `path` / $JUDGERISK_DATA)"
    )


def _code(values: pd.Series) -> pd.Series:
    """Map raw labels to 1/2/0, NaN when unparseable (e.g. ``"garbage"``)."""
    return values.astype(str).str.strip().str.lower().map(_LABELS).astype("float64")


def load_pandalm_table(path: str | Path | None = None) -> pd.DataFrame:
    """One row per PandaLM item: annotators, the judges' raw codes and the human majority.

    Parameters
    ----------
    path : str or Path, optional
        Data root holding ``pandalm/`` or the folder itself.

    Returns
    -------
    pandas.DataFrame
        Indexed by ``idx``: ``cmp_key, annotator1..3`` (0/1/2), one column per judge in
        :data:`PANDALM_JUDGES` (1, 2, 0 for a tie, NaN when unparseable), ``human_majority``
        (0/1/2) and ``human_agreement`` (number of annotators giving the majority label).
    """
    root = _pandalm_root(path)
    test = pd.DataFrame(json.loads((root / _TESTSET).read_text())).set_index("idx")
    cols = ["cmp_key", "annotator1", "annotator2", "annotator3"]
    table = test[cols].copy()
    for judge, (fname, field) in PANDALM_JUDGES.items():
        raw = pd.DataFrame(json.loads((root / fname).read_text())).set_index("idx")[field]
        if not raw.index.equals(table.index):
            raise ValueError(f"{fname}: idx values do not match {_TESTSET}")
        table[judge] = _code(raw)
    ann = table[["annotator1", "annotator2", "annotator3"]].to_numpy()
    bad = ~np.isin(ann, (0, 1, 2))
    if bad.any():
        rows = table.index[bad.any(axis=1)][:10].tolist()
        raise ValueError(f"annotator labels other than 0/1/2 at idx {rows}")
    counts = np.stack([(ann == k).sum(axis=1) for k in (0, 1, 2)], axis=1)
    table["human_majority"] = counts.argmax(axis=1)
    table["human_agreement"] = counts.max(axis=1)
    if (table["human_agreement"] < 2).any():
        rows = table.index[table["human_agreement"] < 2][:10].tolist()
        raise ValueError(f"PandaLM items without a 2-of-3 human majority at idx {rows}")
    return table


@register_dataset("pandalm", markers=("testset-v1.json",))
def load_pandalm_panel(
    path: str | Path | None = None,
    *,
    epsilon: float = 0.05,
    judge_ties: str = "half",
    gold_ties: str = "drop",
    include_humans: bool = False,
) -> pd.DataFrame:
    """Load PandaLM as a validated panel (original condition only).

    Parameters
    ----------
    path : str or Path, optional
        Data root holding ``pandalm/`` or the folder itself.
    epsilon : float, default 0.05
        Smoothing of the 0/1 verdicts.
    judge_ties : {"half", "missing"}, default "half"
        A judge's tie becomes ``p = 0.5`` (binary verdict B) or a missing cell.
    gold_ties : {"drop", "keep"}, default "drop"
        Items whose human majority is a tie: removed (with a warning), or kept with no ``gold``
        column in the panel.
    include_humans : bool, default False
        Add the three annotators as judges ``human1..3`` (descriptive use only: gold comes from them).

    Returns
    -------
    pandas.DataFrame
        Validated panel; items are PandaLM's integer ``idx``. ``attrs["missing_cells"]`` counts
        missing cells per judge (a dict), ``attrs["dropped_tie_items"]`` the items removed for a tie
        gold.

    Warns
    -----
    UserWarning
        With the counts of missing cells and of items removed for a tied human majority.
    """
    if judge_ties not in ("half", "missing"):
        raise ValueError(f"judge_ties must be 'half' or 'missing', got {judge_ties!r}")
    if gold_ties not in ("drop", "keep"):
        raise ValueError(f"gold_ties must be 'drop' or 'keep', got {gold_ties!r}")
    table = load_pandalm_table(path)
    judge_cols = list(PANDALM_JUDGES)
    if include_humans:
        for k in (1, 2, 3):
            table[f"human{k}"] = table[f"annotator{k}"].astype("float64")
        judge_cols += ["human1", "human2", "human3"]
    human_label = table["human_majority"].map({0: "tie", 1: "A", 2: "B"})
    # one row per item x judge, item-major, NaN codes kept (stack() drops them in pandas 2)
    codes = table[judge_cols].to_numpy(dtype=np.float64)
    long = pd.DataFrame(
        {
            "item": np.repeat(table.index.to_numpy(), len(judge_cols)),
            "judge": np.tile(np.asarray(judge_cols, dtype=object), len(table)),
            "code": codes.ravel(),
        }
    )
    missing = long["code"].isna()
    if judge_ties == "missing":
        missing |= long["code"].eq(0)
    missing_cells = report_missing_cells(
        long[missing], ["judge"], "PandaLM: {n} verdict(s) are missing cells ({detail})"
    )
    long = long[~missing]
    code = long["code"].to_numpy()
    p = np.where(code == 0, 0.5, smooth_verdicts(code == 1, epsilon))
    panel = pd.DataFrame(
        {
            "item": long["item"].to_numpy(),
            "judge": long["judge"].astype(str).to_numpy(),
            "condition": "original",
            "p": p,
        }
    )
    items = panel["item"].to_numpy()
    panel["human_label"] = human_label.loc[items].to_numpy()
    panel["human_agreement"] = table["human_agreement"].loc[items].to_numpy()
    panel["cmp_key"] = table["cmp_key"].loc[items].astype(str).to_numpy()
    dropped: list = []
    if gold_ties == "drop":
        tie = panel["human_label"].eq("tie")
        dropped = sorted(pd.unique(panel.loc[tie, "item"]).tolist())
        if dropped:
            warnings.warn(
                f"PandaLM: {len(dropped)} item(s) whose human majority is a tie have no A/B gold "
                "and are removed (gold_ties='keep' keeps them without gold)",
                UserWarning,
                stacklevel=2,
            )
        panel = panel[~tie]
        panel.insert(4, "gold", panel["human_label"].to_numpy())
    out = validate_panel(panel)
    out.attrs["missing_cells"] = missing_cells
    out.attrs["dropped_tie_items"] = dropped
    out.attrs["epsilon"] = epsilon
    return out
