"""One escaping rule for every page: what comes from the user's files is text, never markup.

Judge names, item ids, notes and file names come from the user's files and reach the reports
and the ``judgerisk run`` pages in tables, lists, sentences and figure labels. The rule:

* **HTML, escaped.** Everything that shows user data is built as HTML with each value passed
  through :func:`html_text` (``& < > " '`` escaped), so ``<script>`` or ``<img onerror=...>``
  in a name is shown, not run. :func:`judgerisk._plots.tables.format_table` applies it to every
  cell, row and column label, header name and caption of a table.
* **Never Markdown.** A Markdown renderer turns ``[x](javascript:...)`` into a live link and
  ``![p](http://host/p.png)`` into a remote image even after HTML escaping, so user data never
  goes through Markdown. Where a sentence must be Markdown (a value glued into a chapter's
  prose), :func:`markdown_text` escapes every ASCII punctuation character with a backslash,
  which CommonMark renders as that literal character, and wraps it in ``<code>``.
* **Never math.** A page that loads MathJax typesets ``$...$`` found in its text, and
  ``\\href{javascript:...}`` there is a live link: user data sits in ``<code>`` or in an
  element of class :data:`NO_MATH`, which MathJax skips.
* **Never figure markup.** Matplotlib reads ``$...$`` in a label as mathtext (and fails on
  a malformed one): :func:`plot_text` escapes the dollar signs of a name put in a figure.

:func:`live_content` parses a page and lists what in it could run or fetch: scripts (other
than the JSON record judgerisk embeds), event-handler attributes, ``javascript:`` and other
non-data URLs, frames, objects, external resources and, on a page that loads MathJax, TeX
commands that write markup (``\\href``, ``\\class``, ...) outside the skipped elements. The tests render hostile panels through both reports and
a ``judgerisk run`` page and require it to find nothing.
"""

from __future__ import annotations

import html
import re
import string
from collections.abc import Iterable
from html.parser import HTMLParser

__all__ = [
    "NO_MATH",
    "html_text",
    "markdown_text",
    "markdown_code",
    "plot_text",
    "html_items",
    "live_content",
]

#: Class of an element whose text MathJax does not typeset (its ``ignoreHtmlClass``).
NO_MATH = "mathjax_ignore"

_MD_PUNCT = re.compile("([" + re.escape(string.punctuation) + "])")


def html_text(value: object) -> str:
    """``value`` as HTML text: ``str(value)`` with ``& < > " '`` escaped.

    >>> html_text('<img src=x onerror="alert(1)">')
    '&lt;img src=x onerror=&quot;alert(1)&quot;&gt;'
    """
    return html.escape(str(value), quote=True)


def markdown_text(value: object) -> str:
    """``value`` as Markdown that renders as exactly its text (one line).

    Every ASCII punctuation character gets a backslash (CommonMark's escape: the character
    itself, never syntax), and line breaks become spaces, so no link, image, emphasis, raw
    HTML, MyST role or math can start inside it.

    >>> markdown_text("[c](javascript:alert(1))")
    '\\\\[c\\\\]\\\\(javascript\\\\:alert\\\\(1\\\\)\\\\)'
    """
    return _MD_PUNCT.sub(r"\\\1", " ".join(str(value).split()))


def markdown_code(value: object) -> str:
    """``value`` as inline code in Markdown: ``<code>`` around :func:`markdown_text`.

    A backtick code span cannot hold every text (a backtick in the name ends it); raw
    ``<code>`` with escaped text can, and MathJax skips it.
    """
    return f"<code>{markdown_text(value)}</code>"


def plot_text(value: object) -> str:
    """``value`` for a figure label: its dollar signs escaped, so matplotlib shows them as text.

    >>> plot_text("$x$ judge")
    '\\\\$x\\\\$ judge'
    """
    return str(value).replace("$", r"\$")


def html_items(items: Iterable[object], limit: int | None = None, sep: str = ", ") -> str:
    """HTML text of ``items`` joined by ``sep``, each escaped; past ``limit``, "… (n more)"."""
    items = list(items)
    shown = items if limit is None else items[:limit]
    text = sep.join(html_text(i) for i in shown)
    if limit is not None and len(items) > limit:
        text += f"{sep}… ({len(items) - limit} more)"
    return text


# ----------------------------------------------------------------------------- the check
#: Elements that run, embed or fetch: never in a page judgerisk writes (``meta`` only with
#: ``charset`` or a ``name``: ``http-equiv`` can redirect).
_LIVE_TAGS = frozenset(
    {
        "iframe",
        "frame",
        "frameset",
        "object",
        "embed",
        "applet",
        "base",
        "form",
        "link",
        "svg",
        "math",
        "audio",
        "video",
        "source",
        "track",
        "portal",
        "noscript",
        "template",
    }
)
#: Script types a browser runs (any other type is a data block, which it does not run).
_RUN_TYPES = frozenset(
    {
        "",
        "module",
        "importmap",
        "speculationrules",
        "text/javascript",
        "application/javascript",
        "text/ecmascript",
        "application/ecmascript",
        "application/x-javascript",
        "text/jscript",
        "text/livescript",
        "text/x-javascript",
        "text/x-ecmascript",
        "text/babel",
    }
)
_URL_ATTRS = frozenset(
    {
        "href",
        "src",
        "action",
        "formaction",
        "data",
        "poster",
        "background",
        "xlink:href",
        "srcset",
        "cite",
        "longdesc",
        "usemap",
        "lowsrc",
        "dynsrc",
        "ping",
    }
)
#: TeX commands through which MathJax writes live markup (links, classes, styles, ids) or loads
#: extensions: never in a page's own math, a sign of user data typeset as math.
_TEX_LIVE = re.compile(r"\\(?:href|url|class|style|cssId|require|html|data)\b")


