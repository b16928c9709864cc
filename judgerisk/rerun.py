"""Rerun a chapter of the book on your own file: ``judgerisk run 04 --param panel_path=my.csv``.

A chapter is a parameterised notebook: its cell tagged ``parameters`` holds the defaults of
the full run. :func:`run_chapter` finds the chapter by its number (or name), checks every
parameter against that cell, turns relative file paths into absolute ones (so the command
works from any directory), runs it with papermill and writes the executed notebook
atomically, never over an input. :func:`chapter_parameters` reads the parameters cells; the
book's "Reproducing and rerunning" page is generated from it.
"""

from __future__ import annotations

import argparse
import ast
import io
import os
import sys
import tempfile
import tokenize
from dataclasses import dataclass
from pathlib import Path

from judgerisk import render, runbook

__all__ = [
    "ENV_CHAPTERS",
    "Parameter",
    "chapter_parameters",
    "chapter_sources",
    "find_chapter",
    "parameters_markdown",
    "parse_assignment",
    "run_chapter",
    "add_subcommand",
]

#: Environment variable naming a folder of chapter sources (``NN_name.md``) to use instead
#: of the book's ``notebooks/`` (found by :func:`judgerisk.runbook.find_book_root`).
ENV_CHAPTERS = "JUDGERISK_CHAPTERS"


@dataclass(frozen=True)
class Parameter:
    """One assignment of a chapter's parameters cell."""

    name: str
    default: str  # the source text of the value
    help: str  # the trailing comment, if any


def chapter_sources() -> list[Path]:
    """The chapter sources, in order: ``$JUDGERISK_CHAPTERS`` or the book's ``notebooks/``.

    The book is found by :func:`judgerisk.runbook.find_book_root` (``$JUDGERISK_BOOK``, else
    the nearest folder at or above the working directory holding ``_toc.yml``).

    Raises
    ------
    FileNotFoundError
        When no chapter source can be found (e.g. judgerisk installed without the book).
    """
    env = os.environ.get(ENV_CHAPTERS)
    if env:
        folder = Path(env).expanduser()
    else:
        try:
            folder = runbook.find_book_root() / "notebooks"
        except FileNotFoundError as err:
            raise FileNotFoundError(
                f"{err}; or point {ENV_CHAPTERS} at the book's notebooks folder"
            ) from None
    found = sorted(folder.glob(runbook.CHAPTER_GLOB))
    if not found:
        origin = f"${ENV_CHAPTERS}" if env else "the book's sources"
        raise FileNotFoundError(
            f"no chapter notebooks (NN_name.md) in {folder} (from {origin}); point "
            f"{ENV_CHAPTERS} at the book's notebooks folder"
        )
    return found


def _names(path: Path) -> set[str]:
    """What a chapter is called by, upper case: ``04_SCUR_SIGNALS``, ``SCUR_SIGNALS``, ``A1``."""
    number, _, name = path.stem.upper().partition("_")
    return {path.stem.upper(), name, number}


def find_chapter(key: str | os.PathLike) -> Path:
    """A chapter source from its number (``4``, ``"04"``), name, or path to a ``.md`` file."""
    path = Path(key)
    if path.suffix == ".md" and path.exists():
        return path.resolve()
    text = str(key).strip()
    sources = chapter_sources()
    if text.isdigit():
        matches = [p for p in sources if p.name.split("_", 1)[0] == f"{int(text):02d}"]
    else:  # a name, or an appendix's number ("A1")
        stem = text.removesuffix(".md")
        matches = [p for p in sources if stem.upper() in _names(p)]
    if len(matches) != 1:
        names = ", ".join(p.stem for p in sources)
        raise ValueError(f"unknown chapter {text!r}; the chapters are: {names}")
    return matches[0]


def _parameters_cell(md_path: Path) -> str:
    nb = runbook.read_notebook(md_path)
    cells = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    if len(cells) != 1:
        raise ValueError(f"{md_path.name}: expected one cell tagged 'parameters', got {len(cells)}")
    return cells[0].source


