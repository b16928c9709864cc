"""Self-contained HTML report on a panel file: the packaged notebook, run in this process.

:func:`render_report` validates the panel file (so a bad file fails fast with the panel
validation's message, before a cell runs), scores it (in a forked process on a machine with
two cores, while this one imports what the notebook needs: :func:`_scored_aside`), executes
``judgerisk/report/templates/panel_report.md``
(a jupytext MyST notebook shipped in the package) on it, papermill injecting the parameters and
IPython's in-process kernel running the cells (no Jupyter kernel to start: about a fifth of a
2,000-item report's time; :func:`run_notebook`), and writes one HTML file with every table inline and
every figure embedded as a base64 PNG — no network, no side files. The page ends with the
score table (a csv download link) and the provenance record, which ``judgerisk verify`` reads.

A panel of one judge in both orders (``original`` and ``swap``) has no panel signals; its report
is ``judgerisk/report/templates/one_judge_report.md``: Bidirectional Preference Entropy per item and
SCOPE's certified selection (:func:`report_table` says which table a panel gets).

The notebook-to-HTML step is nbconvert's ``HTMLExporter`` (the ``book`` extra).
"""

from __future__ import annotations

import base64
import functools
import html
import io
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import Any

import pandas as pd

from judgerisk._provenance import command_text
from judgerisk._util.aside import Aside, fork_possible, run_aside, serve_aside
from judgerisk._util.determinism import one_blas_thread
from judgerisk._util.safe_write import atomic_write, atomic_write_group, private_folder
from judgerisk.options import DEFAULT_CELL_TIMEOUT, ReportSettings
from judgerisk.panel import (
    PanelError,
    check_scorable,
    load_panel,
    refuse_unscorable,
    warn_ties_and_orientation,
)
from judgerisk.report._in_process import collector_spared

__all__ = [
    "REPORT_NOTEBOOK",
    "ONE_JUDGE_NOTEBOOK",
    "REPORT_DEFAULTS",
    "one_judge_in_both_orders",
    "report_settings",
    "report_table",
    "report_notebook_path",
    "render_report",
    "notebook_to_html",
    "notebook_parameters",
    "run_notebook",
    "notebook_error",
    "embedded_csv",
    "embedded_scores",
]

#: Package-relative location of the report notebook.
REPORT_NOTEBOOK = "report/templates/panel_report.md"
#: Package-relative location of the report notebook for one judge in both orders.
ONE_JUDGE_NOTEBOOK = "report/templates/one_judge_report.md"


def report_notebook_path(one_judge: bool = False) -> Path:
    """Filesystem path of the packaged report notebook (``one_judge``: the BPE report's)."""
    name = ONE_JUDGE_NOTEBOOK if one_judge else REPORT_NOTEBOOK
    return Path(str(resources.files("judgerisk").joinpath(name)))


def report_settings(n_items: int, one_judge: bool, seeds: list | None) -> dict[str, Any]:
    """The ``settings`` of a report's record: its item count, and its kind (one judge in both
    orders) or the seeds of its panel scores (``judgerisk verify`` regenerates them)."""
    if one_judge:
        return {"n_items": int(n_items), "kind": "one judge in both orders"}
    return {"n_items": int(n_items), "seeds": list(seeds or [])}


def one_judge_in_both_orders(panel: pd.DataFrame) -> bool:
    """Whether a panel is one judge in both orders: one judge in ``original``, and a ``swap``.

    Such a panel cannot be scored as a panel (consensus and conflict need two judges); its
    report is the single-judge one: BPE and SCOPE (SCOPE paper, book chapter 9).
    """
    judges = pd.unique(panel.loc[panel["condition"] == "original", "judge"])
    return len(judges) == 1 and "swap" in set(panel["condition"])


