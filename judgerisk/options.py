"""The settings module: every default, the vocabulary of the options and the input-error
classes, with no heavy import.

One default per quantity, written here once: the repetitions and folds of the cross-fitting
(:data:`DEFAULT_REPEATS`, :data:`DEFAULT_FOLDS`), its protocol (:data:`DEFAULT_PROTOCOL`), the
target risk level α (:data:`DEFAULT_ALPHA`), the prompt template (:data:`DEFAULT_TEMPLATE`),
the LMM's solver (:data:`DEFAULT_ACCELERATE`), the validity check's splits
(:data:`DEFAULT_SPLITS`), the simulator's panel size (:data:`SIMULATE`) and the analyses'
shares and thresholds (:data:`ANALYSIS`). Every command's parser and every public function
read their defaults from here (a test scans the package for a literal copy), so ``judgerisk
score``, ``report``, ``select``, ``bpe`` and the chapters give the same numbers for the same
panel and options. The settings objects (:class:`ScoreSettings`, :class:`ReportSettings`,
:class:`SelectSettings`, ...) group a command's defaults.

The command line builds its parser from these names (so ``judgerisk --help`` imports neither
pandas nor scikit-learn), and the library and the report check their options with the same
functions: one α check, one ``accelerate`` vocabulary, the paper's six condition names (the
perturbation families, which declare the others, are in :mod:`judgerisk.families`).
:mod:`judgerisk.validation` re-exports the checks next to the table validators.
"""

from __future__ import annotations

import numbers
from dataclasses import asdict, dataclass, fields
from typing import Any

__all__ = [
    "ACCELERATIONS",
    "ANALYSIS",
    "AnalysisSettings",
    "EstimateSettings",
    "EXCHANGEABILITY",
    "ExchangeabilitySettings",
    "ReportSettings",
    "ScoreSettings",
    "StreamSettings",
    "SelectSettings",
    "CONDITIONS",
    "DEFAULT_ACCELERATE",
    "DEFAULT_ALPHA",
    "DEFAULT_CELL_TIMEOUT",
    "DEFAULT_DELTA",
    "DEFAULT_FOLDS",
    "DEFAULT_PROTOCOL",
    "DEFAULT_REPEATS",
    "DEFAULT_SPLITS",
    "DEFAULT_TEMPLATE",
    "SIMULATE",
    "SimulateSettings",
    "PERTURB_CONDITIONS",
    "PROTOCOLS",
    "InputError",
    "ORIGINAL",
    "SWAP",
    "OptionError",
    "COUNT_MINIMA",
    "check_accelerate",
    "check_alpha",
    "check_count",
]

#: Default number of cross-fitting repetitions (library, command line, chapters): the count
#: from which the real panels' conclusions stop moving (the book's chapter 10).
DEFAULT_REPEATS = 1

#: Default number of folds K of each K-fold repetition (60 / 20 / 20 fit / reference /
#: evaluation at K = 5).
DEFAULT_FOLDS = 5

#: Ways of drawing the cross-fitting splits: repeated K-fold (the default) or the paper's
#: independent random splits.
PROTOCOLS: tuple[str, str] = ("kfold", "paper")
#: The default protocol: repeated K-fold cross-fitting.
DEFAULT_PROTOCOL = PROTOCOLS[0]

#: Default target risk level α of the certified decisions (SCOPE: the mean false discovery
#: proportion over calibration draws at most α), in the library, ``select``, ``bpe`` and
#: ``report``.
DEFAULT_ALPHA = 0.1
#: Default δ of the high-probability bounds (Clopper–Pearson, Learn-then-Test): the bound holds
#: with probability at least 1 - δ.
DEFAULT_DELTA = 0.1

#: Default random calibration / test splits of the validity check (gold only).
DEFAULT_SPLITS = 1000

#: Default seconds allowed per notebook cell of the report (``judgerisk report --timeout``).
DEFAULT_CELL_TIMEOUT = 600

#: The shipped prompt template of extraction and perturbation (``judgerisk/extract/templates``).
DEFAULT_TEMPLATE = "pairwise_v1"

