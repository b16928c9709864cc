"""The registry of panel risk scores: SCUR, its components and the label-free baselines.

Every score the analyses, the certified decisions, the CLI, the report and the figures iterate
over is registered here with :func:`register_risk_score`, together with its display name and
colour (kept in :mod:`judgerisk._plots.style`). A baseline-kind score is a function of the panel's
original-condition wide tables; SCUR and its components are computed jointly by
:func:`judgerisk.risk.scur.scur_scores` and only named here. Book chapters "SCUR signals" and
"Baselines and aggregators".
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import pandas as pd

from judgerisk._util.registry import NameView, Registry
from judgerisk.families import FAMILIES
from judgerisk.panel._cell_table import as_dense

__all__ = [
    "BASELINES",
    "CERTIFIED",
    "COMPARED",
    "COMPONENTS",
    "RISK_SCORES",
    "ScoreFunction",
    "RiskScore",
    "get_risk_score",
    "register_risk_score",
    "risk_score_table",
    "unregister_risk_score",
]

#: ``f(probs, votes, fit_items, items) -> Series`` over ``items`` (higher = riskier). ``probs``
#: and ``votes`` are the item x judge original-condition tables of the whole panel; ``fit_items``
#: is the fit split (``None`` when the caller has none). A function that also takes the keyword
#: ``panel`` receives the whole validated panel, so a score can use every condition.
ScoreFunction = Callable[[pd.DataFrame, pd.DataFrame, "pd.Index | None", pd.Index], pd.Series]

Kind = Literal["scur", "component", "baseline"]


@dataclass(frozen=True)
class RiskScore:
    """One registered risk score.

    Attributes
    ----------
    name : str
        Key in result tables.
    kind : {"scur", "component", "baseline"}
        ``"scur"`` and ``"component"`` come out of :func:`~judgerisk.risk.scur.scur_scores`;
        ``"baseline"`` scores are computed by :attr:`compute`.
    compute : callable or None
        The :data:`ScoreFunction` of a baseline-kind score.
    needs_fit : bool
        Whether :attr:`compute` needs the fit split (it fits parameters, like DS entropy).
    label : str
        Display name in tables and figures (the name when none was given).
    color : str or None
        Colour in figures (:mod:`judgerisk._plots.style` reads it; grey when None).
    uses_panel : bool
        Whether :attr:`compute` takes the keyword ``panel``: the whole validated panel, every
        condition included (swap, rubric changes), besides the original-condition tables.
    cells : bool
        Whether :attr:`compute` also reads the tables of a sparse panel held by their cells
        (:class:`judgerisk.panel._cell_table.CellTable`); a score that does not gets dense DataFrames.
    """

    name: str
    kind: Kind
    compute: ScoreFunction | None = None
    needs_fit: bool = False
    label: str = ""
    color: str | None = None
    uses_panel: bool = False
    cells: bool = False

    def __call__(
        self,
        probs: pd.DataFrame,
        votes: pd.DataFrame,
        fit_items: pd.Index | None,
        items: pd.Index,
        panel: pd.DataFrame | None = None,
    ) -> pd.Series:
        """The score over ``items`` (``panel`` is passed on when the function takes it)."""
        if self.compute is None:
            raise ValueError(f"{self.name!r} is computed by scur_scores, not from the wide tables")
        if self.needs_fit and fit_items is None:
            raise ValueError(f"{self.name} needs fit_items (the fit split)")
        if not self.cells:  # the ScoreFunction contract: item x judge DataFrames
            probs, votes = as_dense(probs), as_dense(votes)
        if not self.uses_panel:
            out = self.compute(probs, votes, fit_items, items)
        elif panel is None:
            raise ValueError(f"{self.name} reads every condition: pass panel=")
        else:
            out = self.compute(  # type: ignore[call-arg]
                probs, votes, fit_items, items, panel=_as_contract(panel)
            )
        return pd.Series(out).reindex(items)


def _as_contract(panel: pd.DataFrame) -> pd.DataFrame:
    """``panel`` with its text columns as text, as the data contract has them.

    :func:`judgerisk.engine.certified.score_panel` compares and splits the condition (and the
    judge) as pandas categoricals; a score that reads the panel gets the columns it was
    written for (a categorical's ``groupby`` would also list the absent categories).
    """
    coded = [c for c in panel.columns if isinstance(panel[c].dtype, pd.CategoricalDtype)]
    return panel.astype(dict.fromkeys(coded, object)) if coded else panel


def _takes_panel(func: Callable) -> bool:
    try:
        params = inspect.signature(func).parameters
    except (TypeError, ValueError):
        return False
    return "panel" in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


def _adopt(name: str, obj: Any) -> None:
    """Register a plug-in (entry-point group ``judgerisk.risk_scores``): a ScoreFunction or a
    :class:`RiskScore`."""
    if isinstance(obj, RiskScore):
        if obj.kind != "baseline":
            raise ValueError(f"plug-in risk score {name!r} must be of kind 'baseline'")
        _REGISTRY.add(name, obj)
    else:
        register_risk_score(name)(obj)


#: SCUR and its components (registered below), then the label-free baselines of
#: :mod:`judgerisk.risk.baselines`, in the order reported; then the plug-ins of the entry-point
#: group ``judgerisk.risk_scores``.
_REGISTRY: Registry[RiskScore] = Registry(
    "risk score",
    builtins={
        **dict.fromkeys(("scur", "U", "C"), "judgerisk.risk.registry"),
        **dict.fromkeys(("pe", "ve", "msp", "ds_entropy"), "judgerisk.risk.baselines"),
    },
    group="judgerisk.risk_scores",
    adopt=lambda name, obj: _adopt(name, obj),
)
#: SCUR and its ambiguity and conflict components (computed by ``scur_scores``); the
#: sensitivity components ``S_<family>`` come from the perturbation families
#: (:mod:`judgerisk.families`), one per registered family, named and coloured there.
_BUILTIN_SIGNALS: tuple[tuple[str, Kind, str, str], ...] = (
    ("scur", "scur", "SCUR", "#c44e52"),
    ("U", "component", "U (ambiguity)", "#dd8452"),
    ("C", "component", "C (conflict)", "#da8bc3"),
)


def _family_components() -> tuple[str, ...]:
    return tuple(f"S_{name}" for name in FAMILIES)


def _family_score(name: str) -> RiskScore | None:
    """The component entry ``S_<family>`` of a registered family (None for another name)."""
    if not name.startswith("S_") or name[2:] not in FAMILIES:
        return None
    family = FAMILIES[name[2:]]
    label = family.signal_label or f"S ({family.name})"
    return RiskScore(name, "component", None, False, label, family.signal_color)


def _all_names() -> tuple[str, ...]:
    """SCUR, U, C, the family components, then the baselines (plug-ins included)."""
    names = _REGISTRY.names()
    return (*names[:3], *_family_components(), *names[3:])


#: Every registered score: SCUR, its components (U, C, one ``S_<family>`` per perturbation
#: family), then the baselines.
RISK_SCORES: Sequence[str] = NameView(_all_names)
#: The SCUR components, in table order: U, C, then ``S_<family>`` for every registered
#: perturbation family (``S_order, S_rubric, S_label, S_format, S_verbosity``, plug-ins).
COMPONENTS: Sequence[str] = NameView(lambda: ("U", "C", *_family_components()))
#: The baseline-kind scores (computed from the wide tables), in the order reported.
BASELINES: Sequence[str] = _REGISTRY.names(lambda s: s.kind == "baseline")
#: The scores the error-ranking analyses compare: SCUR, then every baseline-kind score.
COMPARED: Sequence[str] = _REGISTRY.names(lambda s: s.kind != "component")
#: The scores whose certified decisions a report compares: SCUR and PE (the paper's two), then
#: every score registered beyond the built-ins, so an extension reaches the certification
#: without an option. A live view.
CERTIFIED: Sequence[str] = _REGISTRY.reported(("scur", "pe"))


def register_risk_score(
    name: str,
    *,
    kind: Kind = "baseline",
    needs_fit: bool = False,
    label: str | None = None,
    color: str | None = None,
    cells: bool = False,
) -> Callable[[ScoreFunction], ScoreFunction]:
    """Register a risk score (a decorator over its :data:`ScoreFunction`).

    ``label`` and ``color`` are stored on the :class:`RiskScore` entry, where every table and
    figure reads them, so every figure names and colours the score the same way. ``cells``
    says that the function also reads a sparse panel's tables held by their cells
    (:class:`judgerisk.panel._cell_table.CellTable`); otherwise it always gets dense DataFrames.

    Examples
    --------
    >>> import pandas as pd
    >>> @register_risk_score("n_judges_missing", label="Missing judges", color="#000000")
    ... def n_missing(probs, votes, fit_items, items):
    ...     return probs.loc[items].isna().sum(axis=1).astype(float)
    >>> "n_judges_missing" in BASELINES
    True
    >>> unregister_risk_score("n_judges_missing")
    """
    if kind not in ("scur", "component", "baseline"):
        raise ValueError(f"kind must be 'scur', 'component' or 'baseline', got {kind!r}")
    if kind != "baseline" and (name, kind) not in [s[:2] for s in _BUILTIN_SIGNALS]:
        raise ValueError(
            "only SCUR and its components are computed by scur_scores (a new sensitivity "
            "component comes from a perturbation family: judgerisk.families.register_family); "
            f"register a new score {name!r} as kind='baseline' with its ScoreFunction"
        )
    if _family_score(name) is not None:
        raise ValueError(f"{name!r} is the sensitivity component of a perturbation family")

    def deco(func: ScoreFunction) -> ScoreFunction:
        compute = func if kind == "baseline" else None
        uses_panel = compute is not None and _takes_panel(compute)
        _REGISTRY.add(
            name,
            RiskScore(name, kind, compute, needs_fit, label or name, color, uses_panel, cells),
        )
        return func

    return deco


def unregister_risk_score(name: str) -> None:
    """Remove a registered score (for tests and interactive sessions)."""
    _REGISTRY.remove(name)


def get_risk_score(name: str | RiskScore) -> RiskScore:
    """The :class:`RiskScore` registered under ``name`` (a :class:`RiskScore` is returned as is);
    ``S_<family>`` is the component of a registered perturbation family."""
    if isinstance(name, RiskScore):
        return name
    family = _family_score(name) if isinstance(name, str) else None
    return family if family is not None else _REGISTRY.get(name)


def risk_score_table(
    probs: pd.DataFrame,
    votes: pd.DataFrame,
    fit_items: pd.Index | None,
    items: pd.Index,
    methods: Sequence[str | RiskScore],
    panel: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Baseline-kind scores on precomputed wide tables, one column per method, indexed by item.

    ``methods`` holds registered names or :class:`RiskScore` objects (column: their name);
    ``panel`` (the whole panel, every condition) goes to the scores that take it.

    Raises
    ------
    ValueError
        For an unknown name, a SCUR-kind name (use :func:`~judgerisk.risk.scur.scur_scores`),
        or a score that needs the fit split when ``fit_items`` is ``None``.
    """
    cols = {}
    for m in methods:
        score = get_risk_score(m)
        cols[score.name] = score(probs, votes, fit_items, items, panel=panel)
    return pd.DataFrame(cols, index=items)


for _name, _kind, _label, _color in _BUILTIN_SIGNALS:  # computed together by scur_scores
    _REGISTRY.add(_name, RiskScore(_name, _kind, None, False, _label, _color))
