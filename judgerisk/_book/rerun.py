"""Rerun a chapter of the book on your own file: ``judgerisk run 04 --param panel_path=my.csv``.

A chapter is a parameterised notebook: its cell tagged ``parameters`` holds the defaults of
the full run. :func:`run_chapter` finds the chapter by its number (or name), checks every
parameter against that cell, turns relative file paths into absolute ones (so the command
works from any directory), runs it with papermill and writes the executed notebook
atomically, never over an input. :func:`chapter_parameters` reads the parameters cells; the
book's "Reproducing and rerunning" page is generated from it.
"""

from __future__ import annotations

import ast
import math
import os
import warnings
from collections.abc import Callable
from pathlib import Path

from judgerisk._book import render, runbook
from judgerisk._book.runbook import Parameter, chapter_parameters, parameters_markdown
from judgerisk._util.safe_write import atomic_write, private_folder

__all__ = [
    "ENV_CHAPTERS",
    "SHIPPED_BOOK",
    "Parameter",
    "chapter_parameters",
    "chapter_sources",
    "find_chapter",
    "installed_chapters",
    "check_parameter",
    "parameters_markdown",
    "parse_assignment",
    "run_chapter",
]

#: Environment variable naming a folder of chapter sources (``NN_name.md``) to use instead
#: of the book's ``notebooks/`` (found by :func:`judgerisk._book.runbook.find_book_root`).
ENV_CHAPTERS = "JUDGERISK_CHAPTERS"


#: Where a built wheel (or an install from the sdist) holds the book's sources: ``notebooks/``
#: (with ``notebooks/data/``), ``_toc.yml`` and ``book/`` (see ``pyproject.toml``).
SHIPPED_BOOK = "_book/sources"


def _package_dir() -> Path:
    """The folder of the installed ``judgerisk`` package (found without importing its face)."""
    import importlib.util

    spec = importlib.util.find_spec("judgerisk")
    assert spec is not None and spec.origin is not None  # this module is inside it
    return Path(spec.origin).resolve().parent


def installed_chapters() -> Path:
    """The chapter sources of the installed judgerisk.

    From a checkout (an editable install, or a clone on ``PYTHONPATH``), the book's
    ``notebooks/`` beside the package: the folder holding the ``judgerisk`` package also holds
    ``_toc.yml`` and ``notebooks/``. From a wheel, the copy of those sources the wheel carries
    inside the package (``judgerisk/_book/sources/notebooks``, with its ``data/``, the book's
    ``_toc.yml`` and its bibliography). Nothing is looked up from the working directory.

    Raises
    ------
    FileNotFoundError
        When this installation has no chapter sources (a package copied without them).
    """
    package = _package_dir()
    for root in (package / SHIPPED_BOOK, package.parent):
        if (root / "_toc.yml").is_file() and (root / "notebooks").is_dir():
            return root / "notebooks"
    raise FileNotFoundError(
        f"this judgerisk installation ({package}) has no chapter sources; reinstall it from "
        "a wheel or a clone of the book's repository (pip install judgerisk, or pip install "
        "-e .), or pass --from FOLDER (a folder of NN_name.md chapters whose code you trust)"
    )


def chapter_sources(folder: str | os.PathLike | None = None) -> list[Path]:
    """The chapter sources, in order: ``folder``, else ``$JUDGERISK_CHAPTERS``, else the
    installed judgerisk's (:func:`installed_chapters`).

    Only a folder named explicitly (the argument, ``--from`` on the command line, or the
    environment variable) replaces the installed chapters: a book found above the working
    directory is never used, so ``judgerisk run 04`` runs no one else's code.

    Raises
    ------
    FileNotFoundError
        When no chapter source can be found (e.g. judgerisk installed without the book).
    """
    env = os.environ.get(ENV_CHAPTERS)
    if folder is not None:
        folder, origin = Path(folder).expanduser(), "--from"
    elif env:
        folder, origin = Path(env).expanduser(), f"${ENV_CHAPTERS}"
    else:
        folder, origin = installed_chapters(), "the installed judgerisk"
    found = sorted(Path(folder).glob(runbook.CHAPTER_GLOB))
    if not found:
        raise FileNotFoundError(
            f"no chapter notebooks (NN_name.md) in {folder} (from {origin}); pass --from "
            "FOLDER with the book's notebooks"
        )
    return found


def _names(path: Path) -> set[str]:
    """What a chapter is called by, upper case: ``04_SCUR_SIGNALS``, ``SCUR_SIGNALS``, ``A1``."""
    number, _, name = path.stem.upper().partition("_")
    return {path.stem.upper(), name, number}


