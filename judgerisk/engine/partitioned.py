"""Scoring a parquet panel larger than memory: a sampled fit, then the items partition by partition.

:func:`score_panel <judgerisk.engine.certified.score_panel>` holds the whole panel in memory. A
parquet panel (one file, or a folder of parquet files read as one pyarrow dataset, hive
partitions included) too large for that is scored in two steps:

1. **The fit, on a declared random sample.** The panel's item ids are read (one column), the
   cross-fitting splits are drawn over *all* of them exactly as in memory
   (:func:`judgerisk._splits.fold_labels`, :func:`judgerisk._splits.split_items`), and a uniform
   random sample of ``fit_sample`` items is drawn:
   ``numpy.random.default_rng([seed, SAMPLE_STREAM]).choice(n_items, fit_sample,
   replace=False)`` over the sorted ids (every item when the panel has at most ``fit_sample``
   items: the full fit). Only the sample's cells are loaded. Each split fits its latent
   measurement model on the sample's items among its fit items (a uniform random subsample of
   the fold's fit items, about :math:`(K-2)/K` of the sample) and freezes its signals' ECDFs
   on the sample's items among its reference items (about :math:`1/K` of it); the label-free
   scores that fit parameters (Dawid–Skene entropy) and the aggregators with parameters fit on
   the whole sample, without gold.
2. **The scores, partition by partition.** The sorted items are cut into ranges of
   ``partition_items``; :func:`score_partition`, one plain function, reads a range from the
   parquet source (a pyarrow filter on ``item``), validates it and scores its items with the
   frozen models: each item is scored where the in-memory path scores it (its evaluation
   folds), with the same leave-one-judge-out predictions, signals, ECDF transforms and
   noisy-OR, so with the full fit the table equals :func:`score_panel`'s. Partitions run in
   this process or on an existing Dask cluster (``dask=SCHEDULER_ADDRESS``,
   ``dask.distributed``), and come back in item order.

Memory is the sample's cells plus one partition per worker (and the item ids and one fold
number per item and repetition on the driver), whatever the panel's size.

References
----------
Methods reference §3 (cross-fitting) and §4 (frozen reference ECDFs); "Can We Trust This
Evaluation? Instance-Level Reliability of LLM-as-a-Judge" (SCUR); the book's README section
"Scale" (what runs where, measured).
"""

from __future__ import annotations

import itertools
import json
import warnings
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from judgerisk._splits import PROTOCOLS, SPLIT_NAMES, fold_labels, split_items
from judgerisk._util.determinism import one_blas_thread
from judgerisk.aggregators._base import (
    BaseAggregator,
    aggregator_name,
    make_aggregator,
    reported_aggregators,
)
from judgerisk.aggregators.aggregate import aggregate
from judgerisk.engine.certified import combine_repetitions
from judgerisk.options import ANALYSIS, ScoreSettings, StreamSettings, check_count
from judgerisk.panel import ORIGINAL, PanelError, check_scorable, validate_panel
from judgerisk.panel._contract import missing_columns
from judgerisk.risk._ecdf import FrozenECDF
from judgerisk.risk.baselines import BASELINES, baseline_scores
from judgerisk.risk.registry import get_risk_score
from judgerisk.risk.scur import scur_scores
from judgerisk.risk.signals import combine_scur, signal_c, signal_s, signal_u

__all__ = [
    "SAMPLE_STREAM",
    "Partition",
    "SplitModel",
    "PartitionState",
    "StreamPlan",
    "open_panel_dataset",
    "count_rows",
    "panel_items",
    "plan_stream",
    "score_partition",
    "run_partitions",
    "score_parquet",
    "is_parquet_source",
    "write_parquet_parts",
]

#: The sample's random stream: ``numpy.random.default_rng([seed, SAMPLE_STREAM])``, apart
#: from the folds' ``default_rng(seed)``.
SAMPLE_STREAM = 1
_STREAM = StreamSettings()
_SCORE = ScoreSettings()
_CELLS = ("item", "judge", "condition", "logit", "p")
_READ = (*_CELLS, "gold")


