"""Simulation study of the estimators with a known truth (judgerisk.estimate._simulation).

500 repetitions each (about 30 s in all): every interval's coverage lies within a binomial
band of its level, for random and for SCUR-driven labelling; PPI++ is never wider on average
than labelled-only; SCUR-stratified PPI and SCUR-driven labelling are at least as narrow as
plain PPI; the exchangeability test's false alarms stay at its level on random slices and it
catches a slice of easy items. ``benchmarks/estimates.py`` prints the full study's numbers.
"""

from __future__ import annotations

import numpy as np
import pytest

from judgerisk.estimate._simulation import (
    exchangeability_study,
    interval_study,
    summarize_intervals,
)

REPS, LEVEL = 500, 0.9
#: Three binomial standard deviations of a coverage estimated over REPS repetitions.
BAND = 3 * np.sqrt(LEVEL * (1 - LEVEL) / REPS)


@pytest.fixture(scope="module")
def summary():
    return summarize_intervals(interval_study(REPS, level=LEVEL, seed=11))


def test_every_interval_covers_at_its_level(summary):
    for method, cov in summary["coverage"].items():
        assert abs(cov - LEVEL) <= BAND, (method, cov)


def test_ppi_never_wider_than_labelled_only(summary):
    assert summary.loc["ppi", "width_vs_labelled"] <= 1.0
    assert summary.loc["ppi_multi", "width_vs_labelled"] <= 1.0


def test_scur_stratified_and_scur_driven_at_least_as_narrow_as_ppi(summary):
    assert summary.loc["ppi_stratified", "width_vs_ppi"] <= 1.0
    assert summary.loc["ppi_active", "width_vs_ppi"] <= 1.0


def test_power_tuning_with_a_useless_prediction_stays_valid():
    """The corner case of PPI++: predictions independent of the labels (lambda -> 0)."""
    s = summarize_intervals(interval_study(REPS, level=LEVEL, seed=12, useless=True, multi=False))
    for method in ("ppi", "ppi_stratified", "ppi_active"):
        assert abs(s.loc[method, "coverage"] - LEVEL) <= BAND, method
    assert s.loc["ppi", "width_vs_labelled"] <= 1.02  # no worse than the labels alone


def test_exchangeability_false_alarms_and_detection():
    level = 0.05
    alarms = exchangeability_study(REPS, level=level, seed=13)
    assert alarms.mean() <= level + 3 * np.sqrt(level * (1 - level) / REPS)
    assert exchangeability_study(100, level=level, seed=14, easy=True).mean() >= 0.95
