"""``judgerisk import`` (another tool's judgments -> a panel) and ``judgerisk bpe`` (one judge).

Both follow the command line's guarantees (:mod:`judgerisk.cli`): output paths checked before
any work and never over an input, atomic writes, one-line errors with exit 2, a provenance
record that ``judgerisk verify`` recomputes.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # building the parser imports neither pandas nor a reader
    import pandas as pd

__all__ = ["add_subcommands", "bpe_table", "recompute"]

_OPTIONS = (
    "epsilon",
    "judge_by",
    "weak",
    "baseline",
    "judge",
    "swap_suffix",
    "label_a",
    "label_tie",
    "gold",
    "columns",
)
_SWAP = "swap"


def _record(args: argparse.Namespace, inputs: dict) -> dict:
    from judgerisk.provenance import make_record

    params = {k: v for k, v in vars(args).items() if k not in ("func", "argv", "started")}
    return make_record(["judgerisk", *args.argv], params, inputs, args.started)


# --------------------------------------------------------------------------- import
def _assumptions(params: dict) -> dict:
    from judgerisk.importers import get_importer
    from judgerisk.panel import PanelError

    imp = get_importer(params["format"])
    given = {k: params.get(k) for k in _OPTIONS if params.get(k) is not None}
    other = sorted(set(given) - set(imp.options))
    if other:
        flags = ", ".join("--" + k.replace("_", "-") for k in other)
        raise PanelError(f"format {params['format']!r} takes no {flags}")
    return given


def _next_step(panel: pd.DataFrame, output: str) -> str:
    """The ``next:`` sentence: only a command that accepts this panel, else what is missing."""
    from judgerisk.coverage import judge_groups, no_shared_items

    groups = judge_groups(panel)
    if len(groups) > 1:
        return f"not a panel: {no_shared_items(groups)}"
    swap = _SWAP in set(panel["condition"])
    if sum(map(len, groups)) >= 2:
        return f"next: judgerisk report {output} -o report.html"
    if swap:
        return (
            f"next: judgerisk report {output} -o report.html (one judge in both orders: its "
            f"BPE and SCOPE report; the per-item table alone: judgerisk bpe {output} -o bpe.csv)"
        )
    return (
        "next: no judgerisk command scores one judge in one answer order; a report needs the "
        "same judge in the swapped order too (its BPE and SCOPE report: for lm-eval, the "
        "<task>_swap task) or two judges or more on the same items (a panel report)"
    )


def _run_import(args: argparse.Namespace) -> int:
    from judgerisk.importers import get_importer, import_judgments
    from judgerisk.importers.inputs import expand_inputs
    from judgerisk.provenance import check_output_path, finish_record
    from judgerisk.provenance import write_table_with_record as _write_output

    assumptions = _assumptions(vars(args))  # an unknown format: an error listing the formats
    files = expand_inputs(args.paths, args.format, get_importer(args.format).layout).files
    check_output_path(args.output, inputs=tuple(files))
    panel, info = import_judgments(
        args.format, args.paths, duplicates=args.duplicates, **assumptions
    )
    inputs = {f"input {k + 1}": (p, None) for k, p in enumerate(files)}
    record = finish_record(_record(args, inputs), {"rows": len(panel), **info["shape"]})
    record["assumptions"] = info
    _write_output(panel, args.output, record)
    err = sys.stderr
    print(f"judgerisk import: {args.format}: read {len(files)} file(s)", file=err)
    for note in info["inputs"]:
        print(f"  {note}", file=err)
    print(f"judgerisk import: {args.format}: assumed", file=err)
    for name, value in info["assumptions"].items():
        print(f"  {name}: {value}", file=err)
    dropped = ", ".join(f"{n} {why}" for why, n in info["dropped"].items()) or "nothing"
    ties = info["ties"]
    print(f"  dropped: {dropped}", file=err)
    print(f"  ties: {ties['total']} of {ties['cells']} cells (p = 1/2)", file=err)
    s = info["shape"]
    print(
        f"wrote {args.output}: {s['items']} items x {s['judges']} judge(s) x "
        f"{len(s['conditions'])} condition(s) ({len(panel)} rows); "
        f"{_next_step(panel, args.output)}",
        file=err,
    )
    return 0


# --------------------------------------------------------------------------- bpe
def bpe_table(
    panel: pd.DataFrame, calibration: pd.DataFrame | None = None, alpha: float = 0.1
) -> pd.DataFrame:
    r"""BPE of every (item, judge) seen in both orders and, with labels, SCOPE's selection.

    Parameters
    ----------
    panel : pandas.DataFrame
        A panel with ``original`` and ``swap`` conditions (one judge or several, each alone).
    calibration : pandas.DataFrame, optional
        ``item, gold`` ("A"/"B") of labelled items; they calibrate SCOPE's threshold
        :math:`\hat\lambda` (:func:`judgerisk.selective.scope_threshold`) per judge, and the
        other items are accepted iff :math:`s(x) \le \hat\lambda`.
    alpha : float, default 0.1
        SCOPE's target false discovery rate among accepted verdicts.

    Returns
    -------
    pandas.DataFrame
        ``item, judge, logit_fwd, logit_rev, bpe, p_bar, verdict`` ("A", "B", or "tie" when
        :math:`\bar p = 1/2`) and, with ``calibration``, ``role``, ``gold``, ``error``,
        ``threshold``, ``accepted``.

    References
    ----------
    SCOPE paper §2.2 (BPE) and §2.3 (the threshold); book chapter on one judge.
    """
    import numpy as np
    import pandas as pd

    from judgerisk.panel import ORIGINAL, PanelError, validate_panel
    from judgerisk.selective import bpe, scope_threshold
    from judgerisk.validation import check_alpha

    panel = validate_panel(panel, conditions=None)
    if _SWAP not in set(panel["condition"]):
        raise PanelError("BPE needs each item in both orders: the panel has no 'swap' condition")
    wide = panel.pivot_table(index=["item", "judge"], columns="condition", values="logit")
    both = wide[[ORIGINAL, _SWAP]].dropna()
    if both.empty:
        raise PanelError("no (item, judge) was judged in both the 'original' and 'swap' orders")
    fwd, rev = both[ORIGINAL].to_numpy(), both[_SWAP].to_numpy()
    sig = bpe(fwd, rev)
    p_bar = np.where(sig.pred == 1, sig.confidence, 1.0 - sig.confidence)
    # p_bar = 1/2 iff logit_fwd = -logit_rev: a tie, never silently A. Hard verdicts make the
    # two logits opposite only up to rounding (logit(0.95) != -logit(0.05) in floating point)
    tie = np.isclose(fwd, -rev, rtol=1e-9, atol=1e-12)
    out = pd.DataFrame(
        {
            "logit_fwd": fwd,
            "logit_rev": rev,
            "bpe": np.where(tie, np.log(2.0), sig.score),
            "p_bar": np.where(tie, 0.5, p_bar),
            "verdict": np.where(tie, "tie", np.where(sig.pred == 1, "A", "B")),
        },
        index=both.index,
    ).reset_index()
    if calibration is None:
        return out
    alpha = check_alpha(alpha)
    missing = [c for c in ("item", "gold") if c not in calibration.columns]
    if missing:
        raise PanelError(f"--calibration: missing column(s) {missing}")
    gold = calibration.drop_duplicates("item").set_index("item")["gold"].astype(str)
    bad = ~gold.isin(["A", "B"])
    if bad.any():
        raise PanelError(f"--calibration: gold must be A or B; got {gold[bad].head(5).tolist()}")
    out["gold"] = out["item"].map(gold)
    out["role"] = np.where(out["gold"].notna(), "calibration", "test")
    out["error"] = np.where(out["gold"].notna(), out["verdict"] != out["gold"], np.nan)
    lam = {}
    for judge, d in out[out["role"] == "calibration"].groupby("judge"):
        lam[judge] = scope_threshold(d["bpe"].to_numpy(), d["error"].astype(bool).to_numpy(), alpha)
    out["threshold"] = out["judge"].map(lam).astype(float).fillna(-np.inf)
    out["accepted"] = (out["role"] == "test") & (out["bpe"] <= out["threshold"])
    return out


def _run_bpe(args: argparse.Namespace) -> int:
    from judgerisk.panel import load_panel, read_table
    from judgerisk.provenance import check_output_path, finish_record
    from judgerisk.provenance import write_table_with_record as _write_output

    ins = (args.panel,) + ((args.calibration,) if args.calibration else ())
    check_output_path(args.output, inputs=ins)
    panel = load_panel(args.panel, conditions=None)
    cal = read_table(args.calibration) if args.calibration else None
    inputs = {"panel": (args.panel, len(panel))}
    if cal is not None:
        inputs["calibration"] = (args.calibration, len(cal))
    table = bpe_table(panel, cal, args.alpha)
    n_tie = int((table["verdict"] == "tie").sum())
    settings = {"rows": len(table), "ties": n_tie}
    if cal is not None:
        test = table[table["role"] == "test"]
        settings.update(
            accepted=int(test["accepted"].sum()),
            n_test=len(test),
            thresholds=table.groupby("judge")["threshold"].first().to_dict(),
        )
    _write_output(table, args.output, finish_record(_record(args, inputs), settings))
    msg = f"wrote {args.output}: BPE of {len(table)} (item, judge) pairs; {n_tie} tie verdicts"
    if cal is not None:
        msg += (
            f"; SCOPE at alpha {args.alpha}: accepted {settings['accepted']} of "
            f"{settings['n_test']} unlabelled items"
        )
    print(msg, file=sys.stderr)
    return 0


# --------------------------------------------------------------------------- verify
def recompute(command: str, params: dict, inputs: dict) -> pd.DataFrame:
    """The output of an ``import`` or ``bpe`` run, recomputed for ``judgerisk verify``."""
    from judgerisk.importers import import_judgments
    from judgerisk.panel import load_panel, read_table

    if command == "import":
        paths = [inputs[f"input {k + 1}"] for k in range(len(inputs))]
        duplicates = params.get("duplicates", "error")  # a record may predate the option
        return import_judgments(
            params["format"], paths, duplicates=duplicates, **_assumptions(params)
        )[0]
    cal = read_table(inputs["calibration"]) if "calibration" in inputs else None
    return bpe_table(load_panel(inputs["panel"], conditions=None), cal, params["alpha"])


def add_subcommands(sub: argparse._SubParsersAction, fmt: type[argparse.HelpFormatter]) -> None:
    """Register ``import`` and ``bpe`` on the ``judgerisk`` parser."""
    from judgerisk.importers.registry import BUILTIN_FORMATS

    # the built-ins' static description: listing them imports no reader and no plug-in
    formats = "\n".join(f"  {imp.name:12s} {imp.files}" for imp in BUILTIN_FORMATS)
    formats += (
        "\n  and any format an installed plug-in declares (entry-point group"
        "\n  judgerisk.importers), loaded when the command runs"
    )
    p = sub.add_parser(
        "import",
        help="read another tool's judgments into a panel, printing every assumption",
        description=textwrap.dedent(
            """\
            Read the judgment files of FastChat, Arena-Hard, alpaca_eval, lm-evaluation-harness
            or crowd-kit into a panel (csv, parquet or jsonl). What it assumes (epsilon of hard
            verdicts, level map of graded ones, tie policy, item ids, orientation) and what it
            drops is printed and written into the output's provenance record. Book page:
            "Importing your judges".

            formats:
            """
        )
        + formats,
        epilog="examples:\n  judgerisk import fastchat model_judgment/*_pair.jsonl -o panel.csv\n"
        "  judgerisk import arena_hard data/arena-hard-v2.0/model_judgment -o panel.csv\n"
        "  judgerisk report panel.csv -o report.html",
        formatter_class=fmt,
    )
    p.add_argument("format", help="the tool that wrote the files (a format listed above)")
    p.add_argument(
        "paths",
        nargs="+",
        help="its output files, folders holding them (searched in the tool's layout) or glob "
        "patterns",
    )
    p.add_argument("-o", "--output", required=True, help="panel to write (.csv/.parquet/.jsonl)")
    p.add_argument(
        "--epsilon",
        type=float,
        default=argparse.SUPPRESS,
        help="hard verdicts -> 1-epsilon / epsilon (0.05)",
    )
    p.add_argument(
        "--judge-by",
        choices=("model", "model+prompt"),
        default=argparse.SUPPRESS,
        help="fastchat: what names a judge (model)",
    )
    p.add_argument(
        "--weak", type=float, default=argparse.SUPPRESS, help="arena_hard: P(A) of A>B (0.75)"
    )
    p.add_argument(
        "--baseline",
        action="append",
        default=argparse.SUPPRESS,
        metavar="[PATH=]MODEL",
        help="arena_hard: the baseline model of records without one (v0.1): one model, or "
        "PATH=MODEL for the files at or under PATH (repeatable)",
    )
    p.add_argument(
        "--judge",
        default=argparse.SUPPRESS,
        help="lm_eval: judge name (default: the file's folder)",
    )
    p.add_argument(
        "--swap-suffix",
        default=argparse.SUPPRESS,
        help="lm_eval: task-name suffix of the swapped task (_swap)",
    )
    p.add_argument(
        "--label-a", default=argparse.SUPPRESS, help="crowdkit: the label meaning answer A wins"
    )
    p.add_argument(
        "--label-tie", default=argparse.SUPPRESS, help="crowdkit: the label meaning a tie"
    )
    p.add_argument(
        "--columns",
        default=argparse.SUPPRESS,
        metavar="ROLE=COLUMN,...",
        help="crowdkit: the table's names of task, worker, label (and gold), e.g. "
        "task=question,worker=worker,label=answer",
    )
    p.add_argument(
        "--gold",
        choices=("auto", "target", "acc", "none"),
        default=argparse.SUPPRESS,
        help="lm_eval: where the gold comes from: target (a choice index or a choice's text), "
        "acc (two choices), auto (target, else acc; the default), none (no gold)",
    )
    p.add_argument(
        "--duplicates",
        choices=("error", "first", "last"),
        default="error",
        help="a cell read twice (a rerun appended, two copies of a run): refuse naming both "
        "records (error, the default), or keep the first / last record read",
    )
    p.set_defaults(func=_run_import)

    p = sub.add_parser(
        "bpe",
        help="one judge in both orders: BPE per item and SCOPE's certified selection",
        description=textwrap.dedent(
            """\
            For a panel holding a judge's verdicts in both orders ('original' and 'swap'),
            write the Bidirectional Preference Entropy of every item (SCOPE paper). With
            --calibration (item, gold of labelled items), calibrate SCOPE's threshold at
            --alpha on them and accept the other items whose BPE is at most the threshold
            (expected false discovery rate among accepted verdicts <= alpha)."""
        ),
        epilog="example:\n  judgerisk bpe panel.csv -o bpe.csv --calibration labels.csv --alpha 0.1",
        formatter_class=fmt,
    )
    p.add_argument("panel", help="panel file with 'original' and 'swap' conditions")
    p.add_argument("-o", "--output", required=True, help="table to write (.csv/.parquet/.jsonl)")
    p.add_argument("--calibration", help="labelled items: a table with columns item, gold")
    p.add_argument("--alpha", type=float, default=0.1, help="SCOPE's target risk level")
    p.set_defaults(func=_run_bpe)