@dataclass(frozen=True)
class Partition:
    """One range of consecutive items (in sorted order) and their split codes.

    Attributes
    ----------
    number : int
        Position of the partition (0, 1, ...): the output's order.
    items : numpy.ndarray
        The partition's item ids, sorted; ``items[0]`` and ``items[-1]`` bound its filter.
    codes : numpy.ndarray of int8, shape (repetitions, items)
        Per repetition: the item's fold (``"kfold"``) or its split, 0 fit, 1 reference,
        2 evaluation (``"paper"``).
    """

    number: int
    items: np.ndarray
    codes: np.ndarray


@dataclass(frozen=True)
class SplitModel:
    """What one split froze on the sample: its fitted LMM, its ECDFs and its signal layout.

    Attributes
    ----------
    repetition, fold : int
        The split's repetition (row of :attr:`Partition.codes`) and its fold (0 under
        ``"paper"``).
    lmm : LatentMeasurementModel
        Fitted on the sample's fit items of the split.
    ecdfs : dict of str -> FrozenECDF
        The kept components' reference ECDFs (``"S"``: the ECDF of the merged maximum).
    columns : tuple of str
        The raw components of the split's table (``U, C, S_order, S_rubric, ...``).
    merged : tuple of str
        The kept ``S_<family>`` components whose z's are merged into ``S``.
    combined : tuple of str
        The z columns that enter SCUR.
    s_norm : str
        How ``S`` is normalised (``"ecdf"`` or ``"max"``).
    signals : dict
        ``c_kind``, ``s_kind`` and ``u_conditions`` of the split's signals.
    """

    repetition: int
    fold: int
    lmm: Any
    ecdfs: dict[str, FrozenECDF]
    columns: tuple[str, ...]
    merged: tuple[str, ...]
    combined: tuple[str, ...]
    s_norm: str
    signals: dict[str, str]


@dataclass(frozen=True)
class PartitionState:
    """Everything :func:`score_partition` reads besides its partition (sent once to a cluster).

    Attributes
    ----------
    source : str
        The parquet file or folder, as every worker reads it.
    protocol : str
        ``"kfold"`` or ``"paper"``.
    n_folds : int
    models : tuple of SplitModel
        One per split, in the in-memory order (repetition, then fold).
    sample : pandas.DataFrame
        The sample's validated cells without gold (the fit items of the scores and
        aggregators that fit parameters).
    sample_items : pandas.Index
        The sample's items, sorted.
    baselines : tuple of str
        The label-free scores of the table.
    aggregators : tuple
        The aggregators whose verdicts and posteriors the table holds.
    seed : int
        The first seed (the aggregators' ``random_state``, as in memory).
    has_gold : bool
        Whether the panel has a ``gold`` column (copied, never read).
    """

    source: str
    protocol: str
    n_folds: int
    models: tuple[SplitModel, ...]
    sample: pd.DataFrame
    sample_items: pd.Index
    baselines: tuple[str, ...]
    aggregators: tuple[str | BaseAggregator, ...]
    seed: int
    has_gold: bool


@dataclass(frozen=True)
class StreamPlan:
    """A planned streamed scoring: the frozen state and the partitions to score.

    Attributes
    ----------
    state : PartitionState
    partitions : tuple of Partition
    n_items, n_rows : int
        The panel's items and rows (cells).
    sample_items : int
        Items of the fit sample (``n_items`` for the full fit).
    seeds : list of int
        The repetitions' seeds.
    """

    state: PartitionState
    partitions: tuple[Partition, ...]
    n_items: int
    n_rows: int
    sample_items: int
    seeds: list[int]

    def settings(self) -> dict[str, Any]:
        """What the provenance record states about the streamed run."""
        return {
            "streamed": True,
            "n_rows": self.n_rows,
            "fit_sample_items": self.sample_items,
            "full_fit": self.sample_items == self.n_items,
            "partitions": len(self.partitions),
            "sample_rule": f"numpy.random.default_rng([seed, {SAMPLE_STREAM}]).choice(n_items, "
            "fit_sample, replace=False) over the sorted item ids",
        }


# ------------------------------------------------------------------------------ reading
def is_parquet_source(path: str | Path) -> bool:
    """Whether ``path`` is a parquet file (``.parquet``, ``.pq``) or a folder (a dataset)."""
    p = Path(path)
    return p.is_dir() or p.suffix.lower() in (".parquet", ".pq")