def report_table(panel: pd.DataFrame, params: dict, progress: bool = False) -> pd.DataFrame:
    """The table a report embeds and ``judgerisk verify`` recomputes, indexed by item.

    Parameters
    ----------
    panel : pandas.DataFrame
        A validated panel.
    params : dict
        The report's parameters (:class:`judgerisk.options.ReportSettings`).
    progress : bool, default False

    Returns
    -------
    pandas.DataFrame
        For a panel of two or more judges, the score table ``judgerisk score`` writes for the
        same scoring settings (:func:`judgerisk.engine.certified.score_with`). For one judge in both orders
        (:func:`one_judge_in_both_orders`), :func:`judgerisk.selective.one_judge.bpe_table` of every
        item (an item seen in one order only has no BPE: empty cells) with its ``gold`` when
        the panel has one. Scored on one BLAS thread, so the numbers do not depend on the
        machine's thread count.
    """
    with one_blas_thread():  # identical numbers whatever the BLAS thread count (verify)
        if one_judge_in_both_orders(panel):
            from judgerisk.selective.one_judge import bpe_table

            table = bpe_table(panel).set_index("item").reindex(pd.unique(panel["item"]))
            table.index.name = "item"
            table["judge"] = table["judge"].fillna(panel["judge"].iloc[0])
            if "gold" in panel.columns:
                table["gold"] = panel.groupby("item", sort=False)["gold"].first()
            return table
        from judgerisk.engine.certified import score_with

        # ``judgerisk score``'s path (a record that predates a parameter gets its default)
        # validated where it was read (load_panel): not validated again
        settings = ReportSettings.from_parameters(params)
        return score_with(panel, settings, progress, check_input=False)


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
    body, _ = _html_exporter().from_notebook_node(nb)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title><style>{_CSS}</style></head>\n"
        f"<body>\n{body}\n</body></html>\n"
    )


@functools.cache
def _html_exporter() -> Any:
    """nbconvert's exporter of :func:`notebook_to_html`, made once per process (its jinja
    templates are compiled at its first page: a tenth of a second)."""
    from nbconvert import HTMLExporter

    return HTMLExporter(
        template_name="basic",
        embed_images=True,
        exclude_input=True,
        exclude_input_prompt=True,
        exclude_output_prompt=True,
    )


#: Kernel arguments that keep the kernel's own log off the terminal: its transport warning, and
#: the "KeyboardInterrupt caught in kernel" ERROR line it can log while being shut down after the
#: last cell (seen now and then on a loaded machine). Cell errors still reach us through papermill.
QUIET_KERNEL = ["--IPKernelApp.log_level=CRITICAL"]
_SCORES_ID = "judgerisk-scores"


def notebook_parameters(nb: Any) -> set[str]:
    """The names a notebook's cell tagged ``parameters`` assigns (what papermill can set)."""
    import ast

    names: set[str] = set()
    for cell in nb.cells:
        if cell.get("cell_type") == "code" and "parameters" in cell.get("metadata", {}).get(
            "tags", []
        ):
            for node in ast.parse(cell["source"]).body:
                targets = (
                    node.targets
                    if isinstance(node, ast.Assign)
                    else [getattr(node, "target", None)]
                )
                names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names


def run_notebook(
    nb: Any,
    out_path: Path,
    parameters: dict,
    cwd: str | Path,
    timeout: float | None = None,
    progress: bool = True,
    in_process: bool = False,
) -> Any:
    """Execute a notebook with papermill: a progress bar per cell, no kernel log noise.

    With ``in_process`` (and no IPython shell already running here) the cells run in this
    process instead (:func:`judgerisk.report._in_process.execute_in_process`): papermill injects
    the parameters, no kernel starts. Returns the executed notebook. A failing cell raises
    :class:`RuntimeError` naming the cell and the error, or the cell's
    :class:`~judgerisk.panel.PanelError` (bad input), instead of papermill's traceback.
    """
    import papermill

    from judgerisk.report._in_process import CellError, can_run_in_process, execute_in_process

    if in_process and can_run_in_process():
        try:
            return execute_in_process(nb, parameters, timeout, progress)
        except CellError as exc:
            raise notebook_error(exc) from None
    try:
        return papermill.execute_notebook(
            nb,
            str(out_path),
            parameters=parameters,
            kernel_name="python3",
            cwd=str(cwd),
            progress_bar=progress,
            execution_timeout=timeout,
            extra_arguments=QUIET_KERNEL,
            # one write at the end, not one after every cell (46 writes: 0.7 s of a report)
            request_save_on_cell_execute=False,
        )
    except papermill.PapermillExecutionError as exc:
        raise notebook_error(exc) from None


