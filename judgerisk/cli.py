"""The ``judgerisk`` command line: simulate, extract, score, select, report.

Exit codes
----------
====  ===========================================================================
0     success
1     runtime error (an unexpected failure while computing; the message says where)
2     usage error or bad input: wrong arguments, a missing or malformed file, a panel that
      breaks the data contract (the panel validation's message is printed), bad values
3     an optional dependency is missing (``extract`` needs the ``extract`` extra; ``report``
      needs the ``book`` extra: papermill, jupytext, markdown-it-py)
130   interrupted (Ctrl-C)
====  ===========================================================================

Errors go to stderr as one ``judgerisk <command>: error: ...`` line (plus the validation details).
"""

from __future__ import annotations

import argparse
import sys
import textwrap
import warnings

import numpy as np

from judgerisk.panel import CONDITIONS, PanelError, read_table, write_table

__all__ = ["main", "build_parser", "EXIT_OK", "EXIT_RUNTIME", "EXIT_USAGE", "EXIT_DEPENDENCY"]

EXIT_OK, EXIT_RUNTIME, EXIT_USAGE, EXIT_DEPENDENCY, EXIT_INTERRUPTED = 0, 1, 2, 3, 130

_EPILOG = """\
examples:
  judgerisk simulate -o panel.csv --n-items 1000 --seed 0
  judgerisk score panel.csv -o scores.csv --n-seeds 5
  judgerisk select scores.csv --calibration labelled.csv --alpha 0.1 -o decisions.csv
  judgerisk report panel.csv -o report.html
  judgerisk extract --help

exit codes: 0 ok, 1 runtime error, 2 usage error or bad input (e.g. a panel that breaks the
data contract), 3 optional dependency missing, 130 interrupted.
"""


def _conditions(text: str) -> tuple[str, ...]:
    conds = tuple(c.strip() for c in text.split(",") if c.strip())
    unknown = [c for c in conds if c not in CONDITIONS]
    if unknown or "original" not in conds:
        raise argparse.ArgumentTypeError(
            f"conditions must be a comma-separated subset of {','.join(CONDITIONS)} including "
            f"'original'; got {text!r}"
        )
    return conds


def _alpha(text: str) -> float:
    value = float(text)
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"alpha must lie in (0, 1), got {text}")
    return value


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text}")
    return value


# --------------------------------------------------------------------------- simulate
def _run_simulate(args: argparse.Namespace) -> int:
    from judgerisk.panel import save_panel
    from judgerisk.simulate import simulate_panel

    sim = simulate_panel(
        n_items=args.n_items, n_judges=args.n_judges, conditions=args.conditions, seed=args.seed
    )
    data = sim.data if args.gold else sim.data.drop(columns="gold")
    out = save_panel(data, args.output)
    if args.labels is not None:
        labels = sim.data.drop_duplicates("item")[["item", "gold"]]
        write_table(labels, args.labels)
    print(
        f"wrote {out}: {data['item'].nunique()} items x {data['judge'].nunique()} judges x "
        f"{data['condition'].nunique()} conditions ({len(data)} rows)",
        file=sys.stderr,
    )
    return EXIT_OK


# --------------------------------------------------------------------------- score
_ACCELERATE_HELP = (
    "LMM fitting: 'anderson' (default; Anderson-accelerated sweeps, same fixed point as the "
    "plain sweeps, several times faster) or 'none' (the plain sweeps of Methods reference §2)"
)


def _scur_options(accelerate: str) -> dict:
    return {"lmm_params": {"accelerate": None if accelerate == "none" else accelerate}}


def _run_score(args: argparse.Namespace) -> int:
    from judgerisk.certified import score_panel
    from judgerisk.panel import load_panel

    panel = load_panel(args.panel)
    table = score_panel(
        panel,
        n_seeds=args.n_seeds,
        seed=args.seed,
        aggregators=tuple(args.aggregators.split(",")) if args.aggregators else (),
        scur_options=_scur_options(args.accelerate),
        progress=args.progress,
    )
    write_table(table.reset_index(), args.output)
    print(
        f"wrote {args.output}: {len(table)} items; columns {', '.join(table.columns)}",
        file=sys.stderr,
    )
    return EXIT_OK


