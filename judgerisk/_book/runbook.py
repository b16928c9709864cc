"""Execute the book's jupytext notebooks with papermill and assemble the Jupyter Book.

The notebooks in ``notebooks/`` are MyST markdown (jupytext). Each has a cell tagged
``parameters`` holding the full-run defaults, and declares the small parameters used by
the tests in its front matter (``judgerisk: test_parameters: {...}``).

``python -m judgerisk._book.runbook [NOTEBOOK ...] --profile small|default``
executes the given notebooks (all of ``notebooks/*.md`` by default) into
``_build/executed/<profile>/`` — never back into ``notebooks/`` — and
``--build-book`` then stages the executed copies with ``book/``, ``_config.yml`` and
``_toc.yml`` and runs ``jupyter-book build`` with warnings as errors (``--stage-only`` only
lays out those sources in ``_build/site-src``).

Every executed notebook carries its provenance record (:mod:`judgerisk._provenance`) in
``metadata["judgerisk"]["provenance"]`` and ends with a small footer cell (judgerisk's version,
the date and the parameters), so each book page says how it was computed.
The runner does not assume where the package is installed: it works on the book's source
folder found by :func:`find_book_root` (``--root``, else ``$JUDGERISK_BOOK``, else the nearest
folder at or above the working directory holding ``_toc.yml`` and ``notebooks/``, else the
source checkout of an editable install when it holds them). When
``JUDGERISK_DATA`` is unset, :func:`main` points it at ``../shared/data`` beside that folder if it
exists (the layout of a fresh clone), so the real-data chapters find the public data.
"""

from __future__ import annotations

import argparse
import ast
import io
import json
import os
import shutil
import subprocess
import sys
import time
import tokenize
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judgerisk._util.safe_write import atomic_write

__all__ = [
    "find_book_root",
    "notebook_paths",
    "read_notebook",
    "test_parameters",
    "execute",
    "stage_book",
    "build_book",
    "read_timings",
    "page_footer",
    "Parameter",
    "chapter_parameters",
    "parameters_markdown",
    "main",
]

PROFILES = ("small", "default")
#: Chapter sources: ``NN_name.md`` (chapters) and ``A1_name.md`` (appendices, after them).
CHAPTER_GLOB = "[0-9A]*[0-9]_*.md"
BOOK_ENV_VAR = "JUDGERISK_BOOK"


def _is_book_root(folder: Path) -> bool:
    return (folder / "_toc.yml").is_file() and (folder / "notebooks").is_dir()


def find_book_root(start: str | Path | None = None) -> Path:
    """The book's source folder (holding ``_toc.yml`` and ``notebooks/``).

    ``$JUDGERISK_BOOK`` when set, else the nearest folder at or above ``start`` (default: the
    working directory) that holds both; without ``start``, finally the source checkout of an
    editable install when it holds both (so ``judgerisk run`` works from any directory). An
    installed package has no such checkout: nothing is assumed about where it lives.

    Raises
    ------
    FileNotFoundError
        When no such folder is found.
    """
    if os.environ.get(BOOK_ENV_VAR):
        root = Path(os.environ[BOOK_ENV_VAR]).expanduser().resolve()
        if not (root / "_toc.yml").is_file():
            raise FileNotFoundError(f"${BOOK_ENV_VAR}={root} holds no _toc.yml")
        return root
    here = Path(start or Path.cwd()).resolve()
    for cand in (here, *here.parents):
        if _is_book_root(cand):
            return cand
    checkout = Path(__file__).resolve().parents[2]  # an editable install's source checkout
    if start is None and _is_book_root(checkout):
        return checkout
    raise FileNotFoundError(
        f"no book sources (_toc.yml and notebooks/) at or above {here}; run from the "
        f"repository, pass --root, or set {BOOK_ENV_VAR}"
    )


