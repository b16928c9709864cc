"""``import judgerisk`` and ``judgerisk --help`` load no heavy library (issue: start-up time)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("matplotlib", "seaborn", "sklearn", "torch", "transformers", "scipy.optimize")


def _loaded_after(code: str) -> set[str]:
    probe = f"{code}\nimport sys\nprint(' '.join(sorted(sys.modules)))"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=env, cwd=ROOT, check=True
    )
    return set(out.stdout.split())


def test_import_judgerisk_loads_no_heavy_library():
    mods = _loaded_after("import judgerisk")
    assert not {m for m in HEAVY if m in mods}
    assert "judgerisk.risk" not in mods and "judgerisk.extract" not in mods


def test_top_level_names_still_import_on_first_use():
    import judgerisk

    for name in judgerisk.__all__:
        assert getattr(judgerisk, name) is not None, name
    assert set(judgerisk.__all__) <= set(dir(judgerisk))
    with pytest.raises(AttributeError):
        judgerisk.no_such_name  # noqa: B018


def test_cli_parser_loads_neither_pandas_nor_estimators():
    mods = _loaded_after("from judgerisk.cli import build_parser\nbuild_parser(extract=False)")
    assert not {m for m in (*HEAVY, "pandas", "numpy") if m in mods}
    assert not any(m.startswith(("judgerisk.risk", "judgerisk.extract")) for m in mods)


def test_cli_parser_reads_no_package_metadata():
    """The version and the plug-ins are read when asked (``--version``, a command that runs)."""
    if "importlib.metadata" in _loaded_after("pass"):
        pytest.skip("this interpreter imports importlib.metadata at start-up (a .pth file)")
    mods = _loaded_after("from judgerisk.cli import build_parser\nbuild_parser(extract=False)")
    assert "importlib.metadata" not in mods
    assert not any(m.startswith("judgerisk.report") for m in mods)
