"""Self-contained HTML report on a panel file: the packaged notebook, run with papermill.

:func:`render_report` validates the panel file (so a bad file fails fast with the panel
validation's message), executes ``judgerisk/reports/panel_report.md`` (a jupytext MyST notebook
shipped in the package) with papermill on it, and writes one HTML file with every table inline and
every figure embedded as a base64 PNG — no network, no side files.

The notebook-to-HTML step is nbconvert's ``HTMLExporter`` (the ``book`` extra).
"""

from __future__ import annotations

import html
import tempfile
from importlib import resources
from pathlib import Path
from typing import Any

from judgerisk.panel import load_panel

__all__ = ["REPORT_NOTEBOOK", "report_notebook_path", "render_report", "notebook_to_html"]

#: Package-relative location of the report notebook.
REPORT_NOTEBOOK = "reports/panel_report.md"


def report_notebook_path() -> Path:
    """Filesystem path of the packaged report notebook."""
    return Path(str(resources.files("judgerisk").joinpath(REPORT_NOTEBOOK)))


_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:1000px;
margin:2em auto;padding:0 1em;color:#222;line-height:1.5}
table{border-collapse:collapse;font-size:.85em;margin:.5em 0}
th,td{border:1px solid #ccc;padding:.2em .5em;text-align:right}
th{background:#f3f3f3}
pre{background:#f7f7f7;padding:.6em;overflow-x:auto;font-size:.85em}
img{max-width:100%}
.jp-RenderedText[data-mime-type="application/vnd.jupyter.stderr"]{background:#fff4e5}
"""


def notebook_to_html(nb: Any, title: str = "judgerisk panel report") -> str:
    """Render an executed notebook as one self-contained HTML page.

    nbconvert's ``HTMLExporter`` (``basic`` template: markdown, HTML tables and figures as
    base64 PNG, code cells left out) renders the cells; the page around them carries its
    own small stylesheet and loads nothing from the network.

    Parameters
    ----------
    nb : nbformat.NotebookNode
        An executed notebook.
    title : str
        The page title.

    Returns
    -------
    str
        The HTML page.
    """
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(
        template_name="basic",
        embed_images=True,
        exclude_input=True,
        exclude_input_prompt=True,
        exclude_output_prompt=True,
    )
    body, _ = exporter.from_notebook_node(nb)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title><style>{_CSS}</style></head>\n"
        f"<body>\n{body}\n</body></html>\n"
    )


def render_report(
    panel_path: str | Path,
    output: str | Path,
    parameters: dict | None = None,
    timeout: int = 600,
    keep_notebook: str | Path | None = None,
) -> Path:
    """Run the report notebook on a panel file and write a self-contained HTML report.

    Parameters
    ----------
    panel_path : path-like
        Panel file (.csv / .parquet / .jsonl); validated first (:func:`judgerisk.panel.load_panel`
        raises :class:`~judgerisk.panel.PanelError` with the offending rows).
    output : path-like
        HTML file to write.
    parameters : dict, optional
        Extra notebook parameters (``n_seeds``, ``seed``, ``alpha``, ``n_splits``).
    timeout : int, default 600
        Seconds allowed per cell.
    keep_notebook : path-like, optional
        Also save the executed ``.ipynb`` there.

    Returns
    -------
    pathlib.Path
        The HTML file.
    """
    import jupytext
    import papermill

    panel_path = Path(panel_path).resolve()
    load_panel(panel_path)  # fail fast, with the validation's message, before starting a kernel
    output = Path(output)
    nb = jupytext.read(report_notebook_path())
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    params = {"panel_path": str(panel_path), **(parameters or {})}
    with tempfile.TemporaryDirectory(prefix="judgerisk-report-") as tmp:
        executed_path = Path(tmp) / "panel_report.ipynb"
        executed = papermill.execute_notebook(
            nb,
            str(executed_path),
            parameters=params,
            kernel_name="python3",
            cwd=tmp,
            progress_bar=False,
            execution_timeout=timeout,
        )
        if keep_notebook is not None:
            Path(keep_notebook).write_bytes(executed_path.read_bytes())
    output.write_text(notebook_to_html(executed, title=f"judgerisk report: {panel_path.name}"))
    return output
