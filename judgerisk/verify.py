"""``judgerisk verify``: does an output reproduce from its provenance record?

:func:`verify` reads the record an output carries (:mod:`judgerisk.provenance`), checks it
field by field, checks that each input still exists with the recorded sha256, that the
command line the record shows agrees with its parameters and that its sizes agree with the
output (:mod:`judgerisk.record_checks`, before any recomputation), recomputes the output with
the recorded parameters and compares every cell; a report is also regenerated and every
visible word, number and figure compared (:mod:`judgerisk.report_check`). Scoring runs BLAS on
one thread (:mod:`judgerisk.determinism`), so the numbers are identical across processes and
BLAS thread counts; the tolerance only absorbs the text round trip of csv / jsonl numbers.

Outcome: ``reproduced`` (exit code 0), ``differs`` (1, with the differing cells, after what
differs in the code: commit, uncommitted changes, runtime-registered methods), or
``cannot tell`` (2: an input is missing or changed, the record is malformed or absent, or the
output is a notebook or extraction folder, which are not recomputed). Differences in library
versions are warnings, not failures.
"""

from __future__ import annotations

import argparse
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from judgerisk.determinism import one_blas_thread
from judgerisk.panel import PanelError, load_panel, read_table
from judgerisk.provenance import library_versions, read_record, sha256_file
from judgerisk.record_checks import (
    check_command,
    check_sizes,
    environment_differences,
)
from judgerisk.validation import DEFAULT_ACCELERATE

__all__ = [
    "RTOL",
    "ATOL",
    "RECOMPUTABLE",
    "RecordError",
    "Verification",
    "verify",
    "compare_tables",
]

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


class RecordError(PanelError):
    """A provenance record that is not what judgerisk writes (verify: cannot tell)."""


def _field(record: object, dotted: str, kind: type | tuple[type, ...] = object) -> Any:
    """``record[a][b]...`` for ``dotted = "a.b..."``, or a :class:`RecordError` naming it."""
    value = record
    for i, key in enumerate(dotted.split(".")):
        where = ".".join(dotted.split(".")[:i]) or "the record"
        if not isinstance(value, dict):
            raise RecordError(f"the provenance record's {where} is not a JSON object")
        if key not in value:
            raise RecordError(f"the provenance record has no field {dotted!r}")
        value = value[key]
    if not isinstance(value, kind) or isinstance(value, bool) and kind in (int, float):
        raise RecordError(
            f"the provenance record's field {dotted!r} has the wrong type "
            f"({type(value).__name__}: {str(value)[:60]!r})"
        )
    return value


def _check_inputs(record: dict) -> list[str]:
    problems = []
    for role in _field(record, "inputs", dict):
        path = Path(_field(record, f"inputs.{role}.path", str))
        recorded = _field(record, f"inputs.{role}.sha256", str)
        if not path.is_file():
            problems.append(f"input {role} {path} is missing")
        elif (now := sha256_file(path)) != recorded:
            problems.append(f"input {role} {path} has changed: sha256 {now} (recorded {recorded})")
    return problems


def _warn_versions(record: dict) -> None:
    now = library_versions()
    then = record.get("environment")
    then = then if isinstance(then, dict) else {}
    differ = {k: (then.get(k), v) for k, v in now.items() if k in then and then.get(k) != v}
    about = record.get("judgerisk")
    recorded = about.get("version") if isinstance(about, dict) else None
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


def _load_inputs(record: dict, command: str) -> dict[str, pd.DataFrame]:
    """The input tables of a recomputable record (already checked against their sha256)."""
    roles = {"score": ("panel",), "report": ("panel",), "select": ("scores", "calibration")}
    out = {}
    for role in roles.get(command, ()):
        path = _field(record, f"inputs.{role}.path", str)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out[role] = load_panel(path) if role == "panel" else read_table(path)
    return out