#: The condition a judge sees first (answers in the original order, the original rubric).
ORIGINAL = "original"
#: The original prompt with the answers in the swapped order (the one definition).
SWAP = "swap"
#: The six conditions of the paper (the default of extraction and simulation). Any condition a
#: perturbation family declares is allowed (:mod:`judgerisk.families`: ``label1``, ...).
CONDITIONS: tuple[str, ...] = (
    "original",
    "swap",
    "rubric1",
    "rubric2",
    "swap_rubric1",
    "swap_rubric2",
)


#: The default conditions of ``judgerisk perturb``: the original prompt, its order swap, and the
#: first variant of the label, format and verbosity families (padding each answer once).
PERTURB_CONDITIONS: tuple[str, ...] = (
    "original",
    "swap",
    "label1",
    "format1",
    "verbosity1",
    "verbosity2",
)


class InputError(ValueError):
    """Bad input: the one base class of judgerisk's input errors.

    A table that breaks the data contract or an unreadable file
    (:class:`judgerisk.panel.PanelError`), an output path that cannot be written
    (:class:`judgerisk._provenance.OutputPathError`) or a bad option value
    (:class:`OptionError`). The message names the file, row, column or option and the value; the
    command line prints it as one line and exits with code 2.
    """


class OptionError(InputError):
    """A bad option value (α, the LMM's acceleration, ...), as opposed to bad data."""


#: The LMM's solvers, as the library, the command line and the report spell them:
#: ``"none"`` for the paper's plain sweeps (``None`` is accepted as a synonym).
ACCELERATIONS: tuple[str, ...] = ("anderson", "lbfgs", "none")
#: The default acceleration, shared by the library, the CLI and the report template.
DEFAULT_ACCELERATE = "anderson"


def check_accelerate(accelerate: str | None) -> str | None:
    """The LMM's ``accelerate`` option in canonical form: ``"anderson"``, ``"lbfgs"`` or ``None``.

    Examples
    --------
    >>> check_accelerate("none") is None, check_accelerate(None) is None
    (True, True)
    >>> check_accelerate("anderson")
    'anderson'
    """
    if accelerate is None or accelerate == "none":
        return None
    if accelerate not in ACCELERATIONS:
        raise OptionError(f"accelerate must be one of {ACCELERATIONS}, got {accelerate!r}")
    return accelerate


def check_alpha(alpha: float | str) -> float:
    """The target risk level α as a float in the open interval (0, 1).

    Examples
    --------
    >>> check_alpha(0.1)
    0.1
    """
    try:
        a = float(alpha)
    except (TypeError, ValueError):
        raise OptionError(f"alpha must be a number in (0, 1), got {alpha!r}") from None
    if not 0.0 < a < 1.0:
        raise OptionError(f"alpha must be in (0, 1), got {alpha!r}")
    return a


#: The smallest value of each count option. One table for the settings objects, the library
#: functions and the command line (all check counts with :func:`check_count`): K-fold
#: cross-fitting needs three folds (fit, reference and evaluation are three different folds).
COUNT_MINIMA: dict[str, int] = {"n_folds": 3, "seed": 0, "n_boot": 1, "n_seeds": 1, "n_splits": 1}


def check_count(name: str, value: object, minimum: int | None = None) -> int:
    """A count option (``n_folds``, ``n_seeds``, ``n_boot``, ...) as an ``int``, or an
    :class:`OptionError` naming it.

    The bound is :data:`COUNT_MINIMA`'s for ``name`` (1 for a name it does not list) unless
    ``minimum`` is given. Booleans and non-integers (``2.5``, ``"3"``) are refused.

    Examples
    --------
    >>> check_count("n_folds", 5)
    5
    >>> check_count("n_folds", 2)
    Traceback (most recent call last):
    ...
    judgerisk.options.OptionError: n_folds must be an integer >= 3, got 2
    """
    lo = COUNT_MINIMA.get(name, 1) if minimum is None else minimum
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < lo:
        raise OptionError(f"{name} must be an integer >= {lo}, got {value!r}")
    return int(value)


