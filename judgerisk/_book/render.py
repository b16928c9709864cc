"""Render an executed chapter as a readable HTML page, the way the book shows it.

``judgerisk run`` writes the executed notebook; a notebook viewer shows its Markdown as raw
MyST (``{glue:text}`key```, ``:::{admonition}``, ``{cite}``). :func:`render_html` resolves
what the book's build resolves (glued numbers and text, citations from the book's
bibliography, glossary terms, chapter links, numbered figures with their captions and
numbered equations), drops the cells the book hides, and writes one self-contained HTML
page with nbconvert, with the local MathJax (when installed) inline: it typesets offline and
loads nothing.

Prose that holds only when a part of the chapter ran carries a tag ``show-if:KEY`` (a
glued boolean): :func:`apply_conditions` removes it from the executed notebook when
``KEY`` is false, for the book and for reruns alike.
"""

from __future__ import annotations

import ast
import copy
import html
import os
import re
from pathlib import Path
from typing import Any

from judgerisk._util.safe_write import atomic_write

__all__ = [
    "check_book_url",
    "downloadable_notebook",
    "mathjax_code",
    "glued_values",
    "apply_conditions",
    "resolve_myst",
    "render_html",
    "MATHJAX_CONFIG",
    "expected_seconds",
    "time_warning",
    "times_markdown",
    "chapter_titles",
    "write_chapter_times",
    "machine_description",
]

RECORD = "application/papermill.record/"
ROLE = re.compile(r"\{([a-z]+(?::[a-z]+)?)\}`([^`]*)`")
ADMONITION = re.compile(
    r"^(:{3,})\{admonition\}\s*(.*?)\n(?::class:\s*(.*?)\n)?(.*?)\n\1[ \t]*$", re.S | re.M
)
LABELLED_EQ = re.compile(r"\$\$(.*?)\$\$\s*\(([\w-]+)\)", re.S)
SHOW_IF = "show-if:"


def glued_values(nb: Any) -> dict[str, dict[str, Any]]:
    """``{key: {mime: value}}`` of every ``glue`` call in an executed notebook."""
    found: dict[str, dict[str, Any]] = {}
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            name = out.get("metadata", {}).get("scrapbook", {}).get("name")
            if not name:
                continue
            data = {
                mime.removeprefix(RECORD): "".join(v) if isinstance(v, list) else v
                for mime, v in out.get("data", {}).items()
            }
            found[name] = data
    return found


def _truthy(data: dict[str, Any] | None) -> bool:
    if not data or "text/plain" not in data:
        return False
    try:
        return bool(ast.literal_eval(data["text/plain"]))
    except (ValueError, SyntaxError):
        return data["text/plain"].strip() not in ("", "False", "None", "0")


def apply_conditions(nb: Any) -> int:
    """Hide the Markdown cells tagged ``show-if:KEY`` whose glued ``KEY`` is false.

    The cell gets the tag ``remove-cell`` (which the book and :func:`render_html` honour);
    a missing key counts as false. Returns the number of cells hidden.
    """
    glued = glued_values(nb)
    hidden = 0
    for cell in nb.cells:
        tags = cell.metadata.get("tags", [])
        keys = [t[len(SHOW_IF) :] for t in tags if t.startswith(SHOW_IF)]
        if keys and not all(_truthy(glued.get(k)) for k in keys):
            if "remove-cell" not in tags:
                cell.metadata["tags"] = [*tags, "remove-cell"]
            hidden += 1
    return hidden


def _format_text(data: dict[str, Any] | None, spec: str, key: str) -> str:
    if data is None:
        return f"[{key}: not computed]"
    if spec in ("md",) and "text/markdown" in data:
        return data["text/markdown"]
    text = data.get("text/plain", data.get("text/markdown", ""))
    text = text.strip()
    if not spec:
        return text.strip("'\"")
    try:
        return format(ast.literal_eval(text), spec)
    except (ValueError, SyntaxError, TypeError):
        return text.strip("'\"")


