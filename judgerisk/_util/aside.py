"""Work run in a forked process beside this one: its result, warnings and error brought back.

A report scores its panel in a child while it imports what its notebook needs, then has
another child make its page renderer while it runs the notebook (:func:`serve_aside`: the
child prepares now and answers one call later), and
:func:`judgerisk.engine.certified.score_panel` scores some of its cross-fitting splits in
children while it scores the others. The child runs the same code on a copy of the same
memory, so it computes exactly what this process would; what it returns comes back pickled
through a pipe, an error it raises is raised here again (with a note saying where it was
raised) and, when asked, the warnings it issued come back as records
(:mod:`judgerisk._util.warning_records`).

A fork is only used where it is safe and useful (:func:`fork_possible`): on Linux, with no
other Python thread running, with a second core, and not from a forked child itself.
"""

from __future__ import annotations

import gc
import os
import pickle
import sys
import threading
import traceback
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from judgerisk._util.warning_records import recorded_warnings

__all__ = ["Aside", "fork_possible", "run_aside", "serve_aside", "usable_cores"]

_in_child = False  # set in a forked child: it never forks again (no process trees of forks)


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the OS tells it)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        return os.cpu_count() or 1


def fork_possible() -> bool:
    """Whether work may run in a forked process beside this one: on Linux (a fork is safe there
    once no other Python thread runs), with a second core to run on, and not in a child that
    :func:`run_aside` forked."""
    return (
        sys.platform.startswith("linux")
        and not _in_child
        and threading.active_count() == 1
        and usable_cores() > 1
    )


class Aside:
    """A call of :func:`run_aside`: in a forked child (``forked``) or already done here."""

    def __init__(self, value: Any = None, pid: int = 0, pipe: int = -1, what: str = "") -> None:
        self.value, self.pid, self.pipe, self.what = value, pid, pipe, what
        self.forked = pid > 0
        self.warnings: list[list[Any]] = []

    def result(self) -> Any:
        """What the call returned (waits for the child); its error raised again here."""
        if not self.forked or self.pid == 0:
            return self.value
        pipe, self.pipe = self.pipe, -1
        with os.fdopen(pipe, "rb") as fh:  # the child closes its end when it ends
            data = fh.read()
        _, status = os.waitpid(self.pid, 0)
        self.pid = 0
        if not data:
            raise RuntimeError(f"{self.what} ended without a result ({status})")
        ok, self.value, self.warnings, where = pickle.loads(data)
        if ok:
            return self.value
        self.value.add_note(f"raised in {self.what}:\n{where}")
        raise self.value

    def cancel(self) -> None:
        """End the child if it still runs (this process failed or was interrupted first)."""
        if self.pid > 0:
            os.kill(self.pid, 9)
            os.waitpid(self.pid, 0)
            self.pid = 0
        if self.pipe >= 0:
            os.close(self.pipe)
            self.pipe = -1


@contextmanager
def run_aside(
    fn: Callable[[], Any], fork: bool, what: str = "the forked process", record: bool = False
) -> Iterator[Aside]:
    """Run ``fn()`` in a forked child when ``fork`` (the caller checked :func:`fork_possible`),
    else here, before the block runs; :meth:`Aside.result` is what it returned.

    With ``record``, the child records the warnings it issues
    (:func:`judgerisk._util.warning_records.recorded_warnings`) and :attr:`Aside.warnings` holds
    them once :meth:`Aside.result` returned, for the caller to replay where they belong in its
    own order (:func:`~judgerisk._util.warning_records.replay_warnings`); without ``record`` the
    child shows its warnings itself. Leaving the block before :meth:`Aside.result` kills the
    child; ``what`` names it in errors.
    """
    if not fork:
        value = fn()
        del fn  # what it holds (a panel) is not held through the caller's block
        yield Aside(value=value)
        return
    read, write = os.pipe()
    pid = _fork()
    if pid == 0:  # the child: run, send the outcome, end without this process's exit work
        try:
            os.close(read)
            _send(write, _outcome(fn, record))
        finally:
            os._exit(0)
    os.close(write)
    del fn  # the child has its copy of what it holds
    aside = Aside(pid=pid, pipe=read, what=what)
    try:
        yield aside
    finally:
        aside.cancel()


