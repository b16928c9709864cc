"""The panel contract and its checks: what a valid panel is, checked once where it enters.

:func:`validate_panel` checks a long table against the data contract (the columns, the ids,
the canonical log-odds, the declared conditions, the gold labels) and returns a normalised
copy; a reader (:func:`judgerisk.panel._files.load_panel`) or a public entry point calls it once,
and what it hands on is trusted. :func:`check_scorable` adds what scoring a panel needs (two
judges sharing items). The contract's columns: :mod:`judgerisk.panel`.

References
----------
Methods reference §1 (the judgerisk methods specification, after the instance-level panel
reliability paper and the SCOPE paper).
"""

from __future__ import annotations

import os
import unicodedata
import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy.special import expit, logit

from judgerisk.families import (
    DECLARED,
    FAMILIES,
    DeclaredConditions,
    condition_order,
    family_pairs,
    is_declared,
)
from judgerisk.options import CONDITIONS, ORIGINAL, InputError
from judgerisk.panel._codes import Coded, coded
from judgerisk.panel._overlap import distinct_patterns, judge_groups, no_shared_items
from judgerisk.validation import offending_rows

__all__ = [
    "CONDITIONS",
    "DECLARED",
    "ORIGINAL",
    "FAMILIES",
    "LOGIT_CLIP",
    "FEW_PATTERNS",
    "REQUIRED",
    "PanelError",
    "PanelFileNotFoundError",
    "validate_panel",
    "validate_frame",
    "missing_columns",
    "validate_scores",
    "check_scorable",
    "scorable_original_rows",
    "warn_where_thin",
    "refuse_unscorable",
    "warn_ties_and_orientation",
]

LOGIT_CLIP = 20.0
#: At most this many distinct verdict patterns across a panel's items (two judges with hard
#: verdicts give at most nine) and :func:`check_scorable` warns that its scores say little.
FEW_PATTERNS = 9
REQUIRED = ("item", "judge", "condition")
_MAX_ROWS_SHOWN = 10
# p and logit given together must agree to this tolerance on the probability scale
_P_LOGIT_ATOL = 1e-6


class PanelError(InputError):
    """Bad input: a table that breaks the data contract, an unreadable file, a bad option.

    The message names the file (when there is one), the row or line, the column and the
    value. Every reader, validation and option error of judgerisk is a ``PanelError`` or a
    subclass (:class:`judgerisk._provenance.OutputPathError` for output paths); the command
    line prints it as one line and exits with code 2.
    """


class PanelFileNotFoundError(PanelError, FileNotFoundError):
    """An input file that does not exist (a :class:`PanelError` and a ``FileNotFoundError``)."""


def _fail(message: str, df: pd.DataFrame, mask, columns: list[str]) -> PanelError:
    return PanelError(f"{message}; {offending_rows(df, mask, columns)}")