def find_chapter(key: str | os.PathLike, source: str | os.PathLike | None = None) -> Path:
    """A chapter source from its number (``4``, ``"04"``) or name, among :func:`chapter_sources`.

    ``source`` (``--from``) is a folder of chapters to use instead of the installed ones, or
    one ``.md`` notebook to run (then ``key`` is ignored). A path given as ``key`` is refused:
    running a file that is not one of judgerisk's chapters must be asked for with ``source``.
    """
    if source is not None and Path(source).suffix == ".md":
        if not Path(source).is_file():
            raise FileNotFoundError(f"--from {source}: no such notebook")
        return Path(source).resolve()
    text = str(key).strip()
    if text.endswith(".md") or os.sep in text:
        raise ValueError(
            f"{text!r} is a path, not a chapter number or name; to run a notebook that is not "
            "one of the installed judgerisk's chapters, pass it with --from PATH (its code "
            "runs on your machine)"
        )
    sources = chapter_sources(source)
    if text.isdigit():
        matches = [p for p in sources if p.name.split("_", 1)[0] == f"{int(text):02d}"]
    else:  # a name, or an appendix's number ("A1")
        stem = text.removesuffix(".md")
        matches = [p for p in sources if stem.upper() in _names(p)]
    if len(matches) != 1:
        names = ", ".join(p.stem for p in sources)
        raise ValueError(f"unknown chapter {text!r}; the chapters are: {names}")
    return matches[0]


