"""The vocabulary of the options and the input-error classes, with no heavy import.

The command line builds its parser from these names (so ``judgerisk --help`` imports neither
pandas nor scikit-learn), and the library and the report check their options with the same
functions: one α check, one ``accelerate`` vocabulary, one data contract's condition names.
:mod:`judgerisk.validation` re-exports the checks next to the table validators.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

__all__ = [
    "ACCELERATIONS",
    "ReportSettings",
    "CONDITIONS",
    "DEFAULT_ACCELERATE",
    "DEFAULT_REPEATS",
    "PROTOCOLS",
    "FAMILIES",
    "InputError",
    "ORIGINAL",
    "OptionError",
    "check_accelerate",
    "check_alpha",
]

#: Default number of cross-fitting repetitions (library, command line, chapters): the count
#: from which the real panels' conclusions stop moving (the book's chapter 10).
DEFAULT_REPEATS = 1

#: Ways of drawing the cross-fitting splits: repeated K-fold (the default) or the paper's
#: independent random splits.
PROTOCOLS: tuple[str, str] = ("kfold", "paper")

#: The condition a judge sees first (answers in the original order, the original rubric).
ORIGINAL = "original"
#: The six conditions of the data contract (:mod:`judgerisk.panel`).
CONDITIONS: tuple[str, ...] = (
    "original",
    "swap",
    "rubric1",
    "rubric2",
    "swap_rubric1",
    "swap_rubric2",
)
#: Perturbation families: pairs (c, c') of conditions that differ by one perturbation.
FAMILIES: dict[str, tuple[tuple[str, str], ...]] = {
    "order": (("swap", "original"), ("swap_rubric1", "rubric1"), ("swap_rubric2", "rubric2")),
    "rubric": (
        ("rubric1", "original"),
        ("rubric2", "original"),
        ("swap_rubric1", "swap"),
        ("swap_rubric2", "swap"),
    ),
}


class InputError(ValueError):
    """Bad input: the one base class of judgerisk's input errors.

    A table that breaks the data contract or an unreadable file
    (:class:`judgerisk.panel.PanelError`), an output path that cannot be written
    (:class:`judgerisk.provenance.OutputPathError`) or a bad option value
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


@dataclass(frozen=True)
class ReportSettings:
    """The settings of the panel report: one object for ``judgerisk report`` (its option
    defaults), :func:`judgerisk.report.render_report` and the report notebook's parameters cell
    (a test holds the cell to these defaults).

    Attributes
    ----------
    n_seeds : int, default 3
        Fit/reference/evaluation splits averaged in the cross-fitted scores.
    seed : int, default 0
        First split's seed.
    alpha : float, default 0.1
        Target false discovery rate of the certified decisions.
    n_splits : int, default 1000
        Random calibration/test splits of the validity check (gold only).
    accelerate : str, default "anderson"
        The LMM's solver (:data:`ACCELERATIONS`).
    """

    n_seeds: int = 3
    seed: int = 0
    alpha: float = 0.1
    n_splits: int = 1000
    accelerate: str = DEFAULT_ACCELERATE

    def __post_init__(self) -> None:
        check_alpha(self.alpha)
        check_accelerate(self.accelerate)
        for name in ("n_seeds", "n_splits"):
            if int(getattr(self, name)) < 1:
                raise OptionError(f"{name} must be >= 1, got {getattr(self, name)!r}")

    @classmethod
    def from_parameters(cls, parameters: dict[str, Any] | None = None) -> ReportSettings:
        """Defaults overridden by ``parameters``; an unknown name is an :class:`OptionError`."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(parameters or {}) - known)
        if unknown:
            raise OptionError(f"unknown report parameter(s) {unknown}; known: {sorted(known)}")
        return cls(**(parameters or {}))

    def as_parameters(self) -> dict[str, Any]:
        """The notebook parameters, as papermill injects them."""
        return asdict(self)