def validate_scores(
    scores: pd.DataFrame,
    columns: Sequence[str] = (),
    labels: Sequence[str] = (),
    name: str = "scores",
) -> pd.DataFrame:
    """Check a per-item table (scores, decisions, calibration labels) and index it by item.

    The companion of :func:`validate_panel` for the one-row-per-item tables of
    :func:`judgerisk.engine.certified.score_panel` and ``judgerisk score``.

    Parameters
    ----------
    scores : pandas.DataFrame
        With an ``item`` column (or index named ``item``): no missing or repeated item.
    columns : sequence of str
        Columns that must be present.
    labels : sequence of str
        Columns that must be present and hold only ``"A"`` / ``"B"`` (verdicts, gold).
    name : str
        The table's name in error messages.

    Returns
    -------
    pandas.DataFrame
        Indexed by item (a copy when the index was set here).

    Raises
    ------
    PanelError
        Naming the table, the column and up to ten offending items.
    """
    if not isinstance(scores, pd.DataFrame):
        raise PanelError(f"{name} must be a pandas DataFrame, got {type(scores).__name__}")
    if "item" in scores.columns:
        if scores["item"].isna().any():
            rows = list(np.flatnonzero(scores["item"].isna().to_numpy())[:10])
            raise PanelError(f"{name}: column 'item' has missing values at rows {rows}")
        if scores["item"].duplicated().any():
            dups = scores.loc[scores["item"].duplicated(), "item"].unique()[:10].tolist()
            raise PanelError(f"{name}: column 'item' has duplicated item(s) {dups}")
        scores = scores.set_index("item")
    elif scores.index.name != "item":
        raise PanelError(f"{name} needs an 'item' column; got columns {list(scores.columns)}")
    for col in (*columns, *labels):
        if col not in scores.columns:
            raise PanelError(f"{name} has no column {col!r}; columns are {list(scores.columns)}")
    for col in labels:
        bad = ~scores[col].isin(["A", "B"])
        if bad.any():
            raise PanelError(
                f"{name}: column {col!r} must be 'A' or 'B'; bad at items "
                f"{list(scores.index[bad][:10])} (values {list(scores[col][bad][:10])})"
            )
    return scores


def validate_panel(
    df: pd.DataFrame, conditions: tuple[str, ...] | DeclaredConditions | None = DECLARED
) -> pd.DataFrame:
    """Check a panel table against the data contract and return a normalised copy.

    Parameters
    ----------
    df : pandas.DataFrame
        Long table with ``item, judge, condition`` and ``logit`` and/or ``p``
        (canonical orientation), optionally ``gold`` ("A"/"B") and extra columns.
    conditions : tuple of str, DECLARED or None, default DECLARED
        Allowed condition names: :data:`judgerisk.families.DECLARED` (the default) allows
        every name a registered perturbation family declares (``original``, ``swap``,
        ``<family><k>``, ``swap_<family><k>``); a tuple allows those names (``"original"``
        must be among them); ``None`` allows any name (``"original"`` is still required for
        every item).

    Returns
    -------
    pandas.DataFrame
        A copy with columns ``item, judge, condition, logit, p, verdict[, gold]`` followed
        by any extra input columns, sorted by item, judge and condition (allowed order),
        with a fresh RangeIndex. ``logit`` is clipped to ``[-20, 20]``,
        ``p = sigmoid(logit)`` of the clipped logit, and ``verdict`` 1.0 (``logit > 0``),
        0.0 (``logit < 0``) or 0.5 (a tie, ``logit == 0``: half a vote for each answer).

    Raises
    ------
    PanelError
        On a missing required column, an empty table, missing ids, probabilities outside
        [0, 1] or NaN, NaN or infinite logits, ``logit`` and ``p`` that disagree,
        duplicate (item, judge, condition), unknown conditions, gold values other than
        A/B or differing within one item, items with no original-condition response,
        duplicate columns, ids that are lists or objects, and empty or whitespace-only judge
        names. The message names the column and up to ten offending rows.

    Warns
    -----
    UserWarning
        When judge names that differ only by Unicode form (NFC / NFD) or surrounding
        whitespace are merged, and when a supplied ``verdict`` column differs from
        ``1[logit > 0]``, which replaces it (the count of differing rows is given).
    """
    return validate_frame(df, conditions, copy=True)