def notebook_error(exc: BaseException, notebook: str = "the notebook") -> Exception:
    """One-line error for a notebook run that failed (instead of papermill's traceback).

    A cell's :class:`~judgerisk.panel.PanelError` (bad input) stays a ``PanelError``; any
    other cell error becomes a :class:`RuntimeError` naming the cell and the error. ``exc``
    is papermill's error or :class:`judgerisk.report._in_process.CellError`.
    """
    import papermill

    from judgerisk.report._in_process import CellError

    if isinstance(exc, CellError):
        cell, ename, evalue = exc.cell, exc.ename, exc.evalue
    elif isinstance(exc, papermill.PapermillExecutionError):
        cell, ename, evalue = exc.exec_count, exc.ename, exc.evalue
    else:
        return exc if isinstance(exc, Exception) else RuntimeError(str(exc))
    if ename in ("PanelError", "OutputPathError", "PanelFileNotFoundError"):
        return PanelError(str(evalue))
    return RuntimeError(f"cell {cell} of {notebook} failed: {ename}: {evalue}")


def _scores_link(scores_csv: Path, one_judge: bool = False) -> str:
    data = base64.b64encode(scores_csv.read_bytes()).decode("ascii")
    what, command = ("BPE table", "bpe") if one_judge else ("score table", "score")
    return (
        f'<p><a id="{_SCORES_ID}" download="{command}.csv" href="data:text/csv;base64,{data}">'
        f"Download the {what} (csv)</a>: every item's "
        + ("BPE and bidirectional verdict" if one_judge else "risk scores and verdicts")
        + f", the table <code>judgerisk {command}</code> writes.</p>"
    )


def embedded_csv(html_path: str | Path) -> str:
    """The text of the score table a report embeds (its csv download link)."""
    text = Path(html_path).read_text(encoding="utf-8")
    start = text.find(f'id="{_SCORES_ID}"')
    if start < 0:
        raise PanelError(f"{html_path}: the report embeds no score table")
    start = text.index("base64,", start) + len("base64,")
    end = text.index('"', start)
    try:
        return base64.b64decode(text[start:end], validate=True).decode("utf-8")
    except (ValueError, UnicodeDecodeError) as exc:
        raise PanelError(
            f"{html_path}: the embedded score table is not base64 csv ({exc})"
        ) from None


def embedded_scores(html_path: str | Path) -> pd.DataFrame:
    """The score table a report embeds (its csv download link), as a DataFrame."""
    return pd.read_csv(io.StringIO(embedded_csv(html_path)), dtype={"gold": str})