def count_rows(source: str | Path) -> int:
    """The rows of a parquet panel, from the files' metadata (nothing else is read).

    Raises
    ------
    PanelError
        :func:`open_panel_dataset`'s.
    """
    if Path(source).is_file():  # one file's footer, without pyarrow.dataset (0.02 s to import)
        import pyarrow.parquet as pq

        try:
            meta = pq.read_metadata(source)
            complete = not missing_columns(meta.schema.to_arrow_schema().names)
        except Exception:  # noqa: BLE001 - open_panel_dataset names the problem below
            complete = False
        if complete:
            return int(meta.num_rows)
    return int(open_panel_dataset(source).count_rows())


def open_panel_dataset(source: str | Path) -> Any:
    """The parquet file or folder ``source`` as a :class:`pyarrow.dataset.Dataset`.

    A folder is read as one dataset of its parquet files (hive partitions such as
    ``condition=swap/`` become columns; files starting with ``.`` or ``_`` are skipped).

    Raises
    ------
    PanelError
        Naming ``source`` when it is missing, not parquet, or lacks a contract column.
    """
    import pyarrow.dataset as ds

    path = Path(source)
    if not path.exists():
        raise PanelError(f"{source}: file or folder not found")
    try:
        dataset = ds.dataset(str(path), format="parquet", partitioning="hive")
    except Exception as exc:  # noqa: BLE001 - pyarrow raises its own types
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise PanelError(f"{source}: cannot read it as parquet ({first})") from None
    missing = missing_columns(dataset.schema.names)
    if missing:
        raise PanelError(
            f"{source}: missing required column(s) {', '.join(missing)}; got columns "
            f"{dataset.schema.names}"
        )
    return dataset


def _plain(table: Any) -> Any:
    """An Arrow table with dictionary (partition) columns cast to their values' type."""
    import pyarrow as pa

    fields = [
        pa.field(f.name, f.type.value_type) if pa.types.is_dictionary(f.type) else f
        for f in table.schema
    ]
    return table.cast(pa.schema(fields))


def panel_items(dataset: Any, source: str | Path = "panel") -> pd.Index:
    """The sorted distinct item ids of a parquet panel, read one column at a time.

    Raises
    ------
    PanelError
        When the ``item`` column has missing values.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    parts, missing = [], 0
    for batch in dataset.to_batches(columns=["item"]):
        col = batch.column(0)
        missing += col.null_count
        parts.append(pc.unique(col))
    if missing:
        raise PanelError(f"{source}: column 'item' has {missing} missing values")
    if not parts:
        raise PanelError(f"{source}: the panel is empty (0 rows)")
    ids = _plain(pa.table({"item": pc.unique(pa.chunked_array(parts))}))
    return pd.Index(ids.column(0).to_pandas(), name="item").sort_values()


def _read(dataset: Any, source: str, where: Any, what: str) -> pd.DataFrame:
    """The validated rows of ``dataset`` that match the filter ``where``."""
    columns = [c for c in _READ if c in dataset.schema.names]
    frame = _plain(dataset.to_table(columns=columns, filter=where)).to_pandas()
    try:
        return validate_panel(frame)
    except PanelError as exc:  # rows are counted within the partition read
        raise type(exc)(f"{source} ({what}): {exc}") from None


def read_partition(source: str, partition: Partition) -> pd.DataFrame:
    """The validated cells of one partition's items (a range filter on ``item``)."""
    import pyarrow.dataset as ds

    lo, hi = partition.items[0], partition.items[-1]
    lo, hi = (v.item() if isinstance(v, np.generic) else v for v in (lo, hi))
    where = (ds.field("item") >= lo) & (ds.field("item") <= hi)
    what = f"partition {partition.number}, items {lo!r} to {hi!r}"
    return _read(open_panel_dataset(source), source, where, what)


# ------------------------------------------------------------------------------ the fit
def _codes(items: pd.Index, seed: int, protocol: str, n_folds: int) -> np.ndarray:
    """One repetition's code per item: its fold (kfold) or split 0/1/2 (paper)."""
    if protocol == "kfold":
        return fold_labels(items, seed, n_folds).to_numpy().astype(np.int8)
    labels = split_items(items, seed, ANALYSIS.fractions).to_numpy()
    return pd.Index(SPLIT_NAMES).get_indexer(labels).astype(np.int8)


