"""The openai backend against hostile fake servers on 127.0.0.1 (issue 33, items 1 and 9).

Each test scripts one misbehaviour of a server (:mod:`tests._hostile_server`) and checks the
rule of the client (:mod:`judgerisk.extract.http_client`, :mod:`judgerisk.extract.topk`,
:class:`judgerisk.extract.remote.OpenAIJudge`): no key leaves for another origin or reaches a
message, no request outlasts its deadline, no answer changes a number silently, and a bad
answer stops the run with one line naming the request and exit status 2. Chat endpoint (no
tokenizer, no torch); every loop is bounded and every deadline short.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from judgerisk.cli import EXIT_OK, EXIT_RUNTIME, EXIT_USAGE, main
from judgerisk.testing import tiny_items
from tests._hostile_server import KEY, MODEL, FakeServer, Reply, honest, top_answer

CONDS = ("original", "swap")
N_PROMPTS = 2 * len(CONDS)  # two items


@pytest.fixture
def work(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("JR_HOSTILE_KEY", KEY)
    tiny_items(2).to_json("items.jsonl", orient="records", lines=True)
    return tmp_path


def _extract(url, *extra, out="run", key=True):
    argv = ["extract", "--backend", "openai", "--endpoint", "chat", "--base-url", url,
            "items.jsonl", "-o", out, "--conditions", *CONDS, "--no-progress",
            "--timeout", "2", "--retries", "0", *extra]  # fmt: skip
    if key:
        argv += ["--api-key-env", "JR_HOSTILE_KEY"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return main(argv)


def _one_error_line(capsys) -> str:
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert KEY not in err and "Traceback" not in err
    return lines[0]


def _no_key_anywhere(folder: Path) -> None:
    for path in folder.rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path


# ------------------------------------------------------------------ redirects and the key
@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_redirect_is_not_followed_and_the_key_stays(work, capsys, status):
    with FakeServer() as elsewhere:
        target = f"{elsewhere.url}/v1/chat/completions?key={KEY}"

        def redirect(server, n, payload):
            return Reply(status=status, headers={"Location": target}, body="moved")

        with FakeServer(redirect) as server:
            code = _extract(server.url)
        assert elsewhere.requests == []  # nothing reached the other origin, no key with it
        assert server.authorizations() and set(server.authorizations()) == {f"Bearer {KEY}"}
    line = _one_error_line(capsys)
    assert code == EXIT_USAGE
    assert f"HTTP {status} redirects to {elsewhere.url}/v1/chat/completions?key=***" in line
    assert "redirects are not followed" in line and "(request " in line
    assert not (work / "run" / "panel.parquet").exists()


def test_an_error_body_echoing_the_key_is_masked(work, capsys):
    def refuse(server, n, payload):
        auth = server.requests[-1]["headers"].get("Authorization")
        return Reply(status=401, body={"error": f"invalid key {auth} (json: {json.dumps(KEY)})"})

    with FakeServer(refuse) as server:
        code = _extract(server.url)
    line = _one_error_line(capsys)
    assert code == EXIT_USAGE and "HTTP 401" in line and "invalid key Bearer ***" in line
    _no_key_anywhere(work)


def test_the_key_is_masked_in_url_escaped_form_and_never_recorded(work, capsys):
    from judgerisk.extract.http_client import mask_secret

    secret = "a b/c+d&e"
    assert mask_secret("x a%20b%2Fc%2Bd%26e y a+b%2Fc%2Bd%26e z a b/c+d&e", secret) == (
        "x *** y *** z ***"
    )
    with FakeServer() as server:
        assert _extract(server.url) == EXIT_OK
    _no_key_anywhere(work)


# ------------------------------------------------------------------ deadlines and waits
def test_a_drip_fed_answer_is_cut_off_at_the_deadline(work, capsys):
    def drip(server, n, payload):
        return Reply(body=json.dumps(honest(server, n, payload).data().decode()) * 20, drip=0.05)

    with FakeServer(drip, drip_limit_s=6.0) as server:
        start = time.monotonic()
        code = _extract(server.url, "--timeout", "0.5")
        took = time.monotonic() - start
    line = _one_error_line(capsys)
    assert code == EXIT_RUNTIME and "no answer after 1 tries" in line and "timeout 0.5 s" in line
    assert took < 3.0, took  # one try of 0.5 s (and the model listing), not 6 s of drip


def test_drip_fed_headers_are_cut_off_too():
    import socket
    import threading

    from judgerisk.extract.http_client import HTTPClient, NoAnswer

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    stop = threading.Event()

    def serve():
        conn, _ = listener.accept()
        with conn:
            conn.recv(65536)
            for ch in b"HTTP/1.1 200 OK\r\nX-Slow: " + b"x" * 200:
                if stop.is_set():
                    break
                try:
                    conn.send(bytes([ch]))
                except OSError:
                    break
                time.sleep(0.05)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    client = HTTPClient(f"http://127.0.0.1:{listener.getsockname()[1]}", headers={},
                        timeout=0.4, retries=0, backoff=0, max_wait=0)  # fmt: skip
    start = time.monotonic()
    with pytest.raises(NoAnswer, match="no answer after 1 tries"):
        client.request("/v1/models")
    assert time.monotonic() - start < 2.0
    stop.set()
    thread.join(5)
    listener.close()


@pytest.mark.parametrize("after", ["100000000", "Wed, 21 Oct 2099 07:28:00 GMT"])
def test_a_retry_after_beyond_max_wait_is_not_waited_on(after):
    from judgerisk.extract.remote import OpenAIJudge, ServerError

    def busy_once(server, n, payload):
        if n == 1:
            return Reply(status=429, headers={"Retry-After": after}, body="slow down")
        return honest(server, n, payload)

    with FakeServer(busy_once) as server:
        judge = OpenAIJudge(server.url, endpoint="chat", retries=2, timeout=2, max_wait=0.2)
        start = time.monotonic()
        with pytest.raises(ServerError, match=f"Retry-After: {after} .*--max-wait 0.2 s") as exc:
            judge.verdict_logprobs([json.dumps({"messages": [], "prefill": ""})])
        took = time.monotonic() - start
    assert server.posts == 1 and took < 1.5, took  # neither waited on nor asked again
    assert exc.value.partial is not None and exc.value.partial.missing.tolist() == [True]


def test_a_retry_after_within_max_wait_is_waited_on():
    from judgerisk.extract.remote import OpenAIJudge

    def busy_once(server, n, payload):
        if n == 1:
            return Reply(status=429, headers={"Retry-After": "0.3"}, body="slow down")
        return honest(server, n, payload)

    with FakeServer(busy_once) as server:
        judge = OpenAIJudge(server.url, endpoint="chat", retries=2, timeout=2, max_wait=1)
        start = time.monotonic()
        out = judge.verdict_logprobs([json.dumps({"messages": [], "prefill": ""})])
        took = time.monotonic() - start
    assert server.posts == 2 and np.isfinite(out.logprobs).all() and out.missing is None
    assert 0.3 <= took < 1.5, took


def test_backoff_is_capped_and_the_worst_case_is_stated():
    from judgerisk.extract.remote import OpenAIJudge, ServerError

    def down(server, n, payload):
        return Reply(status=503, body="down")

    with FakeServer(down) as server:
        judge = OpenAIJudge(server.url, endpoint="chat", retries=3, timeout=1, backoff=100,
                            max_wait=0.1, max_failures=1)  # fmt: skip
        assert judge._http.worst_case_s == pytest.approx(4 * 1 + 3 * 0.1)
        start = time.monotonic()
        with pytest.raises(ServerError, match=r"no answer after 4 tries \(last: HTTP 503"):
            judge.verdict_logprobs([json.dumps({"messages": [], "prefill": ""})])
        took = time.monotonic() - start
    assert server.posts == 4 and took < 1.5, took


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("--retries", "-1"),
        ("--retries", "101"),
        ("--retries", "2.5"),
        ("--timeout", "inf"),
        ("--timeout", "nan"),
        ("--timeout", "0"),
        ("--timeout", "1e9"),
    ],  # fmt: skip
)
def test_retries_and_timeout_are_validated(work, capsys, option, value):
    with pytest.raises(SystemExit) as exc:
        main(["extract", "--backend", "openai", "--base-url", "http://127.0.0.1:9",
              "--items", "items.jsonl", "--out", "run", option, value])  # fmt: skip
    assert exc.value.code == EXIT_USAGE
    assert f"argument {option}" in capsys.readouterr().err


@pytest.mark.parametrize(
    "kw",
    [
        {"retries": -1},
        {"retries": True},
        {"timeout": math.inf},
        {"timeout": math.nan},
        {"max_wait": -1},
        {"backoff": math.inf},
        {"concurrency": 0},
        {"top_logprobs": 0},
    ],  # fmt: skip
)
def test_the_judge_validates_its_numbers(kw):
    from judgerisk.extract.remote import OpenAIJudge

    with pytest.raises(ValueError, match=next(iter(kw))):
        OpenAIJudge("http://127.0.0.1:9", endpoint="chat", **kw)


@pytest.mark.parametrize(
    "url", ["ftp://127.0.0.1/", "http://user:pw@127.0.0.1:8000", "http://127.0.0.1:8000/?k=1"]
)
def test_base_urls_that_could_leak_are_refused(url):
    from judgerisk.extract.remote import OpenAIJudge

    with pytest.raises(ValueError, match="base URL"):
        OpenAIJudge(url, endpoint="chat")


# ------------------------------------------------------------------ the model behind the answers
def _switching(after: int, **changes):
    def reply(server, n, payload):
        body = json.loads(honest(server, n, payload).data())
        if n > after:
            body.update(changes)
        return Reply(body=body)

    return reply


def test_a_model_switch_stops_the_run_and_a_resume_is_held_to_the_first(work, capsys):
    snapshot = MODEL + "-2025-01-01"  # a name the request accepts: the pin catches the change
    with FakeServer(_switching(2, model=snapshot)) as server:
        code = _extract(server.url, "--batch-size", "2", "--concurrency", "1")
    line = _one_error_line(capsys)
    assert code == EXIT_USAGE
    assert (
        f"changed what it serves (model 'judge-model' -> '{snapshot}'; pinned by the first" in line
    )
    assert "item 1, condition " in line and "(request 4)" in line
    parts = pd.read_parquet(work / "run" / "parts")
    assert len(parts) == 2  # the first chunk, all from judge-model; nothing of the other
    assert json.loads((work / "run" / "served.json").read_text())["model"] == MODEL
    with FakeServer(_switching(0, model=snapshot)) as server:  # the other one from the start
        assert _extract(server.url, "--batch-size", "2", "--resume") == EXIT_USAGE
    assert "pinned by an earlier run in this folder" in _one_error_line(capsys)
    assert len(pd.read_parquet(work / "run" / "parts")) == 2
    with FakeServer() as server:  # judge-model again: the run completes
        assert _extract(server.url, "--batch-size", "2", "--resume") == EXIT_OK
        assert server.posts == N_PROMPTS - 2
    assert len(pd.read_parquet(work / "run" / "panel.parquet")) == N_PROMPTS


def test_a_fingerprint_change_stops_the_run(work, capsys):
    def reply(server, n, payload):
        body = json.loads(honest(server, n, payload).data())
        body["system_fingerprint"] = "fp_1" if n <= 1 else "fp_2"
        return Reply(body=body)

    with FakeServer(reply) as server:
        assert _extract(server.url, "--batch-size", "1", "--concurrency", "1") == EXIT_USAGE
    assert "system_fingerprint 'fp_1' -> 'fp_2'" in _one_error_line(capsys)


def test_another_model_than_requested_is_refused(work, capsys):
    with FakeServer(_switching(0, model="impostor")) as server:
        assert _extract(server.url, "--model", MODEL) == EXIT_USAGE
    line = _one_error_line(capsys)
    assert "comes from model 'impostor', not the requested 'judge-model'" in line


def test_same_model_accepts_dated_snapshots_only():
    from judgerisk.extract.remote import same_model

    assert same_model("gpt-4o", "gpt-4o-2024-08-06") and same_model("m", "m")
    assert same_model("gpt-3.5-turbo", "gpt-3.5-turbo-0125") and same_model("m", None)
    assert not same_model("gpt-4o", "gpt-4o-mini-2024-07-18") and not same_model("a", "b")


# ------------------------------------------------------------------ numbers in the top-k list
def _panel(url, reply_entries, **kw):
    def reply(server, n, payload):
        return Reply(body=top_answer(reply_entries))

    from judgerisk.extract._extract import run_judge
    from judgerisk.extract.remote import OpenAIJudge

    with FakeServer(reply) as server:
        judge = OpenAIJudge(server.url, endpoint="chat", retries=0, timeout=2)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return run_judge(judge, tiny_items(2), CONDS, **kw)


def test_duplicate_top_k_tokens_are_combined_by_log_sum_exp():
    panel = _panel(None, [("A", -1.0), ("A", -1.0), ("B", -2.0), (" b", -3.0)])
    assert np.allclose(panel["logprob_a"], np.log(2 * np.exp(-1.0)))
    assert np.allclose(panel["logprob_b"], np.log(np.exp(-2.0) + np.exp(-3.0)))
    assert not panel["bounded"].any()


def test_duplicate_keys_of_the_completion_layout_are_all_kept():
    from judgerisk.extract.topk import match_verdict, parse_answer, top_list

    body = b'{"model": "m", "choices": [{"logprobs": {"top_logprobs": [{" A": -1.0, " A": -1.0, " B": -2.0}]}}]}'  # noqa: E501
    top = top_list(parse_answer(body))
    assert top == [(" A", -1.0), (" A", -1.0), (" B", -2.0)]
    assert match_verdict(top, "A", " A") == (pytest.approx(-1.0 + math.log(2)), False)


@pytest.mark.parametrize(
    ("entries", "message"),
    [
        ([], "the top-k list is empty"),
        ([("A", 0.5), ("B", -2.0)], "log-probability +0.5 > 0"),
        ([("A", -0.01), ("B", -0.02)], "listed probabilities sum to 1.97 > 1"),
        ([("A", "high"), ("B", -1.0)], "is not a number"),
        ([("A", 1e999), ("B", -1.0)], "is not finite"),
    ],
)
def test_impossible_top_k_lists_are_refused_naming_the_cell(work, capsys, entries, message):
    def reply(server, n, payload):
        return Reply(body=json.dumps(top_answer(entries)).replace("Infinity", "1e999"))

    with FakeServer(reply) as server:
        assert _extract(server.url) == EXIT_USAGE
    line = _one_error_line(capsys)
    assert message in line and "item " in line and "condition " in line
    assert "/v1/chat/completions (request " in line
    assert not (work / "run" / "panel.parquet").exists()


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("{not json", "the answer is not JSON"),
        (
            '{"choices": [{"logprobs": {"content": [{"top_logprobs": [{"token": "A", "logprob": NaN}]}]}}]}',
            "holds NaN, which is not JSON",
        ),  # fmt: skip
        ("[" * 200_000, "nests too deep"),
        ('{"choices": []}', "the answer.choices is empty"),
        ('{"choices": [{"logprobs": null}]}', "logprobs is null"),
        (
            '{"model": "a", "model": "b", "choices": [{"logprobs": {"content": [{"top_logprobs": [{"token": "A", "logprob": -1}]}]}}]}',
            None,
        ),  # fmt: skip
        ('"just text"', "is not a JSON object"),
        (b"\xff\xfe", "not UTF-8"),
    ],
)
def test_malformed_answers_are_one_line_naming_the_request(work, capsys, body, message):
    with FakeServer(lambda server, n, payload: Reply(body=body)) as server:
        assert _extract(server.url) == EXIT_USAGE
    line = _one_error_line(capsys)
    assert "/v1/chat/completions (request " in line, line
    if message is not None:
        assert message in line, line


def test_a_repeated_model_field_is_refused():
    from judgerisk.extract.topk import AnswerError, field, parse_answer

    with pytest.raises(AnswerError, match="gives 'model' more than once"):
        field(parse_answer(b'{"model": "a", "model": "b"}'), "model", "the answer")


def test_a_huge_answer_is_refused(work, capsys):
    from judgerisk.extract.http_client import MAX_ANSWER_BYTES

    with FakeServer(lambda s, n, p: Reply(body=b" " * (MAX_ANSWER_BYTES + 10))) as server:
        assert _extract(server.url) == EXIT_USAGE
    assert f"longer than {MAX_ANSWER_BYTES} bytes" in _one_error_line(capsys)


# ------------------------------------------------------------------ resume, torch, folders
def test_resume_after_changing_an_input_recomputes_only_it(work, capsys):
    with FakeServer() as server:
        assert _extract(server.url) == EXIT_OK
    first = pd.read_parquet(work / "run" / "panel.parquet")
    items = tiny_items(2)
    items.loc[1, "prompt"] = items.loc[1, "prompt"] + " (edited)"
    items.to_json("items.jsonl", orient="records", lines=True)
    with FakeServer() as server:
        assert _extract(server.url, "--resume") == EXIT_OK
        assert server.posts == len(CONDS)  # only the edited item's prompts
    again = pd.read_parquet(work / "run" / "panel.parquet")
    edited = str(items.loc[1, "item"])
    same = again["item"].astype(str) != edited
    assert np.array_equal(again.loc[same, "logit"], first.loc[same, "logit"])
    assert not np.isin(again.loc[~same, "logit"], first["logit"]).any()  # no stale result
    with FakeServer() as server:  # a fresh folder gives the same numbers
        assert _extract(server.url, out="fresh") == EXIT_OK
    fresh = pd.read_parquet(work / "fresh" / "panel.parquet")
    assert np.allclose(fresh["logit"], again["logit"])


_NO_TORCH = """
import importlib.abc, sys
class _Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("torch", "transformers"):
            raise ModuleNotFoundError(f"No module named {name!r} (blocked)")