def __getattr__(name: str) -> Path:
    if name == "REPO_ROOT":  # the book root, found from the working directory on each access
        return find_book_root()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def notebook_paths(root: Path | None = None) -> list[Path]:
    """The chapter sources ``notebooks/NN_*.md`` then ``A1_*.md`` of the book at ``root``."""
    return sorted(((root or find_book_root()) / "notebooks").glob(CHAPTER_GLOB))


def read_notebook(md_path: str | Path) -> Any:
    """A chapter source read with jupytext (a ``nbformat.NotebookNode``)."""
    import jupytext

    return jupytext.read(md_path)


def test_parameters(md_path: Path) -> dict:
    """The small parameters a chapter declares for the tests (front matter)."""
    meta = read_notebook(md_path).metadata.get("judgerisk", {})
    return dict(meta.get("test_parameters", {}))


def execute(
    md_path: str | Path,
    out_dir: str | Path | None = None,
    profile: str = "small",
    parameters: dict | None = None,
    cwd: str | Path | None = None,
    record: dict | None = None,
) -> tuple[Path, float]:
    """Run one MyST notebook with papermill and write the executed ``.ipynb``.

    Parameters
    ----------
    md_path : path-like
        The jupytext MyST notebook.
    out_dir : path-like, optional
        Folder for the executed copy; default ``_build/executed/<profile>``.
    profile : {"small", "default"}
        ``small`` injects the notebook's ``test_parameters``; ``default`` keeps the
        parameters cell as written.
    parameters : dict, optional
        Extra parameters injected on top of the profile's.
    cwd : path-like, optional
        Working directory of the kernel (default: the notebook's folder).
    record : dict, optional
        The provenance record to attach (:func:`judgerisk._provenance.make_record`; ``judgerisk
        run`` passes its command line's); default: this runbook call's.

    Returns
    -------
    (pathlib.Path, float)
        The executed notebook and the seconds it took.
    """
    import papermill

    from judgerisk._provenance import make_record

    if profile not in PROFILES:
        raise ValueError(f"profile must be one of {PROFILES}, got {profile!r}")
    md_path = Path(md_path).resolve()
    out_dir = Path(out_dir) if out_dir else find_book_root() / "_build" / "executed" / profile
    out_dir.mkdir(parents=True, exist_ok=True)
    params = test_parameters(md_path) if profile == "small" else {}
    params.update(parameters or {})
    nb = read_notebook(md_path)
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    out = out_dir / f"{md_path.stem}.ipynb"
    start = time.perf_counter()

    if record is None:
        record = make_record(
            ["python", "-m", "judgerisk._book.runbook", md_path.name, "--profile", profile],
            {"notebook": md_path.name, "profile": profile, **params},
            {"notebook": (md_path, None)},
        )
    papermill.execute_notebook(
        nb,
        str(out),
        parameters=params,
        kernel_name="python3",
        cwd=str(cwd or md_path.parent),
        progress_bar=False,
        report_mode=False,
        extra_arguments=["--IPKernelApp.log_level=CRITICAL"],  # see report.QUIET_KERNEL
    )
    _show_parameters_that_ran(out, params)
    _hide_prose_of_parts_not_run(out)
    _attach_provenance(out, record, params)
    seconds = time.perf_counter() - start
    _record_timing(out_dir, md_path.stem, seconds, profile)
    return out, seconds


TIMINGS = "_timings.json"


def _record_timing(out_dir: Path, stem: str, seconds: float, profile: str) -> None:
    """Keep each chapter's last run time next to the executed copies (for the book's table)."""
    path = Path(out_dir) / TIMINGS
    data = json.loads(path.read_text()) if path.exists() else {}
    data[stem] = {"seconds": round(seconds, 1), "profile": profile}
    text = json.dumps(data, indent=1, sort_keys=True)
    atomic_write(path, lambda tmp: tmp.write_text(text))


def read_timings(executed_dir: Path) -> dict:
    """``{chapter stem: {"seconds": float, "profile": str}}`` of the runs in ``executed_dir``."""
    path = Path(executed_dir) / TIMINGS
    return json.loads(path.read_text()) if path.exists() else {}