def _bibliography(bib_path: Path | None) -> dict[str, str]:
    """``{key: "Author et al. (year)"}`` read with pybtex (empty when unavailable)."""
    if bib_path is None or not bib_path.exists():
        return {}
    try:
        from pybtex.database import parse_file
        from pybtex.richtext import Text
    except ImportError:
        return {}
    out = {}
    for key, entry in parse_file(str(bib_path)).entries.items():
        people = entry.persons.get("author", [])
        # LaTeX accents as letters: Cand{\`e}s -> Candès
        last = [Text.from_latex(" ".join(p.last_names)).render_as("text") for p in people]
        names = (
            last[0]
            if len(last) == 1
            else f"{last[0]} and {last[1]}"
            if len(last) == 2
            else f"{last[0]} et al."
            if last
            else key
        )
        out[key] = f"{names.replace('{', '').replace('}', '')} ({entry.fields.get('year', 'n.d.')})"
    return out


def chapter_titles(folder: Path | None) -> dict[str, str]:
    """``{stem: title}`` of the chapter sources and book pages beside the chapter."""
    titles: dict[str, str] = {}
    if folder is None:
        return titles
    for path in [*folder.glob("*.md"), *folder.parent.joinpath("book").glob("*.md")]:
        for line in path.read_text().splitlines():
            if line.startswith("# "):
                titles[path.stem] = line[2:].strip()
                break
    return titles


LABEL = re.compile(r"^\(([\w-]+)\)=\s*\n+#+ (.+)$", re.M)
ANY_LABEL = re.compile(r"^\(([\w-]+)\)=\s*$", re.M)


def _labels(book: Path | None) -> dict[str, tuple[str, str]]:
    """``{label: (heading, page)}`` of every ``(label)=`` target in the chapters and book
    pages; ``page`` is the source's path in the book without its suffix (``book/methods``)."""
    found: dict[str, tuple[str, str]] = {}
    if book is None:
        return found
    for path in [*(book / "notebooks").glob("*.md"), *(book / "book").glob("*.md")]:
        page, text = f"{path.parent.name}/{path.stem}", path.read_text()
        for label in ANY_LABEL.findall(text):  # a paragraph's label too: its text is shown
            found[label] = (label, page)
        for label, heading in LABEL.findall(text):
            found[label] = (heading.strip(), page)
    return found


def check_book_url(url: str | None) -> str | None:
    """``url`` without its trailing ``/``, or ``None``: the built book's address, under which
    a page's source ``notebooks/08_bpe.md`` is ``notebooks/08_bpe.html`` (Jupyter Book's
    layout). Only ``http(s)://`` and ``file://`` addresses are taken."""
    if url is None or url == "":
        return None
    if not re.match(r"(https?|file)://[^\s'\"<>]+$", url):
        raise ValueError(
            f"--book-url {url!r}: give the built book's address, http(s):// or file:// "
            "(e.g. https://example.org/judgerisk), without spaces or quotes"
        )
    return url.rstrip("/")


class _Context:
    def __init__(
        self,
        nb: Any,
        chapter: str,
        book: Path | None,
        links: bool = True,
        book_url: str | None = None,
    ) -> None:
        self.glued = glued_values(nb)
        self.links = links  # a page links its figures and equations; a notebook cannot
        self.book_url = book_url if links else None  # other pages: links into the built book
        self.chapter = chapter
        self.cites = _bibliography(book / "book" / "references.bib" if book else None)
        self.titles = chapter_titles(book / "notebooks" if book else None)
        self.labels = _labels(book)
        self.figures: dict[str, str] = {}
        self.equations: dict[str, str] = {}
        for cell in nb.cells:
            name = cell.metadata.get("mystnb", {}).get("figure", {}).get("name")
            if cell.cell_type == "code" and name:
                self.figures[name] = f"{chapter}.{len(self.figures) + 1}"
            if cell.cell_type == "markdown":
                for _, label in LABELLED_EQ.findall(cell.source):
                    self.equations[label] = f"{chapter}.{len(self.equations) + 1}"


def _split_target(text: str) -> tuple[str, str]:
    """``"shown <target>"`` → ``("shown", "target")``; ``"target"`` → ``("", "target")``."""
    m = re.fullmatch(r"(.*?)\s*<([^>]+)>", text, flags=re.S)
    return (m.group(1), m.group(2)) if m else ("", text)


