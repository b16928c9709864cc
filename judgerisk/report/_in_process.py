"""Run a report notebook inside this process: no Jupyter kernel to start, no imports to repeat.

A report fills a template; it does not need a second Python. Starting a kernel and importing
pandas, matplotlib and judgerisk in it again took about 3 of the 5 seconds a 2,000-item report
spent in its notebook (``benchmarks/scale.py``). :func:`execute_in_process` runs the same cells
in IPython's in-process kernel (:mod:`ipykernel.inprocess`): the same shell, display machinery
and ``%matplotlib inline`` figures as a kernel, in this interpreter, with each cell's outputs
built from the kernel's messages (:func:`nbformat.v4.output_from_msg`), as nbclient builds them.

The notebook's namespace is cleared when it ends, and the warning filters, matplotlib's
settings and standard output it changed are put back. Where IPython already runs in this
process (a report made from a Jupyter notebook), there can be only one shell:
:func:`can_run_in_process` is then false and the report starts a kernel as before.
"""

from __future__ import annotations

import copy
import gc
import os
import signal
import sys
import threading
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

__all__ = [
    "CellError",
    "can_run_in_process",
    "collector_spared",
    "execute_in_process",
    "settle",
    "warm_up",
]


class CellError(Exception):
    """A cell of a notebook run in-process raised ``ename: evalue`` (``cell`` counts from 1)."""

    def __init__(self, cell: int, ename: str, evalue: str) -> None:
        super().__init__(f"cell {cell} failed: {ename}: {evalue}")
        self.cell, self.ename, self.evalue = cell, ename, evalue


_spared = 0  # how many collector_spared blocks are open (in any thread)
# Python 3.12 freezes a few hundred objects of its own at start-up (375 on 3.12.1; 0 on 3.11
# and 3.13): objects frozen when this module was imported are taken for the interpreter's.
_FROZEN_AT_IMPORT = gc.get_freeze_count()
_spared_lock = threading.Lock()


@contextmanager
def collector_spared() -> Iterator[None]:
    """Keep the garbage collector from walking, again and again, what a report has imported.

    A report imports pandas, scipy, matplotlib, IPython and nbconvert: a quarter of a million
    objects the cyclic garbage collector walks in every full collection, and a report triggered
    seven (0.5 s of a 2,000-item report's 4.4 s). In this block the objects alive at its start are
    frozen (:func:`gc.freeze`: kept out of every collection), and :func:`settle` freezes the
    survivors of each later step after collecting that step's garbage, so each object is walked
    about once. Every object is unfrozen at the end (the caller's collections are as before).
    Nested blocks (several threads) unfreeze at the last one's end; where objects were already
    frozen by someone else (more than the interpreter froze by the time this module was
    imported), the block does nothing.
    """
    global _spared
    with _spared_lock:
        mine = _spared > 0 or gc.get_freeze_count() <= _FROZEN_AT_IMPORT
        if mine:
            if _spared:  # nested: what came since the last step is collected, then frozen
                gc.collect()
            gc.freeze()
            _spared += 1
    try:
        yield
    finally:
        if mine:
            with _spared_lock:
                _spared -= 1
                if _spared == 0:
                    gc.unfreeze()


def settle() -> bool:
    """In a :func:`collector_spared` block: collect the garbage made since the last step (a full
    collection that walks only the objects made since), then freeze the survivors. Returns
    whether it did (outside such a block it does nothing)."""
    with _spared_lock:
        if _spared > 0:
            gc.collect()
            gc.freeze()
            return True
    return False


class _CellTimeout(Exception):
    """Raised inside a cell that ran past its time (the signal handler's exception)."""


def can_run_in_process() -> bool:
    """True when no IPython shell runs in this process (IPython allows one per process)."""
    try:
        from IPython.core.interactiveshell import InteractiveShell
    except ImportError:  # pragma: no cover - IPython comes with the report's dependencies
        return False
    return not InteractiveShell.initialized()


