"""The aggregator interface and its registry.

Every aggregation rule is a :class:`BaseAggregator` subclass registered under a name with
:func:`register_aggregator`; :func:`judgerisk.aggregators.aggregate` and everything that iterates
over aggregators (analyses, retention, reports, figures) find it there. The book's chapter
"Aggregators and retention" describes the five built-in rules.
"""

from __future__ import annotations

import copy
import inspect
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Literal, TypeVar

import numpy as np
import pandas as pd

from judgerisk._util.registry import Registry
from judgerisk.panel._cell_table import CellTable
from judgerisk.validation import align_judges, check_probs, check_votes, to_labels

__all__ = [
    "AGGREGATORS",
    "REPORTED_AGGREGATORS",
    "BaseAggregator",
    "aggregator_name",
    "get_aggregator",
    "make_aggregator",
    "register_aggregator",
    "reported_aggregators",
    "unregister_aggregator",
    "voted_probs",
]


class BaseAggregator(ABC):
    """Base class of the panel aggregators (scikit-learn / crowd-kit shape).

    A subclass sets :attr:`uses` (the item x judge table it reads: binary ``"verdict"`` or the
    canonical probabilities ``"p"``) and implements :meth:`_fit` (learn the parameters, return the
    posterior of the fit items) and :meth:`_posterior` (score items with the parameters frozen).
    The base class validates every table once, checks that new judgements hold only fitted
    judges, and provides :meth:`fit_posterior`, :meth:`predict`, :meth:`fit_predict` and
    :attr:`labels_`.

    Attributes
    ----------
    judges_ : pandas.Index
        The judges seen in :meth:`fit`.
    posterior_ : pandas.Series
        P(true label = A) for the fitted items.
    """

    #: Registry name (set by :func:`register_aggregator`).
    name: ClassVar[str] = ""
    #: Display name and colour in tables and figures (set by :func:`register_aggregator`).
    display_name: ClassVar[str] = ""
    color: ClassVar[str | None] = None
    #: Which item x judge table the rule reads: ``"verdict"`` (1.0 A / 0.0 B / NaN) or ``"p"``.
    uses: ClassVar[Literal["verdict", "p"]] = "verdict"
    #: Whether :meth:`fit` learns parameters (False: the posterior of an item depends only on it).
    has_parameters: ClassVar[bool] = True
    #: Whether :meth:`_fit` and :meth:`_posterior` also take a :class:`~judgerisk.panel._cell_table.CellTable`
    #: (a sparse panel's table, by its cells); a rule that does not gets the dense table.
    supports_cells: ClassVar[bool] = False

    judges_: pd.Index
    posterior_: pd.Series

    # ----------------------------------------------------------------- to implement
    @abstractmethod
    def _fit(self, arr: np.ndarray, table: pd.DataFrame) -> np.ndarray:
        """Fit on the validated array; return the fit items' P(A)."""

    @abstractmethod
    def _posterior(self, arr: np.ndarray) -> np.ndarray:
        """P(A) of every row of a validated array aligned to ``judges_``."""

    # ----------------------------------------------------------------- shared
    def _check(self, table: pd.DataFrame, name: str | None = None) -> np.ndarray:
        name = name or ("votes" if self.uses == "verdict" else "probs")
        return check_votes(table, name) if self.uses == "verdict" else check_probs(table, name)

    def _check_fitted(self) -> None:
        if not hasattr(self, "posterior_"):
            raise ValueError(f"{type(self).__name__} is not fitted: call fit(...) first")

    def fit(self, table: pd.DataFrame, probs: pd.DataFrame | None = None) -> BaseAggregator:
        """Fit on an item x judge table (the one named by :attr:`uses`). Returns ``self``.

        ``probs`` (canonical probabilities, same shape) is optional side information that only
        rules which break ties by probability read (majority vote); :attr:`labels_` uses it.
        """
        table = self._dense_unless_supported(table)
        arr: Any = self._check(table)  # a CellTable for a rule that supports_cells
        if arr.shape[0] == 0 or arr.shape[1] == 0:
            raise ValueError(f"{type(self).__name__}: the table is empty (shape {arr.shape})")
        self.judges_ = pd.Index(table.columns)
        self._fit_probs = voted_probs(table, probs)
        post = self._fit(arr, table)
        self.posterior_ = pd.Series(post, index=table.index.copy(), name="posterior")
        return self

    def _dense_unless_supported(self, table: pd.DataFrame) -> pd.DataFrame:
        if isinstance(table, CellTable) and not self.supports_cells:
            return table.to_frame()
        return table

    def posterior(self, table: pd.DataFrame) -> pd.Series:
        """P(A) for (new) items with the fitted parameters frozen.

        Fitted judges absent from ``table`` count as missing; judges not seen in fit are an error.
        """
        self._check_fitted()
        table = self._dense_unless_supported(table)
        self._check(table)
        aligned = align_judges(table, self.judges_)
        arr: Any = (
            aligned
            if isinstance(aligned, CellTable)
            else aligned.to_numpy(np.float64, na_value=np.nan)
        )
        post = self._posterior(arr)
        return pd.Series(post, index=table.index.copy(), name="posterior")

    def fit_posterior(self, table: pd.DataFrame) -> pd.Series:
        """Fit on ``table`` and return :attr:`posterior_`."""
        return self.fit(table).posterior_

    def decide(self, posterior: np.ndarray, probs: pd.DataFrame | None = None) -> np.ndarray:
        """Verdicts "A"/"B" from posteriors: A iff P(A) > 1/2 (exactly 1/2 counts as B)."""
        return to_labels(np.asarray(posterior, dtype=np.float64) > 0.5)

    def predict(self, table: pd.DataFrame, probs: pd.DataFrame | None = None) -> pd.Series:
        """Verdicts ("A"/"B") for (new) items with the fitted parameters frozen.

        ``probs`` plays the part it plays in :meth:`fit`: given the same table and
        probabilities, ``predict`` and :attr:`labels_` give the same verdicts (one tie rule,
        :meth:`decide`).
        """
        post = self.posterior(table)
        verdict = self.decide(post.to_numpy(), voted_probs(table, probs))
        return pd.Series(verdict, index=post.index, name="verdict")

    def fit_predict(self, table: pd.DataFrame, probs: pd.DataFrame | None = None) -> pd.Series:
        """Fit on ``table`` (and the optional ``probs``, as in :meth:`fit`); return :attr:`labels_`."""
        return self.fit(table, probs).labels_

    @property
    def labels_(self) -> pd.Series:
        """Verdicts ("A"/"B") of the fitted items, ties decided with the ``probs`` given to ``fit``."""
        self._check_fitted()
        post = self.posterior_
        verdict = self.decide(post.to_numpy(), getattr(self, "_fit_probs", None))
        return pd.Series(verdict, index=post.index, name="verdict")

    def __repr__(self) -> str:
        params = inspect.signature(type(self).__init__).parameters
        shown = [f"{k}={getattr(self, k)!r}" for k in params if k != "self" and hasattr(self, k)]
        return f"{type(self).__name__}({', '.join(shown)})"