def _split_labels(codes: np.ndarray, fold: int, protocol: str, n_folds: int) -> np.ndarray:
    """``"fit"``/``"reference"``/``"evaluation"`` of each code (as :func:`fold_split`)."""
    names = np.array(SPLIT_NAMES, dtype=object)
    if protocol == "paper":
        return names[codes]
    out = np.full(len(codes), "fit", dtype=object)
    out[codes == (fold + 1) % n_folds] = "reference"
    out[codes == fold] = "evaluation"
    return out


def _split_model(res: Any, repetition: int, fold: int) -> SplitModel:
    """The frozen parts of one split's :class:`~judgerisk.risk.signals.ScurResult`."""
    cols = list(res.table.columns)
    columns = tuple(cols[cols.index("split") + 1 : cols.index("S")])
    families = res.settings["s_families"]
    merged = tuple(
        c for c in res.kept if c.startswith("S_") and (families is None or c[2:] in families)
    )
    return SplitModel(
        repetition=repetition,
        fold=fold,
        lmm=res.lmm,
        ecdfs=dict(res.ecdfs),
        columns=columns,
        merged=merged,
        combined=tuple(res.combined),
        s_norm=res.settings["s_norm"],
        signals={k: res.settings[k] for k in ("c_kind", "s_kind", "u_conditions")},
    )


def plan_stream(
    source: str | Path,
    n_seeds: int = _SCORE.n_seeds,
    seed: int = _SCORE.seed,
    aggregators: Sequence[str | BaseAggregator] | None = _SCORE.aggregators,
    baselines: Sequence[str] = BASELINES,
    scur_options: dict | None = None,
    *,
    protocol: str = _SCORE.protocol,
    n_folds: int = _SCORE.n_folds,
    fit_sample: int = _STREAM.fit_sample,
    partition_items: int = _STREAM.partition_items,
) -> StreamPlan:
    """Draw the splits and the fit sample, fit every split on the sample, cut the partitions.

    Parameters
    ----------
    source : str or pathlib.Path
        A parquet file, or a folder of parquet files (one pyarrow dataset), in the panel
        contract (``judgerisk.panel``).
    n_seeds, seed, aggregators, baselines, scur_options, protocol, n_folds
        As in :func:`judgerisk.engine.certified.score_panel`.
    fit_sample : int, default :attr:`judgerisk.options.StreamSettings.fit_sample`
        Items of the fit sample (see the module docstring for the rule); a panel with at
        most this many items is fitted in full.
    partition_items : int, default :attr:`judgerisk.options.StreamSettings.partition_items`
        Items per partition.

    Returns
    -------
    StreamPlan
    """
    import pyarrow as pa
    import pyarrow.dataset as ds

    for name, value in (("n_seeds", n_seeds), ("n_folds", n_folds), ("seed", seed)):
        check_count(name, value)
    check_count("fit_sample", fit_sample)
    check_count("partition_items", partition_items)
    if protocol not in PROTOCOLS:
        raise PanelError(f"protocol must be one of {PROTOCOLS}, got {protocol!r}")
    source = str(source)
    dataset = open_panel_dataset(source)
    items = panel_items(dataset, source)
    n = len(items)
    if n > fit_sample:
        rng = np.random.default_rng([seed, SAMPLE_STREAM])
        chosen = items[np.sort(rng.choice(n, fit_sample, replace=False))]
        where = ds.field("item").isin(pa.array(chosen.to_numpy()))
        sample = _read(dataset, source, where, f"the fit sample of {fit_sample} items")
    else:
        chosen = items
        sample = _read(dataset, source, ds.field("item").is_valid(), "the whole panel")
    check_scorable(sample)
    sample = sample.drop(columns=[c for c in ("gold",) if c in sample.columns])  # still valid
    at = items.get_indexer(chosen)
    seeds = list(range(seed, seed + int(n_seeds)))
    codes = np.stack([_codes(items, s, protocol, n_folds) for s in seeds])
    folds = range(int(n_folds)) if protocol == "kfold" else range(1)
    cells = sample[list(_CELLS)]
    models = []
    for r, s in enumerate(seeds):
        for k in folds:
            labels = _split_labels(codes[r, at], k, protocol, n_folds)
            split = pd.Series(labels, index=chosen, name="split")
            res = scur_scores(cells, seed=s, split=split, check_input=False, **(scur_options or {}))
            models.append(_split_model(res, r, k))
    state = PartitionState(
        source=source,
        protocol=protocol,
        n_folds=int(n_folds),
        models=tuple(models),
        sample=sample,
        sample_items=pd.Index(chosen, name="item"),
        baselines=tuple(baselines),
        aggregators=tuple(reported_aggregators(aggregators)),
        seed=int(seed),
        has_gold="gold" in dataset.schema.names,
    )
    size = int(partition_items)
    parts = tuple(
        Partition(p, items[lo : lo + size].to_numpy(), codes[:, lo : lo + size])
        for p, lo in enumerate(range(0, n, size))
    )
    return StreamPlan(state, parts, n, dataset.count_rows(), len(chosen), seeds)


