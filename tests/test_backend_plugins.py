"""Judge-backend plug-ins: a backend declared through an entry point is found by name.

A toy distribution (module + ``.dist-info`` with ``entry_points.txt``, as in
``tests/test_plugins.py``) declares a factory under ``judgerisk.judge_backends``; a fresh
process then opens it with :func:`judgerisk.extract.backends.open_judge` and lists it in
``JUDGE_BACKENDS``. Needs torch (the extraction extra), like every extraction test.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("torch")

from tests._plugin_site import plugin_site  # noqa: E402

PLUGIN = '''
class ToyJudge:
    """A backend that answers every prompt with the same verdict log-probabilities."""

    name = "toy"

    def __init__(self, model, **options):
        self.model, self.options = model, options


def make(model, **options):
    return ToyJudge(model, **options)
'''


def test_entry_point_backend_is_opened_by_name(tmp_path):
    env = plugin_site(
        tmp_path,
        "jr_toy_backend",
        PLUGIN,
        "[judgerisk.judge_backends]\ntoy = jr_toy_backend:make\n",
    )
    code = textwrap.dedent(
        """
        from judgerisk.extract.backends import JUDGE_BACKENDS, open_judge
        judge = open_judge("m", backend="toy", flag=1)
        print(list(JUDGE_BACKENDS), type(judge).__name__, judge.model, judge.options)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "['hf', 'gguf', 'openai', 'toy'] ToyJudge m {'flag': 1}"


def test_a_factory_is_accepted_in_place_of_a_name():
    from judgerisk.extract.backends import open_judge

    seen = {}

    def factory(model, **options):
        seen.update(model=model, **options)
        return "judge"

    assert open_judge("x", backend=factory, a=2) == "judge"
    assert seen == {"model": "x", "a": 2}
    with pytest.raises(ValueError, match="unknown judge backend 'nope'"):
        open_judge("x", backend="nope")