def voted_probs(table: Any, probs: Any) -> Any:
    """``probs`` aligned to ``table`` (its rows and judges), kept only where ``table`` has a vote.

    The one alignment every verdict API applies before :meth:`BaseAggregator.decide`; a
    probability missing where a vote is observed is an error, one present where the vote is
    missing is ignored. ``None`` passes through.
    """
    if probs is None:
        return None
    if isinstance(table, CellTable):  # a sparse table: the probabilities of its voted cells
        cells = probs if isinstance(probs, CellTable) else CellTable.from_frame(probs)
        voted = cells.reindex(table.index).align_columns(table.columns, "probs").on(table)
        if len(voted.values) < len(table.values):
            raise ValueError("probs is missing where votes are observed")
        return voted
    if isinstance(probs, CellTable):
        probs = probs.to_frame()
    p = probs.reindex(index=table.index, columns=table.columns).astype(np.float64)
    observed = table.notna().to_numpy()
    missing = np.isnan(p.to_numpy()) & observed
    if missing.any():
        row, col = np.argwhere(missing)[0]
        raise ValueError(
            f"probs is missing where votes are observed ({int(missing.sum())} cell(s); first: "
            f"item {table.index[row]!r}, judge {table.columns[col]!r})"
        )
    return p.where(observed)


def _adopt(name: str, obj: Any) -> None:
    """Register a plug-in's class (entry-point group ``judgerisk.aggregators``)."""
    register_aggregator(
        name, label=getattr(obj, "display_name", None) or None, color=getattr(obj, "color", None)
    )(obj)


