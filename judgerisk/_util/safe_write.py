"""Writes that cannot be redirected and never leave a partial output.

:func:`atomic_write` (the one place it is defined and imported from) and
:func:`atomic_write_group` write into a fresh private folder created in the target's folder
(:func:`tempfile.mkdtemp`: ``mkdir`` is exclusive, never follows a link, gets an
unpredictable name and mode 0700), then publish with :func:`os.replace`, which replaces the
target's directory entry (a link planted at the target is replaced, never followed). A file
or link planted beforehand under any name cannot redirect the write, and a failure leaves the
old output as it was.

A write that must not replace an existing file (``exclusive=True``: the command line without
``--overwrite``) publishes with :func:`os.link`, which creates the target's entry only if no
entry of that name exists, atomically: of two writers racing for one new name exactly one
succeeds, and the other gets :class:`OutputExistsError` with its work discarded and nothing
replaced. (A file system without hard links falls back to claiming the name with
``O_CREAT | O_EXCL`` and renaming over the claim, equally exclusive.)

The private folder is named ``.judgerisk-tmp-<pid>-<random>``: one left behind by a process
that no longer runs (killed with SIGKILL, power loss) is removed by the next write into that
folder. SIGTERM during a write (in the main thread, when nothing else handles SIGTERM) removes
the temporary folder before the process exits with status 143.
"""

from __future__ import annotations

import errno
import os
import shutil
import signal
import stat
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from judgerisk.options import InputError

__all__ = [
    "OutputExistsError",
    "TMP_PREFIX",
    "atomic_write",
    "atomic_write_group",
    "private_folder",
    "sweep_stale",
]

#: ``os.link`` errors of a file system without hard links (then the name is claimed instead).
_NO_LINKS = {errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK, errno.ENOSYS}

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


class OutputExistsError(FileExistsError, InputError):
    """An exclusive write found its target taken: another process wrote it meanwhile.

    A :class:`FileExistsError`, and an input error (the command line exits with 2, as for an
    output that existed before the work).
    """


def _publish_exclusive(tmp: Path, target: Path) -> None:
    """Give ``tmp``'s file the name ``target`` only if no entry of that name exists (atomic)."""
    try:
        os.link(tmp, target)
        return
    except FileExistsError:
        raise OutputExistsError(_taken(target)) from None
    except OSError as exc:
        if exc.errno not in _NO_LINKS:
            raise
    try:  # no hard links here: claim the name exclusively, then rename over the claim
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        raise OutputExistsError(_taken(target)) from None
    os.close(fd)
    os.replace(tmp, target)


def _taken(target: Path) -> str:
    return (
        f"{target} exists: another process wrote it while this one ran; nothing was replaced. "
        "Pass --overwrite to replace it, or choose another name"
    )


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samestat(os.lstat(a), os.lstat(b))
    except OSError:
        return False


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


def atomic_write_group(
    items: Sequence[tuple[str | Path, Callable[[Path], object]]], *, exclusive: bool = False
) -> list[Path]:
    """Write several files of one folder as a unit: all of them, or none changed.

    Parameters
    ----------
    items : sequence of (path, write)
        Each ``write(tmp_path)`` writes the file's content to ``tmp_path`` (a path with the
        target's name inside a fresh private folder). All targets must share one folder.
    exclusive : bool, default False
        Publish only onto free names (:func:`os.link`): when any target exists at publication
        (another process wrote it), the ones this call already published are removed, nothing
        is replaced, and :class:`OutputExistsError` is raised.

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
    with private_folder(targets[0].parent) as tmpdir:
        staged = _stage(tmpdir, targets, items)
        if exclusive:
            _publish_onto_free_names(staged, targets)
        else:
            _publish_replacing(staged, targets, tmpdir)
    return targets


def _publish_replacing(staged: list[Path], targets: list[Path], tmpdir: Path) -> None:
    """Rename each staged file over its target; on a failure, restore the ones replaced."""
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


def _publish_onto_free_names(staged: list[Path], targets: list[Path]) -> None:
    """Link each staged file onto its free target; on a failure, remove the ones published."""
    done: list[tuple[Path, Path]] = []
    try:
        for tmp, target in zip(staged, targets, strict=True):
            _publish_exclusive(tmp, target)
            done.append((tmp, target))
    except BaseException:
        for tmp, target in reversed(done):
            if not tmp.exists() or _same_file(tmp, target):  # ours (not a later writer's)
                target.unlink(missing_ok=True)
        raise


def _stage(
    tmpdir: Path, targets: list[Path], items: Sequence[tuple[object, Callable[[Path], object]]]
) -> list[Path]:
    """Write every item into its own sub-folder of ``tmpdir``; the staged files."""
    staged = []
    for i, (target, (_, write)) in enumerate(zip(targets, items, strict=True)):
        sub = tmpdir / str(i)
        sub.mkdir()
        tmp = sub / target.name
        write(tmp)
        if not tmp.is_file() or tmp.is_symlink():
            raise OSError(f"{target}: the writer produced no regular file")
        staged.append(tmp)
    return staged


@contextmanager
def private_folder(folder: str | Path) -> Iterator[Path]:
    """A fresh private folder (``.judgerisk-tmp-<pid>-<random>``, mode 0700) in ``folder``.

    Stale ones of dead processes are swept first; this one is removed on leaving the block,
    SIGTERM included (a SIGKILL leaves it for the next sweep). The path given is absolute.
    """
    folder = os.path.abspath(folder)
    sweep_stale(folder)
    with _sigterm_unwinds():
        tmpdir = Path(tempfile.mkdtemp(prefix=f"{TMP_PREFIX}{os.getpid()}-", dir=folder))
        try:
            yield tmpdir
        finally:
            shutil.rmtree(tmpdir, ignore_errors=True)


def atomic_write(
    path: str | Path, write: Callable[[Path], object], *, exclusive: bool = False
) -> Path:
    """Write ``path`` through ``write(tmp_path)`` into a private temporary folder, then rename.

    The temporary folder is created exclusively in ``path``'s folder (so the rename is atomic)
    with an unpredictable name; no planted file or link can redirect the write. On any failure
    (SIGTERM included) it is removed and ``path`` is left as it was. With ``exclusive=True``
    an existing ``path`` is never replaced: publication links onto the free name or raises
    :class:`OutputExistsError`. See :mod:`judgerisk._util.safe_write`.
    """
    return atomic_write_group([(path, write)], exclusive=exclusive)[0]
