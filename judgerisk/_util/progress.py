"""Progress bars for long loops (one place that imports tqdm; on at a terminal in the CLI).

In a Jupyter kernel with ipywidgets a bar is a notebook widget, and a text bar otherwise; the
choice is made at each call (``tqdm.auto`` makes it once, at its first import, which a report run
in this process would freeze). Without ipywidgets, *importing* ``tqdm.auto`` in a kernel raises
``TqdmWarning: IProgress not found`` even when no bar is ever shown, and that warning would
appear in every rendered chapter. The import therefore happens here, lazily, with that one
warning silenced: the text bar is the intended fallback, not a problem to report.
"""

from __future__ import annotations

import functools
import sys
import warnings

__all__ = ["progress_bar", "want_progress"]


def want_progress(flag: bool | None, stream=None) -> bool:
    """Whether to show progress: ``flag`` when given, else whether ``stream`` is a terminal.

    A person waiting at a terminal sees the bars by default; logs and pipes (a stream that is
    not a terminal) stay free of them unless asked for (``--progress``).

    Parameters
    ----------
    flag : bool or None
        ``--progress`` (True), ``--no-progress`` (False) or neither (None).
    stream : file, optional
        Where the bars go (default: ``sys.stderr``).
    """
    if flag is not None:
        return bool(flag)
    stream = sys.stderr if stream is None else stream
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def _in_a_kernel() -> bool:
    """Whether this code runs in a Jupyter kernel now (``tqdm.autonotebook``'s own test).

    ``tqdm.auto`` makes this choice once, when it is first imported, and keeps it: imported
    while :func:`judgerisk.report.build.render_report` runs a notebook in this process, it
    would draw every later bar of the process as a notebook bar on stdout. The test is made
    at each call instead, and imports no IPython that is not already there.
    """
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    return shell is not None and "IPKernelApp" in getattr(shell, "config", {})


def progress_bar(iterable=None, *, enabled: bool = True, **kwargs):
    """A ``tqdm`` bar over ``iterable`` (or a manual one with ``total=``), hidden unless enabled.

    In a Jupyter kernel with ipywidgets the bar is a notebook widget; elsewhere it is
    tqdm's text bar on ``sys.stderr``.

    Parameters
    ----------
    iterable : iterable, optional
    enabled : bool, default True
        ``False`` returns a disabled bar (it prints nothing and costs nothing).
    **kwargs
        Passed to ``tqdm`` (``total``, ``desc``, ...).
    """
    if not enabled:  # tqdm and its lock (multiprocessing) take 0.05 s to import
        return _Hidden(iterable)
    from tqdm import TqdmWarning

    if _in_a_kernel():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TqdmWarning)
            from tqdm.autonotebook import tqdm
    else:
        from tqdm.std import tqdm

    return _without_monitor(tqdm)(iterable, **kwargs)


@functools.cache
def _without_monitor(bar: type) -> type:
    """``bar`` without tqdm's monitor thread, which its first instance starts even when
    disabled: a process that runs a thread may not fork, and
    :func:`judgerisk.engine.certified.score_panel` forks to score splits on other cores (the
    monitor only shortens a bar's refresh interval after a long stall)."""
    return type(bar.__name__, (bar,), {"monitor_interval": 0, "__module__": bar.__module__})


class _Hidden:
    """A bar that is not shown: the part of tqdm's interface judgerisk uses, drawing nothing."""

    def __init__(self, iterable=None) -> None:
        self.iterable, self.n = iterable, 0

    def __iter__(self):
        return iter(self.iterable)

    def __enter__(self) -> _Hidden:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def update(self, n: int = 1) -> None:
        self.n += n

    def set_postfix(self, *args: object, **kwargs: object) -> None:
        pass

    def close(self) -> None:
        pass