class _Settings:
    """What the settings objects share: defaults overridden by a mapping, and back to one."""

    #: The command, as the error message names it.
    _command = "report"

    @classmethod
    def from_parameters(cls, parameters: dict[str, Any] | None = None) -> Any:
        """Defaults overridden by ``parameters``; an unknown name is an :class:`OptionError`."""
        known = {f.name for f in fields(cls)}  # type: ignore[arg-type]
        unknown = sorted(set(parameters or {}) - known)
        if unknown:
            raise OptionError(
                f"unknown {cls._command} parameter(s) {unknown}; known: {sorted(known)}"
            )
        return cls(**(parameters or {}))

    def as_parameters(self) -> dict[str, Any]:
        """The settings as a mapping (the notebook parameters, as papermill injects them)."""
        return asdict(self)  # type: ignore[call-overload]


def _check_counts(settings: object, *names: str) -> None:
    for name in names:
        check_count(name, getattr(settings, name))


@dataclass(frozen=True)
class AnalysisSettings(_Settings):
    """The analyses' shared defaults: one object every function reads its default from.

    :data:`ANALYSIS` is the instance the signatures use (``fractions=ANALYSIS.fractions``), so
    the split fractions, the bootstrap size and the thresholds are written once (a test greps
    the package for other copies). Pass another value to a function to change it there.

    Attributes
    ----------
    fractions : tuple of three floats, default (0.5, 0.3, 0.2)
        Fit / reference / evaluation shares of the paper's random splits (methods reference
        §2: "fit, reference and evaluation splits in a 50/30/20 ratio").
    n_boot : int, default 2000
        Bootstrap resamples of the items in the paired comparisons.
    hc_threshold : float, default 0.8
        Share of the judges that must agree for an item to be high-consensus.
    prob_threshold : float, default 0.8
        The same for the probability-weighted consensus (mean canonical probability of the
        winning answer).
    level : float, default 0.95
        Confidence level of the bootstrap intervals.
    elevated_z : float, default 0.9
        A signal's z at or above which an item's explanation calls it elevated.
    min_verdict_mass : float, default 0.5
        Share of the judge's probability on the two verdict tokens below which extraction
        warns (the prompt does not elicit a verdict).
    """

    _command = "analysis"

    fractions: tuple[float, float, float] = (0.5, 0.3, 0.2)
    n_boot: int = 2000
    hc_threshold: float = 0.8
    prob_threshold: float = 0.8
    level: float = 0.95
    elevated_z: float = 0.9
    min_verdict_mass: float = 0.5

    def __post_init__(self) -> None:
        check_count("n_boot", self.n_boot)
        if len(self.fractions) != 3 or abs(sum(self.fractions) - 1.0) > 1e-9:
            raise OptionError(f"fractions must be three shares summing to 1, got {self.fractions}")
        for name in ("hc_threshold", "prob_threshold", "level", "min_verdict_mass"):
            if not 0.0 < getattr(self, name) <= 1.0:
                raise OptionError(f"{name} must be in (0, 1], got {getattr(self, name)!r}")


#: The analyses' defaults (:class:`AnalysisSettings`), read by every function's signature.
ANALYSIS = AnalysisSettings()


@dataclass(frozen=True)
class ScoreSettings(_Settings):
    """The settings of ``judgerisk score``: its option defaults and those of
    :func:`judgerisk.engine.certified.score_panel` (a test holds both to this object).

    Attributes
    ----------
    n_seeds : int, default :data:`DEFAULT_REPEATS`
        Repetitions of the cross-fitting (each scores every item once).
    seed : int, default 0
        First split's seed.
    aggregators : tuple of str or None, default None
        Aggregators whose verdicts and posteriors are added to the score table; ``None`` is
        :data:`judgerisk.aggregators._base.REPORTED_AGGREGATORS` (majority vote, Dawid–Skene,
        then every aggregator registered beyond the built-ins).
    protocol : str, default :data:`DEFAULT_PROTOCOL`
        Way of drawing the cross-fitting splits (:data:`PROTOCOLS`).
    n_folds : int, default :data:`DEFAULT_FOLDS`
        Folds of each repetition under ``"kfold"`` (at least 3, :data:`COUNT_MINIMA`).
    accelerate : str, default "anderson"
        The LMM's solver (:data:`ACCELERATIONS`).
    """

    _command = "score"

    n_seeds: int = DEFAULT_REPEATS
    seed: int = 0
    aggregators: tuple[str, ...] | None = None
    protocol: str = DEFAULT_PROTOCOL
    n_folds: int = DEFAULT_FOLDS
    accelerate: str = DEFAULT_ACCELERATE

    def __post_init__(self) -> None:
        check_accelerate(self.accelerate)
        _check_counts(self, "n_seeds", "seed", "n_folds")
        if self.protocol not in PROTOCOLS:
            raise OptionError(f"protocol must be one of {PROTOCOLS}, got {self.protocol!r}")


