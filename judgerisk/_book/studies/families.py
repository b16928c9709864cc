"""Which perturbations reveal risk? Per-family sensitivity on simulated and real panels.

The book's chapter "Which perturbations reveal risk?" asks three things of the perturbation
families (:mod:`judgerisk.families`):

1. **Recovery** (:func:`family_recovery`, :func:`recovery_study`): on simulated panels whose
   items are sensitive to one family (:func:`judgerisk.simulate.simulate_panel`, knobs
   ``<family>_sensitive_rate`` / ``<family>_sensitivity``), does each ``S_<family>`` single out
   the items planted for its own family, and not those of another?
2. **Ranking the errors of a real judge** (:func:`one_judge_scores`, :func:`score_intervals`):
   for one judge under every family, the AUROC of each family's S for the judge's errors, with
   paired bootstrap intervals against PE and against the S of the paper's two families.
3. **Biases** (:func:`position_bias`, :func:`padding_shift`): what the label family says about
   position bias (does the judge prefer the first slot, or the letter A?) and the verbosity
   family about length bias (does padding an answer help it?).

No gold label enters a score; gold only defines the errors.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from judgerisk._book.studies.paired import auroc_interval, paired_auroc_difference, verdict
from judgerisk.families import FAMILIES, family_pairs, get_family, parse_condition, swapped_twin
from judgerisk.families._builtin import LABEL_SETS
from judgerisk.options import ANALYSIS, SIMULATE
from judgerisk.panel import ORIGINAL, PanelError, gold_labels, validate_panel
from judgerisk.risk.metrics import auroc
from judgerisk.risk.signals import binary_entropy, signal_s
from judgerisk.simulate import simulate_panel

__all__ = [
    "PAPER_FAMILIES",
    "family_recovery",
    "family_table",
    "one_judge_scores",
    "padding_shift",
    "position_bias",
    "recovery_study",
    "score_intervals",
]

#: The paper's two families: the S they define is the comparison for every other family.
PAPER_FAMILIES: tuple[str, ...] = ("order", "rubric")


def family_table(conditions: Sequence[str]) -> pd.DataFrame:
    """The registered families and the pairs they form among ``conditions``.

    Returns
    -------
    pandas.DataFrame
        By family (registration order): ``family`` (display name), ``invariance``,
        ``conditions`` (those of ``conditions`` the family's pairs use) and ``pairs`` (``c vs
        c'``), empty for a family absent from ``conditions``.
    """
    present = family_pairs(conditions)
    rows = []
    for name, family in FAMILIES.items():
        pairs = present.get(name, [])
        used = list(dict.fromkeys(c for pair in pairs for c in pair))
        rows.append(
            {
                "name": name,
                "family": family.label or name,
                "invariance": family.invariance,
                "conditions": ", ".join(used),
                "pairs": "; ".join(f"{a} vs {b}" for a, b in pairs),
            }
        )
    return pd.DataFrame(rows).set_index("name")


# --------------------------------------------------------------------------- recovery
def family_recovery(
    scores: pd.DataFrame, truth_items: pd.DataFrame, families: Sequence[str] | None = None
) -> pd.DataFrame:
    """AUROC of each ``S_<g>`` for the items planted as sensitive to each family ``F``.

    Parameters
    ----------
    scores : pandas.DataFrame
        By item, with ``S_<family>`` columns (:func:`judgerisk.risk.signals.signal_s`, or a
        score table of :func:`judgerisk.engine.certified.score_panel`).
    truth_items : pandas.DataFrame
        ``SimulationTruth.items``: by item, the flags ``<family>_sensitive``.
    families : sequence of str, optional
        The families to report (default: every family with a flag and an S value for every
        item).

    Returns
    -------
    pandas.DataFrame
        Rows: the planted family ``F``; columns: ``S_<g>``; values: the AUROC of ``S_g`` for
        the items sensitive to ``F`` (positive class) against the others. The diagonal is each
        family's own recovery; 0.5 is chance.
    """
    names = [
        f
        for f in (families or list(FAMILIES))
        if f"{f}_sensitive" in truth_items.columns
        and f"S_{f}" in scores.columns
        and scores[f"S_{f}"].notna().all()
    ]
    if not names:
        raise ValueError("no family has both a <family>_sensitive flag and an S_<family> column")
    truth = truth_items.reindex(scores.index)
    out = pd.DataFrame(index=pd.Index(names, name="planted"), columns=[f"S_{g}" for g in names])
    for f in names:
        flag = truth[f"{f}_sensitive"].astype(int)
        for g in names:
            out.loc[f, f"S_{g}"] = auroc(scores[f"S_{g}"], flag)
    return out.astype(float)


def recovery_study(
    levels: Iterable[float],
    families: Sequence[str] = ("label", "format", "verbosity"),
    *,
    variants: int = 2,
    n_items: int = 400,
    n_judges: int = SIMULATE.n_judges,
    seeds: Iterable[int] = (0,),
    **knobs: float,
) -> pd.DataFrame:
    """Recovery of each family's sensitivity as the planted shift grows.

    For each level and seed, a panel is simulated with the conditions ``original``, ``swap``
    and ``variants`` variants of each family, every family's ``<family>_sensitivity`` set to
    the level, and the other knobs as given; the AUROC of each ``S_<family>`` for its own
    family's sensitive items is compared with the best AUROC of another family's S for them.

    Returns
    -------
    pandas.DataFrame
        Tidy: ``family, sensitivity, seed, own, other`` (``other``: the largest AUROC of
        another family's S for this family's sensitive items).
    """
    conditions = (
        ORIGINAL,
        "swap",
        *(get_family(f).condition(k) for f in families for k in range(1, variants + 1)),
    )
    rows = []
    for level in levels:
        for seed in seeds:
            sim = simulate_panel(
                n_items=n_items,
                n_judges=n_judges,
                conditions=conditions,
                seed=int(seed),
                **{f"{f}_sensitivity": float(level) for f in families},
                **knobs,
            )
            table = family_recovery(signal_s(sim.data), sim.truth.items, families)
            for f in table.index:
                others = table.loc[f].drop(f"S_{f}")
                rows.append((f, float(level), int(seed), table.loc[f, f"S_{f}"], others.max()))
    return pd.DataFrame(rows, columns=["family", "sensitivity", "seed", "own", "other"])


# --------------------------------------------------------------------------- one judge
def _one_judge(panel: pd.DataFrame) -> pd.DataFrame:
    panel = validate_panel(panel)
    judges = pd.unique(panel["judge"])
    if len(judges) != 1:
        raise PanelError(f"one_judge_scores needs a panel of one judge, got {list(judges)}")
    if "gold" not in panel.columns:
        raise PanelError("one_judge_scores needs gold labels (they define the errors)")
    return panel


def _ecdf(x: pd.Series) -> pd.Series:
    """The empirical CDF of a score over the items, ``F(x_i) = #{k: x_k <= x_i} / n``."""
    return x.rank(method="max", pct=True)


def one_judge_scores(panel: pd.DataFrame, verdict: str = "original") -> pd.DataFrame:
    """Per item of one judge: its error and every risk score a perturbation family gives.

    Parameters
    ----------
    panel : pandas.DataFrame
        One judge under the original condition and any family's conditions, with ``gold``.
    verdict : {"original", "bpe"}, default "original"
        Whose errors: the verdict of the original prompt (``p > 1/2``), or the order-averaged
        verdict of BPE (``(p_original + p_swap) / 2 >= 1/2``, SCOPE's rule).

    Returns
    -------
    pandas.DataFrame
        By item (labelled items only): ``error`` (0/1), ``pe`` (binary entropy of the original
        probability, bits), ``bpe`` (binary entropy of the order average, when ``swap`` is
        present), one ``S_<family>`` per family with a pair present (the raw signal of
        :func:`judgerisk.risk.signals.signal_s`), ``s_paper`` (the maximum of the ECDF values
        of ``S_order`` and ``S_rubric``, the paper's S without reference splits) and
        ``s_all`` (the same maximum over every family present).

    Notes
    -----
    With one judge there is no panel to fit and no leave-one-judge-out prediction, so the
    families' S are the raw mean absolute probability changes and their combination is the
    maximum of their ECDFs over the items (Methods reference §4, without the reference split:
    no gold enters it, so nothing leaks).
    """
    if verdict not in ("original", "bpe"):
        raise ValueError(f"verdict must be 'original' or 'bpe', got {verdict!r}")
    panel = _one_judge(panel)
    wide = panel.pivot(index="item", columns="condition", values="p")
    gold = gold_labels(panel)
    items = wide.index.intersection(gold.index)
    p0 = wide[ORIGINAL].reindex(items)
    out = pd.DataFrame(index=items)
    if "swap" in wide.columns:
        pbar = (p0 + wide["swap"].reindex(items)) / 2
        out["bpe"] = binary_entropy(pbar.to_numpy(), base=math.e)
    if verdict == "bpe":
        if "bpe" not in out.columns:
            raise PanelError("verdict='bpe' needs the swap condition")
        decided = (pbar >= 0.5).astype(float)
    else:
        decided = pd.Series(np.where(p0 > 0.5, 1.0, np.where(p0 < 0.5, 0.0, 0.5)), index=items)
    out.insert(0, "error", (decided - gold.reindex(items)).abs().round().astype(np.int8))
    out.insert(1, "pe", binary_entropy(p0.to_numpy()))
    present = family_pairs(pd.unique(panel["condition"]))
    raw = signal_s(panel).reindex(items)
    for family in present:
        out[f"S_{family}"] = raw[f"S_{family}"]
    z = {f: _ecdf(out[f"S_{f}"]) for f in present}
    paper = [z[f] for f in PAPER_FAMILIES if f in z]
    if paper:
        out["s_paper"] = pd.concat(paper, axis=1).max(axis=1)
    if z:
        out["s_all"] = pd.concat(list(z.values()), axis=1).max(axis=1)
    out.index.name = "item"
    return out


def score_intervals(
    table: pd.DataFrame,
    scores: Sequence[str] | None = None,
    against: Sequence[str] = ("pe", "s_paper"),
    *,
    n_boot: int = ANALYSIS.n_boot,
    level: float = ANALYSIS.level,
    random_state: int | None = 0,
) -> pd.DataFrame:
    """AUROC of each score for the errors, with its interval and paired differences.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`one_judge_scores` output (an ``error`` column and score columns).
    scores : sequence of str, optional
        Scores to report (default: every column but ``error``).
    against : sequence of str, default ("pe", "s_paper")
        References: each row gets its AUROC difference to each, with a paired bootstrap
        interval (:func:`judgerisk._book.studies.paired.paired_auroc_difference`) and the verdict of
        :data:`judgerisk._book.studies.paired.BEATS_RULE`.
    n_boot, level, random_state
        The bootstrap (the same resamples for every score and every difference).

    Returns
    -------
    pandas.DataFrame
        Indexed by score: ``auroc, low, high``, then per reference ``ref``: ``diff_<ref>,
        low_<ref>, high_<ref>, verdict_<ref>`` (NaN / empty for the reference itself).
    """
    scores = [c for c in table.columns if c != "error"] if scores is None else list(scores)
    missing = sorted({*scores, *against} - set(table.columns))
    if missing:
        raise ValueError(f"no column(s) {missing} in the table; got {list(table.columns)}")
    err = table["error"].to_numpy()
    rows = {}
    for name in scores:
        x = table[name].to_numpy(float)
        a, lo, hi = auroc_interval(x, err, n_boot=n_boot, level=level, random_state=random_state)
        row: dict[str, float | str] = {"auroc": a, "low": lo, "high": hi}
        for ref in against:
            if ref == name:
                row.update({f"diff_{ref}": np.nan, f"low_{ref}": np.nan, f"high_{ref}": np.nan})
                row[f"verdict_{ref}"] = ""
                continue
            d = paired_auroc_difference(
                x, table[ref].to_numpy(float), err, n_boot=n_boot, level=level,
                random_state=random_state,
            )  # fmt: skip
            row.update({f"diff_{ref}": d.diff, f"low_{ref}": d.low, f"high_{ref}": d.high})
            row[f"verdict_{ref}"] = verdict(d.low, d.high)
        rows[name] = row
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("score")


# --------------------------------------------------------------------------- biases
def _labels_of(condition: str) -> str:
    spec = parse_condition(condition)
    if spec is None or spec.family != "label":
        return "A/B"
    return "/".join(LABEL_SETS.get(int(spec.variant or 0), ("?", "?")))


def _se(values: pd.Series) -> float:
    """Standard error of the mean over cells, :math:`\\mathrm{sd} / \\sqrt{n}` (NaN below 2)."""
    n = int(values.count())
    return float(values.std(ddof=1) / np.sqrt(n)) if n > 1 else float("nan")


def position_bias(panel: pd.DataFrame) -> pd.DataFrame:
    """How much the judge prefers the first-shown answer, under each labelling of the answers.

    For every unswapped condition ``c`` of the original prompt or of the label family whose
    swapped twin is present, the judge's probability that the *first-shown* answer wins is
    :math:`p_c` in the original order and :math:`1 - p_{swap\\_c}` after the swap (canonical
    :math:`p`). A judge without position bias gives each slot half the wins; a bias that stays
    when the labels change from ``A``/``B`` to ``1``/``2`` belongs to the position, one that
    goes with the letters belongs to the token.

    Returns
    -------
    pandas.DataFrame
        One row per labelling (``A/B``, ``1/2``, ``a/b``, ...): ``conditions`` (the pair),
        ``n_cells`` (judge x item cells in both orders), ``n_verdicts`` (twice as many: one per
        order), ``first_share`` (share of verdicts for the first-shown answer over both orders,
        a tie counting half), ``first_share_se`` (its standard error over cells, each cell's
        two verdicts averaged first, so that the two orders of one item count as one draw),
        ``p_first`` (mean
        probability of the first-shown answer) and ``order_flip`` (share of cells whose
        canonical verdict flips with the order).
    """
    panel = validate_panel(panel)
    conds = set(pd.unique(panel["condition"]))
    wide = panel.pivot_table(index=["item", "judge"], columns="condition", values=["p", "verdict"])
    rows = []
    for c in [ORIGINAL, *(f for f in sorted(conds) if _labels_of(f) != "A/B")]:
        spec = parse_condition(c)
        twin = swapped_twin(c)
        if spec is None or spec.swapped or twin not in conds:
            continue
        both = wide.loc[:, (slice(None), [c, twin])].dropna()
        first_p = pd.concat([both[("p", c)], 1 - both[("p", twin)]])
        first_v = pd.concat([both[("verdict", c)], 1 - both[("verdict", twin)]])
        flip = (both[("verdict", c)] - both[("verdict", twin)]).abs()
        per_cell = (both[("verdict", c)] + 1 - both[("verdict", twin)]) / 2  # both orders
        rows.append(
            {
                "labels": _labels_of(c),
                "conditions": f"{c} / {twin}",
                "n_cells": int(len(both)),
                "n_verdicts": int(2 * len(both)),
                "first_share": float(first_v.mean()),
                "first_share_se": _se(per_cell),
                "p_first": float(first_p.mean()),
                "order_flip": float(flip.mean()),
            }
        )
    if not rows:
        raise PanelError("position_bias needs a condition and its swapped twin (original/swap)")
    return pd.DataFrame(rows).set_index("labels")


def padding_shift(panel: pd.DataFrame) -> pd.DataFrame:
    """How far a content-free padding moves the verdict towards the padded answer.

    For each ``verbosity`` pair present, ``(verbosity<k>, original)`` or ``(swap_verbosity<k>,
    swap)``, the shift towards the padded answer is :math:`p_{v} - p_{0}` when answer A is
    padded (odd k) and :math:`p_{0} - p_{v}` when B is (canonical probabilities). A judge
    without length bias shifts by 0 on average; one that rewards length shifts in the padded
    answer's favour in both variants.

    Returns
    -------
    pandas.DataFrame
        One row per pair: ``padded`` ("A" / "B"), ``n_cells``, ``mean_shift`` (probability),
        ``mean_shift_se`` (its standard error over cells), ``towards`` / ``away`` (share of cells whose verdict moves to / from the padded answer).
    """
    panel = validate_panel(panel)
    pairs = family_pairs(pd.unique(panel["condition"])).get("verbosity", [])
    if not pairs:
        raise PanelError("padding_shift needs a verbosity condition and its base condition")
    wide = panel.pivot_table(index=["item", "judge"], columns="condition", values=["p", "verdict"])
    rows = []
    for c, base in pairs:
        variant = int(parse_condition(c).variant or 0)  # type: ignore[union-attr]
        sign = 1.0 if variant % 2 else -1.0  # +1: A padded
        both = wide.loc[:, (slice(None), [c, base])].dropna()
        shift = sign * (both[("p", c)] - both[("p", base)])
        moved = sign * (both[("verdict", c)] - both[("verdict", base)])
        rows.append(
            {
                "pair": f"{c} vs {base}",
                "padded": "A" if sign > 0 else "B",
                "n_cells": int(len(both)),
                "mean_shift": float(shift.mean()),
                "mean_shift_se": _se(shift),
                "towards": float((moved > 0).mean()),
                "away": float((moved < 0).mean()),
            }
        )
    return pd.DataFrame(rows).set_index("pair")
