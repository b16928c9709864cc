"""Shared fixtures of the test suite.

The public data sits beside a fresh clone in ``../shared/data``; the package bakes in no default
location, so the suite decides its own fallback here: when ``JUDGERISK_DATA`` is unset and that
folder exists, it points there (papermill kernels of the notebook tests inherit it). Tests that
need the data are marked ``data`` and skip with a reason when it is absent.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
_FALLBACK_DATA = ROOT.parent / "shared" / "data"
if not os.environ.get("JUDGERISK_DATA") and _FALLBACK_DATA.is_dir():
    os.environ["JUDGERISK_DATA"] = str(_FALLBACK_DATA)


@pytest.fixture(scope="session")
def data_root() -> Path | None:
    """The public-data folder (``$JUDGERISK_DATA``), or ``None`` when it is absent."""
    from judgerisk.datasets import data_root as resolve

    return resolve(required=False)


@cache
def _simulated(n_items: int, n_judges: int, seed: int) -> pd.DataFrame:
    from judgerisk.simulate import simulate_panel

    return simulate_panel(n_items=n_items, n_judges=n_judges, seed=seed).data


@pytest.fixture(scope="session")
def simulated_panel() -> Callable[..., pd.DataFrame]:
    """``simulated_panel(n_items=300, n_judges=5, seed=0)``: a cached simulated panel (a copy)."""

    def make(n_items: int = 300, n_judges: int = 5, seed: int = 0) -> pd.DataFrame:
        return _simulated(n_items, n_judges, seed).copy()

    return make


@pytest.fixture
def registered() -> Iterator[Callable[[str, str], None]]:
    """``registered(kind, name)`` remembers a toy registration and removes it after the test.

    ``kind`` is ``"aggregator"``, ``"risk_score"`` or ``"dataset"``; registries are
    process-wide, so a toy must not leak into the other tests of the same worker.
    """
    from judgerisk._plots import style
    from judgerisk.aggregators import unregister_aggregator
    from judgerisk.datasets import unregister_dataset
    from judgerisk.risk.registry import unregister_risk_score

    remove = {
        "aggregator": unregister_aggregator,
        "risk_score": unregister_risk_score,
        "dataset": unregister_dataset,
    }
    made: list[tuple[str, str]] = []
    yield lambda kind, name: made.append((kind, name))
    for kind, name in made:
        remove[kind](name)
        style.STYLES.pop(name, None)


@pytest.fixture
def forked_pids(monkeypatch) -> list[int]:
    """The pids of the processes ``os.fork`` starts during the test (it is wrapped to count)."""
    pids: list[int] = []
    fork = os.fork

    def counted() -> int:
        pid = fork()
        if pid:
            pids.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", counted)
    return pids