@dataclass(frozen=True)
class ReportSettings(ScoreSettings):
    """The settings of the panel report: one object for ``judgerisk report`` (its option
    defaults), :func:`judgerisk.report.build.render_report` and the report notebook's
    parameters cell (a test holds the cell to these defaults).

    Every scoring setting is :class:`ScoreSettings`' (this class extends it), so the report's
    score table is ``judgerisk score``'s for the same options (a test compares them cell for
    cell).

    Attributes
    ----------
    n_seeds, seed, aggregators, protocol, n_folds, accelerate
        As :class:`ScoreSettings` (``aggregators``: the report compares them, the first one's
        verdict is certified).
    alpha : float, default :data:`DEFAULT_ALPHA`
        Target false discovery rate of the certified decisions.
    n_splits : int, default :data:`DEFAULT_SPLITS`
        Random calibration/test splits of the validity check (gold only).
    certified_scores : tuple of str or None, default None
        Risk scores whose certified decisions the report compares; ``None`` is
        :data:`judgerisk.risk.registry.CERTIFIED` (SCUR, PE, then every score registered
        beyond the built-ins).
    """

    _command = "report"

    alpha: float = DEFAULT_ALPHA
    n_splits: int = DEFAULT_SPLITS
    certified_scores: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        check_alpha(self.alpha)
        _check_counts(self, "n_splits")


@dataclass(frozen=True)
class SelectSettings(_Settings):
    """The settings of ``judgerisk select``: its option defaults and those of
    :func:`judgerisk.engine.certified.select_items` (a test holds both to this object).

    Attributes
    ----------
    alpha : float, default :data:`DEFAULT_ALPHA`
        Target false discovery rate of the accepted verdicts.
    score : str, default "scur"
        Risk column to threshold (larger = riskier).
    verdict : str, default "majority"
        Verdict column to certify.
    allow_any_score : bool, default False
        Accept a score column that is not one of judgerisk's risk scores.
    """

    _command = "select"

    alpha: float = DEFAULT_ALPHA
    score: str = "scur"
    verdict: str = "majority"
    allow_any_score: bool = False

    def __post_init__(self) -> None:
        check_alpha(self.alpha)


@dataclass(frozen=True)
class SimulateSettings(_Settings):
    """The simulator's panel: the defaults of :func:`judgerisk.simulate.simulate_panel` and of
    ``judgerisk simulate`` (:data:`SIMULATE`).

    Attributes
    ----------
    n_items : int, default 2000
        Items of the panel.
    n_judges : int, default 5
        Judges of the panel.
    seed : int, default 0
        Seed of the simulator's one random generator.
    conditions : tuple of str, default :data:`CONDITIONS`
        Conditions simulated (the paper's six).
    """

    _command = "simulate"

    n_items: int = 2000
    n_judges: int = 5
    seed: int = 0
    conditions: tuple[str, ...] = CONDITIONS

    def __post_init__(self) -> None:
        _check_counts(self, "n_items", "n_judges", "seed")


#: The simulator's defaults (:class:`SimulateSettings`), read by ``simulate_panel`` and the CLI.
SIMULATE = SimulateSettings()