def validate_frame(
    df: pd.DataFrame,
    conditions: tuple[str, ...] | DeclaredConditions | None = DECLARED,
    *,
    copy: bool = True,
) -> pd.DataFrame:
    """:func:`validate_panel`; ``copy=False`` when the caller gives ``df`` away: its columns are
    then replaced in place, so the peak holds one copy of the panel fewer
    (:func:`judgerisk.panel._files.load_panel` gives the frame it read)."""
    if not isinstance(df, pd.DataFrame):
        raise PanelError(f"a panel must be a pandas DataFrame, got {type(df).__name__}")
    allowed_key = _allowed(conditions)
    missing = missing_columns(df.columns)
    if missing:
        raise PanelError(
            f"missing required column(s): {', '.join(missing)}; got columns {list(df.columns)}"
        )
    if df.columns.has_duplicates:
        twice = sorted({str(c) for c in df.columns[df.columns.duplicated()]})
        raise PanelError(f"duplicate column(s) {twice}: each column must appear once")
    if len(df) == 0:
        raise PanelError("the panel is empty (0 rows)")
    own = copy or not df.index.equals(pd.RangeIndex(len(df)))
    out = df.reset_index(drop=True).copy() if own else df

    coded_names: dict[str, Coded] = {}  # the name columns, read once (judgerisk.panel._codes)
    for col in REQUIRED:
        nested = _non_scalar(out[col])
        if nested.any():
            raise _fail(
                f"column '{col}' holds non-scalar values (a list or an object); ids must be "
                "numbers or text",
                out,
                nested,
                list(REQUIRED),
            )
        if col == "item":
            bad = out[col].isna().to_numpy()
        else:
            coded_names[col] = coded(out[col], as_text=True)
            bad = coded_names[col].codes < 0
        if bad.any():
            raise _fail(f"column '{col}' has missing values", out, bad, list(REQUIRED))
    judge, condition = _clean_judges(coded_names["judge"]), coded_names["condition"]
    out["judge"] = judge.column(out.index, "judge")
    blank = judge.rows(judge.values == "")
    if blank.any():
        raise _fail(
            "column 'judge' has empty or whitespace-only names", out, blank, ["item", "judge"]
        )
    out["condition"] = condition.column(out.index, "condition")
    out["item"] = _uniform_items(out["item"])

    allowed = allowed_key
    if allowed is not None:
        if ORIGINAL not in allowed:
            raise PanelError(f"the allowed conditions {allowed} must include '{ORIGINAL}'")
        unknown = _unknown_conditions(condition, allowed)
        if unknown.any():
            names = sorted(set(out.loc[unknown, "condition"]))
            rule = (
                "allowed: 'original', 'swap', <family><k> and swap_<family><k> of the "
                f"perturbation families {list(FAMILIES)}"
                if isinstance(allowed, DeclaredConditions)
                else f"allowed: {list(allowed)}"
            )
            raise _fail(
                f"column 'condition' has unknown condition name(s) {names} ({rule})",
                out,
                unknown,
                list(REQUIRED),
            )

    m = _canonical_logit(out)
    out["logit"] = np.clip(m, -LOGIT_CLIP, LOGIT_CLIP)
    out["p"] = expit(out["logit"].to_numpy())
    m = out["logit"].to_numpy()
    # a tie (logit == 0) is half a vote for each answer (book page "Importing your judges")
    verdict = np.where(m > 0, 1.0, np.where(m < 0, 0.0, 0.5))
    if "verdict" in out.columns:
        _note_replaced_verdicts(out["verdict"], verdict)
    out["verdict"] = verdict

    order = (
        list(allowed)
        if isinstance(allowed, tuple)
        else condition_order([ORIGINAL, *condition.values])
    )
    item_code, items_sorted = pd.factorize(out["item"], sort=True)
    judge_rank = np.empty(len(judge.values), dtype=np.intp)  # the judges in sorted order
    judge_rank[np.argsort(judge.values, kind="stable")] = np.arange(len(judge.values))
    cond_code = pd.Index(order).get_indexer(condition.values)[condition.codes]
    cell = (item_code * len(judge.values) + judge_rank[judge.codes]) * len(order) + cond_code
    del judge, condition, coded_names
    # one sort gives both the duplicate cells (equal neighbours) and the rows' final order
    row_order = np.argsort(cell, kind="stable")
    in_order = cell[row_order]
    del cell
    same = in_order[1:] == in_order[:-1]
    del in_order
    if same.any():
        dup_sorted = np.zeros(len(out), dtype=bool)
        dup_sorted[1:] |= same
        dup_sorted[:-1] |= same
        dup = np.zeros(len(out), dtype=bool)
        dup[row_order] = dup_sorted
        raise _fail("duplicate (item, judge, condition) cells", out, dup, [*REQUIRED, "logit"])
    del same

    has_original = np.zeros(len(items_sorted), dtype=bool)
    has_original[item_code[cond_code == order.index(ORIGINAL)]] = True
    no_orig = ~has_original[item_code]
    del cond_code
    if no_orig.any():
        items = pd.unique(out.loc[no_orig, "item"])
        raise _fail(
            f"{len(items)} item(s) have no '{ORIGINAL}'-condition response from any judge "
            f"(items {list(items[:_MAX_ROWS_SHOWN])})",
            out,
            no_orig,
            list(REQUIRED),
        )

    if "gold" in out.columns:
        _check_gold(out, item_code)
    del item_code

    if (np.diff(row_order) != 1).any():
        out = out.take(row_order).reset_index(drop=True)
    del row_order
    front = ["item", "judge", "condition", "logit", "p", "verdict"]
    if "gold" in out.columns:
        front.append("gold")
    out = out[front + [c for c in out.columns if c not in front]]
    return out