def chapter_parameters(md_path: str | os.PathLike) -> list[Parameter]:
    """The assignments of a chapter's ``parameters`` cell, with their trailing comments."""
    source = _parameters_cell(Path(md_path))
    comments = {
        tok.start[0]: tok.string.lstrip("#").strip()
        for tok in tokenize.generate_tokens(io.StringIO(source).readline)
        if tok.type == tokenize.COMMENT
    }
    params = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            value = ast.get_source_segment(source, node.value) or ""
            params.append(
                Parameter(node.targets[0].id, value, comments.get(node.end_lineno or 0, ""))
            )
    return params


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def parameters_markdown(sources: list[Path], timings: dict | None = None) -> str:
    """The book's table of every chapter's parameters and run time (MyST markdown).

    Generated from the parameters cells when the book is built, so it cannot go stale.
    ``timings`` is :func:`judgerisk.runbook.read_timings` of the executed copies.
    """
    timings = timings or {}
    lines = []
    for src in sources:
        number, _, rest = src.stem.partition("_")
        title = next(
            (
                line.lstrip("# ").strip()
                for line in src.read_text().splitlines()
                if line.startswith("# ")
            ),
            rest.replace("_", " "),
        )
        run = timings.get(src.stem)
        when = (
            f"{run['seconds']:.0f} s with the {run['profile']} parameters"
            if run
            else "not measured in this build"
        )
        lines += [
            f"### {number} · {title}",
            "",
            f"`judgerisk run {number} --param NAME=VALUE -o out.ipynb` · run time: {when}.",
            "",
            "| parameter | default | meaning |",
            "|---|---|---|",
        ]
        for p in chapter_parameters(src):
            lines.append(f"| `{p.name}` | `{_md_cell(p.default)}` | {_md_cell(p.help) or '–'} |")
        lines.append("")
    return "\n".join(lines)


def parse_assignment(text: str) -> tuple[str, object]:
    """``"name=value"`` → ``(name, value)``; the value is a Python literal, else a string."""
    name, sep, raw = text.partition("=")
    name = name.strip()
    if not sep or not name.isidentifier():
        raise ValueError(f"--param needs NAME=VALUE, got {text!r}")
    raw = raw.strip()
    try:
        value = ast.literal_eval(raw)
    except (ValueError, SyntaxError):
        value = raw
    return name, value


def _absolute_paths(params: dict, cwd: Path) -> dict:
    """File parameters (``*_path``, ``*_dir``) relative to ``cwd`` become absolute, and must exist."""
    out = dict(params)
    for name, value in params.items():
        if not (name.endswith(("_path", "_dir")) and isinstance(value, str) and value):
            continue
        path = (cwd / Path(value).expanduser()).resolve()
        if not path.exists():
            raise FileNotFoundError(f"parameter {name}: {path} does not exist")
        out[name] = str(path)
    return out


