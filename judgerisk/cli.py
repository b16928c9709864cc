"""The ``judgerisk`` command line: import, simulate, extract, perturb, score, select, report, run,
bpe.

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

Errors go to stderr as one ``judgerisk <command>: error: ...`` line (plus the validation details),
warnings as ``judgerisk <command>: warning: ...`` lines. Every output path is checked before any
work (extension, folder, writable, not an input, and not existing unless ``--overwrite``), every
output is written atomically, and every output carries its provenance record
(:mod:`judgerisk.provenance`), which ``judgerisk verify`` checks. Before a long step a command
says what it is doing in one line; progress bars are shown when stderr is a terminal
(``--progress`` / ``--no-progress`` decide otherwise).
"""

from __future__ import annotations

import argparse
import sys
import textwrap
import time
import warnings

from judgerisk import __version__, rerun
from judgerisk._progress import want_progress
from judgerisk.options import (
    ACCELERATIONS,
    CONDITIONS,
    PROTOCOLS,
    InputError,
    OptionError,
    ReportSettings,
    ScoreSettings,
    SelectSettings,
    check_alpha,
)

# numpy, pandas and the estimators are imported inside the commands, so that building the parser
# (``judgerisk --help``, a usage error) stays fast.

__all__ = ["main", "build_parser", "EXIT_OK", "EXIT_RUNTIME", "EXIT_USAGE", "EXIT_DEPENDENCY"]

EXIT_OK, EXIT_RUNTIME, EXIT_USAGE, EXIT_DEPENDENCY, EXIT_INTERRUPTED = 0, 1, 2, 3, 130

_EPILOG = """\
examples:
  judgerisk import fastchat model_judgment/*_pair.jsonl -o panel.csv
  judgerisk simulate -o panel.csv --n-items 1000 --seed 0
  judgerisk perturb items.jsonl -o perturbed.jsonl --conditions original swap label1 format1
  judgerisk score panel.csv -o scores.csv --n-seeds 5
  judgerisk select scores.csv --calibration labelled.csv --alpha 0.1 -o decisions.csv
  judgerisk report panel.csv -o report.html
  judgerisk run 04 --param panel_path=my.csv -o my_scur.ipynb
  judgerisk bpe one_judge.csv -o bpe.csv --calibration labelled.csv --alpha 0.1
  judgerisk verify report.html
  judgerisk extract --help

outputs: a command refuses an existing output file unless --overwrite is given (then it is
replaced atomically); it never writes over one of its inputs. Progress bars are shown when
stderr is a terminal (--progress / --no-progress to choose).

exit codes: 0 ok, 1 runtime error, 2 usage error or bad input (e.g. a panel that breaks the
data contract), 3 optional dependency missing, 130 interrupted.
"""


def _conditions(text: str) -> tuple[str, ...]:
    from judgerisk.families import check_conditions

    conds = tuple(c.strip() for c in text.split(",") if c.strip())
    try:
        return check_conditions(conds)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(
            f"conditions must be comma-separated names including 'original' ({exc}); got {text!r}"
        ) from None


def _alpha(text: str) -> float:
    try:
        return check_alpha(text)
    except OptionError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _integer(text: str, lo: int, what: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
    if value < lo:
        raise argparse.ArgumentTypeError(f"expected {what}, got {text}")
    return value


def _positive_int(text: str) -> int:
    return _integer(text, 1, "a positive integer")


def _count(text: str) -> int:
    return _integer(text, 0, "an integer >= 0")


def _seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}") from None
    if not 0 <= value < 2**32:
        raise argparse.ArgumentTypeError(f"expected an integer in [0, 2**32), got {text}")
    return value