def missing_columns(names) -> list[str]:
    """The contract's required columns that ``names`` lacks: of ``item, judge, condition``,
    then ``"logit or p"`` when it has neither."""
    present = set(names)
    missing = [c for c in REQUIRED if c not in present]
    return missing + ([] if present & {"logit", "p"} else ["logit or p"])


def _allowed(
    conditions: tuple[str, ...] | DeclaredConditions | None,
) -> tuple[str, ...] | DeclaredConditions | None:
    """The allowed names in canonical form: a tuple, :data:`DECLARED` or None."""
    if conditions is None or isinstance(conditions, DeclaredConditions):
        return conditions
    return tuple(conditions)


def _unknown_conditions(
    condition: Coded, allowed: tuple[str, ...] | DeclaredConditions
) -> np.ndarray:
    """Rows whose condition name is not allowed (each distinct name checked once)."""
    if isinstance(allowed, DeclaredConditions):
        bad = np.array([not is_declared(c) for c in condition.values], dtype=bool)
    else:
        bad = ~pd.Series(condition.values, dtype=object).isin(allowed).to_numpy()
    return condition.rows(bad)


def _clean_judges(judge: Coded) -> Coded:
    """Judge names in Unicode NFC without surrounding whitespace; warns when that merges names.

    ``"Jos\u00e9"`` (NFC) and ``"Jose\u0301"`` (NFD) are one name spelled two ways, and so
    are ``"J1"`` and ``" J1 "``; each becomes its NFC, stripped spelling. The work is done
    once per distinct name.
    """
    clean = [unicodedata.normalize("NFC", name).strip() for name in judge.values]
    changed = np.array([new != name for name, new in zip(judge.values, clean, strict=True)])
    if not changed.any():
        return judge
    groups: dict[str, list[str]] = {}
    for name, new in zip(judge.values, clean, strict=True):
        groups.setdefault(new, []).append(name)
    merged = {new: names for new, names in groups.items() if len(names) > 1}
    new_code, new_values = pd.factorize(pd.Series(clean, dtype=object))
    if merged:
        n_rows = int(judge.counts()[changed].sum())
        shown = "; ".join(
            f"{new!r} from {', '.join(sorted(map(ascii, names)))}"
            for new, names in sorted(merged.items())[:5]
        )
        warnings.warn(
            "judge names that differ only by surrounding whitespace or by Unicode form were "
            f"merged (normalised to NFC, stripped): {shown} ({n_rows} row(s) respelled)",
            UserWarning,
            stacklevel=3,
        )
    return Coded(new_code[judge.codes], np.asarray(new_values, dtype=object))


