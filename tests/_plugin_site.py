"""A toy plug-in distribution on disk, shared by the entry-point tests (no pip install)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def plugin_site(site: Path, module: str, source: str, entry_points: str) -> dict[str, str]:
    """Write ``module.py`` and its ``.dist-info`` (with ``entry_points.txt``) into ``site``;
    return an environment whose ``PYTHONPATH`` holds this worktree and ``site``."""
    (site / f"{module}.py").write_text(source)
    info = site / f"{module}-0.1.dist-info"
    info.mkdir()
    name = module.replace("_", "-")
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(entry_points)
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(site)])}


def run_python(code: str, env: dict[str, str], cwd: Path) -> str:
    """Run ``code`` (dedented) in a fresh interpreter with ``env``; its stdout (it must exit 0)."""
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout
