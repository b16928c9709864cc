"""One count check: ``n_folds`` and the other counts are refused alike by the settings objects,
the library and the command line (``judgerisk.options.check_count``, one table of bounds)."""

from __future__ import annotations

import pandas as pd
import pytest

from judgerisk._splits import cross_fit_splits, fold_labels
from judgerisk.cli._app import build_parser
from judgerisk.engine.certified import score_panel
from judgerisk.options import (
    COUNT_MINIMA,
    OptionError,
    ReportSettings,
    ScoreSettings,
    check_count,
)
from judgerisk.simulate import simulate_panel

BAD = [2, 0, -1, 2.5, 3.0, True, "3", None]


@pytest.fixture(scope="module")
def panel() -> pd.DataFrame:
    return simulate_panel(n_items=30, n_judges=3, seed=0).data


@pytest.mark.parametrize("value", BAD)
def test_n_folds_is_refused_alike_everywhere(value, panel):
    message = f"n_folds must be an integer >= 3, got {value!r}"
    calls = [
        lambda: check_count("n_folds", value),
        lambda: ScoreSettings(n_folds=value),
        lambda: ScoreSettings.from_parameters({"n_folds": value}),
        lambda: score_panel(panel, n_folds=value),
        lambda: fold_labels(range(10), 0, n_folds=value),
        lambda: cross_fit_splits(range(10), 1, 0, "kfold", value),
    ]
    for call in calls:
        with pytest.raises(OptionError) as info:
            call()
        assert str(info.value) == message


def test_the_bounds_are_one_table(panel, capsys):
    assert COUNT_MINIMA["n_folds"] == 3
    assert ScoreSettings(n_folds=3).n_folds == 3
    assert score_panel(panel, n_folds=3)["n_scored"].eq(1).all()
    for name, lo in COUNT_MINIMA.items():
        assert check_count(name, lo) == lo
        with pytest.raises(OptionError, match=f"{name} must be an integer >= {lo}"):
            check_count(name, lo - 1)
    with pytest.raises(OptionError, match="n_seeds must be an integer >= 1"):
        ReportSettings(n_seeds=0)
    with pytest.raises(OptionError, match="seed must be an integer >= 0"):
        ScoreSettings(seed=-1)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["score", "p.csv", "-o", "s.csv", "--n-folds", "2"], "n_folds must be an integer >= 3"),
        (["score", "p.csv", "-o", "s.csv", "--n-folds", "x"], "n_folds must be an integer >= 3"),
        (["score", "p.csv", "-o", "s.csv", "--n-seeds", "0"], "n_seeds must be an integer >= 1"),
        (["report", "p.csv", "-o", "r.html", "--n-splits", "0"], "n_splits must be an integer"),
    ],
)
def test_the_command_line_gives_the_same_message(argv, message, capsys):
    with pytest.raises(SystemExit) as info:
        build_parser().parse_args(argv)
    assert info.value.code == 2
    assert message in capsys.readouterr().err


def test_the_command_line_passes_n_folds_to_score():
    args = build_parser().parse_args(["score", "p.csv", "-o", "s.csv", "--n-folds", "4"])
    assert args.n_folds == 4