def _role(ctx: _Context, role: str, text: str) -> str:
    if role.startswith("glue"):
        kind = role.partition(":")[2]
        key, _, spec = text.split("::")[-1].partition(":")  # "path::key" pastes from a page
        value = _format_text(ctx.glued.get(key), "md" if kind in ("md", "") else spec, key)
        return resolve_myst(value, ctx) if kind in ("md", "") else value
    shown, target = _split_target(text)
    if role == "term":
        return shown or target
    if role == "ref" and target in ctx.labels:
        heading, page = ctx.labels[target]  # a section's heading, as the book prints it
        return _book_link(ctx, f"{page}.html#{target}", shown or heading)
    if role in ("doc", "ref"):
        stem = Path(target).stem
        doc = _doc_page(target) if role == "doc" else None
        if shown:
            return _book_link(ctx, f"{doc}.html", shown) if doc else shown
        title = ctx.titles.get(stem, stem.replace("_", " "))
        number = stem.split("_", 1)[0].lstrip("0")
        # another chapter, named by its number too: the number finds the chapter in the
        # book's contents when the page has no book to link to (no --book-url)
        is_chapter = stem[:1].isdigit() or stem[:1] == "A" and stem[1:2].isdigit()
        text = f"chapter {number}, “{title}”" if is_chapter and number else title
        return _book_link(ctx, f"{doc}.html", text) if doc else text
    if role == "numref":
        number = ctx.figures.get(target, "?")
        shown = shown.replace("%s", number) if shown else f"Fig. {number}"
        return _anchor_link(ctx, target, shown) if target in ctx.figures else shown
    if role == "eq":
        shown = f"({ctx.equations.get(target, target)})"
        return _anchor_link(ctx, target, shown) if target in ctx.equations else shown
    if role.startswith("cite"):
        keys = [k.strip() for k in text.split(",")]
        refs = [ctx.cites.get(k, k) for k in keys]
        if role == "cite:t":
            return ", ".join(refs)
        return "(" + "; ".join(r.replace(" (", ", ").rstrip(")") for r in refs) + ")"
    return f"`{text}`"


_ESCAPED_LINK = re.compile(r"&lt;a href=&#x27;(#[\w-]+|[a-z]+://[^\s&]+)&#x27;&gt;(.*?)&lt;/a&gt;")


def _doc_page(target: str) -> str:
    """A ``{doc}`` target, written from a chapter (``08_bpe``, ``../book/methods``), as its
    page in the book (``notebooks/08_bpe``, ``book/methods``)."""
    parts = Path("notebooks", target).parts
    out: list[str] = []
    for part in parts:
        if part == "..":
            if out:
                out.pop()
        elif part != ".":
            out.append(part)
    return "/".join(out)


def _book_link(ctx: _Context, page: str, text: str) -> str:
    """``text`` as a link to ``page`` of the built book (plain text without --book-url)."""
    if ctx.book_url is None:
        return text
    return f"<a href='{html.escape(ctx.book_url + '/' + page)}'>{text}</a>"


def _anchor_link(ctx: _Context, target: str, text: str) -> str:
    """A link to a figure or an equation on the same page (plain text in a notebook)."""
    return f"<a href='#{html.escape(target)}'>{text}</a>" if ctx.links else text


def _admonition(m: re.Match, ctx: _Context) -> str:
    title, klass, body = m.group(2).strip(), (m.group(3) or "note").strip(), m.group(4)
    inner = resolve_myst(body, ctx)
    if klass == "dropdown":
        return f"<details class='admonition'><summary>{html.escape(title)}</summary>\n\n{inner}\n\n</details>"
    return (
        f"<div class='admonition {html.escape(klass)}'>\n<p class='admonition-title'>"
        f"{html.escape(title)}</p>\n\n{inner}\n\n</div>"
    )


def resolve_myst(text: str, ctx: _Context) -> str:
    """Markdown with the book's MyST roles, admonitions and labelled equations resolved."""
    text = ADMONITION.sub(lambda m: _admonition(m, ctx), text)
    text = LABELLED_EQ.sub(
        lambda m: (
            (f"<a id='{html.escape(m.group(2))}'></a>\n\n" if ctx.links else "")
            + f"$${m.group(1).rstrip()}\\tag{{{ctx.equations.get(m.group(2), '')}}}$$"
        ),
        text,
    )
    return ROLE.sub(lambda m: _role(ctx, m.group(1), m.group(2)), text)


