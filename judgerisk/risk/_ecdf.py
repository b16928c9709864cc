"""A frozen empirical CDF: fitted once on reference values, then only applied.

References
----------
Methods reference §4 (normalisation of the risk signals on the reference split).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["FrozenECDF"]


class FrozenECDF:
    """Empirical distribution function of reference values, frozen at fit time.

    Attributes
    ----------
    values_ : numpy.ndarray
        The sorted reference values (float64).
    n_ref_ : int
        Number of reference values.
    is_constant_ : bool
        True when every reference value is the same (such a component carries no
        ranking information on the reference split and SCUR drops it).

    Notes
    -----
    .. math::

        z(x) = F_\\mathrm{ref}(x) = \\frac{1}{n_\\mathrm{ref}} \\sum_{r \\in \\mathrm{ref}}
        \\mathbf{1}[X_r \\le x],

    so :math:`z \\in [0, 1]`, non-decreasing in :math:`x`, :math:`z = 0` below the smallest
    reference value and :math:`z = 1` at or above the largest. Values to transform are
    never added to the reference set: ``transform`` is a pure function of the frozen
    reference values, so the z of a given value does not depend on which other items are
    scored. ``NaN`` maps to ``NaN``.

    References
    ----------
    Methods reference §4; "Can We Trust This Evaluation? Instance-Level Reliability of
    LLM-as-a-Judge" ("Reference items supply the signal ECDFs, which are frozen before
    evaluation").

    Examples
    --------
    >>> F = FrozenECDF().fit([0.1, 0.2, 0.2, 0.9])
    >>> F.transform([0.0, 0.2, 0.5, 1.0]).tolist()
    [0.0, 0.75, 0.75, 1.0]
    """

    def fit(self, reference_values: npt.ArrayLike) -> FrozenECDF:
        """Freeze the ECDF of ``reference_values``.

        Parameters
        ----------
        reference_values : array-like of float
            One value per reference item; must be finite and non-empty (drop items that
            lack the signal before calling, and say so).

        Returns
        -------
        FrozenECDF
            ``self``.
        """
        x = np.asarray(reference_values, dtype=np.float64).ravel()
        if x.size == 0:
            raise ValueError("FrozenECDF.fit needs at least one reference value, got none")
        bad = ~np.isfinite(x)
        if bad.any():
            pos = np.flatnonzero(bad)[:10].tolist()
            raise ValueError(
                f"FrozenECDF.fit got {int(bad.sum())} NaN/infinite reference value(s) "
                f"(positions {pos}); remove items without the signal first"
            )
        self.values_ = np.sort(x)
        self.values_.setflags(write=False)
        self.n_ref_ = int(x.size)
        self.is_constant_ = bool(self.values_[0] == self.values_[-1])
        return self

    def transform(self, x: npt.ArrayLike) -> np.ndarray:
        """Return :math:`z = F_\\mathrm{ref}(x)` for each value of ``x``.

        Parameters
        ----------
        x : array-like of float
            Values to normalise (any shape); NaN gives NaN.

        Returns
        -------
        numpy.ndarray of float64
            Same shape as ``x``, values in [0, 1] (or NaN).
        """
        if not hasattr(self, "values_"):
            raise ValueError("this FrozenECDF is not fitted; call fit(reference_values) first")
        arr = np.asarray(x, dtype=np.float64)
        z = np.searchsorted(self.values_, arr, side="right") / self.n_ref_
        return np.where(np.isnan(arr), np.nan, z)

    def __repr__(self) -> str:
        if not hasattr(self, "values_"):
            return "FrozenECDF()"
        return (
            f"FrozenECDF(n_ref={self.n_ref_}, range=[{self.values_[0]:.4g}, "
            f"{self.values_[-1]:.4g}], constant={self.is_constant_})"
        )