def _all_parameters(ipynb: Path, injected: dict) -> dict:
    """The parameters cell's defaults, overridden by the injected ones."""
    import papermill

    try:
        found = papermill.inspect_notebook(str(ipynb))
    except Exception:  # noqa: BLE001 - a notebook without a parameters cell
        found = {}
    values = {name: spec.get("default") for name, spec in found.items()}
    values.update({k: repr(v) for k, v in injected.items()})
    return values


def page_footer(record: dict, parameters: dict) -> str:
    """The small markdown footer of a book page: version, date and parameters."""
    version = record["judgerisk"]["version"]
    commit = record["judgerisk"].get("git_commit")
    shown = ", ".join(f"`{k} = {v}`" for k, v in parameters.items())
    return (
        f"<small>Computed with judgerisk {version}"
        + (f" (commit {commit[:12]})" if commit else "")
        + f" on {record['started'][:10]}"
        + (f"; parameters: {shown}" if shown else "")
        + ".</small>"
    )


def _attach_provenance(ipynb: Path, record: dict, injected: dict) -> None:
    """Store the provenance record in the notebook's metadata and add the page footer."""
    import nbformat

    from judgerisk._provenance import finish_record

    nb = nbformat.read(ipynb, as_version=4)

    final = finish_record(record, {"parameters": _all_parameters(ipynb, injected)})
    nb.metadata.setdefault("judgerisk", {})["provenance"] = final
    footer = nbformat.v4.new_markdown_cell(
        page_footer(final, final["settings"]["parameters"]),
        metadata={"tags": ["judgerisk-provenance"]},
    )
    nb.cells.append(footer)
    atomic_write(ipynb, lambda tmp: nbformat.write(nb, str(tmp)))


def _hide_prose_of_parts_not_run(ipynb: Path) -> None:
    """Prose tagged ``show-if:KEY`` is removed when KEY was glued false (see judgerisk._book.render)."""
    import nbformat

    from judgerisk._book.render import apply_conditions

    nb = nbformat.read(ipynb, as_version=4)
    if apply_conditions(nb):
        atomic_write(ipynb, lambda tmp: nbformat.write(nb, str(tmp)))


def parameters_that_ran(source: str, injected: dict) -> str:
    """The parameters cell's source with the values a run injected, each default kept in words.

    ``n_items = 2000  # items`` run with ``n_items=300`` reads ``n_items = 300  # items
    (default: 2000)``, so the cell a reader sees at the top of a rerun page is what ran.
    """
    import ast

    lines = source.splitlines()
    edits = []
    for node in ast.parse(source).body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
            continue
        target = node.targets[0]
        if not (isinstance(target, ast.Name) and target.id in injected):
            continue
        value = node.value
        if value.lineno != node.end_lineno or value.end_col_offset is None:
            continue  # a value over several lines is left as written
        edits.append((value.lineno - 1, value.col_offset, value.end_col_offset, target.id))
    for row, start, end, name in edits:
        line = lines[row]
        default = line[start:end]
        shown = repr(injected[name])
        if shown == default:
            continue
        rest = line[end:]
        note = f"(default: {default})"
        rest = f"{rest}; {note}" if rest.strip().startswith("#") else f"  # {note}"
        lines[row] = line[:start] + shown + rest
    return "\n".join(lines) + ("\n" if source.endswith("\n") else "")