def _figure_html(cell: Any, number: str, ctx: _Context | None = None) -> str:
    meta = cell.metadata["mystnb"]
    caption = meta["figure"].get("caption", "").strip()
    if ctx is not None:  # a caption's references, as the book prints them
        caption = resolve_myst(caption, ctx)
    # the caption is text; only the links to a figure or equation on the page stay markup
    caption = _ESCAPED_LINK.sub(r"<a href='\1'>\2</a>", html.escape(caption))
    alt = meta.get("image", {}).get("alt", "").strip()
    images = [o["data"]["image/png"] for o in cell.outputs if "image/png" in o.get("data", {})]
    tags = "".join(
        f"<img src='data:image/png;base64,{png.strip()}' alt='{html.escape(alt, quote=True)}'"
        " style='max-width:100%'>"
        for png in images
    )
    return (
        f"<figure id='{meta['figure']['name']}'>{tags}<figcaption><b>Fig. {number}.</b> "
        f"{caption}</figcaption></figure>"
    )


def book_notebook(
    nb: Any, chapter: str, book: Path | None = None, book_url: str | None = None
) -> Any:
    """A copy of an executed chapter with its Markdown resolved and hidden cells removed;
    with ``book_url`` its references to other pages link into the built book there."""
    import nbformat

    nb = copy.deepcopy(nb)
    apply_conditions(nb)
    ctx = _Context(nb, chapter, book, book_url=check_book_url(book_url))
    cells = []
    for cell in nb.cells:
        tags = set(cell.metadata.get("tags", []))
        if "remove-cell" in tags:
            continue
        if cell.cell_type == "markdown":
            cell.source = _numbered_title(resolve_myst(cell.source, ctx), chapter)
        elif cell.cell_type == "code":
            name = cell.metadata.get("mystnb", {}).get("figure", {}).get("name")
            if name and any("image/png" in o.get("data", {}) for o in cell.outputs):
                figure = _figure_html(cell, ctx.figures[name], ctx)
                cells.append(nbformat.v4.new_markdown_cell(figure))
                continue
            if tags & {"hide-input", "remove-input", "hide-cell", "injected-parameters"}:
                cell.metadata["transient"] = {"remove_source": True}
                cell.metadata.setdefault("jupyter", {})["source_hidden"] = True
                cell.source = ""
            if "remove-output" in tags:
                cell.outputs = []
            cell.outputs = [o for o in cell.outputs if not o.get("metadata", {}).get("scrapbook")]
            if not cell.source and not cell.outputs:
                continue
        cells.append(cell)
    nb.cells = cells
    return nb


def _numbered_title(source: str, chapter: str) -> str:
    """The chapter's title numbered as the book's table of contents numbers it ("# 12. ...")."""
    if not source.startswith("# ") or source[2:].startswith(f"{chapter}."):
        return source
    return f"# {chapter}. {source[2:]}"


def downloadable_notebook(nb: Any, chapter: str, book: Path | None = None) -> Any:
    """The executed chapter as a learner downloads it: runnable code, Markdown as text.

    A notebook viewer shows MyST roles raw (``{glue:text}`key```, ``{cite}``, admonitions);
    here they are resolved as :func:`book_notebook` resolves them, prose whose part did not
    run is dropped, every code cell is kept (hidden or not, so the notebook still runs), and
    a first cell says how to rerun the chapter with other parameters (``judgerisk run``).
    """
    import nbformat

    nb = copy.deepcopy(nb)
    apply_conditions(nb)
    ctx = _Context(nb, chapter, book, links=False)
    cells = []
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            if "remove-cell" in cell.metadata.get("tags", []):
                continue
            cell.source = resolve_myst(cell.source, ctx)
        cells.append(cell)
    command = f"{int(chapter):02d}" if chapter.isdigit() else chapter
    pointer = (
        f"*Chapter {chapter} of the judgerisk book, as executed for the book (numbers and "
        "references filled in). To rerun it with your own parameters and get the page "
        f"rendered as the book renders it, run* `judgerisk run {command} -o mine.html` "
        f"*(`-o mine.ipynb` writes the executed notebook instead; "
        f"`judgerisk run {command} --list` lists the parameters).*"
    )
    nb.cells = [nbformat.v4.new_markdown_cell(pointer), *cells]
    return nb