def _non_scalar(col: pd.Series) -> np.ndarray:
    """Rows of ``col`` holding a list, dict, set, tuple or array (an id must be a scalar)."""
    if col.dtype != object or pd.api.types.infer_dtype(col, skipna=True) != "mixed":
        return np.zeros(len(col), dtype=bool)
    return col.map(lambda v: isinstance(v, list | dict | set | tuple | np.ndarray)).to_numpy(bool)


_VERDICT_CODES = {"A": 1, "B": 0, "1": 1, "0": 0, "1.0": 1, "0.0": 0, "TRUE": 1, "FALSE": 0}


def _note_replaced_verdicts(given: pd.Series, verdict: np.ndarray) -> None:
    """Warn when a supplied ``verdict`` column disagrees with the logit's, which replaces it.

    ``1``/``0``, ``"A"``/``"B"`` and booleans are read as A/B; any other value (or a missing
    one) counts as differing.
    """
    if pd.api.types.is_numeric_dtype(given) or pd.api.types.is_bool_dtype(given):
        supplied = given.to_numpy(dtype=np.float64, na_value=np.nan)
    else:
        text = given.astype(str).str.strip().str.upper()
        supplied = text.map(_VERDICT_CODES).to_numpy(dtype=np.float64, na_value=np.nan)
    differ = int((supplied != verdict).sum())
    if differ:
        warnings.warn(
            "the supplied 'verdict' column was replaced by the logit's verdict (1 if logit > 0, "
            f"0 if < 0, 0.5 for a tie): "
            f"it differed on {differ} of {len(verdict)} row(s)",
            UserWarning,
            stacklevel=3,
        )


def _uniform_items(item: pd.Series) -> pd.Series:
    """Item ids as given; a column mixing numbers and text is used as text.

    Mixed ids cannot be sorted, so ``1`` and ``"a"`` become ``"1"`` and ``"a"``; ids that
    would then coincide (``1`` and ``"1"``) are an error.
    """
    if item.dtype != object:
        return item
    kind = pd.api.types.infer_dtype(item, skipna=False)
    if kind in ("string", "integer", "floating", "decimal", "boolean", "bytes"):
        return item
    text = item.map(str).astype(object)
    if text.nunique() != item.nunique():
        clash = text[text.duplicated(keep=False) & ~item.duplicated(keep=False)]
        raise _fail(
            "column 'item' has ids of different types that coincide as text "
            f"({sorted(set(clash))[:_MAX_ROWS_SHOWN]})",
            pd.DataFrame({"item": item}),
            text.isin(set(clash)).to_numpy(),
            ["item"],
        )
    return text


def _canonical_logit(out: pd.DataFrame) -> np.ndarray:
    """Return the canonical log-odds from ``logit`` and/or ``p``, checking both."""
    m: np.ndarray | None = None
    if "logit" in out.columns:
        m = pd.to_numeric(out["logit"], errors="coerce").to_numpy(dtype=np.float64)
        bad = ~np.isfinite(m)
        if bad.any():
            raise _fail(
                "column 'logit' has NaN, infinite or non-numeric values",
                out,
                bad,
                [*REQUIRED, "logit"],
            )
    if "p" in out.columns:
        p = pd.to_numeric(out["p"], errors="coerce").to_numpy(dtype=np.float64)
        bad = ~((p >= 0) & (p <= 1))  # also catches NaN
        if bad.any():
            raise _fail("column 'p' has values outside [0, 1] or NaN", out, bad, [*REQUIRED, "p"])
        if m is None:
            with np.errstate(divide="ignore"):
                m = logit(p)  # 0 -> -inf, 1 -> +inf: clipped to +-20 by the caller
        else:
            mismatch = np.abs(expit(m) - p) > _P_LOGIT_ATOL
            if mismatch.any():
                raise _fail(
                    "columns 'logit' and 'p' disagree (p != sigmoid(logit))",
                    out,
                    mismatch,
                    [*REQUIRED, "logit", "p"],
                )
    assert m is not None  # validated: the table has logit or p
    return m


