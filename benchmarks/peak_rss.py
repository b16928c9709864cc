"""Run a command and write its own peak resident memory (bytes) to a file.

``python benchmarks/peak_rss.py REPORT [LIMIT_GB] -- COMMAND ...`` runs COMMAND as the child of
this small process, waits for it and writes the ``ru_maxrss`` of that child (and of the
children it waited for) to REPORT, then exits with the command's status. The command is forked
from this launcher, not from the caller: on Linux a child's ``ru_maxrss`` starts at the resident
size of the process it was forked from, so a caller holding a large panel in memory (a test or a
benchmark that built it) would otherwise be counted in the command's peak. ``LIMIT_GB`` caps the
command's address space (a runaway dense table fails with a ``MemoryError`` instead of taking
the machine).
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys


def main(argv: list[str]) -> int:
    split = argv.index("--")
    head, command = argv[:split], argv[split + 1 :]
    report, limit = head[0], (float(head[1]) if len(head) > 1 else None)

    def cap() -> None:
        if limit is not None:
            size = int(limit * 1024**3)
            resource.setrlimit(resource.RLIMIT_AS, (size, size))

    proc = subprocess.Popen(command, preexec_fn=cap)
    _, status, usage = os.wait4(proc.pid, 0)
    unit = 1 if sys.platform == "darwin" else 1024  # ru_maxrss: bytes on macOS, KiB on Linux
    with open(report, "w") as out:
        out.write(str(usage.ru_maxrss * unit))
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
