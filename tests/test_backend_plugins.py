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
    names, rest = out.strip().split("] ")
    assert names.startswith("['hf', 'gguf', 'openai', ") and names.endswith("'toy'")
    assert rest == "ToyJudge m {'flag': 1}"


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


def test_a_backend_declares_its_options_and_extract_builds_them(tmp_path, capsys):
    """``judgerisk extract --backend NAME`` offers NAME's own options, and passes only those."""
    import json

    from judgerisk._provenance import read_record
    from judgerisk.cli import EXIT_OK, EXIT_USAGE, main
    from judgerisk.extract.backends import (
        BackendOption,
        backend_options,
        open_judge,
        register_backend,
        unregister_backend,
    )
    from judgerisk.testing import short_template, tiny_items, tiny_judge

    seen = {}

    def scaled(model, *, scale=1.0, chat_template=None, name=None):
        seen.update(scale=scale, name=name)
        return open_judge(model, "hf", device="cpu", chat_template=chat_template, name=name)

    options = (BackendOption("scale", "a toy knob", default=1.0, type=float),)
    register_backend("scaled", scaled, options)
    try:
        assert backend_options("scaled") == options
        with pytest.raises(SystemExit):
            main(["extract", "--help"])
        help_text = " ".join(capsys.readouterr().out.split())
        assert "options of --backend scaled: --scale SCALE a toy knob (default: 1.0)" in help_text
        assert "options of --backend hf, gguf: --device" in help_text

        model = tiny_judge(tmp_path / "tiny")
        items = tmp_path / "items.jsonl"
        tiny_items(2).to_json(items, orient="records", lines=True)
        template = tmp_path / "short.json"
        template.write_text(json.dumps(short_template()))
        base = ["extract", "--backend", "scaled", "--model", str(model), "--items", str(items)]
        base += ["--template", str(template), "--conditions", "original", "--no-progress"]
        # an option of another backend is refused before any work, naming the backend's own
        assert main([*base, "--out", str(tmp_path / "a"), "--base-url", "http://x"]) == EXIT_USAGE
        err = capsys.readouterr().err
        assert "--backend scaled takes no --base-url (its options: --scale)" in err
        assert not (tmp_path / "a").exists() and not seen
        # its own option reaches its factory, typed; its default is recorded when not given
        assert main([*base, "--out", str(tmp_path / "b"), "--scale", "2.5", "--judge", "j"]) == 0
        assert seen == {"scale": 2.5, "name": "j"}
        assert read_record(tmp_path / "b" / "panel.parquet")["parameters"]["scale"] == 2.5
        capsys.readouterr()
        assert main([*base, "--out", str(tmp_path / "c")]) == EXIT_OK
        record = read_record(tmp_path / "c" / "panel.parquet")["parameters"]
        assert record["scale"] == 1.0 and "device" not in record and "base_url" not in record
    finally:
        unregister_backend("scaled")