# ------------------------------------------------------------------------------ one partition
def _known_cells(cells: pd.DataFrame, lmm: Any) -> pd.DataFrame:
    """The cells of judges and conditions the split's fit saw (the others cannot be predicted)."""
    ok = cells["judge"].isin(lmm.judges_) & cells["condition"].isin(lmm.conditions_)
    if ok.all():
        return cells
    warnings.warn(
        f"{int((~ok).sum())} cell(s) of judges or conditions absent from the fit sample's "
        "fit items cannot be predicted and are left out of their split's signals",
        UserWarning,
        stacklevel=3,
    )
    return cells.loc[ok.to_numpy()].reset_index(drop=True)


def _score_split(cells: pd.DataFrame, model: SplitModel, split: pd.Series) -> pd.DataFrame:
    """One split's table for the cells of its scored items, with the split's frozen parts.

    Steps 2-6 of :func:`judgerisk.risk.signals.scur_scores` with the LMM and the ECDFs frozen
    on the sample: leave-one-judge-out predictions, U, C and the S families, their reference
    ECDF values, the merged :math:`z^S` and the noisy-OR.
    """
    opts = model.signals
    preds = model.lmm.predict_loo(_known_cells(cells, model.lmm), check_input=False)
    s_lmm = model.lmm if opts["s_kind"] == "debiased" else None
    raw = pd.concat(
        [
            signal_u(preds, conditions=opts["u_conditions"]),
            signal_c(preds, kind=opts["c_kind"], sigma=model.lmm.sigma_),
            signal_s(preds, kind=opts["s_kind"], lmm=s_lmm),
        ],
        axis=1,
    ).reindex(columns=list(model.columns))
    n = len(raw)
    none = np.full(n, np.nan)
    z = {
        c: model.ecdfs[c].transform(raw[c].to_numpy(np.float64)) if c in model.ecdfs else none
        for c in model.columns
    }
    s_max, z_s = np.full(n, np.nan), np.full(n, np.nan)
    if model.merged:
        zs = np.column_stack([z[c] for c in model.merged])
        has = ~np.isnan(zs).all(axis=1)
        s_max[has] = np.nanmax(zs[has], axis=1)
        if model.s_norm != "ecdf":
            z_s = s_max.copy()
        elif "S" in model.ecdfs:
            z_s = model.ecdfs["S"].transform(s_max)
    table = pd.DataFrame(
        {
            "item": raw.index.to_numpy(),
            "split": split.reindex(raw.index).to_numpy(),
            **{c: raw[c].to_numpy() for c in model.columns},
            "S": s_max,
            **{f"z_{c}": z[c] for c in model.columns},
            "z_S": z_s,
        }
    )
    table["scur"] = combine_scur(table[list(model.combined)]).to_numpy()
    return table


def _with_sample(state: PartitionState, unlabelled: pd.DataFrame, every: bool) -> pd.DataFrame:
    """The sample's cells and the partition's other items' cells by the sample's judges.

    Only the original condition, which the aggregators and the scores read, unless a score
    that fits parameters also reads the whole panel (``every``).
    """
    sample = state.sample
    if not every:
        sample = sample.loc[sample["condition"] == ORIGINAL]
        unlabelled = unlabelled.loc[unlabelled["condition"] == ORIGINAL]
    rest = unlabelled.loc[
        ~unlabelled["item"].isin(state.sample_items) & unlabelled["judge"].isin(sample["judge"])
    ]
    return validate_panel(pd.concat([sample, rest], ignore_index=True))