#: The MathJax 3 set-up of a rerun page (the page's one inline script).
MATHJAX_CONFIG = (
    "window.MathJax = {tex: {inlineMath: [['$', '$'], ['\\\\(', '\\\\)']],"
    " displayMath: [['$$', '$$'], ['\\\\[', '\\\\]']], tags: 'none'}};"
)
MATHJAX3 = f"<script>{MATHJAX_CONFIG}</script>\n"
#: The lab template's scripts that fetch from the network (require.js, mermaid), which a
#: rerun page neither needs nor may load: it is read offline.
_NETWORK_SCRIPTS = re.compile(
    r'<script src="https?://[^"]*"></script>\s*|<script type="module">\s*document\.'
    r'addEventListener\("DOMContentLoaded".*?</script>\s*',
    re.S,
)
STYLE = (
    "<style>.admonition{border-left:4px solid #4a7bb7;background:#f5f8fc;padding:.2em 1em;"
    "margin:1em 0}.admonition.warning{border-color:#d9822b;background:#fdf6ee}"
    ".admonition.important{border-color:#c23b22}.admonition.tip{border-color:#3b8b3b}"
    ".admonition-title{font-weight:bold}details.admonition summary{cursor:pointer;"
    "font-weight:bold}figure{margin:1em 0}figcaption{font-size:.9em}"
    # a column as wide as the book's (about 80 characters), text cells of tables left-aligned
    # (format_table right-aligns the numeric columns itself)
    "main{max-width:56rem;margin:0 auto}.jp-RenderedHTMLCommon td,"
    ".jp-RenderedHTMLCommon th{text-align:left}</style>\n"
)


def mathjax_dir() -> Path:
    """The MathJax 3 ``es5`` bundle shipped by the PyPI package ``django-static-mathjax``.

    (It installs a plain ``mathjax`` package with the static files and no Django
    dependency; it is part of the ``book`` extra.)
    """
    import importlib.util

    spec = importlib.util.find_spec("mathjax")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            "no local MathJax: pip install 'django-static-mathjax==3.2.2.1' (the book extra)"
        )
    es5 = Path(list(spec.submodule_search_locations)[0]) / "static" / "mathjax" / "es5"
    if not (es5 / "tex-chtml.js").exists():
        raise FileNotFoundError(f"MathJax bundle incomplete: {es5 / 'tex-chtml.js'} is missing")
    return es5


#: What ``exporter.mathjax_url`` is set to, then replaced by the inline bundle.
_MATHJAX_SLOT = "judgerisk-inline-mathjax"


def mathjax_code() -> str | None:
    """The local MathJax 3 ``tex-svg.js`` bundle, as a run page holds it inline (``None``: none
    is installed).

    The SVG output draws its glyphs as paths and loads no font file, so the page stays one
    self-contained file that typesets offline, wherever it is copied (a ``file://`` URL into
    the installation would break on another machine). ``<!--`` and ``</script`` are written
    ``\\x3C!--`` / ``\\x3C/script`` (the same text in JavaScript), so the HTML parser never ends
    the script early.
    """
    try:
        code = (mathjax_dir() / "tex-svg.js").read_text(encoding="utf-8")
    except (FileNotFoundError, ImportError):
        return None
    return code.replace("<!--", "\\x3C!--").replace("</script", "\\x3C/script")


def render_html(
    ipynb: str | os.PathLike,
    html_path: str | os.PathLike,
    chapter: str | None = None,
    book: Path | None = None,
    book_url: str | None = None,
) -> Path:
    """Write the executed chapter ``ipynb`` as one readable HTML page at ``html_path``.

    Parameters
    ----------
    ipynb : path-like
        An executed chapter notebook (``judgerisk run`` output).
    html_path : path-like
        The page to write (atomically; an existing file is replaced).
    chapter : str, optional
        The chapter's source name (``"03_latent_measurement_model"``) or number, which
        numbers its figures and equations (``3.1``); default: the notebook's file name.
    book : pathlib.Path, optional
        The book's source folder, for the bibliography and the chapter titles (default: none;
        ``judgerisk run`` passes the folder its chapter came from).
    book_url : str, optional
        The built book's address (``http(s)://`` or ``file://``): references to other
        chapters and pages become links there (:func:`check_book_url`); default: plain text
        naming the chapter by number and title.
    """
    import nbformat
    from nbconvert import HTMLExporter

    ipynb, html_path = Path(ipynb), Path(html_path)
    nb = nbformat.read(ipynb, as_version=4)
    number = (chapter or ipynb.stem).split("_", 1)[0]
    page = book_notebook(nb, number.lstrip("0") or "0", book, book_url)
    exporter = HTMLExporter(template_name="lab")
    exporter.exclude_input_prompt = exporter.exclude_output_prompt = True
    inline = mathjax_code()
    if inline:
        exporter.mathjax_url = _MATHJAX_SLOT
    titles = [c.source[2:].split("\n", 1)[0] for c in page.cells if c.source.startswith("# ")]
    resources = {"metadata": {"name": titles[0] if titles else ipynb.stem}}
    body, _ = exporter.from_notebook_node(page, resources=resources)
    body = body.replace("<head>", "<head>\n" + MATHJAX3 + STYLE, 1)
    body = _NETWORK_SCRIPTS.sub("", body)
    if inline:
        body = body.replace(
            f'<script src="{_MATHJAX_SLOT}"> </script>', f"<script>{inline}</script>", 1
        )
    return atomic_write(html_path, lambda tmp: tmp.write_text(body, encoding="utf-8"))