@contextmanager
def serve_aside(
    prepare: Callable[[], Callable[[Any], Any]], fork: bool, what: str = "the forked process"
) -> Iterator[Callable[[Any], Any]]:
    """Run ``prepare()`` in a forked child when ``fork`` (the caller checked
    :func:`fork_possible`), and later, on the block's one call ``ask(arg)``, the function it
    returned on ``arg``: ``ask`` returns what that returned, or raises its error (or
    ``prepare``'s) again here, with a note naming ``what``.

    The child prepares (imports, compiles) while this process does other work; it sees only
    what this process held when the block began. Without ``fork`` both run here, at the call.
    Leaving the block without the call, or before the answer, ends the child.
    """
    if not fork:
        yield lambda arg: prepare()(arg)
        return
    request_read, request = os.pipe()
    read, write = os.pipe()
    pid = _fork()
    if pid == 0:  # the child: prepare, wait for the argument, answer, end
        try:
            os.close(request)
            os.close(read)
            ready = _outcome(prepare, False)
            with os.fdopen(request_read, "rb") as fh:
                data = fh.read()
            if data:  # nothing: the block ended without asking
                arg = pickle.loads(data)
                _send(write, _outcome(lambda: ready[1](arg), False) if ready[0] else ready)
        finally:
            os._exit(0)
    os.close(request_read)
    os.close(write)
    aside = Aside(pid=pid, pipe=read, what=what)

    def ask(arg: Any) -> Any:
        nonlocal request
        fd, request = request, -1
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(pickle.dumps(arg, protocol=pickle.HIGHEST_PROTOCOL))
        except BrokenPipeError:  # the child is gone: result() says so
            pass
        return aside.result()

    try:
        yield ask
    finally:
        if request >= 0:
            os.close(request)
        aside.cancel()


def _fork() -> int:
    """``os.fork()``, the standard streams flushed first; in the child :func:`fork_possible`
    is then false (a child never forks) and the inherited objects are frozen
    (:func:`gc.freeze`)."""
    sys.stdout.flush()
    sys.stderr.flush()
    with warnings.catch_warnings():
        # Python 3.12+ warns at a fork whenever the process has another OS thread. No other
        # Python thread runs here (fork_possible); the others are native pools (OpenBLAS,
        # Arrow) that their libraries rebuild after a fork, and the child uses none of them
        # before it has its own.
        warnings.filterwarnings(
            "ignore",
            message=r".*use of fork\(\) may lead to deadlocks",
            category=DeprecationWarning,
        )
        pid = os.fork()
    if pid == 0:
        global _in_child
        _in_child = True
        # what the child inherited is never walked by its garbage collector: a collection
        # writes to every object it walks, which copies the page the object shares with the
        # parent (the child's private memory would grow by much of the parent's)
        gc.freeze()
    return pid


def _outcome(fn: Callable[[], Any], record: bool) -> tuple:
    """``(ok, value or error, warning records, traceback)`` of ``fn()``, as a child sends it."""
    caught: list[list[Any]] = []
    try:
        if record:
            with recorded_warnings() as caught:
                value = fn()
        else:
            value = fn()
        return (True, value, caught, "")
    except BaseException as exc:  # noqa: BLE001 - every outcome goes to the parent
        return (False, _picklable(exc), caught, traceback.format_exc())


def _send(fd: int, outcome: tuple) -> None:
    """Write ``outcome`` pickled to the pipe ``fd`` and close it (the parent reads to its end)."""
    with os.fdopen(fd, "wb") as fh:
        fh.write(pickle.dumps(outcome, protocol=pickle.HIGHEST_PROTOCOL))
    sys.stdout.flush()
    sys.stderr.flush()


def _picklable(exc: BaseException) -> BaseException:
    """``exc`` when it survives pickling, else a :class:`RuntimeError` with its type and text."""
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:  # noqa: BLE001 - any failure to pickle or rebuild it
        return RuntimeError(f"{type(exc).__name__}: {exc}")
    return exc