def _labelfree(state: PartitionState, unlabelled: pd.DataFrame, items: pd.Index) -> pd.DataFrame:
    """The baselines and the aggregators' verdicts of the partition's items.

    Scores and aggregators without parameters read the partition's cells; those with
    parameters are fitted on the sample (as in memory on every item, without gold) and
    applied to the partition.
    """
    out = pd.DataFrame(index=items)
    fitted = [b for b in state.baselines if get_risk_score(b).needs_fit]
    own = [b for b in state.baselines if b not in fitted]
    makes = {aggregator_name(m): m for m in state.aggregators}
    parametric = {
        n: m for n, m in makes.items() if make_aggregator(m, random_state=state.seed).has_parameters
    }
    every = any(get_risk_score(b).uses_panel for b in fitted)
    joint = _with_sample(state, unlabelled, every) if fitted or parametric else None
    fit_items = state.sample_items
    # the original condition is all that the aggregators and most scores read
    original = unlabelled.loc[unlabelled["condition"] == ORIGINAL].reset_index(drop=True)
    cols: dict[str, pd.Series] = {}
    if own:
        whole = any(get_risk_score(b).uses_panel for b in own)
        base = baseline_scores(
            unlabelled if whole else original, items=items, methods=tuple(own), check_input=False
        )
        cols.update({b: base[b] for b in own})
    if fitted and joint is not None:
        target = items[items.isin(joint["item"])]
        base = baseline_scores(
            joint, fit_items=fit_items, items=target, methods=tuple(fitted), check_input=False
        )
        cols.update({b: base[b] for b in fitted})
    for b in state.baselines:
        out[b] = cols[b].reindex(items)
    for name, method in makes.items():
        if name in parametric and joint is not None:
            agg = aggregate(
                joint, method, fit_items=fit_items, random_state=state.seed, check_input=False
            )
        else:
            agg = aggregate(original, method, random_state=state.seed, check_input=False)
        agg = agg.set_index("item")
        out[name] = agg["verdict"].reindex(items)
        out[f"{name}_posterior"] = agg["posterior"].reindex(items)
    return out


def score_partition(partition: Partition, state: PartitionState) -> pd.DataFrame:
    """Score one partition's items: the one per-partition step, in-process or on a worker.

    Parameters
    ----------
    partition : Partition
        The items (a range in sorted order) and their split codes.
    state : PartitionState
        The splits' frozen models and the fit sample (:func:`plan_stream`).

    Returns
    -------
    pandas.DataFrame
        Indexed by the partition's items, the columns of
        :func:`judgerisk.engine.certified.score_panel` in its order: ``n_scored``, the
        signals' and z's means, ``scur``, ``scur_sd``, the baselines, each aggregator's
        verdict and posterior, and ``gold`` when the panel has it (never read).

    Notes
    -----
    Each split scores the partition's items of its evaluation fold (under ``"paper"``, its
    reference and evaluation items, as in memory), on one BLAS thread; the repetitions'
    scores are averaged by :func:`judgerisk.engine.certified.combine_repetitions`.
    """
    with one_blas_thread():
        panel = read_partition(state.source, partition)
        items = pd.Index(partition.items, name="item")
        cells = panel[list(_CELLS)]
        at = items.get_indexer(cells["item"])
        if (at < 0).any():
            raise PanelError(
                f"{state.source}: partition {partition.number} holds items outside its range"
            )
        tables = []
        for model in state.models:
            labels = _split_labels(
                partition.codes[model.repetition], model.fold, state.protocol, state.n_folds
            )
            split = pd.Series(labels, index=items, name="split")
            keep = labels != "fit" if state.protocol == "paper" else labels == "evaluation"
            rows = keep[at]
            if rows.any():
                scored = cells.loc[rows].reset_index(drop=True)
                tables.append(_score_split(scored, model, split))
        out = combine_repetitions(tables, items)
        unlabelled = panel.drop(columns=[c for c in ("gold",) if c in panel.columns])
        out = out.join(_labelfree(state, unlabelled, items))
        if state.has_gold:
            gold = panel.drop_duplicates("item").set_index("item")["gold"]
            out["gold"] = gold.reindex(items).astype(object)
    return out


