"""Tests of the fit / reference / evaluation item split (METHODS §3)."""

import numpy as np
import pandas as pd
import pytest

from judgerisk._splits import SPLIT_NAMES, split_counts, split_items


@pytest.mark.parametrize(
    ("n", "expected"),
    [
        (2000, (1000, 600, 400)),
        (10, (5, 3, 2)),
        (7, (4, 2, 1)),  # 3.5, 2.1, 1.4 -> floors 3, 2, 1; the leftover goes to fit (.5)
        (3, (1, 1, 1)),  # 1.5, .9, .6 -> floors 1, 0, 0; leftovers to reference, evaluation
        (1, (1, 0, 0)),
        (0, (0, 0, 0)),
    ],
)
def test_split_counts_largest_remainder(n, expected):
    assert split_counts(n) == expected
    assert sum(split_counts(n)) == n


def test_split_counts_other_fractions_and_ties():
    # 0.25 * 6 = 1.5 for fit and reference: the tie goes to fit (the earlier split)
    assert split_counts(6, (0.25, 0.25, 0.5)) == (2, 1, 3)
    assert split_counts(9, (1 / 3, 1 / 3, 1 / 3)) == (3, 3, 3)
    assert split_counts(5, (0.0, 0.6, 0.4)) == (0, 3, 2)


@pytest.mark.parametrize(
    "fractions", [(0.5, 0.5), (0.6, 0.3, 0.2), (-0.1, 0.6, 0.5), (np.nan, 0.5, 0.5)]
)
def test_split_counts_rejects_bad_fractions(fractions):
    with pytest.raises(ValueError, match="fractions"):
        split_counts(10, fractions)


def test_split_items_counts_labels_and_index():
    s = split_items(range(2000), seed=3)
    assert s.name == "split"
    assert s.index.name == "item"
    assert s.index.is_monotonic_increasing
    assert list(s.index) == list(range(2000))
    assert set(s.unique()) == set(SPLIT_NAMES)
    counts = s.value_counts()
    assert (counts["fit"], counts["reference"], counts["evaluation"]) == (1000, 600, 400)


def test_split_items_deterministic_and_seed_dependent():
    items = [f"q{k}" for k in range(50)]
    a = split_items(items, seed=7)
    b = split_items(items, seed=7)
    c = split_items(items, seed=8)
    pd.testing.assert_series_equal(a, b)
    assert not a.equals(c)
    # depends on the item set only, not on the order it is given in
    shuffled = list(np.random.default_rng(0).permutation(items))
    pd.testing.assert_series_equal(split_items(shuffled, seed=7), a)
    pd.testing.assert_series_equal(split_items(pd.Index(items), seed=7), a)
    pd.testing.assert_series_equal(split_items(iter(items), seed=7), a)


def test_split_items_is_the_documented_permutation():
    items = np.arange(10, 20)
    s = split_items(items, seed=11, fractions=(0.5, 0.3, 0.2))
    perm = np.random.default_rng(11).permutation(10)
    expected = np.empty(10, dtype=object)
    expected[perm] = ["fit"] * 5 + ["reference"] * 3 + ["evaluation"] * 2
    assert list(s.to_numpy()) == list(expected)


def test_split_items_rejects_duplicates_and_missing():
    with pytest.raises(ValueError, match="unique"):
        split_items([1, 2, 2, 3], seed=0)
    with pytest.raises(ValueError, match="missing"):
        split_items([1.0, np.nan, 3.0], seed=0)
