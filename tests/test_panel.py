"""The panel data contract: every rejection (message checked), round trips, reshaping."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

from judgerisk.panel import (
    CONDITIONS,
    PanelError,
    encode_panel,
    gold_labels,
    load_panel,
    save_panel,
    to_long,
    to_wide,
    validate_panel,
    verdicts,
)


@pytest.fixture
def frame():
    return pd.DataFrame(
        {
            "item": [1, 1, 1, 2, 2, 2],
            "judge": ["a", "b", "a", "a", "b", "b"],
            "condition": ["original", "original", "swap", "original", "original", "swap"],
            "logit": [1.5, -0.5, 0.0, 30.0, -2.0, -45.0],
            "gold": ["A", "A", "A", "B", "B", "B"],
        }
    )


def test_normalised_copy(frame):
    out = validate_panel(frame)
    assert list(out.columns[:7]) == ["item", "judge", "condition", "logit", "p", "verdict", "gold"]
    assert out["logit"].max() == 20.0 and out["logit"].min() == -20.0  # clipped
    np.testing.assert_allclose(out["p"], expit(out["logit"]))
    # tie m == 0: half a vote for each answer
    tie = out[(out["item"] == 1) & (out["condition"] == "swap")]
    assert tie["verdict"].item() == 0.5  # a tie is half a vote for each answer
    assert out["verdict"].tolist() == [1, 0.5, 0, 1, 0, 0]
    assert frame["logit"].iloc[3] == 30.0, "input must not be modified"
    # sorted: item, judge, condition in canonical order
    assert out[["item", "judge", "condition"]].values.tolist()[:3] == [
        [1, "a", "original"],
        [1, "a", "swap"],
        [1, "b", "original"],
    ]


def test_p_only_and_both_consistent(frame):
    p_only = frame.drop(columns="logit").assign(p=expit(frame["logit"]))
    np.testing.assert_allclose(
        validate_panel(p_only)["logit"], validate_panel(frame)["logit"], atol=1e-6
    )
    edge = frame.drop(columns="logit").assign(p=[1.0, 0.0, 0.5, 0.9, 0.1, 0.2])
    out = validate_panel(edge)
    assert out["logit"].abs().max() == 20.0
    both = frame.assign(p=expit(frame["logit"]))
    validate_panel(both)


@pytest.mark.parametrize(
    ("mutate", "needle"),
    [
        (lambda d: d.drop(columns="judge"), "missing required column(s): judge"),
        (lambda d: d.drop(columns="logit"), "missing required column(s): logit or p"),
        (lambda d: d.iloc[0:0], "the panel is empty"),
        (lambda d: d.assign(logit=[1, np.nan, 0, 1, 1, 1]), "column 'logit' has NaN"),
        (lambda d: d.assign(logit=[1, np.inf, 0, 1, 1, 1]), "column 'logit' has NaN, infinite"),
        (
            lambda d: d.drop(columns="logit").assign(p=[0.5, 1.2, 0.1, 0.3, -0.1, 0.5]),
            "column 'p' has values outside [0, 1]",
        ),
        (
            lambda d: d.drop(columns="logit").assign(p=[0.5, np.nan, 0.1, 0.3, 0.1, 0.5]),
            "column 'p' has values outside [0, 1] or NaN",
        ),
        (lambda d: d.assign(p=0.5), "columns 'logit' and 'p' disagree"),
        (
            lambda d: d.assign(
                condition=["original", "original", "original", "original", "original", "swap"]
            ),
            "duplicate (item, judge, condition)",
        ),
        (
            lambda d: d.assign(
                condition=["original", "original", "reversed", "original", "original", "swap"]
            ),
            "unknown condition name(s) ['reversed']",
        ),
        (lambda d: d.assign(gold=["A", "A", "A", "B", "B", "C"]), "'gold' must be 'A', 'B' or"),
        (lambda d: d.assign(gold=["A", "A", "A", "B", "B", "b"]), "found 'b'"),
        (lambda d: d.assign(gold=["A", "A", "A", "B", "B", None]), "row 5: item=2"),
        (lambda d: d.assign(gold=["A", "B", "A", "B", "B", "B"]), "'gold' differs within one item"),
        (
            lambda d: d.assign(
                condition=["original", "original", "swap", "swap", "rubric1", "rubric2"]
            ),
            "have no 'original'-condition response",
        ),
        (lambda d: d.assign(item=[1, None, 1, 2, 2, 2]), "column 'item' has missing values"),
    ],
)
def test_rejections_name_column_and_rows(frame, mutate, needle):
    with pytest.raises(PanelError) as info:
        validate_panel(mutate(frame))
    message = str(info.value)
    assert needle in message
    if "column '" in needle or "duplicate" in needle or "unknown" in needle:
        assert "offending row(s):\n  row " in message


def test_offending_rows_listed_and_capped():
    n = 30
    df = pd.DataFrame(
        {"item": range(n), "judge": "j", "condition": "original", "p": np.full(n, 2.0)}
    )
    message = str(pytest.raises(PanelError, validate_panel, df).value)
    assert "30 offending row(s)" in message
    assert "row 0:" in message and "row 9:" in message and "row 10:" not in message
    assert "and 20 more" in message


def test_rejects_non_frame():
    with pytest.raises(PanelError, match="must be a pandas DataFrame"):
        validate_panel([1, 2, 3])


def test_custom_conditions():
    df = pd.DataFrame(
        {
            "item": [1, 1],
            "judge": "j",
            "condition": ["original", "paraphrase"],
            "logit": [1.0, -1.0],
        }
    )
    with pytest.raises(PanelError, match="unknown condition"):
        validate_panel(df)
    out = validate_panel(df, conditions=None)
    assert out["condition"].tolist() == ["original", "paraphrase"]
    assert encode_panel(out).conditions == ("original", "paraphrase")


@pytest.mark.parametrize("suffix", [".csv", ".parquet", ".jsonl"])
def test_load_save_round_trip(frame, tmp_path, suffix):
    panel = validate_panel(frame)
    path = save_panel(panel, tmp_path / f"panel{suffix}")
    back = load_panel(path)
    pd.testing.assert_frame_equal(back, panel, check_dtype=False)


def test_load_errors(tmp_path, frame):
    with pytest.raises(FileNotFoundError):
        load_panel(tmp_path / "nope.csv")
    (tmp_path / "x.txt").write_text("a")
    with pytest.raises(PanelError, match="unsupported file type"):
        load_panel(tmp_path / "x.txt")
    frame.drop(columns="judge").to_csv(tmp_path / "bad.csv", index=False)
    with pytest.raises(PanelError, match="judge"):
        load_panel(tmp_path / "bad.csv")


def test_wide_long_and_helpers(frame):
    panel = validate_panel(frame)
    wide = to_wide(panel)
    assert wide.shape == (2, 2)
    assert wide.loc[2, "a"] == 20.0
    back = validate_panel(to_long(wide).assign(gold=lambda d: d["item"].map({1: "A", 2: "B"})))
    orig = panel[panel["condition"] == "original"].reset_index(drop=True)
    pd.testing.assert_frame_equal(back[orig.columns], orig, check_dtype=False)
    v = verdicts(panel, "swap")
    # (1, a) is a tie (logit 0): half a vote
    assert v.loc[1, "a"] == 0.5 and np.isnan(v.loc[1, "b"]) and v.loc[2, "b"] == 0.0
    assert gold_labels(panel).to_dict() == {1: 1, 2: 0}
    with pytest.raises(PanelError, match="no rows with condition"):
        to_wide(panel, condition="rubric1")


def test_encode_panel(frame):
    panel = validate_panel(frame)
    enc = encode_panel(panel)
    assert enc.conditions == ("original", "swap")
    assert (enc.cond_idx[panel["condition"].eq("original").to_numpy()] == 0).all()
    assert list(enc.items[enc.item_idx]) == panel["item"].tolist()
    assert list(enc.judges[enc.judge_idx]) == panel["judge"].tolist()
    assert enc.n_items == 2 and enc.n_judges == 2 and enc.n_conditions == 2
    assert set(CONDITIONS) >= set(enc.conditions)


def test_revalidation_fast_path_detects_any_change(frame):
    panel = validate_panel(frame)
    again = validate_panel(panel)
    pd.testing.assert_frame_equal(again, panel)
    assert again is not panel
    # a value changed after validation is checked again in full
    tampered = panel.copy()
    tampered.loc[0, "logit"] = np.nan
    with pytest.raises(PanelError, match="column 'logit' has NaN"):
        validate_panel(tampered)
    tampered = panel.copy()
    tampered.loc[1, "condition"] = "original"
    with pytest.raises(PanelError, match="duplicate"):
        validate_panel(tampered)
    # a restriction the panel does not meet is checked
    with pytest.raises(PanelError, match="unknown condition"):
        validate_panel(panel, conditions=("original",))


def test_csv_writer_is_pandas_to_csv_byte_for_byte(tmp_path):
    """write_table formats each distinct float64 once (by its bits), as DataFrame.to_csv does."""
    from judgerisk.panel import write_table

    rng = np.random.default_rng(0)
    x = rng.normal(size=300) * 10.0 ** rng.integers(-320, 300, 300)
    edge = [0.0, -0.0, np.nan, np.inf, -np.inf, 1e16, 1e-05, 5e-324, 0.1, 0.1, -0.0, 0.0]
    values = np.concatenate([x, edge, x[:50]])  # repeated values share one text
    n = len(values)
    table = pd.DataFrame(
        {
            "item": np.arange(n),
            "score": values,
            "text": ["a,b" if i % 3 else "" for i in range(n)],
            "half": rng.normal(size=n).astype(np.float32),
            "flag": np.arange(n) % 2 == 0,
            "score2": values[::-1],
        }
    )
    table.columns = ["item", "score", "text", "half", "flag", "score"]  # a name given twice
    path = write_table(table, tmp_path / "t.csv")
    table.to_csv(tmp_path / "pandas.csv", index=False)
    assert path.read_bytes() == (tmp_path / "pandas.csv").read_bytes()