@contextmanager
def _time_limit(seconds: float | None) -> Iterator[None]:
    """Raise :class:`_CellTimeout` in the block after ``seconds`` (main thread, POSIX only)."""
    usable = (
        seconds is not None
        and hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
    )
    if not usable:
        yield
        return

    def _expire(signum: int, frame: Any) -> None:
        raise _CellTimeout(f"the cell ran past {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, _expire)
    signal.setitimer(signal.ITIMER_REAL, float(seconds))  # type: ignore[arg-type]
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


_SHOWN = ("stream", "display_data", "execute_result", "error", "clear_output")


def _messages_of(channel: Any, msg_id: str, wait: float = 30.0) -> list[dict]:
    """The iopub messages of one execution, up to its ``status: idle``.

    The in-process kernel sends them through its IOPub thread, so some can still be on their
    way when the reply comes; the idle status is the kernel's last word on a request (nbclient
    waits for it too). Its requests run one at a time, so every message before that status
    belongs to this one: its standard output's carry no parent header (ipykernel 7 keeps
    that header per thread, and the stream is flushed from the IOPub thread).
    """
    from queue import Empty

    messages: list[dict] = []
    while True:
        try:
            msg = channel.get_msg(timeout=wait)
        except Empty:  # pragma: no cover - the kernel always says idle; never hang on it
            return messages
        mine = msg.get("parent_header", {}).get("msg_id") == msg_id
        if mine and msg["msg_type"] == "status" and msg["content"].get("execution_state") == "idle":
            return messages
        messages.append(msg)


def _cell_outputs(messages: list[dict]) -> list[Any]:
    """The nbformat outputs of one execution's iopub messages (as nbclient builds them)."""
    from nbformat.v4 import output_from_msg

    outputs: list[Any] = []
    for msg in messages:
        kind = msg["msg_type"]
        if kind == "clear_output":
            outputs.clear()
        elif (
            kind == "stream"
            and outputs
            and outputs[-1].get("output_type") == "stream"
            and (outputs[-1]["name"] == msg["content"]["name"])
        ):
            outputs[-1]["text"] += msg["content"]["text"]  # one output per stream run
        elif kind in _SHOWN:
            outputs.append(output_from_msg(msg))
    return outputs


def warm_up(nb: Any) -> None:
    """Import, ahead of :func:`execute_in_process`, what it imports (IPython's in-process kernel,
    pyplot, papermill's parameter injection) and the modules that ``nb``'s code cells import at
    their top level (read from their import statements). A module that fails to import is left
    for its cell to report."""
    import importlib

    import ipykernel.inprocess.ipkernel  # noqa: F401
    import ipykernel.inprocess.manager  # noqa: F401
    import matplotlib.pyplot  # noqa: F401
    import matplotlib_inline.backend_inline  # noqa: F401
    import papermill.parameterize  # noqa: F401
    import tqdm.auto  # noqa: F401

    for cell in nb.cells:
        for name in _imported_modules(cell) if cell.get("cell_type") == "code" else ():
            try:
                importlib.import_module(name)
            except Exception:  # noqa: BLE001 - its cell raises it, with the cell's number
                pass


def _imported_modules(cell: Any) -> list[str]:
    """The modules a code cell imports at its top level (its IPython lines, ``%...``, left out).

    >>> _imported_modules({"source": "import a.b, c\\n%matplotlib inline\\nfrom d import e"})
    ['a.b', 'c', 'd']
    """
    import ast

    lines = [
        line for line in cell["source"].splitlines() if not line.lstrip().startswith(("%", "!"))
    ]
    try:
        body = ast.parse("\n".join(lines)).body
    except SyntaxError:  # other IPython syntax: the cell imports what it imports when it runs
        return []
    names: list[str] = []
    for node in body:
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
    return names


def execute_in_process(
    nb: Any,
    parameters: dict | None = None,
    timeout: float | None = None,
    progress: bool = False,
) -> Any:
    """Inject ``parameters`` as papermill does, then execute every code cell of a copy of
    ``nb`` in an in-process IPython kernel; returns the executed copy.

    Parameters
    ----------
    nb : nbformat.NotebookNode
        The notebook (left unchanged).
    parameters : dict, optional
        Values for the names of its ``parameters`` cell: papermill's ``injected-parameters``
        cell follows it (:func:`papermill.parameterize.parameterize_notebook`).
    timeout : float, optional
        Seconds a cell may run (enforced on the main thread of a POSIX system).
    progress : bool, default False
        A progress bar of the cells (tqdm), as papermill draws one.

    Notes
    -----
    The cells run in the caller's working folder (a kernel ran in the one papermill was given);
    the report templates read and write absolute paths only.

    Raises
    ------
    CellError
        The first cell that raised.
    RuntimeError
        When IPython already runs in this process (:func:`can_run_in_process`).
    """
    if not can_run_in_process():
        raise RuntimeError("an IPython shell runs in this process: run the notebook in a kernel")
    with collector_spared(), _environment_restored(), _interpreter_restored():
        os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")  # debugpy's import notice
        import matplotlib
        from ipykernel.inprocess.ipkernel import InProcessInteractiveShell
        from ipykernel.inprocess.manager import InProcessKernelManager
        from tqdm.auto import tqdm
        from traitlets.config import Config

        manager = InProcessKernelManager(config=Config(_SHELL_CONFIG))
        with warnings.catch_warnings(), matplotlib.rc_context(), _own_figures():
            _fresh_warning_filters()  # as a new kernel's, whatever this process set
            nb = _parameterized(nb, parameters or {})
            n_code = sum(c.get("cell_type") == "code" for c in nb.cells)
            try:
                manager.start_kernel()
                client = manager.client()
                client.start_channels()
                with tqdm(total=n_code, desc="Executing", unit="cell", disable=not progress) as bar:
                    _run_cells(nb, client, timeout, bar.update)
            finally:
                if manager.kernel is not None:
                    _close_shell(manager.kernel.shell)  # the notebook's tables go
                    _cancel_iopub_gc(manager.kernel.iopub_thread)
                    manager.shutdown_kernel()
                InProcessInteractiveShell.clear_instance()
                _forget_inline_backend()
    return nb


#: The in-process shell's settings: no history file written into the user's home folder for a
#: report's cells, and no output cache (``Out``, ``_``, ``_1``...: no template reads them). The
#: cache is what makes the shell's ``reset`` run a full garbage collection (its
#: ``displayhook.flush``), which walks every object of the libraries the report imported (about
#: 0.1 s; the notebook's tables are freed by their reference counts when the namespace goes).
_SHELL_CONFIG = {"HistoryManager": {"enabled": False}, "InteractiveShell": {"cache_size": 0}}


def _close_shell(shell: Any) -> None:
    """Clear the shell's namespace now, once, and drop its exit handler.

    IPython registers ``atexit_operations`` for every shell: at the process's exit it resets the
    shell a second time (with the output cache on, a full garbage collection) and closes its
    history. Run here, it does both now; unregistered, nothing of the ended shell runs at exit.
    """
    import atexit

    shell.atexit_operations()
    atexit.unregister(shell.atexit_operations)


def _parameterized(nb: Any, parameters: dict) -> Any:
    """A copy of ``nb`` with the metadata papermill's loader adds and the injected parameters."""
    from papermill.parameterize import parameterize_notebook

    nb = copy.deepcopy(nb)
    nb.metadata.setdefault("papermill", {"parameters": {}})
    for cell in nb.cells:
        cell.metadata.setdefault("tags", [])
    return parameterize_notebook(nb, parameters)


def _cancel_iopub_gc(iopub: Any) -> None:
    """Cancel the IOPub thread's periodic task while its loop still runs.

    ipykernel 7 cancels it only after the loop stopped, so the task is never finished and
    asyncio prints "Task was destroyed but it is pending!" when it is collected (at exit).
    """
    task = getattr(iopub, "_event_pipe_gc_task", None)
    if task is None or not iopub.thread.is_alive():
        return
    cancelled = threading.Event()

    def _cancel() -> None:
        task.cancel()  # the task takes its CancelledError on the loop's next turn, before
        cancelled.set()  # the stop that shutdown_kernel queues after this callback

    iopub.io_loop.add_callback(_cancel)
    cancelled.wait(5)


#: The warning filters a new Python starts with (outside development mode), in their order.
_FRESH_FILTERS = (
    ("default", DeprecationWarning, "__main__"),
    ("ignore", DeprecationWarning, ""),
    ("ignore", PendingDeprecationWarning, ""),
    ("ignore", ImportWarning, ""),
    ("ignore", ResourceWarning, ""),
)


def _fresh_warning_filters() -> None:
    """Set the filters of a new interpreter (a kernel's): a caller's ``ignore`` (``verify``
    recomputes quietly) or ``error`` must not change which notes a report shows."""
    warnings.resetwarnings()
    for action, category, module in _FRESH_FILTERS:
        warnings.filterwarnings(action, category=category, module=module, append=True)  # type: ignore[arg-type]


@contextmanager
def _environment_restored() -> Iterator[None]:
    """``os.environ`` as it was: an IPython kernel's shell sets ``TERM``, ``CLICOLOR``,
    ``FORCE_COLOR`` and the pagers for its own process (a later subprocess would colour its
    output), and a notebook may set more."""
    saved = dict(os.environ)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


@contextmanager
def _interpreter_restored() -> Iterator[None]:
    """``sys.modules["__main__"]`` and the builtins as they were.

    An IPython shell installs its namespace as ``__main__`` and adds ``display``, ``execfile``,
    ``runfile`` and ``__IPYTHON__`` to the builtins; left there, other libraries would take
    this process for a notebook's (tqdm.auto, for one, would draw widgets).
    """
    import builtins

    main = sys.modules.get("__main__")
    before = set(vars(builtins))
    try:
        yield
    finally:
        if main is not None:
            sys.modules["__main__"] = main
        for name in set(vars(builtins)) - before:
            delattr(builtins, name)


@contextmanager
def _own_figures() -> Iterator[None]:
    """The notebook sees none of the caller's open pyplot figures, and leaves none behind.

    The inline backend shows every open figure after each cell, as a kernel would show the
    figures of its own (empty) process; a caller's figures would otherwise appear in the page.
    pyplot's backend (``%matplotlib inline`` switches it) is the caller's again afterwards.
    """
    import matplotlib.pyplot as plt
    from matplotlib._pylab_helpers import Gcf  # pyplot's registry of open figures

    backend = plt.get_backend()
    callers = dict(Gcf.figs)
    Gcf.figs.clear()
    try:
        yield
    finally:
        plt.close("all")  # the notebook's
        if plt.get_backend() != backend:
            plt.switch_backend(backend)
        Gcf.figs.update(callers)


def _forget_inline_backend() -> None:
    """Undo what ``%matplotlib inline`` keeps once per process.

    matplotlib-inline registers its figure formats only the first time it configures a shell
    (it marks ``configure_inline_support.current_backend``), so the next run's new shell
    would show figures as their text repr; the mark and its settings object go with the shell.
    """
    try:
        from matplotlib_inline import backend_inline
    except ImportError:  # pragma: no cover - ipykernel depends on matplotlib-inline
        return
    configure = backend_inline.configure_inline_support
    if hasattr(configure, "current_backend"):
        del configure.current_backend
    backend_inline.InlineBackend.clear_instance()


def _run_cells(
    nb: Any, client: Any, timeout: float | None, progress: Callable[[int], object] | None
) -> None:
    count = 0
    for cell in nb.cells:
        if cell.get("cell_type") != "code":
            continue
        count += 1
        try:
            with _time_limit(timeout):
                msg_id = client.execute(cell["source"], store_history=True)
                reply = client.get_shell_msg(timeout=1)
        except _CellTimeout as exc:
            raise CellError(count, "TimeoutError", str(exc)) from None
        cell["outputs"] = _cell_outputs(_messages_of(client.iopub_channel, msg_id))
        cell["execution_count"] = reply["content"].get("execution_count", count)
        settle()  # the cell's garbage collected, its survivors (its imports) frozen
        if progress is not None:
            progress(1)
        content = reply["content"]
        if content.get("status") == "error":
            ename = content.get("ename", "Error")
            if ename == _CellTimeout.__name__:  # the limit fired inside the cell's own code
                ename = "TimeoutError"
            raise CellError(count, ename, content.get("evalue", ""))
