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

References
----------
Methods reference §1 (the judgerisk methods specification, after the instance-level panel
reliability paper and the SCOPE paper).
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.special import expit, logit

from judgerisk._util import json_text
from judgerisk._util.safe_write import atomic_write  # re-exported: judgerisk.panel.atomic_write
from judgerisk.cells import CellTable, is_sparse
from judgerisk.coverage import distinct_patterns, judge_groups, no_shared_items
from judgerisk.families import (
    DECLARED,
    FAMILIES,
    DeclaredConditions,
    condition_order,
    family_pairs,
    is_declared,
)
from judgerisk.options import CONDITIONS, ORIGINAL, InputError
from judgerisk.validation import offending_rows

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
    "jsonl_chunks",
    "without_gold",
    "write_table",
    "to_wide",
    "cell_table",
    "wide_table",
    "to_long",
    "verdicts",
    "gold_labels",
    "encode_panel",
    "check_scorable",
    "warn_ties_and_orientation",
    "atomic_write",
    "PAIR_COLUMNS",
    "SWAP",
    "both_orders",
    "order_pairs",
    "pairs_to_panel",
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
    subclass (:class:`judgerisk.provenance.OutputPathError` for output paths); the command
    line prints it as one line and exits with code 2.
    """


class PanelFileNotFoundError(PanelError, FileNotFoundError):
    """An input file that does not exist (a :class:`PanelError` and a ``FileNotFoundError``)."""


@dataclass(frozen=True)
class PanelArrays:
    """Integer-coded view of a validated panel, for vectorised model code.

    Attributes
    ----------
    items, judges : pandas.Index
        Sorted unique item ids and judge names; ``item_idx`` / ``judge_idx`` index them.
    conditions : tuple of str
        The conditions present, in canonical order (``"original"`` first).
    item_idx, judge_idx, cond_idx : numpy.ndarray of intp
        Codes aligned with the panel's rows.
    logit, p : numpy.ndarray of float64
        Canonical log-odds (clipped) and probabilities aligned with the rows.
    """

    items: pd.Index
    judges: pd.Index
    conditions: tuple[str, ...]
    item_idx: np.ndarray
    judge_idx: np.ndarray
    cond_idx: np.ndarray
    logit: np.ndarray
    p: np.ndarray

    @property
    def n_items(self) -> int:
        return len(self.items)

    @property
    def n_judges(self) -> int:
        return len(self.judges)

    @property
    def n_conditions(self) -> int:
        return len(self.conditions)


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
    :func:`judgerisk.studies.certified.score_panel` and ``judgerisk score``.

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
    return _validate(df, conditions, copy=True)


def _validate(
    df: pd.DataFrame, conditions: tuple[str, ...] | DeclaredConditions | None, copy: bool
) -> pd.DataFrame:
    """:func:`validate_panel`; ``copy=False`` when the caller gives away ``df`` (its columns
    are then replaced in place: :func:`load_panel` gives the frame it read, so that the peak
    holds one copy of the panel fewer)."""
    if not isinstance(df, pd.DataFrame):
        raise PanelError(f"a panel must be a pandas DataFrame, got {type(df).__name__}")
    allowed_key = _allowed(conditions)
    if _already_valid(df, allowed_key):
        return df.copy(deep=not _COPY_ON_WRITE)
    missing = [c for c in REQUIRED if c not in df.columns]
    if "logit" not in df.columns and "p" not in df.columns:
        missing.append("logit or p")
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
        bad = out[col].isna().to_numpy()
        if bad.any():
            raise _fail(f"column '{col}' has missing values", out, bad, list(REQUIRED))
    out["judge"] = _clean_judges(_as_text(out["judge"]))
    blank = (out["judge"] == "").to_numpy()
    if blank.any():
        raise _fail(
            "column 'judge' has empty or whitespace-only names", out, blank, ["item", "judge"]
        )
    out["condition"] = _as_text(out["condition"])
    out["item"] = _uniform_items(out["item"])

    allowed = allowed_key
    if allowed is not None:
        if ORIGINAL not in allowed:
            raise PanelError(f"the allowed conditions {allowed} must include '{ORIGINAL}'")
        unknown = _unknown_conditions(out["condition"], allowed)
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
        else condition_order([ORIGINAL, *pd.unique(out["condition"])])
    )
    item_code, items_sorted = pd.factorize(out["item"], sort=True)
    judge_code, judges_sorted = pd.factorize(out["judge"], sort=True)
    cond_code = pd.Index(order).get_indexer(out["condition"])
    cell = (item_code * len(judges_sorted) + judge_code) * len(order) + cond_code
    del judge_code
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
    del item_code, cond_code
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
        _check_gold(out)

    if (np.diff(row_order) != 1).any():
        out = out.take(row_order).reset_index(drop=True)
    del row_order
    front = ["item", "judge", "condition", "logit", "p", "verdict"]
    if "gold" in out.columns:
        front.append("gold")
    out = out[front + [c for c in out.columns if c not in front]]
    out.attrs[_VALID_MARK] = (_fingerprint(out), tuple(pd.unique(out["condition"])))
    return out


_VALID_MARK = "judgerisk.validated"

#: Whether pandas copies a frame's data only when one of two frames sharing it is written
#: (always from pandas 3; an option in pandas 2): then the copy an already validated panel
#: gets back is a shallow one, and costs no memory.
_COPY_ON_WRITE = int(pd.__version__.split(".")[0]) >= 3 or bool(
    pd.get_option("mode.copy_on_write") is True
)


def without_gold(panel: pd.DataFrame) -> pd.DataFrame:
    """A validated panel without its ``gold`` column, still marked valid.

    Dropping a column of a valid panel leaves a valid panel, so the label-free steps (scoring
    never reads gold) get it without a second validation, which on a large panel costs
    several copies of it.
    """
    out = panel.drop(columns=[c for c in ("gold",) if c in panel.columns])
    mark = panel.attrs.get(_VALID_MARK)
    if mark and _already_valid(panel, None):
        out.attrs[_VALID_MARK] = (_fingerprint(out), mark[1])
    return out


def _fingerprint(df: pd.DataFrame) -> str:
    """Content hash of a frame (values, column names and dtypes), about 30 ms per 60k rows."""
    digest = hashlib.blake2b(digest_size=16)
    digest.update(repr([(str(c), str(t)) for c, t in df.dtypes.items()]).encode())
    digest.update(pd.util.hash_pandas_object(df, index=False).to_numpy().tobytes())
    return digest.hexdigest()


def _allowed(
    conditions: tuple[str, ...] | DeclaredConditions | None,
) -> tuple[str, ...] | DeclaredConditions | None:
    """The allowed names in canonical form: a tuple, :data:`DECLARED` or None."""
    if conditions is None or isinstance(conditions, DeclaredConditions):
        return conditions
    return tuple(conditions)


def _unknown_conditions(
    condition: pd.Series, allowed: tuple[str, ...] | DeclaredConditions
) -> np.ndarray:
    """Rows whose condition name is not allowed (declared names checked once per name)."""
    if isinstance(allowed, DeclaredConditions):
        names = pd.unique(condition)
        bad = {c for c in names if not is_declared(c)}
        return condition.isin(bad).to_numpy() if bad else np.zeros(len(condition), bool)
    return ~condition.isin(allowed).to_numpy()


def _already_valid(
    df: pd.DataFrame, allowed_key: tuple[str, ...] | DeclaredConditions | None
) -> bool:
    """True when ``df`` is, value for value, a panel this module validated already.

    :func:`validate_panel` marks its output with a content fingerprint in ``attrs``;
    pipelines validate the same panel many times (each seed, each estimator), so an
    unchanged panel skips the checks. Any change of a value, a column or a dtype changes
    the fingerprint, and the panel is checked again in full; so does a panel holding a
    condition outside ``allowed_key``.
    """
    mark = df.attrs.get(_VALID_MARK)
    if not mark or not isinstance(df.index, pd.RangeIndex):
        return False
    fingerprint, conditions_seen = mark
    if allowed_key is not None and not all(c in allowed_key for c in conditions_seen):
        return False
    try:
        return fingerprint == _fingerprint(df)
    except TypeError:  # an unhashable value (a list or dict): not a validated panel
        return False


def _clean_judges(judge: pd.Series) -> pd.Series:
    """Judge names in Unicode NFC without surrounding whitespace; warns when that merges names.

    ``"Jos\u00e9"`` (NFC) and ``"Jose\u0301"`` (NFD) are one name spelled two ways, and so
    are ``"J1"`` and ``" J1 "``; each becomes its NFC, stripped spelling. The work is done
    once per distinct name.
    """
    before = pd.unique(judge)
    clean = {name: unicodedata.normalize("NFC", name).strip() for name in before}
    changed = [name for name, new in clean.items() if new != name]
    if not changed:
        return judge
    groups: dict[str, list[str]] = {}
    for name, new in clean.items():
        groups.setdefault(new, []).append(name)
    merged = {new: names for new, names in groups.items() if len(names) > 1}
    out = judge.map(clean).astype(object)
    if merged:
        n_rows = int((out != judge).sum())
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
    return out


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


def _as_text(col: pd.Series) -> pd.Series:
    """Column as Python strings in an object column (skipped when it already is one)."""
    if col.dtype == object and pd.api.types.infer_dtype(col, skipna=False) == "string":
        return col
    return _shared_objects(col, lambda u: u.astype(str))


def _shared_objects(col: pd.Series, convert) -> pd.Series:
    """``convert(col).astype(object)`` with one Python object per distinct value.

    Converting an Arrow string column to objects makes one ``str`` per row (55 bytes each: a
    million-row panel's judge, condition and gold columns took 160 MB); converting its distinct
    values and indexing them gives the same values, all rows of a value sharing one object.
    """
    codes, uniques = pd.factorize(col, use_na_sentinel=False)
    values = np.asarray(convert(pd.Series(uniques, dtype=col.dtype)).astype(object), dtype=object)
    return pd.Series(values[codes], index=col.index, name=col.name, dtype=object)


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


def _check_gold(out: pd.DataFrame) -> None:
    """Gold is optional per item (NaN = unlabelled); when given it is "A" or "B" for the item."""
    gold = _shared_objects(out["gold"], lambda u: u)
    missing = gold.isna().to_numpy()
    bad = ~gold.isin(["A", "B"]).to_numpy() & ~missing
    if bad.any():
        values = sorted({repr(v) for v in gold[bad]})
        raise _fail(
            f"column 'gold' must be 'A', 'B' or empty, found {', '.join(values)}",
            out,
            bad,
            [*REQUIRED, "gold"],
        )
    key = gold.where(~missing, "")
    counts = pd.DataFrame({"item": out["item"], "g": key}).value_counts(sort=False)
    counts = counts.rename("n").reset_index()
    counts = counts.sort_values(["n", "g"], ascending=[False, True], kind="stable")
    usual = counts.drop_duplicates("item").set_index("item")["g"]
    differing = key.to_numpy() != out["item"].map(usual).to_numpy()
    if differing.any():
        raise _fail(
            "column 'gold' differs within one item (rows that differ from the item's usual label)",
            out,
            differing,
            [*REQUIRED, "gold"],
        )
    out["gold"] = gold.where(~missing, np.nan)


_ID_COLUMNS = ("item", "judge", "condition", "gold")
_INT_TEXT = re.compile(r"^-?(0|[1-9][0-9]*)$")


def _ids_as_given(df: pd.DataFrame) -> pd.DataFrame:
    """csv ids read as text; an item column of plain integers (no leading zero) becomes int."""
    if "item" in df.columns and pd.api.types.is_string_dtype(df["item"]):
        text = df["item"]
        if text.notna().all() and text.map(lambda v: bool(_INT_TEXT.match(str(v)))).all():
            as_int = pd.to_numeric(text, errors="coerce")
            if as_int.notna().all() and (as_int.abs() < 2**53).all():
                df["item"] = as_int.astype(np.int64)
    return df


#: pandas' default missing-value markers, applied to every csv column except the names.
_CSV_NA = (
    "", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
    "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null",
)  # fmt: skip
#: Columns of names: only an empty field is missing there (a judge may be called "NA").
_NAME_COLUMNS = ("item", "judge", "condition")


def _read_csv(path: Path) -> pd.DataFrame:
    header = pd.read_csv(path, header=None, nrows=1, dtype=str, keep_default_na=False)
    names = [str(v) for v in header.iloc[0]] if len(header) else []
    seen = {name for name in names if names.count(name) > 1}
    if seen:
        name = sorted(seen)[0]
        where = [i + 1 for i, n in enumerate(names) if n == name]
        raise PanelError(
            f"{path}: column {name!r} appears {len(where)} times in the header (columns "
            f"{where}); keep one"
        )
    dtype = {c: str for c in _ID_COLUMNS if c in names}
    na = {c: [""] if c in _NAME_COLUMNS else list(_CSV_NA) for c in names}
    table = pd.read_csv(path, dtype=dtype, keep_default_na=False, na_values=na)
    _check_last_row(path, len(names), len(table))
    return _ids_as_given(table)


def _check_last_row(path: Path, n_columns: int, n_rows: int) -> None:
    """Refuse a csv cut off in its last row (no final newline and fewer fields than the header).

    pandas fills a short row's missing fields with NaN, so a file cut short by an interrupted
    write or download would otherwise lose the last row's values silently (an optional ``gold``
    simply vanishes).
    """
    import csv

    with open(path, "rb") as f:
        f.seek(0, 2)
        size = f.tell()
        f.seek(max(0, size - 65536))
        tail = f.read()
    if not n_rows or not tail or tail.endswith((b"\n", b"\r")):
        return
    last = tail.rsplit(b"\n", 1)[-1].decode("utf-8", errors="replace")
    if last.count('"') % 2:  # inside a quoted field that spans lines: cannot tell, keep it
        return
    fields = next(csv.reader([last]), [])
    if len(fields) < n_columns:
        raise PanelError(
            f"{path}: the file ends in the middle of row {n_rows - 1} (its last line has "
            f"{len(fields)} of the header's {n_columns} fields and no line end): it looks "
            "truncated; write it again"
        )


def _read_jsonl(path: Path) -> pd.DataFrame:
    """jsonl with values as given (``"007"`` stays text); a broken line is named."""
    rows = list(_jsonl_records(path))
    if not rows:
        raise PanelError(f"{path}: the file holds no records")
    return pd.DataFrame.from_records(rows)


def jsonl_chunks(path: str | Path, size: int) -> Iterator[pd.DataFrame]:
    """A jsonl file read ``size`` records at a time, each chunk as :func:`read_table` reads
    the whole file (values as given; a broken line named by its number)."""
    path = Path(path)
    rows: list[dict] = []
    seen = False
    for row in _jsonl_records(path):
        rows.append(row)
        if len(rows) == size:
            seen = True
            yield pd.DataFrame.from_records(rows)
            rows = []
    if rows:
        yield pd.DataFrame.from_records(rows)
    elif not seen:
        raise PanelError(f"{path}: the file holds no records")


def _jsonl_records(path: Path) -> Iterator[dict]:
    """The records of a jsonl file, one per non-blank line, checked line by line."""
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                row = json_text.loads(line)
            except json_text.DuplicateKeyError as exc:
                raise PanelError(f"{path}: line {lineno} has the key {exc.key!r} twice") from None
            except json.JSONDecodeError as exc:
                raise PanelError(
                    f"{path}: line {lineno} is not valid JSON ({exc.msg} at column {exc.colno}): "
                    f"{line.strip()[:80]!r}"
                ) from None
            except json_text.NestingError as exc:
                raise PanelError(f"{path}: line {lineno}: {json_text.problem(exc)}") from None
            if not isinstance(row, dict):
                raise PanelError(
                    f"{path}: line {lineno} is not a JSON object (one record per line): "
                    f"{line.strip()[:80]!r}"
                )
            for key in _ID_COLUMNS:
                if isinstance(row.get(key), dict | list):
                    kind = "an object" if isinstance(row[key], dict) else "a list"
                    raise PanelError(
                        f"{path}: line {lineno}: '{key}' is {kind} ({json.dumps(row[key])[:60]}); "
                        "ids must be numbers or text"
                    )
            yield row


_READERS = {
    ".csv": _read_csv,
    ".parquet": pd.read_parquet,
    ".pq": pd.read_parquet,
    ".jsonl": _read_jsonl,
    ".ndjson": _read_jsonl,
}
_WRITERS = {
    ".csv": lambda df, path: df.to_csv(path, index=False),
    ".parquet": lambda df, path: df.to_parquet(path, index=False),
    ".pq": lambda df, path: df.to_parquet(path, index=False),
    ".jsonl": lambda df, path: df.to_json(path, orient="records", lines=True, double_precision=15),
    ".ndjson": lambda df, path: df.to_json(path, orient="records", lines=True, double_precision=15),
}


def _format_of(path: Path, table: dict) -> str:
    suffix = path.suffix.lower()
    if suffix not in table:
        raise PanelError(
            f"unsupported file type {suffix!r} for {path}; use .csv, .parquet or .jsonl"
        )
    return suffix


def read_table(path: str | Path) -> pd.DataFrame:
    """Read a csv, parquet or jsonl table (by extension), without validating it.

    Ids are kept as given: csv id columns (``item, judge, condition, gold``) are read as
    text, and an item column of plain integers becomes integers (``"007"`` stays
    ``"007"``); in the name columns (``item, judge, condition``) only an empty field is
    missing, so a judge called ``"NA"``, ``"None"`` or ``"null"`` keeps its name; jsonl
    values keep their JSON types.

    Raises
    ------
    PanelError
        Naming the file for a missing file, a folder, an empty or unreadable file, a
        column given twice (csv header, jsonl key), an id that is a JSON object or list, or a
        broken jsonl line (with its number).
    """
    path = Path(path)
    suffix = _format_of(path, _READERS)
    if path.is_dir():
        raise PanelError(f"{path}: is a folder, not a {suffix} file")
    if not path.is_file():
        raise PanelFileNotFoundError(f"{path}: file not found")
    if path.stat().st_size == 0:
        raise PanelError(f"{path}: the file is empty")
    try:
        return _READERS[suffix](path)
    except PanelError:
        raise
    except (ValueError, OSError, UnicodeDecodeError, pd.errors.ParserError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise PanelError(f"{path}: cannot read it as {suffix} ({first})") from None
    except Exception as exc:  # noqa: BLE001 - pyarrow and friends raise their own types
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        raise PanelError(
            f"{path}: cannot read it as {suffix} ({type(exc).__name__}: {first})"
        ) from None


def write_table(df: pd.DataFrame, path: str | Path, *, exclusive: bool = False) -> Path:
    """Write a table as csv, parquet or jsonl (by extension), without the index, atomically.

    ``exclusive=True`` never replaces an existing ``path``
    (:class:`judgerisk._util.safe_write.OutputExistsError`; see :func:`atomic_write`).
    """
    path = Path(path)
    writer = _WRITERS[_format_of(path, _WRITERS)]
    return atomic_write(path, lambda tmp: writer(df, tmp), exclusive=exclusive)


def load_panel(
    path: str | Path, conditions: tuple[str, ...] | DeclaredConditions | None = DECLARED
) -> pd.DataFrame:
    """Read a panel from csv, parquet or jsonl (by extension) and validate it.

    Parameters
    ----------
    path : str or pathlib.Path
        ``.csv``, ``.parquet`` / ``.pq`` or ``.jsonl`` / ``.ndjson`` file.
    conditions : tuple of str or None
        Passed to :func:`validate_panel`.

    Returns
    -------
    pandas.DataFrame
        The validated panel.

    Raises
    ------
    PanelError
        From :func:`read_table` or :func:`validate_panel`, prefixed with the file's path.
    """
    table = read_table(path)
    try:  # the table read is this function's own: validated without a copy
        return _validate(table, conditions, copy=False)
    except PanelError as exc:  # name the file; rows are 0-based data rows (file line = row + 2)
        raise type(exc)(f"{path}: {exc}") from None


def save_panel(panel: pd.DataFrame, path: str | Path) -> Path:
    """Write a panel as csv, parquet or jsonl (by extension); the inverse of :func:`load_panel`."""
    return write_table(panel, path)


def to_wide(panel: pd.DataFrame, value: str = "logit", condition: str = ORIGINAL) -> pd.DataFrame:
    """Pivot one condition of a panel to an item x judge table (NaN where a cell is missing)."""
    sub = panel.loc[panel["condition"] == condition]
    if sub.empty:
        raise PanelError(f"no rows with condition {condition!r} in the panel")
    wide = sub.pivot(index="item", columns="judge", values=value)
    wide.columns.name = "judge"
    return wide.sort_index()


def cell_table(panel: pd.DataFrame, value: str = "logit", condition: str = ORIGINAL) -> CellTable:
    """:func:`judgerisk.panel.to_wide` held by its cells: items and judges sorted alike."""
    sub = panel.loc[panel["condition"] == condition]
    if sub.empty:
        raise PanelError(f"no rows with condition {condition!r} in the panel")
    row, items = pd.factorize(sub["item"], sort=True)
    col, judges = pd.factorize(sub["judge"], sort=True)
    index = pd.Index(items, name="item")
    columns = pd.Index(judges, name="judge")
    return CellTable.from_cells(index, columns, row, col, sub[value].to_numpy(np.float64))


def wide_table(
    panel: pd.DataFrame, value: str = "logit", condition: str = ORIGINAL
) -> pd.DataFrame | CellTable:
    """The item x judge table of one condition: dense when its cells fill it, else by cells."""
    sub = panel["condition"] == condition
    n_items = panel.loc[sub, "item"].nunique()
    n_judges = panel.loc[sub, "judge"].nunique()
    if is_sparse(int(sub.sum()), n_items * n_judges):
        return cell_table(panel, value, condition)
    return to_wide(panel, value, condition)


def to_long(wide: pd.DataFrame, value: str = "logit", condition: str = ORIGINAL) -> pd.DataFrame:
    """Melt an item x judge table back to the long panel shape (missing cells are skipped).

    Returns the *unvalidated* long rows ``item, judge, condition, <value>``; pass them
    through :func:`validate_panel` (after adding ``gold`` if needed).
    """
    # stack() keeps NaN cells in pandas 3 and drops them in pandas 2: dropped here, in both
    long = wide.rename_axis(index="item", columns="judge").stack().dropna()
    long = long.rename(value).reset_index()
    long.insert(2, "condition", condition)
    return long


def verdicts(panel: pd.DataFrame, condition: str = ORIGINAL) -> pd.DataFrame:
    """Votes (1.0 = A wins, 0.0 = B, 0.5 = a tie) as an item x judge table, NaN where missing."""
    return to_wide(panel, value="verdict", condition=condition).astype(np.float64)


def gold_labels(panel: pd.DataFrame) -> pd.Series:
    """Gold labels by item: 1 if ``"A"`` else 0 (int8); unlabelled items are left out.

    Raises if the panel has no gold column.
    """
    if "gold" not in panel.columns:
        raise PanelError("the panel has no 'gold' column")
    gold = panel.drop_duplicates("item").set_index("item")["gold"].dropna().sort_index()
    return (gold == "A").astype(np.int8).rename("gold")


def encode_panel(panel: pd.DataFrame) -> PanelArrays:
    """Integer codes for items, judges and conditions of a validated panel.

    ``cond_idx == 0`` is ``"original"`` (validation guarantees it is present).
    """
    item_idx, items = pd.factorize(panel["item"], sort=True)
    judge_idx, judges = pd.factorize(panel["judge"], sort=True)
    cond_codes, present = pd.factorize(panel["condition"])
    conditions = tuple(condition_order(present))
    cond_idx = pd.Index(conditions).get_indexer(present)[cond_codes]
    items, judges = pd.Index(items, name="item"), pd.Index(judges, name="judge")
    return PanelArrays(
        items=items,
        judges=judges,
        conditions=conditions,
        item_idx=item_idx.astype(np.intp),
        judge_idx=judge_idx.astype(np.intp),
        cond_idx=cond_idx.astype(np.intp),
        logit=panel["logit"].to_numpy(dtype=np.float64),
        p=panel["p"].to_numpy(dtype=np.float64),
    )


def warn_ties_and_orientation(panel: pd.DataFrame) -> None:
    """Warn with the panel's tie count and tie policy, and for each judge that looks unflipped.

    The checks every panel gets before scoring, one judge or several
    (:func:`judgerisk.orientation.tie_message`, :func:`judgerisk.orientation.check_orientation`).
    """
    from judgerisk.orientation import check_orientation, tie_message

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
                else ""
            )
        )
    groups = judge_groups(panel)
    if len(groups) > 1:
        raise PanelError(no_shared_items(groups))
    warn_ties_and_orientation(panel)
    n_items, patterns = panel["item"].nunique(), distinct_patterns(panel)
    if patterns <= FEW_PATTERNS and n_items > patterns:
        warnings.warn(
            f"the panel's {n_items} items show only {patterns} distinct patterns of verdicts "
            "across its judges and conditions (few judges with hard verdicts): every per-item "
            f"score, SCUR included, takes at most {patterns} values, so it sorts the items into "
            f"at most {patterns} groups and carries little information; more judges, an order "
            "swap or graded verdicts would separate them",
            UserWarning,
            stacklevel=2,
        )
    per_item = orig.groupby("item", sort=False)["judge"].nunique()
    lonely = int((per_item < 2).sum())
    if lonely:
        warnings.warn(
            f"{lonely} of {len(per_item)} item(s) were seen by one judge only in the "
            f"'{ORIGINAL}' condition: their consensus is a single vote",
            UserWarning,
            stacklevel=2,
        )
    present = family_pairs(pd.unique(panel["condition"]))
    for family, spec in FAMILIES.items():
        if spec.core and family not in present:
            warnings.warn(
                f"the panel has no {family} perturbation (no condition pair such as "
                f"{_example_pairs(family)}): the S_{family} signal is dropped",
                UserWarning,
                stacklevel=2,
            )


def _example_pairs(family: str) -> list[str]:
    """The pairs a family would form among the paper's six conditions, as ``c/c'`` text."""
    return [f"{a}/{b}" for a, b in FAMILIES[family].pairs(CONDITIONS)]


# ------------------------------------------------------------------ one judge, both orders
# The one-judge contract: a panel whose judge saw each item in both answer orders (conditions
# ``original`` and ``swap``), what BPE and SCOPE read. ``both_orders`` / ``order_pairs`` are
# the one view (the two canonical logits side by side), ``pairs_to_panel`` the one converter
# from a side-by-side table ``item, logit_fwd, logit_rev[, gold]``.

#: The condition of the swapped order.
SWAP = "swap"
#: Required columns of a side-by-side pair table (``gold`` is optional).
PAIR_COLUMNS = ("item", "logit_fwd", "logit_rev")


def both_orders(panel: pd.DataFrame, forward: str = ORIGINAL, reverse: str = SWAP) -> pd.DataFrame:
    """Every (item, judge) seen in both orders, its two canonical logits side by side.

    Parameters
    ----------
    panel : pandas.DataFrame
        A panel (one judge or several).
    forward, reverse : str, default "original", "swap"
        The two conditions.

    Returns
    -------
    pandas.DataFrame
        Indexed by (item, judge): ``logit_fwd`` (condition ``forward``), ``logit_rev``
        (``reverse``) and ``gold`` when the panel has it; cells missing either order are left
        out and counted in ``attrs["n_incomplete"]``.

    Raises
    ------
    judgerisk.panel.PanelError
        When the panel lacks one of the two conditions.
    """
    panel = validate_panel(panel, conditions=None)
    missing = [c for c in (forward, reverse) if c not in set(panel["condition"])]
    if missing:
        raise PanelError(
            f"one judge in both orders needs the conditions {forward!r} and {reverse!r}; the "
            f"panel has no {missing}"
        )
    wide = panel.pivot_table(index=["item", "judge"], columns="condition", values="logit")
    out = wide[[forward, reverse]].rename(columns={forward: "logit_fwd", reverse: "logit_rev"})
    n_all = len(out)
    out = out.dropna()
    if "gold" in panel.columns:
        gold = panel.drop_duplicates("item").set_index("item")["gold"]
        out["gold"] = gold.reindex(out.index.get_level_values("item")).to_numpy()
    out.columns.name = None
    out.attrs["n_incomplete"] = n_all - len(out)
    return out


def order_pairs(
    panel: pd.DataFrame, forward: str = ORIGINAL, reverse: str = SWAP, judge: str | None = None
) -> pd.DataFrame:
    """One judge's canonical logits in the two answer orders, one row per item.

    :func:`both_orders` of one judge (``judge``, or the panel's only one).

    Returns
    -------
    pandas.DataFrame
        Indexed by item: ``logit_fwd``, ``logit_rev`` and ``gold`` when present; items missing
        either order are left out and counted in ``attrs["n_incomplete"]``.
    """
    if judge is not None:
        panel = panel[panel["judge"] == judge]
    if panel["judge"].nunique() != 1:
        raise ValueError(f"need one judge, got {sorted(panel['judge'].unique())}; pass judge=")
    pairs = both_orders(panel, forward, reverse)
    out = pairs.droplevel("judge")
    out.attrs = dict(pairs.attrs)
    return out


def pairs_to_panel(
    pairs: pd.DataFrame, judge: str = "judge", source: str = "the table"
) -> pd.DataFrame:
    """The panel of a side-by-side pair table ``item, logit_fwd, logit_rev[, gold]``.

    Parameters
    ----------
    pairs : pandas.DataFrame
        One row per item: canonical log-odds that the original answer A wins with A shown
        first (``logit_fwd``) and after the order swap (``logit_rev``); optionally ``gold``
        ("A"/"B", empty for unlabelled items).
    judge : str, default "judge"
        The judge's name in the panel.
    source : str
        Named in error messages (e.g. the file path).

    Returns
    -------
    pandas.DataFrame
        A validated panel: two rows per item (conditions ``original`` and ``swap``), logits
        clipped to :math:`[-20, 20]`, ``gold`` when given; no item is dropped.

    Raises
    ------
    judgerisk.panel.PanelError
        Missing column, empty table, duplicate or missing items, non-numeric or non-finite
        logits, gold other than "A"/"B", each naming ``source``, the rows and the column.
    """
    missing = [c for c in PAIR_COLUMNS if c not in pairs.columns]
    if missing:
        raise PanelError(
            f"{source}: missing column(s) {missing}; a one-judge pair table needs "
            f"{list(PAIR_COLUMNS)} and optionally 'gold' (found {list(pairs.columns)})"
        )
    if pairs.empty:
        raise PanelError(f"{source}: the table has no rows")
    out = pairs.reset_index(drop=True).copy()
    bad = out["item"].isna()
    if bad.any():
        raise PanelError(
            f"{source}: column 'item' has missing ids; {offending_rows(out, bad, ['item'])}"
        )
    dup = out["item"].duplicated(keep=False)
    if dup.any():
        raise PanelError(
            f"{source}: column 'item' must be unique (one row per item); "
            f"{offending_rows(out, dup, ['item'])}"
        )
    for col in ("logit_fwd", "logit_rev"):
        values = pd.to_numeric(out[col], errors="coerce")
        bad = ~np.isfinite(values.to_numpy(dtype=float))
        if bad.any():
            raise PanelError(
                f"{source}: column {col!r} must hold finite numbers; "
                f"{offending_rows(out, bad, ['item', col])}"
            )
        out[col] = np.clip(values.to_numpy(dtype=np.float64), -LOGIT_CLIP, LOGIT_CLIP)
    keep = ["item"]
    if "gold" in out.columns:
        gold = out["gold"].astype("string").str.strip().str.upper()
        bad = ~gold.isin(["A", "B"]).fillna(False).to_numpy(bool) & gold.notna().to_numpy(bool)
        if bad.any():
            raise PanelError(
                f"{source}: column 'gold' must be 'A' or 'B'; "
                f"{offending_rows(out, bad, ['item', 'gold'])}"
            )
        out["gold"] = gold.astype(object).where(gold.notna(), None)
        keep.append("gold")
    long = pd.concat(
        [
            out[keep].assign(condition=cond, logit=out[col])
            for cond, col in ((ORIGINAL, "logit_fwd"), (SWAP, "logit_rev"))
        ],
        ignore_index=True,
    ).assign(judge=judge)
    return validate_panel(long, conditions=None)