def _show_parameters_that_ran(ipynb: Path, injected: dict) -> None:
    """Write the values that ran into the visible parameters cell; drop papermill's copy.

    Papermill runs the chapter's ``parameters`` cell (the defaults) and then an injected cell
    with the run's values; a reader of the page would see the defaults. The parameters cell
    now shows what ran, and the injected cell, whose assignments it now holds, is removed.
    """
    import nbformat

    nb = nbformat.read(ipynb, as_version=4)
    if not injected:
        return
    cells = []
    for cell in nb.cells:
        tags = cell.metadata.get("tags", [])
        if "injected-parameters" in tags:
            continue
        if cell.cell_type == "code" and "parameters" in tags:
            cell.source = parameters_that_ran(cell.source, injected)
        cells.append(cell)
    nb.cells = cells
    atomic_write(ipynb, lambda tmp: nbformat.write(nb, str(tmp)))


def stage_book(executed_dir: Path, stage_dir: Path, root: Path | None = None) -> Path:
    """Lay out a buildable book: config, toc, ``book/`` pages and executed notebooks."""
    root = root or find_book_root()
    if stage_dir.exists():
        shutil.rmtree(stage_dir)
    stage_dir.mkdir(parents=True)
    for name in ("_config.yml", "_toc.yml"):
        shutil.copy2(root / name, stage_dir / name)
    shutil.copytree(root / "book", stage_dir / "book")
    (stage_dir / "notebooks").mkdir()
    sources = {p.stem for p in notebook_paths(root)}
    missing = sorted(s for s in sources if not (executed_dir / f"{s}.ipynb").exists())
    if missing:
        raise FileNotFoundError(f"notebooks not executed yet (run them first): {missing}")
    for stem in sources:
        shutil.copy2(executed_dir / f"{stem}.ipynb", stage_dir / "notebooks" / f"{stem}.ipynb")
    page = parameters_markdown(notebook_paths(root), read_timings(executed_dir))
    atomic_write(stage_dir / "book" / "_chapter_parameters.md", lambda tmp: tmp.write_text(page))
    from judgerisk._book.render import chapter_titles, machine_description, times_markdown

    titles = chapter_titles(root / "notebooks")
    times = times_markdown(read_timings(executed_dir), machine_description(), titles)
    atomic_write(stage_dir / "book" / "_chapter_times.md", lambda tmp: tmp.write_text(times))
    return stage_dir


def _copy_mathjax(stage_dir: Path) -> None:
    """Serve MathJax 3 from the book itself (``_static/mathjax``): formulas render offline."""
    from judgerisk._book.render import mathjax_dir

    shutil.copytree(mathjax_dir(), stage_dir / "_mathjax" / "mathjax")


def build_book(executed_dir: Path, out_dir: Path | None = None, root: Path | None = None) -> Path:
    """Stage and build the HTML book with ``jupyter-book build -W -n --keep-going``.

    Returns the path of the built ``index.html``. Raises ``RuntimeError`` (with the
    build log's tail) when the build fails or a warning is raised.
    """
    root = root or find_book_root()
    stage = root / "_build" / "site-src"
    stage_book(Path(executed_dir), stage, root)
    _copy_mathjax(stage)
    cmd = [
        str(Path(sys.executable).with_name("jupyter-book")),
        "build",
        "-W",
        "-n",
        "--keep-going",
        "--config",
        str(stage / "_config.yml"),
        str(stage),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=stage)
    if proc.returncode != 0:
        raise RuntimeError(
            f"jupyter-book build failed (exit {proc.returncode}):\n{proc.stdout[-4000:]}\n"
            f"{proc.stderr[-4000:]}"
        )
    html = stage / "_build" / "html"
    _downloadable_sources(root, html)
    if out_dir is not None:
        out_dir = Path(out_dir)
        if out_dir.exists():
            shutil.rmtree(out_dir)
        shutil.copytree(html, out_dir)
        html = out_dir
    index = html / "index.html"
    if not index.exists():
        raise RuntimeError(f"the build reported success but {index} is missing")
    return index


