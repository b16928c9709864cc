"""``score_panel(n_jobs=...)``: the cross-fitting splits scored in forked processes give the
table and the warnings that one process gives (judgerisk.engine._parallel)."""

from __future__ import annotations

import os
import warnings

import pandas as pd
import pytest

import judgerisk.engine._parallel as parallel
from judgerisk.engine.certified import score_panel
from judgerisk.options import OptionError

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="forks on POSIX only")


@pytest.fixture
def forks(monkeypatch, forked_pids):
    """Forking allowed here (a test worker may run a thread), and the forks counted."""
    monkeypatch.setattr(parallel, "fork_possible", lambda: True)
    return forked_pids


def _scored(panel, **kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = score_panel(panel, **kwargs)
    return out, [(str(w.message), w.category, w.filename, w.lineno) for w in caught]


def _awkward(simulated_panel):
    """A panel whose splits warn (items without an S value) and whose majority vote ties."""
    panel = simulated_panel(n_items=120, n_judges=4, seed=3)
    return panel[~((panel["condition"] != "original") & (panel["item"] < 20))]


@pytest.mark.parametrize("n_jobs", [2, 3, -1])
def test_forked_splits_give_the_same_table_and_warnings(simulated_panel, forks, n_jobs):
    panel = _awkward(simulated_panel)
    one, warned_one = _scored(panel, n_seeds=2, n_jobs=1)
    assert not forks
    many, warned_many = _scored(panel, n_seeds=2, n_jobs=n_jobs)
    assert forks  # children scored some of the 10 splits
    pd.testing.assert_frame_equal(many, one, check_exact=True)
    assert many.attrs == one.attrs
    assert warned_one and warned_many == warned_one  # the same warnings, in the same order


def test_the_checks_warn_first_while_the_children_score(simulated_panel, forks):
    """check_scorable's warnings run in this process after the fork: still first, as in one."""
    panel = _awkward(simulated_panel)
    panel = panel[panel["condition"].isin(["original", "swap"])]  # S_rubric: dropped
    one, warned_one = _scored(panel, n_jobs=1)
    many, warned_many = _scored(panel, n_jobs=2)
    assert len(forks) == 1
    assert "S_rubric signal is dropped" in warned_one[0][0]
    assert warned_many == warned_one
    pd.testing.assert_frame_equal(many, one, check_exact=True)


def test_a_refused_panel_forks_nothing(simulated_panel, forks):
    from judgerisk.panel import PanelError

    panel = simulated_panel(n_items=60, n_judges=3, seed=1)
    with pytest.raises(PanelError, match="at least two judges"):
        score_panel(panel[panel["judge"] == panel["judge"].iloc[0]], n_jobs=2)
    assert not forks


def test_the_paper_protocol_too(simulated_panel, forks):
    panel = simulated_panel(n_items=90, n_judges=3, seed=1)
    one, warned_one = _scored(panel, n_seeds=3, protocol="paper", n_jobs=1)
    many, warned_many = _scored(panel, n_seeds=3, protocol="paper", n_jobs=2)
    assert len(forks) == 1
    pd.testing.assert_frame_equal(many, one, check_exact=True)
    assert warned_many == warned_one


def test_a_childs_error_is_raised_here(simulated_panel, forks, monkeypatch):
    real = parallel.scur_scores

    def failing(cells, seed, **kwargs):
        if seed == 0:  # the first split: a child's
            raise ValueError("no signal varies on the reference split")
        return real(cells, seed=seed, **kwargs)

    monkeypatch.setattr(parallel, "scur_scores", failing)  # the child inherits it
    with pytest.raises(ValueError, match="no signal varies") as caught:
        score_panel(simulated_panel(n_items=60, n_judges=3), n_seeds=2, n_jobs=2)
    assert "scoring cross-fitting splits" in "".join(getattr(caught.value, "__notes__", []))
    assert forks
    for pid in forks:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)  # reaped


def test_a_failure_here_leaves_no_child(simulated_panel, forks, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("the baselines failed")

    monkeypatch.setattr("judgerisk.engine.certified.baseline_scores", broken)
    with pytest.raises(RuntimeError, match="the baselines failed"):
        score_panel(simulated_panel(n_items=60, n_judges=3), n_jobs=2)
    assert forks
    for pid in forks:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)


def test_how_many_processes(monkeypatch):
    monkeypatch.setattr(parallel, "fork_possible", lambda: True)
    monkeypatch.setattr(parallel, "usable_cores", lambda: 4)
    small, large = 600_000, parallel.AUTO_MAX_CELLS + 1
    assert parallel.processes(None, 5, small) == 4
    assert parallel.processes(None, 3, small) == 3  # never more than the splits
    assert parallel.processes(None, 5, large) == 1  # the memory is the limit there
    assert parallel.processes(-1, 5, large) == 4
    assert parallel.processes(2, 5, large) == 2
    assert parallel.processes(1, 5, small) == 1
    monkeypatch.setattr(parallel, "fork_possible", lambda: False)
    assert parallel.processes(-1, 5, small) == 1


@pytest.mark.parametrize("bad", [0, -2, 1.5, "2", True])
def test_a_bad_n_jobs_is_named(simulated_panel, bad):
    with pytest.raises(OptionError, match="n_jobs must be None, -1 or an integer >= 1"):
        score_panel(simulated_panel(n_items=40, n_judges=3), n_jobs=bad)


def test_the_docstring_states_the_rule():
    assert f"{parallel.AUTO_MAX_CELLS:,} cells" in " ".join(score_panel.__doc__.split())