# --------------------------------------------------------------------------- select
def _run_select(args: argparse.Namespace) -> int:
    from judgerisk.certified import select_items

    scores = read_table(args.scores)
    calibration = read_table(args.calibration)
    decisions = select_items(
        scores,
        calibration,
        alpha=args.alpha,
        score=args.score,
        verdict=args.verdict,
    )
    write_table(decisions, args.output)
    test = decisions[decisions["role"] == "test"]
    n_acc = int(test["accepted"].sum())
    lam = decisions.attrs.get("threshold", float("nan"))
    print(
        f"{args.score} threshold {lam:.6g} calibrated on {int((decisions['role'] == 'calibration').sum())} "
        f"labelled items: accepted {n_acc} of {len(test)} items "
        f"(expected false discovery rate <= {args.alpha}); wrote {args.output}",
        file=sys.stderr,
    )
    return EXIT_OK


# --------------------------------------------------------------------------- report
def _run_report(args: argparse.Namespace) -> int:
    from judgerisk.report import render_report

    out = render_report(
        args.panel,
        args.output,
        parameters={
            "n_seeds": args.n_seeds,
            "seed": args.seed,
            "alpha": args.alpha,
            "n_splits": args.n_splits,
            "accelerate": args.accelerate,
        },
        timeout=args.timeout,
    )
    print(f"wrote {out}", file=sys.stderr)
    return EXIT_OK