@collector_spared()  # a report imports a million objects: each walked about once
def render_report(
    panel_path: str | Path,
    output: str | Path,
    parameters: dict | None = None,
    timeout: int = DEFAULT_CELL_TIMEOUT,
    keep_notebook: str | Path | None = None,
    command: list[str] | str | None = None,
    progress: bool = False,
    shown_record: dict | None = None,
    overwrite: bool = True,
    announce: Callable[[str], object] | None = None,
    record: dict | None = None,
) -> Path:
    """Run the report notebook on a panel file and write a self-contained HTML report.

    Parameters
    ----------
    panel_path : path-like
        Panel file (.csv / .parquet / .jsonl); validated and checked for scoring first
        (:func:`judgerisk.panel.load_panel`, :func:`judgerisk.panel.check_scorable`), so bad
        input raises :class:`~judgerisk.panel.PanelError` before a kernel starts.
    output : path-like
        HTML file to write (checked before any work, written atomically; it must not be
        the panel file).
    parameters : dict, optional
        Notebook parameters (``n_seeds``, ``seed``, ``alpha``, ``n_splits``, ``accelerate``).
    timeout : int, default :data:`judgerisk.options.DEFAULT_CELL_TIMEOUT`
        Seconds allowed per cell.
    keep_notebook : path-like, optional
        Also save the executed ``.ipynb`` there (with the provenance record in its metadata).
    command : list of str or str, optional
        The command line that asked for the report (shown in its "Reproduce this report"
        section); default: this function call.
    progress : bool, default False
        Show a progress bar over the notebook's cells.
    shown_record : dict, optional
        The provenance record shown in "Reproduce this report" (default: this run's);
        ``judgerisk verify`` passes the verified report's, so the pages compare word by word.
    overwrite : bool, default True
        ``False`` refuses an existing ``output`` (the command line's rule without
        ``--overwrite``).
    announce : callable, optional
        Called with one line saying what comes next, once the input is checked and before
        the long steps (scoring, the notebook); the command line prints it.
    record : dict, optional
        The provenance record of the command line that asked for the report (``judgerisk
        report`` passes :func:`judgerisk.cli.common.command_record`'s, the one record shape of
        every command: the command and every option, its panel's row count left ``None`` and
        filled in here, where the panel is read); default: one naming ``command`` (or this
        function call) and the parameters.

    Returns
    -------
    pathlib.Path
        The HTML file. It embeds the score table (csv download link) and the provenance
        record (:mod:`judgerisk._provenance`), which ``judgerisk verify`` reads.
    """
    import warnings

    import jupytext

    from judgerisk._provenance import (
        check_output_path,
        finish_record,
        html_record_tag,
        make_record,
    )

    started = time.time()
    given = Path(panel_path)
    panel_path = given.resolve()
    output = check_output_path(
        output, suffixes=(".html", ".htm"), inputs=(panel_path,), overwrite=overwrite
    )
    if keep_notebook is not None:
        check_output_path(
            keep_notebook, (".ipynb",), (panel_path, output), "keep_notebook", overwrite
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        panel = load_panel(panel_path)  # fail fast, before starting a kernel
    if not one_judge_in_both_orders(panel):  # one judge in both orders: its own report
        refuse_unscorable(given, panel)
    params = ReportSettings.from_parameters(parameters).as_parameters()
    if record is None:
        if command is None:
            command = (
                f"judgerisk.report.build.render_report({str(given)!r}, {str(output)!r}, "
                f"parameters={params!r})"
            )
        recorded = {"command": "report", **params}
        record = make_record(command, recorded, {"panel": (panel_path, len(panel))}, started)
    elif record.get("inputs", {}).get("panel", {}).get("rows", 0) is None:
        record["inputs"]["panel"]["rows"] = len(panel)  # the command line's: read once, here
    one_judge, checked = _check_before_scoring(panel, params, announce)
    nb = jupytext.read(report_notebook_path(one_judge))
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    n_items = int(panel["item"].nunique())
    # a private folder beside the output (never the system temp folder): a killed run's is
    # swept by the next write there (judgerisk._util.safe_write.private_folder)
    with private_folder(output.parent) as tmp:
        scores_csv = Path(tmp) / "scores.csv"
        scores_pq = Path(tmp) / "scores.parquet"
        # on two cores the child also runs the notebook's longest step, the certification
        # check (0.45 s of a 2,000-item report), while this process imports
        certified = None if one_judge else Path(tmp) / "certified.parquet"
        score = functools.partial(_score_to_files, panel, params, progress, scores_pq, scores_csv)
        with _scored_aside(score, certified) as scored:
            # the kernel reads the panel and the scores from their files: this process holds
            # neither while it runs (a crowd's report needs the memory of one copy, not two)
            del panel, score
            _release_memory()
            if scored.forked:  # meanwhile, on another core: what the notebook will import
                _warm_up(nb)
            attrs = scored.result()
        attrs["warnings"] = sorted(set(checked) | set(attrs["warnings"]))
        shown = shown_record if shown_record is not None else record
        reproduce = {k: v for k, v in shown.items() if k != "_t0"}
        reproduce["command_text"] = command_text(shown)
        nb_params = {
            "panel_path": str(panel_path),
            # papermill writes a tuple as its text: a list is a list in the notebook
            **{k: list(v) if isinstance(v, tuple) else v for k, v in params.items()},
            "scores_path": str(scores_pq),
            "warnings_text": attrs.get("warnings", []),
            **{k: attrs[k] for k in ("certified_path", "certified_warnings") if k in attrs},
            "provenance": reproduce,
        }
        # only the names the template declares (the one-judge report has no LMM settings, no
        # aggregators): papermill warns on the terminal of every other one
        declared = notebook_parameters(nb)
        nb_params = {k: v for k, v in nb_params.items() if k in declared}
        # meanwhile, on another core: nbconvert imported, its page templates compiled
        with serve_aside(_page_renderer, _scoring_aside_possible(), _RENDERER) as render:
            executed = run_notebook(
                nb,
                Path(tmp) / "panel_report.ipynb",
                nb_params,
                tmp,
                timeout,
                progress,
                in_process=True,  # a report fills a template: no kernel to start
            )
            settings = report_settings(n_items, one_judge, None if one_judge else attrs["seeds"])
            final = finish_record(record, settings)
            executed.metadata.setdefault("judgerisk", {})["provenance"] = final
            for k, cell in enumerate(executed.cells):  # jupytext and papermill draw random ids:
                cell["id"] = f"cell-{k}"  # numbered, the page's markup is the same every run
            page = render((executed, f"judgerisk report: {panel_path.name}"))
        extra = _scores_link(scores_csv, one_judge) + "\n" + html_record_tag(final) + "\n"
        page = page.replace("\n</body></html>", "\n" + extra + "</body></html>")
        _publish(output, page, executed, keep_notebook, exclusive=not overwrite)
    return output


def _release_memory() -> None:
    """Give freed memory back to the system (the garbage, Arrow's pool, glibc's heap)."""
    import ctypes
    import ctypes.util
    import gc

    from judgerisk.report._in_process import settle

    if not settle():  # in render_report's collector_spared block: walks only what came since
        gc.collect()
    try:
        import pyarrow

        pyarrow.default_memory_pool().release_unused()
    except (ImportError, AttributeError):
        pass
    libc = ctypes.util.find_library("c")
    trim = getattr(ctypes.CDLL(libc), "malloc_trim", None) if libc else None
    if trim is not None:  # glibc only; elsewhere freed memory stays with the process
        trim(0)


def _publish(
    output: Path, page: str, executed: Any, keep_notebook: str | Path | None, exclusive: bool
) -> None:
    """Write the page (and the executed notebook) atomically; ``exclusive``: onto free names
    only (:class:`judgerisk._util.safe_write.OutputExistsError` when another process wrote one
    meanwhile). In one folder the two are published as a unit."""
    import nbformat

    def _page(t: Path) -> None:
        t.write_text(page, encoding="utf-8")

    if keep_notebook is None:
        atomic_write(output, _page, exclusive=exclusive)
        return
    notebook = Path(keep_notebook)

    def _notebook(t: Path) -> None:
        nbformat.write(executed, str(t))

    if notebook.resolve().parent == output.resolve().parent:
        atomic_write_group([(output, _page), (notebook, _notebook)], exclusive=exclusive)
    else:
        atomic_write(output, _page, exclusive=exclusive)
        atomic_write(notebook, _notebook, exclusive=exclusive)


def _check_before_scoring(
    panel: pd.DataFrame, params: dict, announce: Callable[[str], object] | None = None
) -> tuple[bool, list[str]]:
    """Check a panel for its report (so that bad input fails early) and announce the scoring.

    Returns whether the panel is one judge in both orders, and the warnings of the checks (ties,
    a judge that looks unflipped), shown in the report's warnings cell with the scoring's.
    """
    import warnings

    one = one_judge_in_both_orders(panel)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if one:
            warn_ties_and_orientation(panel)
            doing = (
                f"one judge in both orders: computing the BPE of {panel['item'].nunique()} "
                "items (the per-item table alone: judgerisk bpe), then running the one-judge "
                "report notebook"
            )
        else:
            check_scorable(panel)
            how = (
                f"{params['n_seeds']} repetition(s) of {params['n_folds']}-fold cross-fitting"
                if params["protocol"] == "kfold"
                else f"{params['n_seeds']} random split(s) of the paper's protocol"
            )
            doing = (
                f"scoring {panel['item'].nunique()} items with {how}, then running the report "
                "notebook"
            )
    if announce is not None:
        announce(doing)
    return one, _user_warnings(caught)


def _user_warnings(caught: list) -> list[str]:
    return sorted({str(w.message) for w in caught if w.category is UserWarning})


def _score_to_files(
    panel: pd.DataFrame,
    params: dict,
    progress: bool,
    parquet: Path,
    csv: Path,
    certified: Path | None = None,
) -> dict[str, Any]:
    """The report's table (:func:`report_table`) written where the notebook reads it
    (``scores_path``, so it does not score again) and as the page's csv download.

    Returns its ``seeds`` and its ``warnings`` (thin items, dropped signals: the report's
    warnings cell shows them). With ``certified`` and gold labels, also the notebook's check of
    the certified decisions (:func:`_certification_to_file`)."""
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scores = report_table(panel, params, progress)
    scores.to_parquet(parquet)
    scores.reset_index().to_csv(csv, index=False)
    done = {"seeds": scores.attrs.get("seeds"), "warnings": _user_warnings(caught)}
    if certified is not None and "gold" in panel.columns:
        del scores  # the notebook's scores are the file's
        done.update(_certification_to_file(panel, params, pd.read_parquet(parquet), certified))
    return done


def _certification_to_file(
    panel: pd.DataFrame, params: dict, scores: pd.DataFrame, path: Path
) -> dict[str, Any]:
    """The panel report's check of its certified decisions
    (:func:`judgerisk.report._content.certification_check`, the arguments its notebook passes)
    written to ``path``, and the notebook parameters that make its cell read it
    (``certified_path``) and show the warnings it raised (``certified_warnings``).

    On an error nothing is returned: the notebook's cell runs the check and reports it.
    """
    from judgerisk._util.warning_records import recorded_warnings
    from judgerisk.report._content import certification_check

    try:
        with recorded_warnings() as caught:
            table = certification_check(
                panel,
                scores,
                params["alpha"],
                params["n_splits"],
                params["aggregators"],
                params["certified_scores"],
            )
        table.to_parquet(path)
    except Exception:  # noqa: BLE001 - the cell raises it again, with its number
        return {}
    return {"certified_path": str(path), "certified_warnings": caught}


def _scoring_aside_possible() -> bool:
    """Whether the scoring, and later the page's rendering, may run in a forked process beside
    this one (:func:`judgerisk._util.aside.fork_possible`)."""
    return fork_possible()


@contextmanager
def _scored_aside(
    score: Callable[..., dict[str, Any]], certified: Path | None = None
) -> Iterator[Aside]:
    """Run ``score()`` (:func:`_score_to_files` on the panel) in a forked process when
    :func:`_scoring_aside_possible`, else here before the block runs
    (:func:`judgerisk._util.aside.run_aside`).

    The notebook cannot start before its scores are written, but what it imports (0.8 s of a
    2,000-item report on one core: matplotlib, scipy.stats, seaborn, IPython) does
    not depend on them: on two cores the block imports it while the child scores (0.6 s) and,
    with ``certified``, runs the notebook's certification check into that file (0.45 s), which
    the notebook then reads. The child computes exactly what this process would (the same code
    on a copy of the same memory, on one BLAS thread: :func:`report_table`); an error it raises
    is raised here, from :meth:`~judgerisk._util.aside.Aside.result`. Leaving the block early
    kills the child.
    """
    fork = _scoring_aside_possible()  # else the notebook checks the certification itself
    call = functools.partial(score, certified) if fork else score
    del score  # the block's caller lets go of the panel: so does this frame
    with run_aside(call, fork, what="the report's scoring process") as scoring:
        del call
        yield scoring


def _warm_up(nb: Any) -> None:
    """Import what running ``nb`` in this process will import
    (:func:`judgerisk.report._in_process.warm_up`)."""
    from judgerisk.report._in_process import warm_up

    warm_up(nb)


_RENDERER = "the report's page-rendering process"


def _page_renderer() -> Callable[[tuple[Any, str]], str]:
    """:func:`notebook_to_html` of a ``(notebook, title)`` pair, its exporter made first.

    Making it (nbconvert's import and its templates' compilation: 0.3 s) does not depend on the
    notebook, so :func:`render_report` has it made in a forked process while this one runs the
    notebook (:func:`judgerisk._util.aside.serve_aside`), which then renders the page.
    """
    import nbformat

    notebook_to_html(nbformat.v4.new_notebook())
    return lambda pair: notebook_to_html(*pair)


#: The report's parameters and their defaults (:class:`judgerisk.options.ReportSettings`).
REPORT_DEFAULTS = ReportSettings().as_parameters()