class _LiveFinder(HTMLParser):
    def __init__(self, scripts: Iterable[str]) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []
        self.allowed_scripts = set(scripts)
        self.math = False
        self._stack: list[tuple[str, bool]] = []  # (tag, skipped by MathJax)
        self._script: str | None = None
        self._script_attrs: dict[str, str] = {}

    # the MathJax-skipped zones: <code>, <pre>, ... and elements of class NO_MATH
    def _skipped(self) -> bool:
        return any(skip for _, skip in self._stack)

    def handle_starttag(self, tag, attrs):
        self._check_tag(tag, attrs)
        if tag in ("br", "img", "hr", "input", "col", "wbr", "area", "param"):
            return
        classes = (dict(attrs).get("class") or "").split()
        skip = tag in ("code", "pre", "textarea", "script", "style") or NO_MATH in classes
        self._stack.append((tag, skip))
        if tag == "script":
            self._script = ""
            self._script_attrs = {k: v or "" for k, v in attrs}

    def handle_startendtag(self, tag, attrs):
        self._check_tag(tag, attrs)

    def handle_endtag(self, tag):
        if tag == "script" and self._script is not None:
            self._check_script(self._script)
            self._script = None
        for k in range(len(self._stack) - 1, -1, -1):
            if self._stack[k][0] == tag:
                del self._stack[k:]
                break

    def handle_data(self, data):
        if self._script is not None:
            self._script += data
            return
        if self.math and not self._skipped() and _TEX_LIVE.search(data):
            self.found.append(f"TeX that MathJax would make live: {data.strip()[:80]!r}")

    def _check_script(self, body: str) -> None:
        kind = self._script_attrs.get("type", "").split(";")[0].strip().lower()
        src = self._script_attrs.get("src", "")
        if kind not in _RUN_TYPES and not src:
            return  # a data block (the provenance record's JSON): never run
        if src and src.startswith("file:") and src.endswith(("tex-chtml.js", "tex-svg.js")):
            self.math = True  # the local MathJax of a judgerisk run page
            return
        if (src or body.strip()) in self.allowed_scripts:
            # an allowed inline MathJax (a run page's bundle, or its config): the page typesets
            self.math = self.math or (not src and "MathJax" in body)
            return
        what = f"src={src!r}" if src else repr(" ".join(body.split())[:80])
        self.found.append(f"<script> {what}")

    def _check_tag(self, tag: str, attrs) -> None:
        if tag in _LIVE_TAGS or (tag == "meta" and "http-equiv" in {k.lower() for k, _ in attrs}):
            self.found.append(f"<{tag}> element")
        for name, value in attrs:
            name, value = name.lower(), (value or "")
            if name.startswith("on"):
                self.found.append(f"<{tag} {name}=...> event handler")
            elif name in _URL_ATTRS and value:
                self._check_url(tag, name, value)
            elif name == "style" and re.search(r"url\s*\(|expression\s*\(|@import", value, re.I):
                self.found.append(f"<{tag} style={value[:60]!r}> loads a resource")

    def _check_url(self, tag: str, name: str, value: str) -> None:
        url = re.sub(r"[\x00-\x20]", "", value).lower()
        if tag == "script" and name == "src":
            return  # checked with the script
        if url.startswith("data:"):
            if tag == "a" or url.startswith(("data:image/png", "data:image/jpeg", "data:text/csv")):
                return
            self.found.append(f"<{tag} {name}={value[:60]!r}> data URL")
        elif url.startswith("#") or (tag == "a" and not re.match(r"^[a-z][a-z0-9+.-]*:", url)):
            return  # an anchor, or a relative link a reader follows by hand
        elif url.startswith(("javascript:", "vbscript:")):
            self.found.append(f"<{tag} {name}={value[:60]!r}> script URL")
        elif url.startswith(("http:", "https:", "//", "ftp:")):
            self.found.append(f"<{tag} {name}={value[:60]!r}> external URL")
        elif url.startswith("file:") and tag == "script":
            return
        else:
            self.found.append(f"<{tag} {name}={value[:60]!r}> URL that is not data")


def live_content(page: str, scripts: Iterable[str] = ()) -> list[str]:
    """What in an HTML page could run code or fetch from the network, in page order.

    Parameters
    ----------
    page : str
        The HTML text.
    scripts : iterable of str
        Scripts the caller wrote and allows (their exact text, or their ``src``; an allowed
        inline script that names MathJax, a run page's bundle, makes the page one that
        typesets, checked for TeX as below). Data blocks
        (a script whose type a browser does not run, like the ``application/json`` record)
        and a local MathJax (``file:...tex-chtml.js``) are always allowed; a page that loads
        MathJax is also checked for TeX commands that write markup (``\\href``, ``\\class``,
        ``\\style``, ...) outside the elements MathJax skips.

    Returns
    -------
    list of str
        One line per live element: a script, an event-handler attribute, a ``javascript:``,
        external or other non-data URL, a frame / object / embed / form / meta / link / svg
        element, a style loading a resource; empty for an inert page.
    """
    finder = _LiveFinder(scripts)
    finder.feed(page)
    finder.close()
    return finder.found