def _add_extract(sub: argparse._SubParsersAction) -> None:
    """Register ``extract`` from :mod:`judgerisk.extract.cli`, or a stub parser that explains."""
    try:
        from judgerisk.extract import cli as extract_cli
    except ImportError as exc:  # torch / transformers missing, or module absent
        reason = str(exc)
        p = sub.add_parser(
            "extract",
            help="extract verdict-token log-probabilities (needs the 'extract' extra)",
            description="Unavailable here: " + reason,
        )
        p.add_argument("rest", nargs=argparse.REMAINDER)

        def _missing(args: argparse.Namespace) -> int:
            print(
                f"judgerisk extract: error: not available ({reason}); install judgerisk[extract]",
                file=sys.stderr,
            )
            return EXIT_DEPENDENCY

        p.set_defaults(func=_missing)
        return
    extract_cli.register(sub)
    parser = sub.choices.get("extract")
    if parser is not None and parser.get_default("func") is None:
        parser.set_defaults(func=extract_cli.run)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for documentation and tests)."""
    parser = argparse.ArgumentParser(
        prog="judgerisk",
        description=textwrap.dedent(
            """\
            Instance-level risk for LLM-judge panels (SCUR) and certified panel decisions
            (SCOPE calibration: accepted verdicts carry an expected false discovery rate <= alpha).
            A panel file is a long table item, judge, condition, logit and/or p [, gold]
            (.csv, .parquet or .jsonl)."""
        ),
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    fmt = argparse.RawDescriptionHelpFormatter

    p = sub.add_parser(
        "simulate",
        help="write a simulated panel file",
        description="Draw a judge panel from the simulator and write it (csv/parquet/jsonl).",
        epilog="example:\n  judgerisk simulate -o panel.csv --n-items 500 --n-judges 5 --seed 1\n"
        "  judgerisk simulate -o panel.parquet --conditions original,swap --no-gold "
        "--labels gold.csv",
        formatter_class=fmt,
    )
    p.add_argument("-o", "--output", required=True, help="panel file to write")
    p.add_argument("--n-items", type=_positive_int, default=1000)
    p.add_argument("--n-judges", type=_positive_int, default=5)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--conditions",
        type=_conditions,
        default=CONDITIONS,
        help="comma-separated conditions (default: all six)",
    )
    p.add_argument("--no-gold", dest="gold", action="store_false", help="leave the gold column out")
    p.add_argument("--labels", help="also write the gold labels (item, gold) to this file")
    p.set_defaults(func=_run_simulate)

    _add_extract(sub)

    p = sub.add_parser(
        "score",
        help="per-item risk table: SCUR, z's, baselines, aggregator verdicts",
        description=textwrap.dedent(
            """\
            Score every item of a panel. SCUR and its components are cross-fitted: each of
            --n-seeds random fit/reference/evaluation splits scores its reference and
            evaluation items, and an item's score is the mean over the seeds that scored it
            (gold, if present, is never read). PE, VE, MSP and the aggregators' verdicts use
            the original condition."""
        ),
        epilog="example:\n  judgerisk score panel.csv -o scores.csv --n-seeds 5 "
        "--aggregators majority,dawid_skene",
        formatter_class=fmt,
    )
    p.add_argument("panel", help="panel file (.csv, .parquet, .jsonl)")
    p.add_argument("-o", "--output", required=True, help="score table to write")
    p.add_argument("--n-seeds", type=_positive_int, default=5)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--aggregators",
        default="majority,dawid_skene",
        help="comma-separated aggregators whose verdicts to add (default majority,dawid_skene)",
    )
    p.add_argument(
        "--accelerate", choices=("anderson", "none"), default="anderson", help=_ACCELERATE_HELP
    )
    p.add_argument("--progress", action="store_true", help="show a progress bar")
    p.set_defaults(func=_run_score)

    p = sub.add_parser(
        "select",
        help="accept / abstain per item with a certified false discovery rate",
        description=textwrap.dedent(
            """\
            Calibrate the SCOPE threshold on labelled items and accept the other items whose
            risk score is at most the threshold. The calibration file holds item and gold
            (A/B) for some items of the score table; those items calibrate, the rest are
            decided. On exchangeable items the expected false discovery rate of the accepted
            verdicts is <= alpha (Methods reference §7–8)."""
        ),
        epilog="example:\n  judgerisk select scores.csv --calibration labelled.csv --alpha 0.1 "
        "-o decisions.csv --score scur --verdict majority",
        formatter_class=fmt,
    )
    p.add_argument("scores", help="score table from `judgerisk score`")
    p.add_argument("--calibration", required=True, help="labelled items: columns item, gold")
    p.add_argument("--alpha", type=_alpha, default=0.1, help="target FDR (default 0.1)")
    p.add_argument("--score", default="scur", help="risk column to threshold (default scur)")
    p.add_argument(
        "--verdict", default="majority", help="verdict column to certify (default majority)"
    )
    p.add_argument("-o", "--output", required=True, help="decision table to write")
    p.set_defaults(func=_run_select)

    p = sub.add_parser(
        "report",
        help="self-contained HTML report on a panel file",
        description="Run the packaged report notebook with papermill on a panel file and "
        "write a self-contained HTML page (tables and base64-embedded figures).",
        epilog="example:\n  judgerisk report panel.csv -o report.html --n-seeds 3",
        formatter_class=fmt,
    )
    p.add_argument("panel", help="panel file (.csv, .parquet, .jsonl)")
    p.add_argument("-o", "--output", required=True, help="HTML file to write")
    p.add_argument("--n-seeds", type=_positive_int, default=3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--alpha", type=_alpha, default=0.1)
    p.add_argument(
        "--n-splits", type=_positive_int, default=1000, help="calibration/test splits (gold only)"
    )
    p.add_argument(
        "--accelerate", choices=("anderson", "none"), default="anderson", help=_ACCELERATE_HELP
    )
    p.add_argument("--timeout", type=_positive_int, default=600, help="seconds per cell")
    p.set_defaults(func=_run_report)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``judgerisk`` console script; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)  # exits with 2 on usage errors
    prog = f"judgerisk {args.command}"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("default")
            with np.errstate(all="ignore"):
                return int(args.func(args) or EXIT_OK)
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except ModuleNotFoundError as exc:
        print(f"{prog}: error: missing dependency: {exc}", file=sys.stderr)
        return EXIT_DEPENDENCY
    except (PanelError, FileNotFoundError, ValueError, KeyError) as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except Exception as exc:  # noqa: BLE001 - the CLI must turn any failure into exit code 1
        print(f"{prog}: error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_RUNTIME


if __name__ == "__main__":
    sys.exit(main())
