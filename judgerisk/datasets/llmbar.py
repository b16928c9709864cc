"""LLMBar: six LLM judges' discrete verdicts in both answer orders, turned into a panel.

Where to get the data
---------------------
The original files are in the public repository https://github.com/princeton-nlp/LLMBar (MIT licence;
commit ``900616bff90b6c6c8e1681f7d079250637c55992`` was used by judgerisk). Download (or ``git clone``)
it and point the loader at a folder laid out like::

    <root>/llmbar/Dataset/LLMBar/Natural/dataset.json
    <root>/llmbar/Dataset/LLMBar/Natural/evaluators/<judge>/<strategy>/result.json
    <root>/llmbar/Dataset/Processed/LLMEval2/...      (the repo names it ``LLMEval^2``; both work)
    <root>/llmbar/verdicts_long.csv                  (optional flat table, see below)

``<root>`` is the ``path`` argument, else ``$JUDGERISK_DATA``; with neither, an error names
``JUDGERISK_DATA`` (:func:`judgerisk.datasets.data_root`). ``path`` may also point at the ``llmbar`` folder itself.
``verdicts_long.csv`` is a flat table derived by the judgerisk team from the ``result.json`` files
(columns ``subset, item_idx, judge, strategy, gold, winner_swap_false, winner_swap_true``); with
``source="json"`` the loader rebuilds the same table from the ``result.json`` files of the original
repository, so a user who cloned LLMBar needs nothing else.

How the discrete verdicts become a panel
----------------------------------------
LLMBar has no probabilities: each judge names a winner (``1`` = output_1 = the panel's answer A,
``2`` = answer B), already mapped back to the original indexing when the judge saw the swapped order.
A verdict becomes a canonical probability with a fixed smoothing :math:`\\varepsilon`:

.. math:: p_{ijc} = 1 - \\varepsilon \\text{ if A wins}, \\qquad p_{ijc} = \\varepsilon \\text{ if B wins},

so :math:`m_{ijc} = \\pm\\operatorname{logit}(1 - \\varepsilon)` (:math:`\\pm 2.944` at the default
:math:`\\varepsilon = 0.05`). Consequences, documented because they shape every downstream number:

* **LMM** (Methods reference §2): every margin has the same magnitude, so :math:`\\varepsilon` sets the scale of the
  margins. The fitted :math:`q, b, \\delta, \\kappa` scale with it, but the ridge penalties do not, so the
  fit (and SCUR) changes a little with :math:`\\varepsilon` — the chapter ``10_real_panels`` shows the
  sensitivity of the AUROCs to :math:`\\varepsilon \\in \\{.01, .05, .1, .2\\}`.
* **SCUR**: *S* (order family, probability scale) is :math:`(1 - 2\\varepsilon)` times the fraction of
  judges that flip, a monotone rescaling, so :math:`z^S` does not depend on :math:`\\varepsilon`;
  *U* and *C* do, through the LMM and through the cross-entropy of :math:`p` against :math:`\\hat p`.
* **Baselines**: :math:`\\bar p = \\varepsilon + (1 - 2\\varepsilon) \\cdot` (vote share for A), so PE
  ranks items exactly like VE, and MSP is the constant :math:`\\varepsilon` (AUROC .5). This is a
  property of discrete verdicts, not of the methods.

Conditions
----------
``swap = False`` is the ``original`` condition and ``swap = True`` is ``swap`` (its winner is already
canonical). LLMBar ran two prompts on its five own subsets: ``Vanilla_NoRules`` (the paper's *Vanilla*
prompt) and ``Vanilla`` (the paper's *Vanilla\\**, i.e. Vanilla plus a list of evaluation rules).
judgerisk maps the rules prompt to the rubric conditions: by default (``rubric_strategy="Vanilla"``)
``Vanilla_NoRules`` gives ``original``/``swap`` and ``Vanilla`` gives ``rubric1``/``swap_rubric1``, so
both perturbation families (order and rubric) are present on the LLMBar subsets. ``rubric_strategy=None``
keeps only the base prompt. The ``Processed`` sets (FairEval, LLMEval², MT-Bench) only have
``Vanilla_NoRules`` and four judges (no Falcon, no ChatGPT-0301); their rubric cells are simply absent.

Missing verdicts
----------------
A ``null`` winner (the judge's text could not be parsed) is a missing cell: it gets no row in the long
panel, is counted, and is reported with a :class:`UserWarning` giving counts per judge and condition
(``panel.attrs["missing_cells"]`` holds the same counts, keyed ``"<judge>/<condition>"``). Nothing is dropped silently. An item with no
parseable original-condition verdict from any judge cannot be a panel item (Methods reference §1); such items are
removed with a warning naming them (there are none in the shared copy).

References
----------
Zeng, Z., Yu, J., Gao, T., Meng, Y., Goyal, T., Chen, D. (2024). Evaluating Large Language Models at
Evaluating Instruction Following. ICLR 2024. arXiv:2310.07641.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from judgerisk.datasets._missing import report_missing_cells
from judgerisk.datasets._paths import data_root
from judgerisk.datasets._registry import register_dataset
from judgerisk.panel import validate_panel

__all__ = [
    "LLMBAR_SUBSETS",
    "PROCESSED_SUBSETS",
    "LLMBAR_JUDGES",
    "load_llmbar_items",
    "load_llmbar_verdicts",
    "llmbar_panel",
    "load_llmbar_panel",
    "smooth_verdicts",
]

#: The five LLMBar subsets (6 judges, prompts ``Vanilla`` and ``Vanilla_NoRules``).
LLMBAR_SUBSETS = (
    "LLMBar/Natural",
    "LLMBar/Adversarial/Neighbor",
    "LLMBar/Adversarial/GPTInst",
    "LLMBar/Adversarial/GPTOut",
    "LLMBar/Adversarial/Manual",
)
#: The three re-processed sets (4 judges, prompt ``Vanilla_NoRules`` only).
PROCESSED_SUBSETS = ("Processed/FairEval", "Processed/LLMEval2", "Processed/MT-Bench")
#: Judges whose outputs are in the shared copy (``LLMEvaluator/evaluators/config`` names).
LLMBAR_JUDGES = ("GPT-4", "ChatGPT", "ChatGPT-0301", "LLaMA2", "PaLM2", "Falcon")
_STRATEGIES = ("Vanilla_NoRules", "Vanilla")
_VERDICT_COLUMNS = ["subset", "item_idx", "judge", "strategy", "gold", "swap", "winner"]


def _llmbar_root(path: str | Path | None) -> Path:
    """Resolve the ``llmbar`` folder from a data root or the folder itself."""
    root = data_root(path)
    for cand in (root / "llmbar", root):
        if (cand / "verdicts_long.csv").is_file() or (cand / "Dataset").is_dir():
            return cand
    raise FileNotFoundError(
        f"no LLMBar data under {root}: expected {root / 'llmbar' / 'verdicts_long.csv'} or "
        f"{root / 'llmbar' / 'Dataset'} (clone https://github.com/princeton-nlp/LLMBar and point "
        "`path` / $JUDGERISK_DATA at the folder holding it as `llmbar/`)"
    )


def _resolve_subsets(subsets: str | Iterable[str]) -> tuple[str, ...]:
    named = {
        "LLMBar": LLMBAR_SUBSETS,
        "Processed": PROCESSED_SUBSETS,
        "all": LLMBAR_SUBSETS + PROCESSED_SUBSETS,
    }
    if isinstance(subsets, str):
        out = named.get(subsets, (subsets,))
    else:
        out = tuple(subsets)
    unknown = sorted(set(out) - set(LLMBAR_SUBSETS + PROCESSED_SUBSETS))
    if unknown:
        raise ValueError(
            f"unknown LLMBar subset(s) {unknown}; choose from 'LLMBar', 'Processed', 'all' or "
            f"{list(LLMBAR_SUBSETS + PROCESSED_SUBSETS)}"
        )
    return out


def _subset_dir(root: Path, subset: str) -> Path:
    d = root / "Dataset" / subset
    if not d.is_dir() and subset.endswith("LLMEval2"):
        d = root / "Dataset" / "Processed" / "LLMEval^2"
    return d


def _verdicts_from_json(root: Path, subsets: tuple[str, ...]) -> pd.DataFrame:
    """Rebuild the flat verdict table from the original ``result.json`` files."""
    frames = []
    for subset in subsets:
        sdir = _subset_dir(root, subset)
        if not sdir.is_dir():
            raise FileNotFoundError(f"LLMBar subset folder not found: {sdir}")
        for res in sorted(sdir.glob("evaluators/*/*/result.json")):
            strategy, judge = res.parent.name, res.parent.parent.name
            if strategy not in _STRATEGIES:
                continue
            entries = json.loads(res.read_text())
            gold = [e["label"] for e in entries]
            for swap in (False, True):
                key = f"swap = {swap}"
                win = [e["results"][0][key]["winner"] for e in entries]
                frames.append(
                    pd.DataFrame(
                        {
                            "subset": subset,
                            "item_idx": np.arange(len(entries)),
                            "judge": judge,
                            "strategy": strategy,
                            "gold": gold,
                            "swap": swap,
                            "winner": pd.to_numeric(pd.Series(win, dtype=object), errors="coerce"),
                        }
                    )
                )
    if not frames:
        raise FileNotFoundError(f"no evaluators/*/*/result.json files under {root / 'Dataset'}")
    return pd.concat(frames, ignore_index=True)


def _verdicts_from_csv(root: Path, subsets: tuple[str, ...]) -> pd.DataFrame:
    csv = root / "verdicts_long.csv"
    if not csv.is_file():
        raise FileNotFoundError(f"{csv} not found; use source='json' to read the result.json files")
    wide = pd.read_csv(csv)
    need = {"subset", "item_idx", "judge", "strategy", "gold"}
    need |= {"winner_swap_false", "winner_swap_true"}
    missing = need - set(wide.columns)
    if missing:
        raise ValueError(f"{csv} lacks column(s) {sorted(missing)}")
    wide = wide[wide["subset"].isin(subsets)]
    long = wide.melt(
        id_vars=["subset", "item_idx", "judge", "strategy", "gold"],
        value_vars=["winner_swap_false", "winner_swap_true"],
        var_name="swap",
        value_name="winner",
    )
    long["swap"] = long["swap"].eq("winner_swap_true")
    return long


def load_llmbar_verdicts(
    path: str | Path | None = None,
    *,
    subsets: str | Iterable[str] = "LLMBar",
    source: str = "auto",
) -> pd.DataFrame:
    """Read LLMBar's raw verdicts as a tidy table (one row per item, judge, prompt and order).

    Parameters
    ----------
    path : str or Path, optional
        Data root (holding ``llmbar/``) or the ``llmbar`` folder; default ``$JUDGERISK_DATA`` (an error
        naming it when it is unset).
    subsets : {"LLMBar", "Processed", "all"} or iterable of str, default "LLMBar"
        Which subsets to read (see :data:`LLMBAR_SUBSETS`, :data:`PROCESSED_SUBSETS`).
    source : {"auto", "csv", "json"}, default "auto"
        ``"csv"`` reads the flat ``verdicts_long.csv``; ``"json"`` reads the original repository's
        ``evaluators/<judge>/<strategy>/result.json`` files (the same numbers); ``"auto"`` reads
        the flat table when it is there and the repository's files otherwise, so a plain clone
        of LLMBar needs nothing else.

    Returns
    -------
    pandas.DataFrame
        Columns ``subset, item_idx, judge, strategy, gold (1|2), swap (bool), winner`` (float:
        1.0, 2.0, or NaN for an unparseable verdict), sorted.
    """
    root = _llmbar_root(path)
    subs = _resolve_subsets(subsets)
    if source == "auto":
        source = "csv" if (root / "verdicts_long.csv").is_file() else "json"
    if source == "csv":
        out = _verdicts_from_csv(root, subs)
    elif source == "json":
        out = _verdicts_from_json(root, subs)
    else:
        raise ValueError(f"source must be 'auto', 'csv' or 'json', got {source!r}")
    bad = out["winner"].notna() & ~out["winner"].isin([1, 2])
    if bad.any():
        raise ValueError(
            f"LLMBar winner values other than 1/2/null: {out.loc[bad, 'winner'].unique()[:10]}"
        )
    out = out.astype({"item_idx": "int64", "gold": "int64", "winner": "float64", "swap": bool})
    out = out[_VERDICT_COLUMNS].sort_values(["subset", "item_idx", "judge", "strategy", "swap"])
    return out.reset_index(drop=True)


def smooth_verdicts(winner_is_a: np.ndarray, epsilon: float = 0.05) -> np.ndarray:
    """Map binary verdicts (1 = answer A wins) to canonical probabilities ``1 - ε`` / ``ε``.

    Parameters
    ----------
    winner_is_a : array of bool or {0, 1}
        Whether the judge chose the original answer A.
    epsilon : float, default 0.05
        Smoothing, in (0, 0.5).

    Returns
    -------
    numpy.ndarray
        :math:`p = \\varepsilon + (1 - 2\\varepsilon)\\,y`.
    """
    if not 0.0 < epsilon < 0.5:
        raise ValueError(f"epsilon must be in (0, 0.5), got {epsilon}")
    y = np.asarray(winner_is_a, dtype=np.float64)
    return epsilon + (1.0 - 2.0 * epsilon) * y


def llmbar_panel(
    verdicts: pd.DataFrame,
    *,
    epsilon: float = 0.05,
    base_strategy: str = "Vanilla_NoRules",
    rubric_strategy: str | None = "Vanilla",
    judges: Iterable[str] | None = None,
) -> pd.DataFrame:
    """Turn :func:`load_llmbar_verdicts` output into a validated panel.

    Parameters
    ----------
    verdicts : DataFrame
        The tidy verdict table.
    epsilon : float, default 0.05
        Smoothing of the 0/1 verdicts (see the module docstring).
    base_strategy : str, default "Vanilla_NoRules"
        Prompt giving the ``original`` (swap False) and ``swap`` (swap True) conditions.
    rubric_strategy : str or None, default "Vanilla"
        Prompt giving ``rubric1`` / ``swap_rubric1``; ``None`` keeps the base prompt only.
    judges : iterable of str, optional
        Restrict to these judges.

    Returns
    -------
    pandas.DataFrame
        Validated panel (``judgerisk.panel`` contract) with item ids ``"<subset>/<item_idx>"``, gold
        ``"A"``/``"B"``, and the extra column ``subset``. ``attrs["missing_cells"]`` counts the
        unparseable verdicts per ``"<judge>/<condition>"`` (a dict); ``attrs["epsilon"]`` records the smoothing.

    Warns
    -----
    UserWarning
        With the counts of unparseable (missing) verdicts, and for items removed because no judge
        gave a parseable original-condition verdict.
    """
    cond_of = {(base_strategy, False): "original", (base_strategy, True): "swap"}
    if rubric_strategy is not None:
        if rubric_strategy == base_strategy:
            raise ValueError("rubric_strategy must differ from base_strategy")
        cond_of.update(
            {(rubric_strategy, False): "rubric1", (rubric_strategy, True): "swap_rubric1"}
        )
    v = verdicts
    if judges is not None:
        judges = list(judges)
        unknown = sorted(set(judges) - set(v["judge"].unique()))
        if unknown:
            raise ValueError(f"unknown LLMBar judge(s) {unknown}")
        v = v[v["judge"].isin(judges)]
    keys = pd.MultiIndex.from_arrays([v["strategy"], v["swap"].astype(bool)])
    cond = pd.Series([cond_of.get(k) for k in keys], index=v.index, dtype=object)
    v = v.assign(condition=cond)[cond.notna()]
    v = v.assign(item=v["subset"] + "/" + v["item_idx"].astype(str))
    miss = v["winner"].isna()
    missing_cells = report_missing_cells(
        v[miss],
        ["judge", "condition"],
        f"LLMBar: {{n}} unparseable of {len(v)} verdicts, left as missing cells ({{detail}})",
    )
    v = v[~miss]
    seen = v.loc[v["condition"].eq("original"), "item"].unique()
    orphan = sorted(set(v["item"]) - set(seen))
    if orphan:
        warnings.warn(
            f"LLMBar: {len(orphan)} item(s) have no parseable original-condition verdict and are "
            f"removed: {orphan[:10]}",
            UserWarning,
            stacklevel=2,
        )
        v = v[~v["item"].isin(orphan)]
    panel = pd.DataFrame(
        {
            "item": v["item"].astype(str).to_numpy(),
            "judge": v["judge"].astype(str).to_numpy(),
            "condition": v["condition"].astype(str).to_numpy(),
            "p": smooth_verdicts(v["winner"].to_numpy() == 1, epsilon),
            "gold": np.where(v["gold"].to_numpy() == 1, "A", "B"),
            "subset": v["subset"].astype(str).to_numpy(),
        }
    )
    out = validate_panel(panel)
    out.attrs["missing_cells"] = missing_cells
    out.attrs["epsilon"] = epsilon
    return out


@register_dataset("llmbar", markers=("verdicts_long.csv", "Dataset"))
def load_llmbar_panel(
    path: str | Path | None = None,
    *,
    subsets: str | Iterable[str] = "LLMBar",
    epsilon: float = 0.05,
    base_strategy: str = "Vanilla_NoRules",
    rubric_strategy: str | None = "Vanilla",
    judges: Iterable[str] | None = None,
    source: str = "auto",
) -> pd.DataFrame:
    """Load LLMBar as a validated panel (both orders, optional rules prompt as ``rubric1``).

    Parameters
    ----------
    path, subsets, source
        See :func:`load_llmbar_verdicts`.
    epsilon, base_strategy, rubric_strategy, judges
        See :func:`llmbar_panel`.

    Returns
    -------
    pandas.DataFrame
        The validated panel.

    Examples
    --------
    With the data under ``$JUDGERISK_DATA/llmbar`` (not shipped with the package)::

        panel = load_llmbar_panel(subsets="LLMBar", epsilon=0.05)
        panel.groupby("condition").size()  # rows per condition
    """
    verdicts = load_llmbar_verdicts(path, subsets=subsets, source=source)
    return llmbar_panel(
        verdicts,
        epsilon=epsilon,
        base_strategy=base_strategy,
        rubric_strategy=rubric_strategy,
        judges=judges,
    )


def load_llmbar_items(
    path: str | Path | None = None, *, subsets: str | Iterable[str] = "LLMBar"
) -> pd.DataFrame:
    """Read LLMBar's items (instruction, two outputs, gold) as a judge's input table.

    Parameters
    ----------
    path : str or Path, optional
        Data root (holding ``llmbar/``) or the ``llmbar`` folder; see :func:`load_llmbar_verdicts`.
    subsets : {"LLMBar", "Processed", "all"} or iterable of str, default "LLMBar"
        Which subsets' ``dataset.json`` to read.

    Returns
    -------
    pandas.DataFrame
        ``item, prompt, answer_a, answer_b, gold, subset`` with ``item = "<subset>/<index>"`` (the
        ids of :func:`llmbar_panel`), ``answer_a = output_1``, ``answer_b = output_2`` and gold
        ``"A"`` / ``"B"`` from ``label`` 1 / 2, in subset order then file order.

    Raises
    ------
    ValueError
        Naming the file, entry and key of a malformed entry.
    """
    root = _llmbar_root(path)
    frames = []
    for subset in _resolve_subsets(subsets):
        file = _subset_dir(root, subset) / "dataset.json"
        if not file.is_file():
            raise FileNotFoundError(f"LLMBar items file not found: {file}")
        entries = json.loads(file.read_text(encoding="utf-8"))
        for k, e in enumerate(entries):
            for key in ("input", "output_1", "output_2"):
                if not isinstance(e.get(key), str) or not e[key].strip():
                    raise ValueError(f"{file}: entry {k} has an empty or missing {key!r}")
            if e.get("label") not in (1, 2):
                raise ValueError(f"{file}: entry {k} has label {e.get('label')!r}, need 1 or 2")
        frames.append(
            pd.DataFrame(
                {
                    "item": [f"{subset}/{k}" for k in range(len(entries))],
                    "prompt": [e["input"] for e in entries],
                    "answer_a": [e["output_1"] for e in entries],
                    "answer_b": [e["output_2"] for e in entries],
                    "gold": ["A" if e["label"] == 1 else "B" for e in entries],
                    "subset": subset,
                }
            )
        )
    return pd.concat(frames, ignore_index=True)
