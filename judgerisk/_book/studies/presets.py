"""SCUR presets and the rule that chooses between the reconstructed options, declared first.

The paper leaves four details of SCUR open (Methods reference §4 **[R]**): the kind of C, the
kind of S, the conditions pooled in U and the normalisation of :math:`z^S`. The ``paper``
preset is the book's reading of the paper. Whether another choice is better is settled on
the evidence, by the rule below, which was written down and committed *before* the
comparison was run.

The decision rule (:data:`DECISION_RULE`)
-----------------------------------------
1. Every *switch* (C kind, S kind, U conditions, z_S normalisation, and the subset of the
   signals U, C, S combined) has the paper's reading and one or more alternatives, each one
   switch away from the paper's reading (:data:`judgerisk._book.studies.pooled.OPTIONS` and
   :data:`judgerisk._book.studies.pooled.ABLATION`).
2. On every panel, each alternative is compared with the paper's reading by the paired
   bootstrap of the AUROC difference over all items (:func:`judgerisk._book.studies.paired.compare_pairs`,
   repeated K-fold cross-fitting, errors of the majority vote). It **wins** when the 95 %
   interval lies above 0, **loses** when it lies below 0, and ties otherwise.
3. Only the real panels vote (LLMBar, JudgeBench, the shipped SmolLM2 panel joined to its
   larger judges, PandaLM where its conditions allow); the simulated panels are shown but do
   not vote, because they come from the project's own generator.
4. For each switch, the alternative with the largest (wins - losses) over the real panels is
   chosen if that number is above 0; otherwise (ties included) the paper's reading stays.
   Ties between alternatives go to the one listed first.
5. The ``recommended`` preset applies every switch's choice; if no switch moves it equals
   ``paper``. The command line and the report use ``recommended``.

References
----------
"Can We Trust This Evaluation? Instance-Level Reliability of LLM-as-a-Judge", Section 3 (the
signals and their combination).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from importlib import resources
from pathlib import Path

import pandas as pd

from judgerisk._book.studies.paired import compare_pairs
from judgerisk._book.studies.pooled import ABLATION, OPTIONS
from judgerisk._util.safe_write import atomic_write
from judgerisk.options import ANALYSIS

__all__ = [
    "DECISION_RULE",
    "PAPER",
    "STUDY",
    "SWITCHES",
    "decide",
    "load_study",
    "options_study",
    "save_study",
    "preset_options",
    "study_rows",
]

#: Name of the shipped result of :func:`options_study` (a derived artefact with a manifest).
STUDY = "scur_options_study"

#: The rule of the module docstring, as one paragraph (shown above the table in the book).
DECISION_RULE = (
    "Each alternative is one switch away from the paper's reading. On every panel it is "
    "compared with the paper's reading by the 95 % paired bootstrap interval of the AUROC "
    "difference over all items: it wins when the interval lies above 0 and loses when it lies "
    "below 0. Only the real panels vote. For each switch, the alternative with the most wins "
    "minus losses is chosen if that number is above 0; otherwise the paper's reading stays. "
    "This rule was committed before the comparison was run."
)

#: The paper's reading: keyword arguments of :func:`judgerisk.risk.scur.scur_scores`.
PAPER: dict[str, str] = {
    "c_kind": "xent",
    "s_kind": "prob",
    "u_conditions": "original",
    "s_norm": "ecdf",
}

#: Switch -> alternatives (column names of :func:`judgerisk._book.studies.pooled.pooled_scores`).
SWITCHES: dict[str, tuple[str, ...]] = {
    "C kind": ("C residual",),
    "S kind": ("S log-odds", "S debiased (log-odds)"),
    "U conditions": ("U all conditions",),
    "z_S normalisation": ("z_S raw max",),
    "signals": tuple(c for c in ABLATION if c != "U+C+S"),
}


def study_rows(
    pooled: pd.DataFrame, panel: str, real: bool, n_boot: int = ANALYSIS.n_boot
) -> pd.DataFrame:
    """Every alternative against the paper's reading on one panel (all items).

    Parameters
    ----------
    pooled : pandas.DataFrame
        :func:`judgerisk._book.studies.pooled.pooled_scores` with ``options=OPTIONS, ablation=True``.
    panel : str
        Its display name.
    real : bool
        Whether it votes (rule step 3).

    Returns
    -------
    pandas.DataFrame
        ``panel, real, switch, alternative, auroc_paper, auroc, diff, low, high, verdict``
        (``diff`` = alternative minus paper).
    """
    alternatives = {a: s for s, alts in SWITCHES.items() for a in alts if a in pooled.columns}
    pairs = [(a, "scur") for a in alternatives]
    t = compare_pairs(pooled, pairs, ("all",), n_boot=n_boot)
    return pd.DataFrame(
        {
            "panel": panel,
            "real": real,
            "switch": [alternatives[a] for a in t["ref"]],
            "alternative": t["ref"].to_numpy(),
            "auroc_paper": t["auroc"].to_numpy(),
            "auroc": t["auroc_ref"].to_numpy(),
            "diff": t["diff"].to_numpy(),
            "low": t["low"].to_numpy(),
            "high": t["high"].to_numpy(),
            "verdict": t["verdict"].to_numpy(),
        }
    )


def decide(rows: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, str]]:
    """Apply :data:`DECISION_RULE` to :func:`study_rows` of every panel.

    Returns
    -------
    (pandas.DataFrame, dict)
        Per switch and alternative: ``wins``, ``losses``, ``score`` (wins - losses, real
        panels only), ``chosen``; and the choice per switch (``"paper"`` or an alternative).
    """
    real = rows[rows["real"]]
    tally = (
        real.assign(
            wins=(real["verdict"] == "beats").astype(int),
            losses=(real["verdict"] == "trails").astype(int),
        )
        .groupby(["switch", "alternative"], sort=False)[["wins", "losses"]]
        .sum()
    )
    tally["score"] = tally["wins"] - tally["losses"]
    choice: dict[str, str] = {}
    for switch, alts in SWITCHES.items():
        present = [a for a in alts if (switch, a) in tally.index]
        best = max(present, key=lambda a: tally.loc[(switch, a), "score"], default="paper")
        ok = best != "paper" and tally.loc[(switch, best), "score"] > 0
        choice[switch] = best if ok else "paper"
    tally["chosen"] = [choice[s] == a for s, a in tally.index]
    return tally.reset_index(), choice


def preset_options(choice: Mapping[str, str]) -> dict[str, str]:
    """``scur_scores`` keyword arguments of the preset that applies ``choice`` to :data:`PAPER`."""
    out = dict(PAPER)
    for switch, alt in choice.items():
        if switch != "signals" and alt != "paper":
            out.update(OPTIONS[alt])
    return out


def options_study(
    panels: Mapping[str, tuple[pd.DataFrame, bool]],
    repeats: int = 3,
    n_boot: int = ANALYSIS.n_boot,
    progress: bool = False,
) -> pd.DataFrame:
    """:func:`study_rows` of every panel: pooled scores with all options and the ablation.

    Parameters
    ----------
    panels : mapping
        Display name -> (panel with gold, whether it is a real panel that votes).
    repeats : int, default 3
        Repetitions of 5-fold cross-fitting (:func:`judgerisk._book.studies.pooled.pooled_scores`).
    n_boot : int, default ``ANALYSIS.n_boot``
    progress : bool, default False
        Print each panel's name when done.

    Returns
    -------
    pandas.DataFrame
        The rows of all panels; :func:`decide` applies the rule to them.
    """
    from judgerisk._book.studies.pooled import pooled_scores

    rows = []
    for name, (panel, real) in panels.items():
        pooled = pooled_scores(panel, seeds=range(repeats), options=OPTIONS, ablation=True)
        rows.append(study_rows(pooled, name, real, n_boot=n_boot))
        if progress:
            print(f"{name}: done", flush=True)
    return pd.concat(rows, ignore_index=True)


def load_study() -> tuple[pd.DataFrame, dict]:
    """The shipped :func:`options_study` result and its manifest (how it was computed).

    Returns
    -------
    (pandas.DataFrame, dict)
        The study rows (see :func:`study_rows`) and the manifest: the rule, the choice,
        the parameters, the command that recomputes it and the code commit.
    """
    folder = resources.files("judgerisk.datasets.shipped")
    with resources.as_file(folder / f"{STUDY}.parquet") as path:
        table = pd.read_parquet(path)
    manifest = json.loads((folder / f"{STUDY}.manifest.json").read_text())
    return table, manifest


def save_study(table: pd.DataFrame, manifest: dict, folder: str | Path) -> Path:
    """Write an :func:`options_study` result and its manifest into ``folder``, atomically.

    The inverse of :func:`load_study` (``benchmarks/options_study.py`` writes the shipped copy
    with it): ``<folder>/<STUDY>.parquet`` and ``<folder>/<STUDY>.manifest.json``, each
    published whole or not at all. Returns the parquet file's path.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    out = atomic_write(folder / f"{STUDY}.parquet", lambda p: table.to_parquet(p, index=False))
    text = json.dumps(manifest, indent=2) + "\n"
    atomic_write(folder / f"{STUDY}.manifest.json", lambda p: Path(p).write_text(text))
    return out
