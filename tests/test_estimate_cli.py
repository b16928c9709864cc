"""``judgerisk estimate`` (estimates, --plan, --inclusion) and the certificate check of ``select``."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from judgerisk.cli import EXIT_OK, EXIT_USAGE, main
from judgerisk.engine.estimates import COLUMNS, METHODS
from judgerisk.simulate import simulate_panel


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("estimate")
    panel = simulate_panel(n_items=240, n_judges=4, seed=4).data
    panel.to_csv(root / "full.csv", index=False)
    items = pd.unique(panel["item"])
    kept = np.random.default_rng(0).choice(items, 60, replace=False)
    part = panel.assign(gold=panel["gold"].where(panel["item"].isin(kept)))
    part.to_csv(root / "part.csv", index=False)
    return root


def test_estimate_writes_every_quantity_and_verify_recomputes_it(folder, monkeypatch, capsys):
    monkeypatch.chdir(folder)
    assert main(["estimate", "part.csv", "-o", "est.csv", "--level", "0.8"]) == EXIT_OK
    err = capsys.readouterr().err
    assert "judge-only" in err and "worth" in err
    out = pd.read_csv("est.csv")
    assert tuple(out.columns) == COLUMNS and set(out["method"]) == set(METHODS["random"])
    assert (out["level"] == 0.8).all() and (out["n_labelled"] == 60).all()
    record = json.loads((folder / "est.csv.provenance.json").read_text())
    assert record["parameters"]["level"] == 0.8
    assert main(["verify", "est.csv"]) == EXIT_OK


def test_plan_then_weighted_estimate(folder, monkeypatch, capsys):
    monkeypatch.chdir(folder)
    assert main(["estimate", "full.csv", "--plan", "40", "-o", "plan.csv"]) == EXIT_OK
    assert "random labels" in capsys.readouterr().err
    plan = pd.read_csv("plan.csv")
    assert list(plan.columns) == ["item", "inclusion_probability"]
    assert main(["verify", "plan.csv"]) == EXIT_OK
    full = pd.read_csv("full.csv")
    labelled = full.assign(gold=full["gold"].where(full["item"].isin(plan["item"])))
    labelled.to_csv("labelled.csv", index=False)
    argv = ["estimate", "labelled.csv", "--inclusion", "plan.csv", "-o", "weighted.csv"]
    assert main(argv) == EXIT_OK
    assert set(pd.read_csv("weighted.csv")["method"]) == set(METHODS["plan"])
    assert main(["verify", "weighted.csv"]) == EXIT_OK
    # the random slice's items were not drawn by the plan: one error line, exit 2
    capsys.readouterr()
    argv = ["estimate", "part.csv", "--inclusion", "plan.csv", "-o", "bad.csv"]
    assert main(argv) == EXIT_USAGE
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) >= 1 and "not in the plan" in err[-1] and not (folder / "bad.csv").exists()


def test_plan_and_inclusion_together_are_refused(folder, monkeypatch, capsys):
    monkeypatch.chdir(folder)
    argv = ["estimate", "full.csv", "--plan", "5", "--inclusion", "plan.csv", "-o", "x.csv"]
    assert main(argv) == EXIT_USAGE
    assert "give one of them" in capsys.readouterr().err


def test_select_refuses_an_easy_only_slice_and_stays_quiet_on_a_random_one(
    folder, monkeypatch, capsys
):
    monkeypatch.chdir(folder)
    assert main(["score", "full.csv", "-o", "scores.csv"]) == EXIT_OK
    scores = pd.read_csv("scores.csv")
    scores.sample(60, random_state=1)[["item", "gold"]].to_csv("random.csv", index=False)
    scores.nsmallest(60, "scur")[["item", "gold"]].to_csv("easy.csv", index=False)
    capsys.readouterr()
    argv = ["select", "scores.csv", "--calibration", "random.csv", "-o", "d1.csv"]
    assert main(argv) == EXIT_OK
    err = capsys.readouterr().err
    assert "does not apply" not in err and "abstain on at least" in err
    argv = ["select", "scores.csv", "--calibration", "easy.csv", "-o", "d2.csv"]
    assert main(argv) == EXIT_OK
    err = capsys.readouterr().err
    assert "warning: the certificate does not apply" in err and "safer ones" in err
    assert "p < 0.001" in err and "0.000999" not in err  # a permutation p-value, as reported
    record = json.loads((folder / "d2.csv.provenance.json").read_text())
    assert record["settings"]["certificate"]["applies"] is False
    assert main(["verify", "d2.csv"]) == EXIT_OK
