"""``judgerisk run``: rerun a chapter of the book on your own file or parameters."""

from __future__ import annotations

import argparse
import os
import sys
import textwrap

from judgerisk.cli.common import EXIT_OK, Command, add_overwrite, command_record

__all__ = ["COMMAND", "Run"]


class Run(Command):
    name = "run"
    help = "rerun a chapter of the book on your own file or parameters"
    description = textwrap.dedent(
        """\
        Execute one chapter notebook of the installed judgerisk with papermill, with
        parameters of its 'parameters' cell replaced, and write the one file -o names: the
        executed notebook (.ipynb) or the chapter's page as the book shows it (.html). Relative file paths are taken from the current
        directory. Only the installed judgerisk's chapters run (named on stderr), never a
        book found near the current directory; another folder of chapters, or any .md
        notebook, runs only when given with --from (its code runs on your machine). Each
        --param value is checked against the type and sign of its default before the kernel
        starts."""
    )
    epilog = (
        "examples:\n  judgerisk run 04 --param panel_path=my.csv -o my_scur.html\n"
        "  judgerisk run 04 --param panel_path=my.csv -o my_scur.ipynb\n"
        "  judgerisk run 09 --list\n"
        "  judgerisk run 01 --param n_items=500 --param seed=3 -o panel.ipynb"
    )

    def add_arguments(self, p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "chapter",
            nargs="?",
            default=None,
            help="chapter number (e.g. 04) or name (e.g. scur_signals); not a path (see --from)",
        )
        p.add_argument(
            "--from",
            dest="source",
            metavar="PATH",
            default=None,
            help="run chapters from this folder (NN_name.md), or this one .md notebook, instead "
            "of the installed judgerisk's; their code runs on your machine (default: the "
            "installed judgerisk's chapters)",
        )
        p.add_argument(
            "--param",
            action="append",
            metavar="NAME=VALUE",
            help="a parameter (repeatable); VALUE is a Python literal or a plain string",
        )
        p.add_argument(
            "-o",
            "--output",
            help="the one file to write: the executed notebook (.ipynb) or its readable page "
            "(.html, as the book shows it)",
        )
        p.add_argument("--small", action="store_true", help="start from the small test parameters")
        p.add_argument(
            "--book-url",
            metavar="URL",
            default=os.environ.get("JUDGERISK_BOOK_URL") or None,
            help="for an .html page: the built book's address (http(s):// or file://, e.g. "
            "file:///home/me/judgerisk/_build/html); references to other chapters become links "
            "there (default: $JUDGERISK_BOOK_URL; without it they name the chapter by number)",
        )
        p.add_argument(
            "--list", action="store_true", help="print the chapter's parameters and exit"
        )
        add_overwrite(p)

    def run(self, args: argparse.Namespace) -> int:
        from judgerisk._book.render import time_warning
        from judgerisk._book.rerun import (
            chapter_parameters,
            find_chapter,
            parse_assignment,
            run_chapter,
        )

        if args.chapter is None and not (args.source and str(args.source).endswith(".md")):
            raise ValueError("name a chapter (e.g. 04), or a notebook with --from PATH.md")
        params = dict(parse_assignment(p) for p in args.param or [])
        if args.list:
            for p in chapter_parameters(find_chapter(args.chapter, args.source)):
                note = f"  # {p.help}" if p.help else ""
                print(f"{p.name} = {p.default}{note}")
            return EXIT_OK
        if args.output is None:
            raise ValueError(
                "-o/--output is required (the executed .ipynb, or the page .html, to write)"
            )
        md = find_chapter(args.chapter, args.source)
        warning = time_warning(md.stem, args.small)
        if warning:
            print(warning, file=sys.stderr, flush=True)
        out, seconds = run_chapter(
            args.chapter,
            args.output,
            params,
            small=args.small,
            overwrite=args.overwrite,
            source=args.source,
            announce=lambda doing: print(
                f"judgerisk run: {doing} ...", file=sys.stderr, flush=True
            ),
            record=command_record(args, {"notebook": (md, None)}),
            book_url=args.book_url,
        )
        print(f"wrote {out} ({seconds:.0f} s): ran {md}", file=sys.stderr)
        return EXIT_OK


COMMAND = Run()