class _Formatter(argparse.RawDescriptionHelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
    """Descriptions as written, and every option's default in its help.

    Flags, required options and options whose default is "not given" say their default in
    their own words instead of ``(default: False)`` / ``(default: None)``.
    """

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.required or action.default is None or isinstance(action.default, bool):
            return action.help
        return super()._get_help_string(action)


_ARGV_KEYS = ("func", "command")


def _record(args: argparse.Namespace, inputs: dict) -> dict:
    """The provenance record of this command line (every option, defaults included)."""
    from judgerisk.provenance import make_record

    params = {k: v for k, v in vars(args).items() if k not in _ARGV_KEYS}
    return make_record(
        ["judgerisk", *args.argv], {"command": args.command, **params}, inputs, args.started
    )


def _say(args: argparse.Namespace, doing: str) -> None:
    """One line on stderr saying what the command does next (before a long step)."""
    print(f"judgerisk {args.command}: {doing} ...", file=sys.stderr, flush=True)


def _panel_size(panel) -> str:
    return (
        f"{panel['item'].nunique()} items x {panel['judge'].nunique()} judges x "
        f"{panel['condition'].nunique()} conditions ({len(panel)} rows)"
    )


def _add_overwrite(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--overwrite",
        action="store_true",
        help="replace existing output files (default: an existing output is refused)",
    )


def _add_progress(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="show progress bars on stderr (default: only when stderr is a terminal)",
    )


# --------------------------------------------------------------------------- simulate
def _run_simulate(args: argparse.Namespace) -> int:
    from judgerisk.provenance import check_output_path, finish_record
    from judgerisk.provenance import write_table_with_record as _write_output
    from judgerisk.simulate import calibration_labels, simulate_panel

    check_output_path(args.output, overwrite=args.overwrite)
    if args.labels is not None:
        check_output_path(
            args.labels, option="--labels", inputs=(args.output,), overwrite=args.overwrite
        )
    elif args.n_labelled is not None:
        raise OptionError("--n-labelled needs --labels (the file the labels are written to)")
    if args.n_labelled is not None and args.n_labelled > args.n_items:
        raise OptionError(
            f"--n-labelled {args.n_labelled} exceeds --n-items {args.n_items} (the items to label)"
        )
    sim = simulate_panel(
        n_items=args.n_items, n_judges=args.n_judges, conditions=args.conditions, seed=args.seed
    )
    data = sim.data if args.gold else sim.data.drop(columns="gold")
    record = _record(args, {})
    settings = {"n_items": int(data["item"].nunique()), "rows": len(data)}
    out = _write_output(
        data, args.output, finish_record(record, settings), overwrite=args.overwrite
    )
    if args.labels is not None:
        labels = calibration_labels(sim.data, args.n_labelled, args.seed)
        labels_record = finish_record(record, {"part": "labels"})
        labels_record["parameters"]["part"] = "labels"
        _write_output(labels, args.labels, labels_record, overwrite=args.overwrite)
    print(
        f"wrote {out}: {data['item'].nunique()} items x {data['judge'].nunique()} judges x "
        f"{data['condition'].nunique()} conditions ({len(data)} rows)"
        + ("" if args.labels is None else f"; labels of {len(labels)} items to {args.labels}"),
        file=sys.stderr,
    )
    return EXIT_OK


# --------------------------------------------------------------------------- perturb
def _run_perturb(args: argparse.Namespace) -> int:
    from judgerisk.extract.perturb import perturb_items
    from judgerisk.provenance import check_output_path, finish_record
    from judgerisk.provenance import write_table_with_record as _write_output

    template = args.template if str(args.template).endswith(".json") else None
    inputs = tuple(p for p in (args.items, template) if p is not None)
    check_output_path(args.output, inputs=inputs, overwrite=args.overwrite)
    table = perturb_items(args.items, args.conditions, template=args.template, seed=args.seed)
    files: dict[str, tuple[str, int | None]] = {
        "items": (args.items, int(table["item"].nunique()))
    }
    if template is not None:
        files["template"] = (template, None)
    record = _record(args, files)
    settings = {"rows": len(table), "n_items": int(table["item"].nunique())}
    _write_output(table, args.output, finish_record(record, settings))
    print(
        f"wrote {args.output}: {table['item'].nunique()} items x "
        f"{table['condition'].nunique()} conditions ({len(table)} rows)",
        file=sys.stderr,
    )
    return EXIT_OK


def _add_perturb(sub: argparse._SubParsersAction) -> None:
    from judgerisk.options import PERTURB_CONDITIONS

    p = sub.add_parser(
        "perturb",
        help="write the items under each condition as the judge is shown them",
        description=textwrap.dedent(
            """            Render items (item, prompt, answer_a, answer_b[, gold]) under the chosen conditions
            exactly as `judgerisk extract` does, and write one row per item and condition: the
            system and user messages, the assistant prefill, the labels and verdict strings to
            read, the answers as shown and what the perturbation changed. For judges run with
            other tools. A condition is 'original', 'swap', <family><k> or swap_<family><k>
            with a perturbation family: order, rubric, label (answer labels), format (layout,
            drawn from --seed), verbosity (a content-free sentence: odd k pads A, even k pads
            B), or a plug-in's. The same items, template, conditions and seed give the same
            file."""
        ),
        epilog="example:\n  judgerisk perturb items.jsonl -o perturbed.jsonl --conditions original "
        "swap label1 format1 verbosity1 verbosity2 --seed 0",
        formatter_class=_Formatter,
    )
    p.add_argument("items", help="items file (.jsonl, .json, .csv or .parquet)")
    p.add_argument("-o", "--output", required=True, help="file to write (.jsonl, .csv, .parquet)")
    p.add_argument(
        "--conditions",
        nargs="+",
        type=_condition,
        default=list(PERTURB_CONDITIONS),
        metavar="COND",
        help="conditions (must include original)",
    )
    p.add_argument("--template", default="pairwise_v1", help="shipped template name or JSON file")
    p.add_argument("--seed", type=_seed, default=0, help="perturbation seed (format, verbosity)")
    _add_overwrite(p)
    p.set_defaults(func=_run_perturb)


def _condition(text: str) -> str:
    from judgerisk.families import is_declared

    if not is_declared(text):
        raise argparse.ArgumentTypeError(
            f"unknown condition {text!r}: a condition is 'original', 'swap', <family><k> or "
            "swap_<family><k> with a registered perturbation family"
        )
    return text


# --------------------------------------------------------------------------- score
_ACCELERATE_HELP = (
    "LMM fitting: 'anderson' (Anderson-accelerated sweeps, same fixed point as the "
    "plain sweeps, converges where they drift), 'lbfgs' (the exact minimiser) or 'none' (the plain "
    "sweeps of the latent measurement model's fit)"
)


def _run_score(args: argparse.Namespace) -> int:
    from judgerisk.certified import accelerate_options, score_panel
    from judgerisk.determinism import one_blas_thread
    from judgerisk.panel import load_panel
    from judgerisk.provenance import check_output_path, finish_record
    from judgerisk.provenance import write_table_with_record as _write_output

    check_output_path(args.output, inputs=(args.panel,), overwrite=args.overwrite)
    aggregators = tuple(a.strip() for a in args.aggregators.split(",") if a.strip())
    _check_aggregators(aggregators)
    panel = load_panel(args.panel)
    record = _record(args, {"panel": (args.panel, len(panel))})
    _say(args, f"scoring {_panel_size(panel)} with {args.n_seeds} repetition(s)")
    with one_blas_thread():  # identical numbers whatever the BLAS thread count (verify)
        table = score_panel(
            panel,
            n_seeds=args.n_seeds,
            seed=args.seed,
            aggregators=aggregators,
            max_seeds=args.max_seeds,
            scur_options=accelerate_options(args.accelerate),
            progress=want_progress(args.progress),
            protocol=args.protocol,
        )
    seeds = table.attrs.get("seeds", [])
    from judgerisk.orientation import count_ties

    settings = {"seeds": seeds, "n_items": len(table), "columns": list(table.columns)}
    settings["ties"] = count_ties(panel)
    _write_output(
        table.reset_index(),
        args.output,
        finish_record(record, settings),
        overwrite=args.overwrite,
    )
    print(
        f"wrote {args.output}: {len(table)} items; columns {', '.join(table.columns)}",
        file=sys.stderr,
    )
    return EXIT_OK


def _check_aggregators(names: tuple[str, ...]) -> None:
    from judgerisk.aggregators.aggregate import AGGREGATORS

    unknown = [n for n in names if n not in AGGREGATORS]
    if unknown:
        raise OptionError(
            f"--aggregators: unknown aggregator(s) {unknown}; choose among {list(AGGREGATORS)}"
        )


# --------------------------------------------------------------------------- select
def _run_select(args: argparse.Namespace) -> int:
    from judgerisk.certified import select_items
    from judgerisk.panel import read_table
    from judgerisk.provenance import check_output_path, finish_record
    from judgerisk.provenance import write_table_with_record as _write_output

    check_output_path(args.output, inputs=(args.scores, args.calibration), overwrite=args.overwrite)
    scores = read_table(args.scores)
    calibration = read_table(args.calibration)
    record = _record(
        args,
        {"scores": (args.scores, len(scores)), "calibration": (args.calibration, len(calibration))},
    )
    decisions = select_items(
        scores,
        calibration,
        alpha=args.alpha,
        score=args.score,
        verdict=args.verdict,
        allow_any_score=args.allow_any_score,
    )
    attrs = dict(decisions.attrs)
    _write_output(decisions, args.output, finish_record(record, attrs), overwrite=args.overwrite)
    test = decisions[decisions["role"] == "test"]
    n_acc = int(test["accepted"].sum())
    lam = attrs.get("threshold", float("nan"))
    n_cal = int((decisions["role"] == "calibration").sum())
    if attrs.get("feasible", False):
        print(
            f"{args.score} threshold {lam:.6g} calibrated on {n_cal} labelled items: accepted "
            f"{n_acc} of {len(test)} items (expected false discovery rate <= {args.alpha}); "
            f"wrote {args.output}",
            file=sys.stderr,
        )
    else:
        print(
            f"no feasible {args.score} threshold on {n_cal} labelled items at alpha "
            f"{args.alpha}: accepted 0 of {len(test)} items (all abstained); wrote {args.output}",
            file=sys.stderr,
        )
    return EXIT_OK


# --------------------------------------------------------------------------- report
def _run_report(args: argparse.Namespace) -> int:
    from judgerisk.report import render_report

    out = render_report(
        args.panel,
        args.output,
        parameters=ReportSettings(
            n_seeds=args.n_seeds,
            seed=args.seed,
            alpha=args.alpha,
            n_splits=args.n_splits,
            accelerate=args.accelerate,
        ).as_parameters(),
        timeout=args.timeout,
        command=["judgerisk", *args.argv],
        progress=want_progress(args.progress),
        overwrite=args.overwrite,
        announce=lambda doing: _say(args, doing),
    )
    print(f"wrote {out}", file=sys.stderr)
    return EXIT_OK


# --------------------------------------------------------------------------- verify
def _run_verify(args: argparse.Namespace) -> int:
    from judgerisk.verify import verify

    _say(args, f"checking the inputs of {args.output} and recomputing it from its record")
    result = verify(args.output, parser=build_parser())
    if result.status == "reproduced":
        print(f"{args.output}: reproduced")
        return EXIT_OK
    head = "does not reproduce" if result.status == "differs" else "cannot tell"
    print(f"{args.output}: {head}:", file=sys.stderr)
    for line in result.messages:
        print(f"  {line}", file=sys.stderr)
    return result.exit_code


_EXTRACT_HELP = "extract verdict-token log-probabilities (needs the 'extract' extra)"


def _add_extract(sub: argparse._SubParsersAction, full: bool = True) -> None:
    """Register ``extract`` from :mod:`judgerisk.extract.cli`, or a stub parser that explains.

    With ``full=False`` only its name and one-line help are registered, without importing the
    extraction code (``judgerisk --help`` and the other commands stay fast).
    """
    if not full:
        sub.add_parser("extract", help=_EXTRACT_HELP, add_help=False)
        return
    try:
        from judgerisk.extract import cli as extract_cli
    except ImportError as exc:  # torch / transformers missing, or module absent
        reason = str(exc)
        p = sub.add_parser(
            "extract",
            help=_EXTRACT_HELP,
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


def build_parser(*, extract: bool = True) -> argparse.ArgumentParser:
    """The argument parser (exposed for documentation and tests).

    ``extract=False`` lists the ``extract`` command without importing its options (what
    :func:`main` does unless the command is ``extract``).
    """
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
    parser.add_argument("--version", action="version", version=f"judgerisk {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    fmt = _Formatter

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
    p.add_argument("--n-items", type=_positive_int, default=1000, help="items to simulate")
    p.add_argument("--n-judges", type=_positive_int, default=5, help="judges of the panel")
    p.add_argument("--seed", type=_seed, default=0, help="random seed")
    p.add_argument(
        "--conditions",
        type=_conditions,
        default=",".join(CONDITIONS),
        help="comma-separated conditions",
    )
    p.add_argument(
        "--no-gold",
        dest="gold",
        action="store_false",
        help="leave the gold column out (default: kept)",
    )
    p.add_argument(
        "--labels",
        help="also write the gold labels (item, gold) to this file (default: not written)",
    )
    p.add_argument(
        "--n-labelled",
        type=_count,
        default=None,
        help="label only a random sample of this many items in --labels, the calibration "
        "sample of `judgerisk select` (default: every item, which leaves none to decide)",
    )
    _add_overwrite(p)
    p.set_defaults(func=_run_simulate)

    _add_extract(sub, full=extract)
    _add_perturb(sub)

    p = sub.add_parser(
        "score",
        help="per-item risk table: SCUR, z's, baselines, aggregator verdicts",
        description=textwrap.dedent(
            """\
            Score every item of a panel. SCUR and its components are cross-fitted by repeated
            5-fold cross-fitting: each of --n-seeds repetitions partitions the items into 5
            folds and evaluates each fold once (another fold is the reference set, the other
            three the fit set), so every item gets exactly --n-seeds out-of-fold scores, whose
            mean is its score (gold, if present, is never read). --protocol paper uses the
            paper's independent random 50/30/20 splits instead. PE, VE, MSP and the
            aggregators' verdicts use the original condition."""
        ),
        epilog="example:\n  judgerisk score panel.csv -o scores.csv --n-seeds 5 "
        "--aggregators majority,dawid_skene",
        formatter_class=fmt,
    )
    p.add_argument("panel", help="panel file (.csv, .parquet, .jsonl)")
    p.add_argument("-o", "--output", required=True, help="score table to write")
    ss = ScoreSettings()  # the score command's one set of defaults
    p.add_argument(
        "--n-seeds",
        type=_positive_int,
        default=ss.n_seeds,
        help="repetitions of the cross-fitting (each scores every item once)",
    )
    p.add_argument(
        "--protocol",
        choices=PROTOCOLS,
        default=ss.protocol,
        help="'kfold': repeated 5-fold cross-fitting; 'paper': the paper's independent "
        "random fit/reference/evaluation splits (some items may stay unscored)",
    )
    # removed with the top-up: refused with a one-line error (exit 2) if given
    p.add_argument("--max-seeds", type=_positive_int, default=None, help=argparse.SUPPRESS)
    p.add_argument("--seed", type=_seed, default=ss.seed, help="first split's seed")
    p.add_argument(
        "--aggregators",
        default=",".join(ss.aggregators),
        help="comma-separated aggregators whose verdicts (and *_posterior) to add",
    )
    p.add_argument(
        "--accelerate",
        choices=ACCELERATIONS,
        default=ss.accelerate,
        help=_ACCELERATE_HELP,
    )
    _add_progress(p)
    _add_overwrite(p)
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
            verdicts is <= alpha (the book's chapter "Certified panel decisions")."""
        ),
        epilog="example:\n  judgerisk select scores.csv --calibration labelled.csv --alpha 0.1 "
        "-o decisions.csv --score scur --verdict majority",
        formatter_class=fmt,
    )
    p.add_argument("scores", help="score table from `judgerisk score`")
    p.add_argument("--calibration", required=True, help="labelled items: columns item, gold")
    sel = SelectSettings()  # the select command's one set of defaults
    p.add_argument("--alpha", type=_alpha, default=sel.alpha, help="target false discovery rate")
    p.add_argument("--score", default=sel.score, help="risk column to threshold (larger = riskier)")
    p.add_argument("--verdict", default=sel.verdict, help="verdict column to certify")
    p.add_argument(
        "--allow-any-score",
        action="store_true",
        default=sel.allow_any_score,
        help="accept a --score column that is not one of judgerisk's risk scores",
    )
    p.add_argument("-o", "--output", required=True, help="decision table to write")
    _add_overwrite(p)
    p.set_defaults(func=_run_select)

    p = sub.add_parser(
        "report",
        help="self-contained HTML report on a panel file",
        description="Run the packaged report notebook with papermill on a panel file and "
        "write a self-contained HTML page (tables and base64-embedded figures). A panel of "
        "one judge in both orders ('original' and 'swap') gets the one-judge report: BPE per "
        "item and SCOPE's certified verdicts.",
        epilog="example:\n  judgerisk report panel.csv -o report.html --n-seeds 3",
        formatter_class=fmt,
    )
    p.add_argument("panel", help="panel file (.csv, .parquet, .jsonl)")
    p.add_argument("-o", "--output", required=True, help="HTML file to write")
    rs = ReportSettings()  # the report's one set of defaults
    p.add_argument(
        "--n-seeds",
        type=_positive_int,
        default=rs.n_seeds,
        help="repetitions of 5-fold cross-fitting averaged in SCUR",
    )
    p.add_argument("--seed", type=_seed, default=rs.seed, help="first split's seed")
    p.add_argument("--alpha", type=_alpha, default=rs.alpha, help="target false discovery rate")
    p.add_argument(
        "--n-splits",
        type=_positive_int,
        default=rs.n_splits,
        help="calibration/test splits (gold only)",
    )
    p.add_argument(
        "--accelerate", choices=ACCELERATIONS, default=rs.accelerate, help=_ACCELERATE_HELP
    )
    p.add_argument("--timeout", type=_positive_int, default=600, help="seconds per cell")
    _add_progress(p)
    _add_overwrite(p)
    p.set_defaults(func=_run_report)
    rerun.add_subcommand(sub)
    from judgerisk.importers.cli import add_subcommands

    add_subcommands(sub, fmt)  # import, bpe

    p = sub.add_parser(
        "verify",
        help="check that an output reproduces from its provenance record",
        description=textwrap.dedent(
            """\
            Read the provenance record of a report, a score table, a decision table or a
            simulated panel, check that each input still has its recorded sha256 and that
            the record's command line and sizes agree with it, recompute the output with the
            recorded parameters and compare every cell (a report: every visible number and
            figure of the page regenerated). Notebooks and extraction folders: cannot tell.
            Exit 0: reproduced. Exit 1: some cells differ (listed, with the tolerance).
            Exit 2: cannot tell (an input is missing or changed, or no record).
            Different library versions are a warning, not a failure."""
        ),
        epilog="example:\n  judgerisk verify report.html\n  judgerisk verify scores.csv",
        formatter_class=fmt,
    )
    p.add_argument("output", help="a judgerisk output (.html, .csv, .parquet, .jsonl)")
    p.set_defaults(func=_run_verify)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``judgerisk`` console script; returns the exit code."""
    started = time.time()
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(extract=bool(argv) and argv[0] == "extract")
    args = parser.parse_args(argv)  # exits with 2 on usage errors
    args.argv, args.started = argv, started
    prog = f"judgerisk {args.command}"

    def _show(message, category, filename, lineno, file=None, line=None):
        print(f"{prog}: warning: {message}", file=sys.stderr)

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("default")
            warnings.filterwarnings("ignore", message="IProgress not found")
            warnings.showwarning = _show
            import numpy as np

            with np.errstate(all="ignore"):
                return int(args.func(args) or EXIT_OK)
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except ModuleNotFoundError as exc:
        from judgerisk.extras import missing_dependency

        print(f"{prog}: error: missing dependency: {missing_dependency(exc)}", file=sys.stderr)
        return EXIT_DEPENDENCY
    except (InputError, FileNotFoundError, ValueError, KeyError) as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except Exception as exc:  # noqa: BLE001 - the CLI must turn any failure into exit code 1
        print(f"{prog}: error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_RUNTIME


if __name__ == "__main__":
    sys.exit(main())
