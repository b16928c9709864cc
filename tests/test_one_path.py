"""One implementation per quantity: the public APIs that share a quantity agree on it."""

import pytest

from judgerisk.cli import build_parser
from judgerisk.engine.certified import accelerate_options, select_items
from judgerisk.panel import PanelError
from judgerisk.risk.lmm import LatentMeasurementModel
from judgerisk.validation import (
    ACCELERATIONS,
    InputError,
    OptionError,
    check_accelerate,
    check_alpha,
)


@pytest.mark.parametrize("alpha", [0.0, 1.0, -0.1, 1.5, "x"])
def test_alpha_check_is_one_rule_with_one_error(alpha):
    with pytest.raises(OptionError, match="alpha"):
        check_alpha(alpha)
    with pytest.raises(OptionError, match="alpha"):
        select_items(None, None, alpha=alpha)  # checked before the tables
    parser = build_parser()
    with pytest.raises(SystemExit) as exc:
        parser.parse_args(["select", "s.csv", "--calibration", "c.csv", "--alpha", str(alpha)])
    assert exc.value.code == 2


def test_option_and_panel_errors_share_the_input_error_base():
    assert issubclass(OptionError, InputError) and issubclass(PanelError, InputError)
    assert not issubclass(OptionError, PanelError)
    assert issubclass(InputError, ValueError)  # callers catching ValueError keep working


@pytest.mark.parametrize("value", [*ACCELERATIONS, None])
def test_accelerate_vocabulary_is_shared(value):
    canonical = check_accelerate(value)
    assert canonical in (None, "anderson", "lbfgs")
    assert accelerate_options(value) == {"lmm_params": {"accelerate": canonical}}
    if value is not None:  # the CLI offers exactly the library's vocabulary
        args = build_parser().parse_args(["score", "p.csv", "-o", "s.csv", "--accelerate", value])
        assert args.accelerate == value


def test_accelerate_rejects_unknown_everywhere():
    with pytest.raises(OptionError, match="accelerate"):
        accelerate_options("fast")
    with pytest.raises(OptionError, match="accelerate"):
        LatentMeasurementModel(accelerate="fast").fit(None)
    with pytest.raises(SystemExit):
        build_parser().parse_args(["score", "p.csv", "-o", "s.csv", "--accelerate", "fast"])


def test_error_labels_agree_across_apis(simulated_panel):
    from judgerisk.aggregators import aggregate
    from judgerisk.engine.analysis import aggregate_errors
    from judgerisk.engine.certified import panel_errors
    from judgerisk.panel import gold_labels
    from judgerisk.validation import error_labels

    panel = simulated_panel(n_items=50, n_judges=3, seed=2)
    verdict = aggregate(panel, "majority").set_index("item")["verdict"]
    gold01 = gold_labels(panel)
    gold_ab = gold01.map({1: "A", 0: "B"})
    want = aggregate_errors(panel, "majority")
    assert want.dtype == "int8" and want.name == "error"
    assert error_labels(verdict, gold01).reindex(want.index).tolist() == want.tolist()
    assert panel_errors(verdict, gold_ab).reindex(want.index).tolist() == want.tolist()
    with pytest.raises(InputError, match="gold"):
        error_labels(verdict, gold_ab.iloc[:-1])


def test_validate_scores_checks_per_item_tables():
    import pandas as pd

    from judgerisk.panel import validate_scores

    table = pd.DataFrame({"item": [1, 2], "scur": [0.1, 0.2], "majority": ["A", "B"]})
    out = validate_scores(table, columns=("scur",), labels=("majority",))
    assert out.index.name == "item" and list(out.columns) == ["scur", "majority"]
    with pytest.raises(PanelError, match="duplicated"):
        validate_scores(pd.concat([table, table]))
    with pytest.raises(PanelError, match="no column 'pe'"):
        validate_scores(table, columns=("pe",))
    with pytest.raises(PanelError, match=r"calibration: column 'gold' must be 'A' or 'B'.*\[2\]"):
        validate_scores(table.assign(gold=["A", "C"]), labels=("gold",), name="calibration")
    with pytest.raises(PanelError, match="'gold'"):
        select_items(table, table.drop(columns="majority"), alpha=0.1)