def _check_gold(out: pd.DataFrame, item_code: np.ndarray) -> None:
    """Gold is optional per item (NaN = unlabelled); when given it is "A" or "B" for the item.

    ``item_code`` numbers the rows' items (``0 .. n_items - 1``).
    """
    gold = coded(out["gold"], as_text=False)
    bad_value = ~pd.Series(gold.values, dtype=object).isin(["A", "B"]).to_numpy()
    bad = gold.rows(bad_value)
    if bad.any():
        values = sorted({repr(v) for v in gold.values[bad_value]})
        raise _fail(
            f"column 'gold' must be 'A', 'B' or empty, found {', '.join(values)}",
            out,
            bad,
            [*REQUIRED, "gold"],
        )
    if not _one_label_per_item(gold.codes, item_code):  # the usual case, by integer codes
        key = gold.column(out.index, "gold", missing="")
        counts = pd.DataFrame({"item": out["item"], "g": key}).value_counts(sort=False)
        counts = counts.rename("n").reset_index()
        counts = counts.sort_values(["n", "g"], ascending=[False, True], kind="stable")
        usual = counts.drop_duplicates("item").set_index("item")["g"]
        differing = key.to_numpy() != out["item"].map(usual).to_numpy()
        if differing.any():
            raise _fail(
                "column 'gold' differs within one item (rows that differ from the item's usual "
                "label)",
                out,
                differing,
                [*REQUIRED, "gold"],
            )
    out["gold"] = gold.column(out.index, "gold")


def _one_label_per_item(code: np.ndarray, item_code: np.ndarray) -> bool:
    """Whether every row of an item holds the same gold code (``-1``, missing, included)."""
    first = np.empty(int(item_code.max()) + 1, dtype=code.dtype)
    first[item_code[::-1]] = code[::-1]  # each item's first row's code (the last write wins)
    return bool((code == first[item_code]).all())


def warn_ties_and_orientation(panel: pd.DataFrame) -> None:
    """Warn with the panel's tie count and tie policy, and for each judge that looks unflipped.

    The checks every panel gets before scoring, one judge or several
    (:func:`judgerisk._orientation.tie_message`, :func:`judgerisk._orientation.check_orientation`).
    """
    from judgerisk._orientation import check_orientation, tie_message

    if (ties := tie_message(panel)) is not None:
        warnings.warn(ties, UserWarning, stacklevel=3)
    check_orientation(panel)


def check_scorable(panel: pd.DataFrame) -> None:
    """Refuse a panel that cannot be scored as a panel; warn where it is thin.

    Parameters
    ----------
    panel : pandas.DataFrame
        A validated panel.

    Raises
    ------
    PanelError
        When fewer than two judges answered in the original condition (a panel's
        consensus and conflict need two), or when the judges form groups that share no item
        (:func:`judgerisk.coverage.judge_groups`: every item has one group's votes only).

    Warns
    -----
    UserWarning
        Counting the items seen by one judge only (their consensus is a single vote), naming
        each S signal of the paper's families (order, rubric) dropped because its perturbation
        family is absent, and when the items show so few distinct verdict patterns
        (:func:`judgerisk.coverage.distinct_patterns`, at most :data:`FEW_PATTERNS`) that every
        per-item score takes only that many values.
    """
    warn_where_thin(panel, scorable_original_rows(panel))


