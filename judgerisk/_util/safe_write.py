"""Writes that cannot be redirected and never leave a partial output.

:func:`atomic_write` (re-exported as :func:`judgerisk.panel.atomic_write`) and
:func:`atomic_write_group` write into a fresh private folder created in the target's folder
(:func:`tempfile.mkdtemp`: ``mkdir`` is exclusive, never follows a link, gets an
unpredictable name and mode 0700), then publish with :func:`os.replace`, which replaces the
target's directory entry (a link planted at the target is replaced, never followed). A file
or link planted beforehand under any name cannot redirect the write, and a failure leaves the
old output as it was.

The private folder is named ``.judgerisk-tmp-<pid>-<random>``: one left behind by a process
that no longer runs (killed with SIGKILL, power loss) is removed by the next write into that
folder. SIGTERM during a write (in the main thread, when nothing else handles SIGTERM) removes
the temporary folder before the process exits with status 143.
"""

from __future__ import annotations

import os
import shutil
import signal
import stat
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

__all__ = ["TMP_PREFIX", "atomic_write", "atomic_write_group", "sweep_stale"]

#: Prefix of the private temporary folders (``.judgerisk-tmp-<pid>-<random>``).
TMP_PREFIX = ".judgerisk-tmp-"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return True  # someone else's process (or not a pid we can ask about): keep
    return True


def sweep_stale(folder: str | Path) -> list[Path]:
    """Remove temporary folders of dead processes in ``folder``; returns what was removed.

    Only real folders (not links) named ``.judgerisk-tmp-<pid>-...`` whose process no longer
    runs are removed.
    """
    removed: list[Path] = []
    try:
        names = os.listdir(folder)
    except OSError:
        return removed
    for name in names:
        if not name.startswith(TMP_PREFIX):
            continue
        pid_text = name[len(TMP_PREFIX) :].split("-", 1)[0]
        if not pid_text.isdigit() or _pid_alive(int(pid_text)):
            continue
        path = Path(folder) / name
        try:
            if stat.S_ISDIR(os.lstat(path).st_mode):
                shutil.rmtree(path)
                removed.append(path)
        except OSError:
            pass
    return removed


class _Terminated(SystemExit):
    """SIGTERM during a write: unwinds (so the temporary folder is removed), exit status 143."""


def _on_sigterm(signum, frame):  # noqa: ARG001 - signal handler signature
    raise _Terminated(128 + signal.SIGTERM)


@contextmanager
def _sigterm_unwinds() -> Iterator[None]:
    """Within the block, SIGTERM raises instead of killing (main thread, default handler only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGTERM)
    if previous is not signal.SIG_DFL:
        yield
        return
    signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _backup(target: Path, tmpdir: Path, i: int) -> Path | None:
    """A hard link to the current ``target`` (so it can be restored), or None when absent."""
    if not os.path.lexists(target):
        return None
    keep = tmpdir / f".old-{i}"
    if os.link not in os.supports_follow_symlinks:  # linking a link itself is not offered here
        return None
    try:
        os.link(target, keep, follow_symlinks=False)
    except OSError:
        return None
    return keep


def atomic_write_group(items: Sequence[tuple[str | Path, Callable[[Path], object]]]) -> list[Path]:
    """Write several files of one folder as a unit: all of them, or none changed.

    Parameters
    ----------
    items : sequence of (path, write)
        Each ``write(tmp_path)`` writes the file's content to ``tmp_path`` (a path with the
        target's name inside a fresh private folder). All targets must share one folder.

    Returns
    -------
    list of pathlib.Path
        The targets, written.

    Notes
    -----
    Every file is written before any is published. Publishing renames them one by one; when a
    rename fails, the targets already replaced get their old content back (or are removed
    when they did not exist), so no failure leaves one without the other.
    """
    targets = [Path(p) for p, _ in items]
    folders = {os.path.abspath(t.parent) for t in targets}
    if len(folders) != 1:
        raise ValueError(f"atomic_write_group: targets in more than one folder: {sorted(folders)}")
    folder = targets[0].parent
    sweep_stale(folder)
    with _sigterm_unwinds():
        tmpdir = Path(tempfile.mkdtemp(prefix=f"{TMP_PREFIX}{os.getpid()}-", dir=folder))
        try:
            staged = []
            for i, (target, (_, write)) in enumerate(zip(targets, items, strict=True)):
                sub = tmpdir / str(i)
                sub.mkdir()
                tmp = sub / target.name
                write(tmp)
                if not tmp.is_file() or tmp.is_symlink():
                    raise OSError(f"{target}: the writer produced no regular file")
                staged.append(tmp)
            done: list[tuple[Path, Path | None]] = []
            try:
                for i, (tmp, target) in enumerate(zip(staged, targets, strict=True)):
                    old = _backup(target, tmpdir, i)
                    os.replace(tmp, target)
                    done.append((target, old))
            except BaseException:
                for target, old in reversed(done):
                    if old is not None:
                        os.replace(old, target)
                    else:
                        target.unlink(missing_ok=True)
                raise
        finally:
            shutil.rmtree(tmpdir, ignore_errors=True)
    return targets


def atomic_write(path: str | Path, write: Callable[[Path], object]) -> Path:
    """Write ``path`` through ``write(tmp_path)`` into a private temporary folder, then rename.

    The temporary folder is created exclusively in ``path``'s folder (so the rename is atomic)
    with an unpredictable name; no planted file or link can redirect the write. On any failure
    (SIGTERM included) it is removed and ``path`` is left as it was. See
    :mod:`judgerisk._util.safe_write`.
    """
    return atomic_write_group([(path, write)])[0]
