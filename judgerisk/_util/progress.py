"""Progress bars for long loops (one place that imports tqdm; on at a terminal in the CLI).

``tqdm.auto`` picks a notebook widget when it runs in Jupyter and ipywidgets is installed,
and a text bar otherwise. Without ipywidgets, *importing* ``tqdm.auto`` in a kernel raises
``TqdmWarning: IProgress not found`` even when no bar is ever shown, and that warning would
appear in every rendered chapter. The import therefore happens here, lazily, with that one
warning silenced: the text bar is the intended fallback, not a problem to report.
"""

from __future__ import annotations

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


def progress_bar(iterable=None, *, enabled: bool = True, **kwargs):
    """A ``tqdm`` bar over ``iterable`` (or a manual one with ``total=``), hidden unless enabled.

    Parameters
    ----------
    iterable : iterable, optional
    enabled : bool, default True
        ``False`` returns a disabled bar (it prints nothing and costs nothing).
    **kwargs
        Passed to ``tqdm`` (``total``, ``desc``, ...).
    """
    from tqdm import TqdmWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TqdmWarning)
        from tqdm.auto import tqdm

    return tqdm(iterable, disable=not enabled, **kwargs)
