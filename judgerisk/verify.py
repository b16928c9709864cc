"""``judgerisk verify``: does an output reproduce from its provenance record?

:func:`verify` reads the record an output carries (:mod:`judgerisk.provenance`), checks that
each input still exists with the recorded sha256, recomputes the output with the recorded
parameters, and compares every cell. The computation is deterministic (same input and
parameters give identical numbers across processes and BLAS thread counts), so the
tolerance only absorbs the text round trip of csv / jsonl numbers.

Outcome: ``reproduced`` (exit code 0), ``differs`` (1, with the differing cells), or
``cannot tell`` (2: an input is missing or changed, or the output carries no record).
Differences in library versions are warnings, not failures.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from judgerisk.panel import PanelError, load_panel, read_table
from judgerisk.provenance import library_versions, read_record, sha256_file

__all__ = ["RTOL", "ATOL", "Verification", "verify", "compare_tables"]

#: Relative and absolute tolerance of a numeric cell.
RTOL, ATOL = 1e-9, 1e-12
_MAX_SHOWN = 20


@dataclass
class Verification:
    """What :func:`verify` found.

    Attributes
    ----------
    status : {"reproduced", "differs", "cannot tell"}
    messages : list of str
        The differing cells, or why it cannot tell.
    """

    status: str
    messages: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        return {"reproduced": 0, "differs": 1}.get(self.status, 2)


def _check_inputs(record: dict) -> list[str]:
    problems = []
    for role, entry in record.get("inputs", {}).items():
        path = Path(entry["path"])
        if not path.is_file():
            problems.append(f"input {role} {path} is missing")
        elif sha256_file(path) != entry["sha256"]:
            problems.append(
                f"input {role} {path} has changed: sha256 {sha256_file(path)} "
                f"(recorded {entry['sha256']})"
            )
    return problems


def _warn_versions(record: dict) -> None:
    now = library_versions()
    then = record.get("environment", {})
    differ = {k: (then.get(k), v) for k, v in now.items() if k in then and then.get(k) != v}
    recorded = record.get("judgerisk", {}).get("version")
    from judgerisk import __version__

    if recorded and recorded != __version__:
        differ["judgerisk"] = (recorded, __version__)
    if differ:
        text = ", ".join(f"{k} {a} -> {b}" for k, (a, b) in differ.items())
        warnings.warn(f"library versions differ from the recorded run: {text}", stacklevel=3)


def _cell_text(value) -> str:
    if isinstance(value, float | np.floating):
        return "NaN" if np.isnan(value) else repr(float(value))
    return repr(value.item() if isinstance(value, np.generic) else value)


def compare_tables(
    output: pd.DataFrame, recomputed: pd.DataFrame, rtol: float = RTOL, atol: float = ATOL
) -> list[str]:
    """The cells of ``output`` that differ from ``recomputed`` (row by row, column by column).

    Numbers agree within ``|a - b| <= atol + rtol |b|`` (NaN equals NaN); other values agree
    when their text agrees. Returns one line per differing cell (at most twenty, then a
    count), or per missing / extra column or row count.
    """
    problems = []
    if len(output) != len(recomputed):
        return [f"{len(output)} rows in the output, {len(recomputed)} recomputed"]
    for col in recomputed.columns.difference(output.columns):
        problems.append(f"column {col!r} is missing from the output")
    for col in output.columns.difference(recomputed.columns):
        problems.append(f"column {col!r} is not in the recomputed table")
    keys = output["item"].astype(str).to_numpy() if "item" in output.columns else None
    n_diff = 0
    for col in [c for c in recomputed.columns if c in output.columns]:
        a, b = output[col], recomputed[col]
        if pd.api.types.is_numeric_dtype(b) and not pd.api.types.is_bool_dtype(b):
            x = pd.to_numeric(a, errors="coerce").to_numpy(np.float64)
            y = b.to_numpy(np.float64)
            same = np.isclose(x, y, rtol=rtol, atol=atol, equal_nan=True)
        else:
            x, y = a.to_numpy(object), b.to_numpy(object)
            same = np.array(
                [(pd.isna(u) and pd.isna(v)) or str(u) == str(v) for u, v in zip(x, y, strict=True)]
            )
        for i in np.flatnonzero(~same):
            n_diff += 1
            if n_diff <= _MAX_SHOWN:
                where = f"row {i}" + (f" (item {keys[i]})" if keys is not None else "")
                problems.append(
                    f"{where}, column {col!r}: {_cell_text(x[i])} in the output, "
                    f"{_cell_text(y[i])} recomputed (tolerance rtol={rtol:g}, atol={atol:g})"
                )
    if n_diff > _MAX_SHOWN:
        problems.append(f"... and {n_diff - _MAX_SHOWN} more differing cell(s)")
    return problems


def _recompute(record: dict) -> pd.DataFrame:
    """The output table recomputed from the record's inputs and parameters."""
    params = record["parameters"]
    command = params.get("command")
    inputs = {role: entry["path"] for role, entry in record.get("inputs", {}).items()}
    if command in ("score", "report"):
        from judgerisk.certified import accelerate_options, score_panel

        aggregators = params.get("aggregators", "majority,dawid_skene")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            table = score_panel(
                load_panel(inputs["panel"]),
                n_seeds=params["n_seeds"],
                seed=params["seed"],
                aggregators=tuple(a for a in aggregators.split(",") if a),
                max_seeds=params.get("max_seeds"),
                protocol=params.get("protocol", "kfold"),
                scur_options=accelerate_options(params.get("accelerate", "anderson")),
            )
        return table.reset_index()
    if command == "select":
        from judgerisk.certified import select_items

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return select_items(
                read_table(inputs["scores"]),
                read_table(inputs["calibration"]),
                alpha=params["alpha"],
                score=params["score"],
                verdict=params["verdict"],
                allow_any_score=params.get("allow_any_score", False),
            )
    if command == "simulate":
        from judgerisk.simulate import simulate_panel

        sim = simulate_panel(
            n_items=params["n_items"],
            n_judges=params["n_judges"],
            conditions=tuple(params["conditions"]),
            seed=params["seed"],
        )
        data = sim.data if params.get("gold", True) else sim.data.drop(columns="gold")
        if params.get("part") == "labels":
            data = sim.data.drop_duplicates("item")[["item", "gold"]]
        return data.reset_index(drop=True)
    raise PanelError(f"cannot recompute an output of {command!r}")


def _read_output(path: Path, record: dict) -> pd.DataFrame:
    if path.suffix.lower() in (".html", ".htm"):
        from judgerisk.report import embedded_scores

        return embedded_scores(path)
    return read_table(path)


def verify(output: str | Path) -> Verification:
    """Check that an output reproduces from its provenance record.

    Parameters
    ----------
    output : path-like
        A score or decision table (parquet, or csv / jsonl with its sidecar), a simulated
        panel, or an HTML report.

    Returns
    -------
    Verification
        ``status`` and ``messages``; ``exit_code`` is 0, 1 or 2.

    Warns
    -----
    UserWarning
        When the library versions differ from the recorded ones.
    """
    path = Path(output)
    try:
        record = read_record(path)
    except PanelError as exc:
        return Verification("cannot tell", [str(exc)])
    problems = _check_inputs(record)
    if problems:
        return Verification("cannot tell", problems)
    _warn_versions(record)
    try:
        table = _read_output(path, record)
    except PanelError as exc:
        return Verification("cannot tell", [str(exc)])
    recomputed = _recompute(record)
    diff = compare_tables(table, recomputed)
    return Verification("differs", diff) if diff else Verification("reproduced")
