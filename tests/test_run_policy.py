"""The run-level policy for servers (issue 44, item 1): no wait on a server that says "later".

Beyond each request's bounds (:mod:`tests.test_hostile_servers`), a run of the ``openai``
backend stops, keeping every answer it got, when a server asks (``Retry-After``) to wait longer
than ``--max-wait``, after ``--max-failures`` prompts in a row with no answer, or when its
``--deadline`` passes; one line names the request and the command that resumes, and rerunning
that command against a good server completes the folder.
"""

from __future__ import annotations

import shlex
import time
import warnings

import pandas as pd
import pytest

from judgerisk.cli import EXIT_OK, EXIT_RUNTIME, main
from judgerisk.extract._parts import read_parts
from judgerisk.extract.http_client import DEFAULT_MAX_FAILURES, DEFAULT_MAX_WAIT
from judgerisk.testing import tiny_items
from tests._hostile_server import FakeServer, Reply, honest

CONDS = ("original", "swap")
N_ITEMS = 6
N_PROMPTS = N_ITEMS * len(CONDS)


@pytest.fixture
def work(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    tiny_items(N_ITEMS).to_json("items.jsonl", orient="records", lines=True)
    return tmp_path


def _argv(url: str, *extra: str) -> list[str]:
    return ["extract", "--backend", "openai", "--endpoint", "chat", "--base-url", url,
            "items.jsonl", "-o", "run", "--conditions", *CONDS, "--no-progress",
            *extra]  # fmt: skip


def _extract(url: str, *extra: str) -> int:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return main(_argv(url, *extra))


def _error_line(capsys) -> str:
    lines = [line for line in capsys.readouterr().err.splitlines() if "error:" in line]
    assert len(lines) == 1, lines
    assert "Traceback" not in lines[0]
    return lines[0]


def _resume_completes(work, argv_tail: tuple[str, ...] = ()) -> int:
    """Rerun against an honest server; the prompts it is asked for."""
    with FakeServer() as good:
        assert _extract(good.url, "--resume", *argv_tail) == EXIT_OK
        asked = good.posts
    panel = pd.read_parquet(work / "run" / "panel.parquet")
    assert len(panel) == N_PROMPTS and panel["logit"].notna().all()
    return asked


def test_the_defaults_are_stated():
    from judgerisk.extract.backends import OPENAI_OPTIONS

    defaults = {o.name: o.default for o in OPENAI_OPTIONS}
    assert defaults["max_wait"] == DEFAULT_MAX_WAIT == 60.0
    assert defaults["max_failures"] == DEFAULT_MAX_FAILURES == 5
    assert defaults["deadline"] is None


def test_a_retry_after_of_three_years_stops_the_run_at_once(work, capsys):
    def busy(server, n, payload):
        return Reply(status=429, headers={"Retry-After": "100000000"}, body="slow down")

    with FakeServer(busy) as server:
        start = time.monotonic()
        code = _extract(server.url)  # the default retries, timeout and --max-wait
        took = time.monotonic() - start
        asked = server.posts
    assert code not in (EXIT_OK,) and code == EXIT_RUNTIME
    assert took < 30, took
    assert asked <= 4  # at most the requests in flight (--concurrency 4): none asked again
    line = _error_line(capsys)
    assert "POST " in line and "/v1/chat/completions (request " in line
    assert "HTTP 429 with Retry-After: 100000000" in line and "--max-wait 60 s" in line
    assert f"{N_PROMPTS} of {N_PROMPTS} prompts have no answer" in line
    resume = ["judgerisk", *_argv(server.url), "--resume"]
    assert line.endswith("to resume: " + shlex.join(resume))
    assert (work / "run" / "manifest.json").is_file()
    assert not (work / "run" / "panel.parquet").exists()
    assert _resume_completes(work) == N_PROMPTS


def test_a_short_retry_after_is_still_waited_on(work):
    def busy_once(server, n, payload):
        if n == 1:
            return Reply(status=429, headers={"Retry-After": "0.2"}, body="slow down")
        return honest(server, n, payload)

    with FakeServer(busy_once) as server:
        assert _extract(server.url, "--concurrency", "1") == EXIT_OK
        assert server.posts == N_PROMPTS + 1


def test_consecutive_failed_prompts_stop_the_run(work, capsys):
    def down(server, n, payload):
        return Reply(status=503, body="down")

    with FakeServer(down) as server:
        code = _extract(server.url, "--retries", "0", "--concurrency", "1", "--max-failures", "3")
        assert server.posts == 3
    assert code == EXIT_RUNTIME
    line = _error_line(capsys)
    assert "3 prompts in a row got no answer (--max-failures 3; last: POST " in line
    assert "HTTP 503" in line and "to resume: judgerisk extract" in line
    assert _resume_completes(work) == N_PROMPTS


def test_failed_prompts_below_the_limit_are_left_for_the_rerun(work, capsys):
    def every_third_fails(server, n, payload):
        return Reply(status=503, body="down") if n % 3 == 0 else honest(server, n, payload)

    with FakeServer(every_third_fails) as server:
        code = _extract(server.url, "--retries", "0", "--concurrency", "1")
        assert server.posts == N_PROMPTS  # every prompt asked once: the run went on
    assert code == EXIT_RUNTIME
    line = _error_line(capsys)
    n_failed = N_PROMPTS // 3
    assert f"{n_failed} of {N_PROMPTS} prompts have no answer (first: item " in line
    assert "last failure: POST " in line and "to resume: judgerisk extract" in line
    assert len(read_parts(work / "run")) == N_PROMPTS - n_failed  # the answers are kept
    assert _resume_completes(work) == n_failed  # only the prompts left are asked for


def test_the_deadline_bounds_the_whole_run(work, capsys):
    def later(server, n, payload):
        return Reply(status=503, headers={"Retry-After": "1"}, body="later")

    with FakeServer(later) as server:
        start = time.monotonic()
        code = _extract(server.url, "--concurrency", "1", "--deadline", "2")
        took = time.monotonic() - start
    assert code == EXIT_RUNTIME and took < 6, took  # without it: 4 s a prompt, 48 s in all
    line = _error_line(capsys)
    assert "deadline" in line and "to resume: judgerisk extract" in line


@pytest.mark.parametrize(
    ("option", "value"), [("--max-wait", "0"), ("--max-failures", "0"), ("--deadline", "-1")]
)
def test_the_policy_options_are_validated(work, capsys, option, value):
    with pytest.raises(SystemExit) as exc:
        main(_argv("http://127.0.0.1:9", option, value))
    assert exc.value.code == 2
    assert f"argument {option}" in capsys.readouterr().err