def _downloadable_sources(root: Path, html: Path) -> None:
    """Replace the book's *Download → .ipynb* files by notebooks a learner can read and run.

    Jupyter Book offers the staged executed notebook, whose Markdown is raw MyST; each is
    rewritten by :func:`judgerisk._book.render.downloadable_notebook` (roles resolved, a pointer
    to ``judgerisk run`` first).
    """
    import nbformat

    from judgerisk._book.render import downloadable_notebook

    for source in sorted((html / "_sources" / "notebooks").glob("*.ipynb")):
        nb = nbformat.read(source, as_version=4)
        chapter = source.stem.split("_", 1)[0].lstrip("0")
        readable = downloadable_notebook(nb, chapter, root)

        def write(tmp: Path, notebook: Any = readable) -> None:
            nbformat.write(notebook, str(tmp))

        atomic_write(source, write)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m judgerisk._book.runbook",
        description="Execute the book's notebooks with papermill and build the Jupyter Book.",
    )
    parser.add_argument(
        "notebooks", nargs="*", type=Path, help="notebooks/*.md to run (default: all)"
    )
    parser.add_argument(
        "--profile",
        choices=PROFILES,
        default="small",
        help="small: the notebooks' test parameters; default: full run",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="folder for executed notebooks (default _build/executed/<profile>)",
    )
    parser.add_argument(
        "--build-book",
        action="store_true",
        help="after executing, build the HTML book from the executed copies",
    )
    parser.add_argument(
        "--html-out",
        type=Path,
        default=None,
        help="copy the built HTML here (default: _build/html-<profile>)",
    )
    parser.add_argument(
        "--skip-execute",
        action="store_true",
        help="only build the book from notebooks executed earlier",
    )
    parser.add_argument(
        "--stage-only",
        action="store_true",
        help="only lay out the book's sources (_build/site-src) from the executed notebooks",
    )
    parser.add_argument(
        "--root",
        type=Path,
        default=None,
        help=f"the book's source folder (default: ${BOOK_ENV_VAR}, else found from the cwd)",
    )
    args = parser.parse_args(argv)
    root = find_book_root(args.root) if args.root else find_book_root()
    fallback = root.parent / "shared" / "data"
    if not os.environ.get("JUDGERISK_DATA") and fallback.is_dir():
        os.environ["JUDGERISK_DATA"] = str(fallback)  # inherited by the papermill kernels
    out_dir = args.out or root / "_build" / "executed" / args.profile
    paths = args.notebooks or notebook_paths(root)
    total = 0.0
    if not args.skip_execute:
        for path in paths:
            _, seconds = execute(path, out_dir, profile=args.profile)
            total += seconds
            print(f"executed {path.name:40s} {seconds:7.1f} s", flush=True)
        print(f"all notebooks: {total:.1f} s", flush=True)
    if args.stage_only:
        stage = stage_book(out_dir, root / "_build" / "site-src", root)
        print(f"book staged: {stage}", flush=True)
        return 0
    if args.build_book:
        start = time.perf_counter()
        html_out = args.html_out or root / "_build" / f"html-{args.profile}"
        index = build_book(out_dir, html_out, root)
        print(f"book built in {time.perf_counter() - start:.1f} s: {index}", flush=True)
        from judgerisk._book.checks import check_book

        executed = [out_dir / f"{Path(p).stem}.ipynb" for p in notebook_paths(root)]
        problems = check_book(executed, index.parent)
        for problem in problems:
            print(f"book check: {problem}", file=sys.stderr)
        if problems:
            print(
                f"the book has {len(problems)} problem(s) a reader must not see (above)",
                file=sys.stderr,
            )
            return 1
        print("book checked: no error, stderr output, warning, absolute path or empty glue")
    return 0


# ----------------------------------------------------------------- chapter parameters
@dataclass(frozen=True)
class Parameter:
    """One assignment of a chapter's parameters cell."""

    name: str
    default: str  # the source text of the value
    help: str  # the trailing comment, if any


def _parameters_cell(md_path: Path) -> str:
    nb = read_notebook(md_path)
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
    ``timings`` is :func:`read_timings` of the executed copies.
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


if __name__ == "__main__":
    raise SystemExit(main())
