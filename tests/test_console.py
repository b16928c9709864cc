"""The ``judgerisk`` console script (``judgerisk.cli._app.console``): :func:`main`'s exit code,
the exit handlers run and the streams flushed, then a prompt exit, or the usual one while
another thread runs."""

from __future__ import annotations

import subprocess
import sys

import pytest

_SCRIPT = """
import atexit, sys, threading, time
atexit.register(lambda: print("exit handler ran", flush=True))
if {thread}:
    threading.Thread(target=time.sleep, args=(0.5,)).start()
sys.argv = ["judgerisk", *{argv!r}]
print("before", end="")  # unflushed: the console flushes it
from judgerisk.cli._app import console
console()
"""


@pytest.mark.parametrize("thread", [False, True])
@pytest.mark.parametrize(
    ("argv", "code"),
    [(["simulate", "-o", "{out}", "--n-items", "20"], 0), (["simulate", "--n-items", "x"], 2)],
)
def test_the_console_exits_with_mains_code_after_the_exit_handlers(tmp_path, argv, code, thread):
    argv = [a.format(out=tmp_path / "p.csv") for a in argv]
    script = _SCRIPT.format(thread=thread, argv=argv)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert proc.returncode == code, proc.stderr
    assert proc.stdout.startswith("before") and proc.stdout.endswith("exit handler ran\n")
    assert (tmp_path / "p.csv").exists() is (code == 0)