def test_report_settings_are_one_object_for_cli_library_and_notebook():
    import ast
    import re

    from judgerisk.options import ReportSettings
    from judgerisk.report.build import REPORT_DEFAULTS, report_notebook_path

    defaults = ReportSettings().as_parameters()
    assert REPORT_DEFAULTS == defaults
    args = build_parser().parse_args(["report", "p.csv", "-o", "r.html"])
    assert {k: getattr(args, k) for k in defaults} == defaults
    text = report_notebook_path().read_text()
    cell = re.search(r"tags: \[parameters\]\n---\n(.*?)```", text, re.S) or re.search(
        r":tags: \[parameters\]\n\n(.*?)```", text, re.S
    )
    assert cell, "the report notebook has no parameters cell"
    cell_values = {
        node.targets[0].id: ast.literal_eval(node.value)
        for node in ast.parse(cell.group(1)).body
        if isinstance(node, ast.Assign) and node.targets[0].id in defaults
    }
    assert cell_values == defaults
    with pytest.raises(OptionError, match="unknown report parameter"):
        ReportSettings.from_parameters({"n_seed": 2})
    with pytest.raises(OptionError, match="alpha"):
        ReportSettings(alpha=2.0)


def test_score_and_select_settings_are_the_cli_and_library_defaults():
    import inspect

    from judgerisk.engine.certified import accelerate_options, score_panel, select_items
    from judgerisk.options import ScoreSettings, SelectSettings

    score = ScoreSettings().as_parameters()
    args = build_parser().parse_args(["score", "p.csv", "-o", "s.csv"])
    cli = {k: getattr(args, k) for k in score if hasattr(args, k)}
    given = build_parser().parse_args(["score", "p.csv", "-o", "s.csv", "--aggregators", "a,b"])
    assert given.aggregators == ("a", "b")  # --aggregators a,b is parsed into a tuple
    assert cli == score
    library = inspect.signature(score_panel).parameters
    assert {k: library[k].default for k in score if k in library} == {
        k: v for k, v in score.items() if k != "accelerate"
    }
    accelerate = inspect.signature(accelerate_options).parameters["accelerate"].default
    assert accelerate == score["accelerate"]

    select = SelectSettings().as_parameters()
    args = build_parser().parse_args(["select", "s.csv", "--calibration", "c.csv", "-o", "d.csv"])
    assert {k: getattr(args, k) for k in select} == select
    library = inspect.signature(select_items).parameters
    assert {k: library[k].default for k in select} == select
    with pytest.raises(OptionError, match="unknown select parameter"):
        SelectSettings.from_parameters({"alfa": 0.2})
    with pytest.raises(OptionError, match="protocol"):
        ScoreSettings(protocol="bootstrap")
    assert SelectSettings.from_parameters({"alpha": 0.2}).alpha == 0.2


def test_the_report_embeds_the_score_table_cell_for_cell(tmp_path, monkeypatch, capsys):
    """Same panel, default options: ``report``'s embedded table is ``score``'s output (1e-12)."""
    import numpy as np
    import pandas as pd

    from judgerisk._provenance import read_record
    from judgerisk.cli import main
    from judgerisk.report.build import embedded_scores

    monkeypatch.chdir(tmp_path)
    assert main(["simulate", "--n-items", "120", "--seed", "3", "-o", "p.csv"]) == 0
    assert main(["score", "p.csv", "-o", "s.csv"]) == 0
    assert main(["report", "p.csv", "-o", "r.html", "--n-splits", "20"]) == 0
    capsys.readouterr()
    score = pd.read_csv("s.csv", dtype={"gold": str})
    report = embedded_scores("r.html")
    assert list(report.columns) == list(score.columns)
    assert len(report) == len(score) == 120
    for col in score.columns:
        a, b = score[col], report[col]
        if pd.api.types.is_numeric_dtype(a) and not pd.api.types.is_bool_dtype(a):
            np.testing.assert_allclose(b, a, rtol=0, atol=1e-12, equal_nan=True, err_msg=col)
        else:
            assert a.fillna("").astype(str).tolist() == b.fillna("").astype(str).tolist(), col
    assert read_record("r.html")["inputs"]["panel"]["rows"] == len(pd.read_csv("p.csv"))
