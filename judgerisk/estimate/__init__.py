"""Estimates from a small labelled slice, labelling plans and the exchangeability check.

- :mod:`~judgerisk.estimate.ppi`: classical, PPI++, stratified, cross-fitted (multi-judge) and
  active (inverse-probability-weighted) mean estimates with CLT intervals;
- :mod:`~judgerisk.estimate.sampling`: inclusion probabilities that grow with a risk score,
  Poisson sampling and the expected widths of a plan;
- :mod:`~judgerisk.estimate.exchangeability`: the permutation test of a labelled slice's risk
  scores and the abstention floor :math:`(\\mu - \\alpha)/(1 - \\alpha)`.

The book's chapter "From risk to estimates" uses them on real panels.
"""

from judgerisk.estimate.exchangeability import (
    ExchangeabilityTest,
    abstention_floor,
    check_certificate,
    exchangeability_test,
    floor_sentence,
)
from judgerisk.estimate.ppi import (
    Estimate,
    active_ppi_mean,
    classical_mean,
    cross_ppi_mean,
    crossfit_predictions,
    effective_labels,
    ppi_mean,
    quantile_strata,
    stratified_ppi_mean,
)
from judgerisk.estimate.sampling import draw_plan, expected_variances, inclusion_probabilities

__all__ = [
    "Estimate",
    "ExchangeabilityTest",
    "abstention_floor",
    "active_ppi_mean",
    "check_certificate",
    "classical_mean",
    "cross_ppi_mean",
    "crossfit_predictions",
    "draw_plan",
    "effective_labels",
    "exchangeability_test",
    "expected_variances",
    "floor_sentence",
    "inclusion_probabilities",
    "ppi_mean",
    "quantile_strata",
    "stratified_ppi_mean",
]