#: The built-in rules (registered by their modules, listed here in the order reported), then
#: the plug-ins of the entry-point group ``judgerisk.aggregators``.
_REGISTRY: Registry[type[BaseAggregator]] = Registry(
    "aggregation method",
    builtins={
        "majority": "judgerisk.aggregators._majority",
        "dawid_skene": "judgerisk.aggregators.dawid_skene",
        "mace": "judgerisk.aggregators._mace",
        "glad": "judgerisk.aggregators._glad",
        "care": "judgerisk.aggregators._care",
    },
    group="judgerisk.aggregators",
    adopt=lambda name, obj: _adopt(name, obj),
)
_A = TypeVar("_A", bound=type[BaseAggregator])


def register_aggregator(
    name: str, *, label: str | None = None, color: str | None = None
) -> Callable[[_A], _A]:
    """Register an aggregator class under ``name`` (a class decorator).

    Registered names are accepted by :func:`judgerisk.aggregators.aggregate` and appear in
    :data:`AGGREGATORS` in registration order. ``label`` and ``color`` give it a display name
    and colour in every figure; they are stored on the class (``display_name``, ``color``) and
    read by :mod:`judgerisk._plots.style`, so the estimator knows nothing of figures.

    Examples
    --------
    >>> from judgerisk.aggregators import BaseAggregator, register_aggregator
    >>> @register_aggregator("first_judge")
    ... class FirstJudge(BaseAggregator):
    ...     has_parameters = False
    ...     def _fit(self, arr, table):
    ...         return self._posterior(arr)
    ...     def _posterior(self, arr):
    ...         return arr[:, 0]
    >>> "first_judge" in AGGREGATORS
    True
    >>> unregister_aggregator("first_judge")
    """

    def deco(klass: _A) -> _A:
        if not (isinstance(klass, type) and issubclass(klass, BaseAggregator)):
            raise TypeError(f"{klass!r} is not a BaseAggregator subclass")
        _REGISTRY.add(name, klass)
        klass.name = name
        klass.display_name = label or name
        klass.color = color
        return klass

    return deco


def unregister_aggregator(name: str) -> None:
    """Remove a registered aggregator (for tests and interactive sessions)."""
    _REGISTRY.remove(name)


def get_aggregator(name: str | BaseAggregator | type[BaseAggregator]) -> type[BaseAggregator]:
    """The class registered under ``name`` (an instance or a class gives its own class); a
    ``ValueError`` lists the registered names."""
    if isinstance(name, BaseAggregator):
        return type(name)
    if isinstance(name, type) and issubclass(name, BaseAggregator):
        return name
    return _REGISTRY.get(name)


def aggregator_name(method: str | BaseAggregator | type[BaseAggregator]) -> str:
    """The key of ``method`` in result tables: its registered name, else its class name."""
    if isinstance(method, str):
        return method
    cls = get_aggregator(method)
    return cls.name or cls.__name__


def make_aggregator(
    name: str | BaseAggregator | type[BaseAggregator],
    random_state: int | None = None,
    **options: Any,
) -> BaseAggregator:
    """Instantiate the aggregator ``name`` with ``options`` (and the seed, if it takes one).

    ``name`` may also be an aggregator class (registered or not), or an instance, which is used
    as given (an unfitted copy: the caller's object is not changed; no ``options`` then).
    """
    if isinstance(name, BaseAggregator):
        if options:
            raise ValueError(f"options {sorted(options)} given with an aggregator instance")
        return copy.deepcopy(name)
    cls = get_aggregator(name)
    params = inspect.signature(cls.__init__).parameters
    unknown = sorted(set(options) - set(params) - {"self"})
    if unknown and not any(p.kind is p.VAR_KEYWORD for p in params.values()):
        raise ValueError(f"{aggregator_name(name)} takes no option(s) {unknown}")
    if "random_state" in params:
        options = {"random_state": random_state, **options}
    return cls(**options)


#: Names accepted by :func:`judgerisk.aggregators.aggregate`, in registration order (the order
#: used by reports and figures). A live view of the registry: a newly registered rule appears.
AGGREGATORS: Sequence[str] = _REGISTRY.names()
#: The aggregators a score table and a report show by default: majority vote and Dawid–Skene
#: (the fast built-ins; MACE, GLAD and CARE on request), then every rule registered beyond the
#: five built-ins, so a plug-in or a rule registered at run time reaches ``judgerisk score``
#: and ``judgerisk report`` without an option. A live view.
REPORTED_AGGREGATORS: Sequence[str] = _REGISTRY.reported(("majority", "dawid_skene"))


def reported_aggregators(names: Sequence[str | BaseAggregator] | None) -> tuple:
    """``names`` as a tuple, or :data:`REPORTED_AGGREGATORS` for ``None`` (the default)."""
    return tuple(REPORTED_AGGREGATORS if names is None else names)