def _recompute(record: dict, loaded: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """The output table recomputed from the record's inputs and parameters."""
    params = record["parameters"]
    command = params.get("command")
    if command == "report":
        from judgerisk.report import report_table

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return report_table(loaded["panel"], params).reset_index()
    if command == "score":
        from judgerisk.certified import accelerate_options, score_panel

        aggregators = params.get("aggregators", "majority,dawid_skene")
        with warnings.catch_warnings(), one_blas_thread():  # as score and report did
            warnings.simplefilter("ignore")
            table = score_panel(
                loaded["panel"],
                n_seeds=params["n_seeds"],
                seed=params["seed"],
                aggregators=tuple(a for a in aggregators.split(",") if a),
                protocol=params.get("protocol", "kfold"),
                scur_options=accelerate_options(params.get("accelerate", DEFAULT_ACCELERATE)),
            )
        return table.reset_index()
    if command == "select":
        from judgerisk.certified import select_items

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return select_items(
                loaded["scores"],
                loaded["calibration"],
                alpha=params["alpha"],
                score=params["score"],
                verdict=params["verdict"],
                allow_any_score=params.get("allow_any_score", False),
            )
    if command == "simulate":
        from judgerisk.simulate import calibration_labels, simulate_panel

        sim = simulate_panel(
            n_items=params["n_items"],
            n_judges=params["n_judges"],
            conditions=tuple(params["conditions"]),
            seed=params["seed"],
        )
        data = sim.data if params.get("gold", True) else sim.data.drop(columns="gold")
        if params.get("part") == "labels":
            data = calibration_labels(sim.data, params.get("n_labelled"), params["seed"])
        return data.reset_index(drop=True)
    if command == "perturb":
        from judgerisk.extract.perturb import perturb_items

        template = record.get("inputs", {}).get("template", {}).get("path", params["template"])
        items = _field(record, "inputs.items.path", str)
        return perturb_items(
            items, tuple(params["conditions"]), template=template, seed=params["seed"]
        )
    if command in ("import", "bpe"):
        from judgerisk.importers.cli import recompute

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            paths = {role: entry["path"] for role, entry in record.get("inputs", {}).items()}
            return recompute(command, params, paths)
    raise PanelError(f"cannot recompute an output of {command!r}")


def _read_output(path: Path) -> pd.DataFrame:
    if path.suffix.lower() in (".html", ".htm"):
        from judgerisk.report import embedded_scores

        return embedded_scores(path)
    return read_table(path)


#: The commands whose outputs :func:`verify` recomputes.
RECOMPUTABLE = ("score", "report", "select", "simulate", "import", "bpe", "perturb")


def _not_recomputable(path: Path, command: object, n_inputs: int) -> Verification:
    what = {".ipynb": "an executed notebook", ".json": "an extraction folder's manifest"}
    kind = what.get(path.suffix.lower(), f"an output of {command!r}")
    return Verification(
        "cannot tell",
        [
            f"{path} is {kind}: its record names the run and its {n_inputs} input(s) still "
            "have their recorded sha256, but judgerisk verify recomputes only score and "
            "decision tables, simulated panels, perturbed items and reports; rerun it (judgerisk run, "
            "judgerisk extract) and compare"
        ],
    )


def _reproduces(
    path: Path, record: dict, parser: argparse.ArgumentParser | None = None
) -> Verification:
    """The checks after the record was read (any malformed field raises RecordError)."""
    if not isinstance(record, dict):
        raise RecordError(f"{path}: the provenance record is not a JSON object")
    problems = _check_inputs(record)
    if problems:
        return Verification("cannot tell", problems)
    command = _field(record, "parameters", dict).get("command")
    if command not in RECOMPUTABLE or path.suffix.lower() in (".ipynb", ".json"):
        return _not_recomputable(path, command, len(record["inputs"]))
    _warn_versions(record)
    table = _read_output(path)
    problems = check_command(record, parser)
    if problems:
        return Verification("differs", problems)
    loaded = _load_inputs(record, command)
    problems = check_sizes(record, len(table), loaded)
    if problems:
        return Verification("differs", ["not recomputed: " + p for p in problems])
    hints = environment_differences(record)
    try:
        recomputed = _recompute(record, loaded)
    except KeyError as exc:
        return Verification("cannot tell", [*hints, f"the record has no parameter {exc}"])
    except (PanelError, ValueError, TypeError) as exc:
        return Verification("cannot tell", [*hints, f"recomputing failed: {exc}"])
    diff = compare_tables(table, recomputed)
    if not diff and command == "report":
        diff = _compare_report(path, record, loaded)
    return Verification("differs", [*hints, *diff]) if diff else Verification("reproduced")


def _compare_report(path: Path, record: dict, loaded: dict) -> list[str]:
    """The report's visible words and figures against a report regenerated from the record."""
    from judgerisk.report import REPORT_DEFAULTS
    from judgerisk.report_check import compare_visible, regenerate_report

    params = {k: record["parameters"][k] for k in REPORT_DEFAULTS if k in record["parameters"]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        page = regenerate_report(record, record["inputs"]["panel"]["path"], params)
    return compare_visible(path.read_text(encoding="utf-8"), page, RTOL, ATOL)


def verify(output: str | Path, *, parser: argparse.ArgumentParser | None = None) -> Verification:
    """Check that an output reproduces from its provenance record.

    In order: the record is a JSON object with the fields judgerisk writes; each input has
    its recorded sha256; the command line the record shows agrees with its parameters; the
    record's sizes agree with the output and bound the work (:mod:`judgerisk.record_checks`);
    then the output is recomputed and every cell compared (within :data:`RTOL`,
    :data:`ATOL`). A report is also regenerated and every visible word, number and figure
    compared (:mod:`judgerisk.report_check`). When recomputing fails or differs, what differs
    in the code (git commit, uncommitted changes, runtime-registered methods) is named first.

    Parameters
    ----------
    output : path-like
        A score or decision table (parquet, or csv / jsonl with its sidecar), a simulated
        panel, or an HTML report. Notebooks and extraction manifests get their inputs
        checked and "cannot tell" (they are not recomputed).
    parser : argparse.ArgumentParser, optional
        The ``judgerisk`` command-line parser (``judgerisk.cli.build_parser()``), against which
        a record's command line is parsed and compared with its parameters. ``judgerisk
        verify`` passes it; without it that comparison is skipped with a warning (the library
        does not import the command line, which sits in the layer above).

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
        return _reproduces(path, read_record(path), parser)
    except PanelError as exc:
        return Verification("cannot tell", [str(exc)])