@dataclass(frozen=True)
class StreamSettings(_Settings):
    """The streamed path of ``judgerisk score``: a parquet panel larger than memory.

    A parquet panel (a file, or a folder of parquet files read as one pyarrow dataset) with
    more than ``stream_rows`` rows is not loaded: each fold's judge parameters are fitted on
    a seeded random sample of its items, then the items are scored ``partition_items`` at a
    time (:mod:`judgerisk.engine.partitioned`).

    Attributes
    ----------
    stream_rows : int, default 5,000,000
        Rows (observed cells) above which a parquet panel is streamed; at most this many are
        scored in memory as before (about 1 GB for a dense panel).
    fit_sample : int, default 50,000
        Items of the panel drawn at random (seeded by ``seed``) whose cells are loaded: each
        fold fits the LMM on the sample's items among its fit items and freezes its ECDFs on
        the sample's reference items; the Dawid–Skene-type aggregators and scores fit on the
        whole sample. A panel with at most this many items is fitted in full.
    partition_items : int, default 50,000
        Items scored per partition (a range of consecutive items in sorted order).
    dask : str or None, default None
        Address of an existing Dask scheduler (``tcp://host:8786``) that scores the
        partitions; ``None`` scores them in this process.
    """

    _command = "score"

    stream_rows: int = 5_000_000
    fit_sample: int = 50_000
    partition_items: int = 50_000
    dask: str | None = None

    def __post_init__(self) -> None:
        _check_counts(self, "stream_rows", "fit_sample", "partition_items")
        if self.dask is not None and not str(self.dask).strip():
            raise OptionError("dask must be a scheduler address such as tcp://host:8786")


@dataclass(frozen=True)
class EstimateSettings(_Settings):
    """The settings of ``judgerisk estimate``: its option defaults and those of
    :func:`judgerisk.engine.estimates.estimate_panel` and :func:`~judgerisk.engine.estimates.plan_labels`.

    Attributes
    ----------
    level : float, default 0.9
        Level of the two-sided intervals.
    n_strata : int, default 10
        Strata of the stratified estimate: deciles of SCUR (fewer when the labelled slice is
        small: :func:`judgerisk.estimate.ppi.quantile_strata`).
    n_folds : int, default :data:`DEFAULT_FOLDS`
        Folds of the cross-fitted multi-judge prediction (``ppi_multi``).
    proxy : str, default "dawid_skene"
        Aggregator whose posterior P(A) predicts the labels of the judges' accuracies and of
        the win rate (an aggregator's own accuracy is predicted by its own posterior).
    floor : float, default 0.2
        Weight of the safest item relative to the riskiest in a labelling plan
        (:func:`judgerisk.estimate.sampling.inclusion_probabilities`).
    seed : int, default 0
        Seed of the scores' cross-fitting, the folds and the plan's draw.
    n_seeds : int, default :data:`DEFAULT_REPEATS`
        Repetitions of the scores' cross-fitting.
    aggregators : tuple of str or None, default None
        Aggregators whose accuracy is estimated (``None``: the reported ones).
    """

    _command = "estimate"

    level: float = 0.9
    n_strata: int = 10
    n_folds: int = DEFAULT_FOLDS
    proxy: str = "dawid_skene"
    floor: float = 0.2
    seed: int = 0
    n_seeds: int = DEFAULT_REPEATS
    aggregators: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        check_alpha(self.level)
        _check_counts(self, "n_strata", "seed", "n_seeds")
        check_count("n_folds", self.n_folds, 2)
        if not 0.0 < self.floor <= 1.0:
            raise OptionError(f"floor must be in (0, 1], got {self.floor!r}")


@dataclass(frozen=True)
class ExchangeabilitySettings(_Settings):
    """The exchangeability check of ``select``, ``bpe`` and the reports
    (:func:`judgerisk.estimate.exchangeability.exchangeability_test`).

    Attributes
    ----------
    level : float, default 0.05
        The permutation test's level: it rejects when p <= level.
    n_permutations : int, default 1000
        Random reassignments of the labels.
    seed : int, default 0
        Seed of the permutations.
    """

    _command = "exchangeability"

    level: float = 0.05
    n_permutations: int = 1000
    seed: int = 0

    def __post_init__(self) -> None:
        check_alpha(self.level)
        _check_counts(self, "n_permutations", "seed")


#: The exchangeability check's defaults (:class:`ExchangeabilitySettings`).
EXCHANGEABILITY = ExchangeabilitySettings()