def run_chapter(
    chapter: str | os.PathLike,
    output: str | os.PathLike,
    parameters: dict | None = None,
    small: bool = False,
    overwrite: bool = False,
    cwd: str | os.PathLike | None = None,
) -> tuple[Path, float]:
    """Run one chapter with papermill on the reader's parameters and write the notebook.

    Parameters
    ----------
    chapter : str or path-like
        Chapter number (``"04"``), name (``"scur_signals"``) or ``.md`` source.
    output : path-like
        The executed ``.ipynb`` to write (relative to ``cwd``). Written atomically; an
        existing file is kept unless ``overwrite``; never one of the inputs. The chapter
        rendered as the book shows it (:func:`judgerisk.render.render_html`) is written
        beside it, with the suffix ``.html``.
    parameters : dict, optional
        Values for names of the chapter's parameters cell (other names are an error).
        ``*_path`` and ``*_dir`` values are resolved against ``cwd`` and must exist.
    small : bool, default False
        Start from the chapter's small test parameters (seconds instead of minutes).
    overwrite : bool, default False
    cwd : path-like, optional
        Folder that relative paths refer to (default: the current directory).

    Returns
    -------
    (pathlib.Path, float)
        The notebook written and the seconds the run took.
    """
    cwd = Path(cwd or Path.cwd()).resolve()
    source = find_chapter(chapter)
    known = {p.name for p in chapter_parameters(source)}
    params = dict(parameters or {})
    unknown = sorted(set(params) - known)
    if unknown:
        raise ValueError(
            f"{source.stem} has no parameter {unknown[0]!r}; its parameters are: "
            f"{', '.join(sorted(known))}"
        )
    params = _absolute_paths(params, cwd)
    out = (cwd / Path(output).expanduser()).resolve()
    if out.suffix != ".ipynb":
        raise ValueError(f"the output must be a .ipynb file, got {out.name}")
    inputs = {source.resolve()} | {Path(v) for k, v in params.items() if k.endswith("_path")}
    if out in inputs:
        raise ValueError(f"refusing to write the output over an input: {out}")
    page = out.with_suffix(".html")  # the readable page, written beside the notebook
    for target in (out, page):
        if target.exists() and not overwrite:
            raise ValueError(f"{target} exists; choose another name or pass --overwrite")
    if page in inputs:
        raise ValueError(f"refusing to write the output over an input: {page}")
    if not out.parent.is_dir():
        raise FileNotFoundError(f"output folder {out.parent} does not exist")
    with tempfile.TemporaryDirectory(dir=out.parent, prefix=".judgerisk-run-") as tmp:
        written, seconds = runbook.execute(
            source,
            tmp,
            profile="small" if small else "default",
            parameters=params,
        )
        os.replace(written, out)
    render.render_html(out, page, chapter=source.stem)
    return out, seconds


def _run_cli(args: argparse.Namespace) -> int:
    params = dict(parse_assignment(p) for p in args.param or [])
    if args.list:
        for p in chapter_parameters(find_chapter(args.chapter)):
            note = f"  # {p.help}" if p.help else ""
            print(f"{p.name} = {p.default}{note}")
        return 0
    if args.output is None:
        raise ValueError("-o/--output is required (the executed .ipynb to write)")
    warning = render.time_warning(find_chapter(args.chapter).stem, args.small)
    if warning:
        print(warning, file=sys.stderr, flush=True)
    out, seconds = run_chapter(
        args.chapter, args.output, params, small=args.small, overwrite=args.overwrite
    )
    print(f"wrote {out} ({seconds:.0f} s) and the page {out.with_suffix('.html')}")
    return 0


def add_subcommand(sub: argparse._SubParsersAction) -> None:
    """Register ``judgerisk run`` on the main command line's subparsers."""
    p = sub.add_parser(
        "run",
        help="rerun a chapter of the book on your own file or parameters",
        description="Execute one chapter notebook with papermill, with parameters of its "
        "'parameters' cell replaced, and write the executed notebook. Relative file paths "
        "are taken from the current directory.",
        epilog="examples:\n  judgerisk run 04 --param panel_path=my.csv -o my_scur.ipynb\n"
        "  judgerisk run 09 --list\n"
        "  judgerisk run 01 --param n_items=500 --param seed=3 -o panel.ipynb",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("chapter", help="chapter number (e.g. 04) or name (e.g. scur_signals)")
    p.add_argument(
        "--param",
        action="append",
        metavar="NAME=VALUE",
        help="a parameter (repeatable); VALUE is a Python literal or a plain string",
    )
    p.add_argument("-o", "--output", help="executed notebook to write (.ipynb)")
    p.add_argument("--small", action="store_true", help="start from the small test parameters")
    p.add_argument("--overwrite", action="store_true", help="replace an existing output file")
    p.add_argument("--list", action="store_true", help="print the chapter's parameters and exit")
    p.set_defaults(func=_run_cli)