def warn_where_thin(panel: pd.DataFrame, orig: pd.DataFrame) -> None:
    """:func:`check_scorable`'s warnings, for a panel that :func:`scorable_original_rows`
    passed (``orig``: its original-condition rows)."""
    warn_ties_and_orientation(panel)
    n_items = panel["item"].nunique()
    patterns = FEW_PATTERNS + 1 if _many_patterns(panel) else distinct_patterns(panel)
    if patterns <= FEW_PATTERNS and n_items > patterns:
        warnings.warn(
            f"the panel's {n_items} items show only {patterns} distinct patterns of verdicts "
            "across its judges and conditions (few judges with hard verdicts): every per-item "
            f"score, SCUR included, takes at most {patterns} values, so it sorts the items into "
            f"at most {patterns} groups and carries little information; more judges, an order "
            "swap or graded verdicts would separate them",
            UserWarning,
            stacklevel=3,
        )
    per_item = orig.groupby("item", sort=False)["judge"].nunique()
    lonely = int((per_item < 2).sum())
    if lonely:
        warnings.warn(
            f"{lonely} of {len(per_item)} item(s) were seen by one judge only in the "
            f"'{ORIGINAL}' condition: their consensus is a single vote",
            UserWarning,
            stacklevel=3,
        )
    present = family_pairs(pd.unique(panel["condition"]))
    for family, spec in FAMILIES.items():
        if spec.core and family not in present:
            warnings.warn(
                f"the panel has no {family} perturbation (no condition pair such as "
                f"{_example_pairs(family)}): the S_{family} signal is dropped",
                UserWarning,
                stacklevel=3,
            )


def _many_patterns(panel: pd.DataFrame, head: int = 50_000) -> bool:
    """A cheap proof that a validated panel shows more than :data:`FEW_PATTERNS` patterns.

    Items with different logits in one (judge, condition) column have different patterns
    (:func:`judgerisk.panel._overlap.distinct_patterns`), so more than :data:`FEW_PATTERNS` distinct
    logits in the column of the first row, among the first ``head`` rows, prove it without
    counting the patterns (0.13 s on a 600,000-row panel). ``False`` proves nothing.
    """
    rows = panel.iloc[:head]
    first = rows.iloc[0]
    column = (rows["judge"] == first["judge"]) & (rows["condition"] == first["condition"])
    return bool(rows.loc[column.to_numpy(), "logit"].nunique() > FEW_PATTERNS)


def _example_pairs(family: str) -> list[str]:
    """The pairs a family would form among the paper's six conditions, as ``c/c'`` text."""
    return [f"{a}/{b}" for a, b in FAMILIES[family].pairs(CONDITIONS)]


def scorable_original_rows(panel: pd.DataFrame) -> pd.DataFrame:
    """:func:`check_scorable`'s refusals (no warning); the panel's original-condition rows."""
    orig = panel.loc[panel["condition"] == ORIGINAL]
    judges = pd.unique(orig["judge"])
    if len(judges) < 2:
        both = len(judges) == 1 and "swap" in set(panel["condition"])
        raise PanelError(
            f"panel scoring needs at least two judges in the '{ORIGINAL}' condition; "
            f"found {len(judges)} ({list(judges)})"
            + (
                "; for one judge in both orders use: judgerisk bpe PANEL -o bpe.csv (the "
                "per-item table), or judgerisk report PANEL -o report.html (its report)"
                if both
                else "; add a second judge's verdicts on the same items (a panel), or this "
                "judge's verdicts with the two answers swapped (condition 'swap': its BPE and "
                "SCOPE report, judgerisk report)"
            )
        )
    groups = judge_groups(orig)  # its original-condition filter then scans these rows only
    if len(groups) > 1:
        raise PanelError(no_shared_items(groups))
    return orig


def refuse_unscorable(source: str | os.PathLike, panel: pd.DataFrame) -> None:
    """:func:`check_scorable`'s refusal naming the file ``source`` the panel was read from.

    Run before any work (``judgerisk score``, ``judgerisk report``): a panel of one judge, or of
    judges that share no item, is refused in one line that names the file and says what to do.
    Its warnings are left to the scoring that follows (they are not shown twice).

    Raises
    ------
    PanelError
        ``"<source>: <check_scorable's reason>"``.
    """
    try:
        scorable_original_rows(panel)  # the refusals only: the warnings run in the scoring
    except PanelError as exc:
        raise PanelError(f"{source}: {exc}") from None