def check_parameter(name: str, value: object, default_text: str, comment: str = "") -> object:
    """``value`` for parameter ``name`` checked against its default's type and sign.

    A default ``None`` (or one that is not a literal) accepts anything, and ``None`` is
    accepted for any parameter (the chapters use it for "not given" / "off"). Otherwise the value
    must have the default's type (an int where the default is an int, a number where it is a
    float, a bool where it is a bool, ...), be finite, and be >= 0 (> 0) where the default is
    >= 0 (> 0); a parameter whose comment in the parameters cell says "0 or more" (a count
    that may be zero, e.g. chapter 07's ``n_spammers``) is >= 0 whatever its default. A number
    given for a text parameter becomes its text.

    Raises
    ------
    ValueError
        One line naming the parameter, the value and what the default asks for.
    """
    try:
        default = ast.literal_eval(default_text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return value
    if default is None or value is None:  # None: "not given" / "off", as the defaults use it
        return value
    bad = f"--param {name}={value!r}: expected {{}} (the default is {default_text})"
    if isinstance(default, str):
        return value if isinstance(value, str) else str(value)
    if isinstance(default, bool) or isinstance(value, bool):
        if type(value) is not type(default):
            want = "True or False" if isinstance(default, bool) else "a number, not True/False"
            raise ValueError(bad.format(want))
        return value
    if isinstance(default, int | float):
        want = "a whole number" if isinstance(default, int) else "a number"
        if isinstance(default, int):
            ok_type = isinstance(value, int)
        else:
            ok_type = isinstance(value, int | float)
        if not ok_type:
            raise ValueError(bad.format(want))
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(bad.format(f"a finite {want.removeprefix('a ')}"))
        zero_ok = "0 or more" in comment
        if default > 0 and value <= 0 and not (zero_ok and value == 0):  # type: ignore[operator]
            raise ValueError(bad.format(f"{want} {'>= 0' if zero_ok else '> 0'}"))
        if default >= 0 and value < 0:  # type: ignore[operator]
            raise ValueError(bad.format(f"{want} >= 0"))
        return value
    if isinstance(default, list | tuple) and isinstance(value, list | tuple):
        return value
    if type(value) is not type(default):
        raise ValueError(bad.format(f"a {type(default).__name__}"))
    return value


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


def _absolute_paths(
    params: dict, cwd: Path, book: Path | None = None, note: Callable[[str], object] | None = None
) -> dict:
    """File parameters (``*_path``, ``*_dir``) relative to ``cwd`` become absolute, and must exist.

    A relative path that is not in ``cwd`` but names a file of the book's sources ``book`` (the
    chapters' own data, e.g. ``notebooks/data/my_judge.csv`` as the chapters write it) is that
    file, and ``note`` is told so: a wheel install runs the chapters' examples from any folder.
    """
    out = dict(params)
    for name, value in params.items():
        if not (name.endswith(("_path", "_dir")) and isinstance(value, str) and value):
            continue
        given = Path(value).expanduser()
        path = (cwd / given).resolve()
        shipped = (book / given).resolve() if book is not None else None
        if not path.exists() and not given.is_absolute() and shipped and shipped.exists():
            path = shipped
            if note is not None:
                note(f"parameter {name}: {value} is not in {cwd}; using the book's copy {path}")
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
    source: str | os.PathLike | None = None,
    announce: Callable[[str], object] | None = None,
    record: dict | None = None,
    book_url: str | None = None,
) -> tuple[Path, float]:
    """Run one chapter with papermill on the reader's parameters and write the notebook.

    Parameters
    ----------
    chapter : str or path-like
        Chapter number (``"04"``), name (``"scur_signals"``) or ``.md`` source.
    output : path-like
        The one file to write (relative to ``cwd``): the executed notebook (``.ipynb``), or
        the chapter rendered as the book shows it (``.html``,
        :func:`judgerisk._book.render.render_html`: a self-contained page, read offline). Written
        atomically; an existing file is kept unless ``overwrite``; never one of the inputs.
    parameters : dict, optional
        Values for names of the chapter's parameters cell (other names are an error).
        ``*_path`` and ``*_dir`` values are resolved against ``cwd`` and must exist.
    small : bool, default False
        Start from the chapter's small test parameters (seconds instead of minutes).
    overwrite : bool, default False
    cwd : path-like, optional
        Folder that relative paths refer to (default: the current directory).
    source : path-like, optional
        A folder of chapters, or one ``.md`` notebook, to run instead of the installed
        judgerisk's chapters (:func:`find_chapter`); its code runs on this machine.
    announce : callable, optional
        Called with one line saying which notebook runs and from where, once everything is
        checked and before the kernel starts (the command line prints it); and with one line
        for each relative file parameter found in the book's sources rather than in ``cwd``.
    record : dict, optional
        The provenance record the notebook carries (:func:`judgerisk._provenance.make_record`;
        ``judgerisk run`` passes its command line's); default: one naming the runbook call.
    book_url : str, optional
        For an ``.html`` output: the built book's address, so that the page's references to
        other chapters and pages are links (:func:`judgerisk._book.render.check_book_url`).

    Returns
    -------
    (pathlib.Path, float)
        The notebook written and the seconds the run took.
    """
    cwd = Path(cwd or Path.cwd()).resolve()
    book_url = render.check_book_url(book_url)  # before the run, not after it
    md = find_chapter(chapter, source)
    declared = {p.name: p for p in chapter_parameters(md)}
    defaults = {name: p.default for name, p in declared.items()}
    params = dict(parameters or {})
    unknown = sorted(set(params) - set(defaults))
    if unknown:
        raise ValueError(
            f"{md.stem} has no parameter {unknown[0]!r}; its parameters are: "
            f"{', '.join(sorted(defaults))}"
        )
    params = {k: check_parameter(k, v, defaults[k], declared[k].help) for k, v in params.items()}
    # the book's sources: data, bibliography and chapter titles
    book = md.parent.parent if (md.parent.parent / "_toc.yml").is_file() else None
    params = _absolute_paths(params, cwd, book, announce)
    _check_panels(params)
    from judgerisk._provenance import check_output_path

    out = (cwd / Path(output).expanduser()).resolve()
    inputs = (md.resolve(), *(Path(v) for k, v in params.items() if k.endswith("_path")))
    check_output_path(out, (".ipynb", ".html"), inputs, overwrite=overwrite)
    # a private folder beside the output; left by a killed run, the next write sweeps it
    with private_folder(out.parent) as tmp:
        if announce is not None:
            origin = f"--from {source}" if source is not None else "the installed judgerisk"
            announce(f"running {md} (from {origin}) with papermill, one kernel, every cell")
        try:
            written, seconds = runbook.execute(
                md,
                tmp,
                profile="small" if small else "default",
                parameters=params,
                record=record,
            )
        except Exception as exc:  # noqa: BLE001 - papermill's error, as one line
            from judgerisk.report.build import notebook_error

            raise notebook_error(exc, md.name) from None
        if out.suffix == ".html":  # the page only: rendered from the notebook, not kept
            written = render.render_html(
                written, Path(tmp) / out.name, chapter=md.stem, book=book, book_url=book_url
            )
        # onto a free name without --overwrite: of two racing runs exactly one publishes
        atomic_write(out, lambda t: os.replace(written, t), exclusive=not overwrite)
    return out, seconds


def _check_panels(params: dict) -> None:
    """A ``panel_path`` parameter must hold a valid panel (checked before the kernel starts).

    Every chapter that reads one is a panel page (consensus, conflict, SCUR), so judges that
    share no item (:func:`judgerisk.panel._overlap.judge_groups`) are refused here, as ``report``
    and ``score`` refuse them, instead of a page where every item has one vote.
    """
    from judgerisk.panel import PanelError, load_panel
    from judgerisk.panel._overlap import judge_groups, no_shared_items

    for name, value in params.items():
        if name.endswith("panel_path") and isinstance(value, str) and value:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                panel = load_panel(value)
            groups = judge_groups(panel)
            if len(groups) > 1:
                raise PanelError(f"{value}: {no_shared_items(groups)}")
