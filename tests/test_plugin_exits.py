"""A plug-in that tries to end the process while loading (issue 44, item 3).

Its module calls ``sys.exit(0)`` (or raises ``KeyboardInterrupt`` itself) on import. The loader
catches every ``BaseException``, so ``perturb`` and ``score`` end with one line naming the
plug-in and exit code 2, never exit 0 with no output; a real Ctrl-C (a SIGINT delivered to the
process while the plug-in loads) is still an interruption (exit 130). Fresh processes, each
bounded by a timeout.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from judgerisk.cli import EXIT_INTERRUPTED, EXIT_USAGE
from judgerisk.simulate import simulate_panel
from judgerisk.testing import tiny_items
from tests._plugin_site import plugin_site

ENTRY_POINTS = """
[judgerisk.families]
{name} = {name}:Family

[judgerisk.aggregators]
{name} = {name}:Rule

[judgerisk.risk_scores]
{name} = {name}:score
"""

SOURCES = {
    "jr_exits_zero": "import sys\nsys.exit(0)\n",
    "jr_raises_interrupt": "raise KeyboardInterrupt\n",
    "jr_exits_text": "raise SystemExit('bye')\n",
}


def _site(tmp_path, name: str, source: str) -> dict[str, str]:
    site = tmp_path / "site"
    site.mkdir()
    return plugin_site(site, name, source, ENTRY_POINTS.format(name=name))


def _judgerisk(argv, env, cwd, timeout=120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "judgerisk.cli", *argv],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=timeout,
    )


@pytest.fixture
def inputs(tmp_path):
    tiny_items(3).to_json(tmp_path / "items.jsonl", orient="records", lines=True)
    simulate_panel(n_items=30, n_judges=3, seed=0).data.to_csv(tmp_path / "panel.csv", index=False)
    return tmp_path


@pytest.mark.parametrize("name", sorted(SOURCES))
@pytest.mark.parametrize(
    "argv",
    [
        ["perturb", "items.jsonl", "-o", "out.jsonl"],
        ["perturb", "items.jsonl", "-o", "out.jsonl", "--conditions", "original", "swap"],
        ["score", "panel.csv", "-o", "scores.csv", "--no-progress"],
    ],
    ids=["perturb", "perturb-conditions", "score"],
)
def test_a_plugin_that_exits_is_one_line_and_exit_2(inputs, name, argv):
    env = _site(inputs, name, SOURCES[name])
    proc = _judgerisk(argv, env, inputs)
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == EXIT_USAGE, (proc.returncode, proc.stderr)
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"judgerisk {argv[0]}: error: judgerisk plug-in {name!r}")
    assert "while loading" in lines[0] and "Traceback" not in proc.stderr
    assert not (inputs / argv[3]).exists()


def test_a_real_ctrl_c_while_a_plugin_loads_is_an_interruption(tmp_path, inputs):
    marker = tmp_path / "loading"
    source = (
        f"import pathlib, time\npathlib.Path({str(marker)!r}).write_text('x')\ntime.sleep(60)\n"
    )
    env = _site(inputs, "jr_slow_plugin", source)
    proc = subprocess.Popen(
        [sys.executable, "-m", "judgerisk.cli", "score", "panel.csv", "-o", "scores.csv"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=inputs,
        # as a terminal's Ctrl-C reaches it: a suite run in the background (``make test &``)
        # inherits SIGINT ignored, and Python then installs no KeyboardInterrupt handler
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + 60
        while not marker.exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert marker.exists(), proc.communicate(timeout=5)
        os.kill(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == EXIT_INTERRUPTED, err
    assert "interrupted" in err and "plug-in" not in err