#: The measured run times shipped with the package (see :func:`write_chapter_times`).
TIMES_FILE = Path(__file__).with_name("chapter_times.json")
#: A rerun expected to take at least this long prints a warning first.
WARN_SECONDS = 60.0


def _times() -> dict:
    import json

    return json.loads(TIMES_FILE.read_text()) if TIMES_FILE.exists() else {}


def expected_seconds(stem: str, profile: str) -> float | None:
    """The seconds a chapter's run took on the reference machine (``None``: not measured)."""
    value = _times().get("chapters", {}).get(stem, {}).get(profile)
    return float(value) if value is not None else None


def time_warning(stem: str, small: bool) -> str | None:
    """The line ``judgerisk run`` prints before a run measured (or not measured) as slow."""
    profile = "small" if small else "default"
    seconds = expected_seconds(stem, profile)
    machine = _times().get("machine", "the reference machine")
    if seconds is not None and seconds < WARN_SECONDS:
        return None
    if seconds is None:
        quick = expected_seconds(stem, "small")
        if small or quick is None:
            return None
        return (
            f"judgerisk run {stem[:2]}: the full parameters were not timed; the small ones "
            f"(--small) took {quick:.0f} s on {machine}, and the full ones do more work "
            "(more items, seeds and resamples) and take longer."
        )
    return (
        f"judgerisk run {stem[:2]}: this run took {seconds / 60:.1f} minutes with the "
        f"{profile} parameters on {machine}; larger parameters take longer."
    )


def write_chapter_times(timings: dict, profile: str, machine: str) -> Path:
    """Store :func:`judgerisk._book.runbook.read_timings` of a run as the shipped reference times."""
    import json

    data = _times() or {"machine": machine, "chapters": {}}
    data["machine"] = machine
    for stem, run in timings.items():
        data["chapters"].setdefault(stem, {})[profile] = run["seconds"]
    text = json.dumps(data, indent=1, sort_keys=True) + "\n"
    atomic_write(TIMES_FILE, lambda tmp: tmp.write_text(text, encoding="utf-8"))
    return TIMES_FILE


def machine_description() -> str:
    """This machine in words: operating system, processor and CPU cores."""
    import platform

    return (
        f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPU cores, "
        f"Python {platform.python_version()}"
    )


def times_markdown(timings: dict, machine: str, titles: dict[str, str] | None = None) -> str:
    """The table of each chapter's measured run time (MyST markdown).

    ``timings`` is :func:`judgerisk._book.runbook.read_timings` of the executed chapters;
    ``titles`` (``{stem: title}``, the chapters' headings) names each chapter as its page
    does; a chapter without one is named from its file.
    """
    titles = titles or {}
    lines = [
        f"Measured on {machine} when this book was built:",
        "",
        "| Chapter | Command | Parameters | Run time |",
        "|---|---|---|---|",
    ]
    for stem, run in sorted(timings.items()):
        number, _, name = stem.partition("_")
        option = " --small" if run["profile"] == "small" else ""
        lines.append(
            f"| {number} {titles.get(stem, name.replace('_', ' '))} | "
            f"`judgerisk run {number}{option}` | "
            f"{run['profile']} | {run['seconds']:.0f} s |"
        )
    return "\n".join(lines) + "\n"