sys.meta_path.insert(0, _Block())
from judgerisk.cli import main
code = main(sys.argv[1:])
assert "torch" not in sys.modules
sys.exit(code)
"""


def test_the_openai_backend_needs_no_torch(work):
    with FakeServer() as server:
        proc = subprocess.run(
            [
                sys.executable,
                "-c",
                _NO_TORCH,
                "extract",
                "--backend",
                "openai",
                "--endpoint",
                "chat",
                "--base-url",
                server.url,
                "--items",
                "items.jsonl",
                "--out",
                "run",
                "--conditions",
                *CONDS,
                "--no-progress",
            ],  # fmt: skip
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
        )
    assert proc.returncode == 0, proc.stderr
    assert len(pd.read_parquet(work / "run" / "panel.parquet")) == N_PROMPTS


def test_a_second_run_on_the_same_out_is_refused_while_the_first_holds_it(work, capsys):
    from judgerisk.extract._parts import hold_folder

    (work / "run").mkdir()
    with FakeServer() as server:
        with hold_folder(work / "run"):  # the first run, still writing
            assert _extract(server.url) == EXIT_USAGE
            assert server.posts == 0
        line = _one_error_line(capsys)
        assert f"another extraction run (pid {os.getpid()}) is writing there" in line
        assert _extract(server.url) == EXIT_OK  # released: the run proceeds


def test_a_part_name_taken_meanwhile_is_never_replaced(tmp_path):
    from judgerisk.extract._parts import PART_COLUMNS, write_part

    frame = pd.DataFrame({c: [0] for c in PART_COLUMNS}).astype({"logprob_a": float})
    first = write_part(tmp_path, 0, 0, frame.assign(logprob_a=-1.0))
    second = write_part(tmp_path, 0, 0, frame.assign(logprob_a=-2.0))  # same sequence number
    assert first.name == "part-r000-000000-n1.parquet"
    assert second.name == "part-r000-000001-n1.parquet"
    assert pd.read_parquet(first)["logprob_a"].tolist() == [-1.0]
