"""What SCUR's parts and reconstructed options contribute, with paired intervals.

Both tables read the output of :func:`judgerisk._book.studies.pooled.pooled_scores` computed with
``ablation=True`` and ``options=OPTIONS``: one latent-measurement-model fit per seed, reused by
every subset of signals and every option.

* :func:`ablation_table`: SCUR from every non-empty subset of U, C, S against SCUR from all
  three (AUROC difference with a paired bootstrap interval).
* :func:`gain_carrier`: the signal whose removal costs the most AUROC.
* :func:`option_table`: each reconstructed option against the default, and whether the
  verdicts of SCUR against the baselines (:data:`judgerisk._book.studies.paired.BEATS_RULE`) change.

References
----------
- "Can We Trust This Evaluation? Instance-Level Reliability of LLM-as-a-Judge", Section 3
  (the signals U, C, S and their noisy-OR).
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from judgerisk._book.studies.paired import compare_pairs, compare_scores
from judgerisk._book.studies.pooled import ABLATION, OPTIONS
from judgerisk.options import ANALYSIS
from judgerisk.risk.baselines import BASELINES

__all__ = [
    "FULL",
    "ablation_table",
    "family_table",
    "gain_carrier",
    "option_table",
]

#: Column of SCUR from all three signals in the ablation.
FULL = "U+C+S"


def ablation_table(
    pooled: pd.DataFrame,
    subsets: Sequence[str] = ("all", "hc", "matched"),
    *,
    n_boot: int = ANALYSIS.n_boot,
    random_state: int | None = 0,
) -> pd.DataFrame:
    """Every subset of the signals against all three, per item subset.

    Returns
    -------
    pandas.DataFrame
        :func:`judgerisk._book.studies.paired.compare_scores` with reference ``"U+C+S"`` and the other
        six combinations: ``diff`` = AUROC(U+C+S) - AUROC(combination).
    """
    others = [c for c in ABLATION if c != FULL and c in pooled.columns]
    return compare_scores(pooled, FULL, others, subsets, n_boot=n_boot, random_state=random_state)


def gain_carrier(table: pd.DataFrame, subset: str = "all") -> pd.Series:
    """The signal whose removal costs the most AUROC, from an :func:`ablation_table`.

    Parameters
    ----------
    table : pandas.DataFrame
        Output of :func:`ablation_table`.
    subset : str, default "all"

    Returns
    -------
    pandas.Series
        ``signal`` (U, C or S), ``without`` (the pair left), ``cost`` (AUROC of all three minus
        the pair's), ``low``, ``high`` (its 95 % interval), ``verdict`` (whether all three beat
        the pair), ``best_alone`` (the single signal with the highest AUROC) and
        ``best_alone_auroc``.
    """
    rows = table[table["subset"] == subset].set_index("method")
    pairs = {s: "+".join(x for x in ("U", "C", "S") if x != s) for s in ("U", "C", "S")}
    pairs = {s: p for s, p in pairs.items() if p in rows.index}
    if not pairs:
        raise ValueError(f"no pair of signals in the ablation table for subset {subset!r}")
    signal = max(pairs, key=lambda s: rows.loc[pairs[s], "diff"])
    row = rows.loc[pairs[signal]]
    singles = rows.loc[[s for s in ("U", "C", "S") if s in rows.index], "auroc"]
    return pd.Series(
        {
            "signal": signal,
            "without": pairs[signal],
            "cost": row["diff"],
            "low": row["low"],
            "high": row["high"],
            "verdict": row["verdict"],
            "best_alone": singles.idxmax(),
            "best_alone_auroc": singles.max(),
        }
    )


def option_table(
    pooled: pd.DataFrame,
    options: Sequence[str] = tuple(OPTIONS),
    subsets: Sequence[str] = ("all", "hc", "matched"),
    baselines: Sequence[str] = BASELINES,
    *,
    n_boot: int = ANALYSIS.n_boot,
    random_state: int | None = 0,
) -> pd.DataFrame:
    """Each reconstructed option of SCUR against the default, and against the baselines.

    Returns
    -------
    pandas.DataFrame
        One row per option and subset: ``option, subset, auroc_default, auroc_option, diff``
        (option minus default), ``low, high, verdict`` (the option against the default),
        ``changed`` (how many of the verdicts "SCUR beats / ties with / trails baseline b"
        differ between the option and the default), ``reversed`` (how many of them flip between
        "beats" and "trails"), ``n_baselines`` and ``survives`` (no verdict changed).
    """
    base = [b for b in baselines if b in pooled.columns]
    pairs = [("scur", b) for b in base]
    for option in options:
        pairs += [(option, "scur")] + [(option, b) for b in base]
    table = compare_pairs(
        pooled, pairs, subsets, n_boot=n_boot, random_state=random_state
    ).set_index(["subset", "ref", "method"])
    rows = []
    for option in options:
        for subset in subsets:
            d = table.loc[(subset, option, "scur")]
            new = table.loc[[(subset, option, b) for b in base], "verdict"].to_numpy()
            old = table.loc[[(subset, "scur", b) for b in base], "verdict"].to_numpy()
            reversed_ = ((new == "beats") & (old == "trails")) | (
                (new == "trails") & (old == "beats")
            )
            rows.append(
                {
                    "option": option,
                    "subset": subset,
                    "auroc_default": d["auroc"],
                    "auroc_option": d["auroc_ref"],
                    "diff": d["diff"],
                    "low": d["low"],
                    "high": d["high"],
                    "verdict": d["verdict"],
                    "changed": int((new != old).sum()),
                    "reversed": int(reversed_.sum()),
                    "n_baselines": len(base),
                    "survives": bool((new == old).all()),
                }
            )
    return pd.DataFrame(rows)


def family_table(
    pooled: pd.DataFrame,
    option: str = "S debiased (log-odds)",
    subsets: Sequence[str] = ("all", "hc", "matched"),
    *,
    n_boot: int = ANALYSIS.n_boot,
    random_state: int | None = 0,
) -> pd.DataFrame:
    """Each S family alone on the log-odds scale against the probability scale.

    Returns
    -------
    pandas.DataFrame
        One row per family with an observed pair and subset: ``family, subset,
        auroc_prob, auroc_option, diff`` (option minus probability scale), ``low, high,
        verdict``.
    """
    tables = []
    for family in ("order", "rubric"):
        prob, alt = f"z_S_{family}", f"{option}: z_S_{family}"
        if prob not in pooled.columns or alt not in pooled.columns or pooled[prob].isna().all():
            continue
        t = compare_scores(pooled, alt, [prob], subsets, n_boot=n_boot, random_state=random_state)
        tables.append(
            t.rename(columns={"auroc_ref": "auroc_option", "auroc": "auroc_prob"})
            .drop(columns="method")
            .assign(family=family)
        )
    cols = ["family", "subset", "auroc_prob", "auroc_option", "diff", "low", "high", "verdict"]
    if not tables:
        return pd.DataFrame(columns=cols)
    return pd.concat(tables, ignore_index=True)[cols]
