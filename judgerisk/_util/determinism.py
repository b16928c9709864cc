"""Same numbers whatever the BLAS thread count: scoring runs its BLAS calls on one thread.

A multi-threaded BLAS splits sums differently for each thread count, so the latent
measurement model's fit (and U and C) moved by about 1e-10 relative between
``OPENBLAS_NUM_THREADS=1`` and ``=2`` on a 1,000,020-row panel. Inside
:func:`one_blas_thread` every BLAS library in the process (OpenBLAS, MKL, BLIS) uses one thread
(:func:`threadpoolctl.threadpool_limits`), so ``judgerisk score``, ``report`` and ``verify``
compute identical numbers on one machine whatever the environment asks for. The matrices of a
panel fit are thin (items x judges), so one thread costs little: on that panel, on two cores,
scoring took 156 s with one thread and 178 s with two.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["one_blas_thread"]


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """Within the block, BLAS calls run on one thread (restored afterwards)."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        yield