# ------------------------------------------------------------------------------ running
def run_partitions(
    plan: StreamPlan, dask: str | None = _STREAM.dask, window: int | None = None
) -> Iterator[pd.DataFrame]:
    """Each partition's table, in item order: scored here, or on the Dask cluster ``dask``.

    Parameters
    ----------
    plan : StreamPlan
    dask : str, optional
        Address of an existing Dask scheduler (``dask.distributed``, the ``dask`` extra). The
        state is scattered to every worker once; at most ``window`` partitions are in flight.
    window : int, optional
        Partitions in flight on the cluster (default: twice its threads).

    Yields
    ------
    pandas.DataFrame
        :func:`score_partition` of each partition, in order.
    """
    if dask is None:
        for part in plan.partitions:
            yield score_partition(part, plan.state)
        return
    try:
        from distributed import Client
    except ImportError:
        raise PanelError("--dask needs dask.distributed: pip install 'judgerisk[dask]'") from None
    with Client(dask, set_as_default=False) as client:
        state = client.scatter(plan.state, broadcast=True)
        width = window or max(2, 2 * sum(client.nthreads().values()))
        todo = iter(plan.partitions)
        pending = deque(
            client.submit(score_partition, p, state, pure=False)
            for p in itertools.islice(todo, width)
        )
        while pending:
            table = pending.popleft().result()
            nxt = next(todo, None)
            if nxt is not None:
                pending.append(client.submit(score_partition, nxt, state, pure=False))
            yield table


def score_parquet(
    source: str | Path,
    n_seeds: int = _SCORE.n_seeds,
    seed: int = _SCORE.seed,
    aggregators: Sequence[str | BaseAggregator] | None = _SCORE.aggregators,
    baselines: Sequence[str] = BASELINES,
    scur_options: dict | None = None,
    *,
    protocol: str = _SCORE.protocol,
    n_folds: int = _SCORE.n_folds,
    fit_sample: int = _STREAM.fit_sample,
    partition_items: int = _STREAM.partition_items,
    dask: str | None = _STREAM.dask,
) -> pd.DataFrame:
    """The whole streamed score table in memory (:func:`plan_stream`, :func:`run_partitions`).

    For tests and panels whose *score table* fits in memory; ``judgerisk score`` writes the
    partitions to its output as they come instead.

    Returns
    -------
    pandas.DataFrame
        Like :func:`judgerisk.engine.certified.score_panel`: indexed by item, ``attrs``
        holding ``seeds``, ``protocol`` and the plan's :meth:`StreamPlan.settings`.
    """
    plan = plan_stream(
        source,
        n_seeds,
        seed,
        aggregators,
        baselines,
        scur_options,
        protocol=protocol,
        n_folds=n_folds,
        fit_sample=fit_sample,
        partition_items=partition_items,
    )
    out = pd.concat(list(run_partitions(plan, dask)))
    out.index.name = "item"
    out.attrs.update(seeds=plan.seeds, protocol=protocol, **plan.settings())
    return out


# ------------------------------------------------------------------------------ writing
def write_parquet_parts(
    tables: Iterable[pd.DataFrame],
    path: str | Path,
    finish: Callable[[int], dict],
    *,
    exclusive: bool = False,
) -> int:
    """Write tables one after another into one parquet file, atomically, with its record.

    Each table (indexed by item) becomes row groups of the file as it comes, so memory holds
    one table at a time. The file is written in a private temporary folder beside ``path``
    and renamed when complete (:func:`judgerisk._util.safe_write.atomic_write`; nothing is
    left at ``path`` on a failure); ``finish(n_rows)`` gives the provenance record, stored in
    the file's metadata (key :data:`judgerisk._provenance.PROVENANCE_KEY`) once every row is
    written.

    Returns
    -------
    int
        The rows written.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    from judgerisk._provenance import PROVENANCE_KEY
    from judgerisk._util.safe_write import atomic_write

    written = [0]

    def _write(tmp: Path) -> None:
        writer, schema = None, None
        try:
            for frame in tables:
                table = pa.Table.from_pandas(frame.reset_index(), preserve_index=False)
                if schema is None:  # a column without a value yet (gold) is text
                    schema = pa.schema(
                        [
                            pa.field(f.name, pa.string()) if pa.types.is_null(f.type) else f
                            for f in table.schema
                        ],
                        metadata=table.schema.metadata,
                    )
                    writer = pq.ParquetWriter(tmp, schema)
                assert writer is not None
                writer.write_table(table.cast(schema))
                written[0] += table.num_rows
            if writer is None:
                raise PanelError(f"{path}: no partition to write")
            text = json.dumps(finish(written[0]), indent=2, sort_keys=True)
            writer.add_key_value_metadata({PROVENANCE_KEY: text})
        finally:
            if writer is not None:
                writer.close()

    atomic_write(path, _write, exclusive=exclusive)
    return written[0]
