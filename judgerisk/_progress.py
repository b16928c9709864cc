"""Progress bars for long loops (off by default; one place that imports tqdm).

``tqdm.auto`` picks a notebook widget when it runs in Jupyter and ipywidgets is installed,
and a text bar otherwise. Without ipywidgets, *importing* ``tqdm.auto`` in a kernel raises
``TqdmWarning: IProgress not found`` even when no bar is ever shown, and that warning would
appear in every rendered chapter. The import therefore happens here, lazily, with that one
warning silenced: the text bar is the intended fallback, not a problem to report.
"""

from __future__ import annotations

import warnings

__all__ = ["progress_bar"]


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
