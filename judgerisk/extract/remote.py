"""A judge served over an OpenAI-compatible HTTP API (vLLM, SGLang, llama.cpp, a hosted API).

Two endpoints:

* ``/v1/completions`` (default): judgerisk renders the prompt itself with the judge's chat
  template and the template's assistant prefill, exactly as in-process, and asks for one token
  with its top-k log-probabilities, so the verdict position is the same as in-process.
* ``/v1/chat/completions``: the server renders the messages with its own chat template. A
  non-empty prefill is sent as a final assistant message with ``continue_final_message=True``
  and ``add_generation_prompt=False`` (vLLM's and SGLang's extension); a server that ignores
  these starts a new assistant turn after the prefill, so the verdict slot can differ from the
  in-process one. Prefer the completion endpoint for extraction.

Verdict tokens in the top-k list: with a tokenizer, the verdict token resolved as in-process
(e.g. ``"ĠA"``) is looked up by its text (``" A"``); without one, every listed token whose text,
stripped of leading white space, equals the verdict string up to case is summed (log-sum-exp);
a token listed twice is summed the same way. A verdict not in the list gets the k-th (smallest
listed) log-probability, which is an upper bound of its true value; the cell is marked
``bounded`` and counted by the verdict-mass diagnostic (book chapter "Extracting
log-probabilities", rule for bounded cells).

A server is a peer that may be wrong or hostile. The client
(:mod:`judgerisk.extract.http_client`) contacts ``base_url``'s origin only and follows no
redirect (the key never leaves for another address), gives each try a total deadline, caps
every wait, and masks the key in every message. Each answer is checked
(:mod:`judgerisk.extract.topk`: strict JSON, a possible top-k list) and must come from the
requested model, the same one throughout the run (:class:`OpenAIJudge`, Notes). An answer that
fails a check stops the run with one line naming the request (:class:`ServerAnswerError`).

**The run-level policy.** Beyond each request's own bounds, the run as a whole is bounded
(:class:`OpenAIJudge`: ``max_wait``, ``max_failures``, ``deadline``). A prompt with no answer
after its tries is left unanswered (its cell is not stored) and the run goes on with the next;
the run stops, keeping every answer it got, at once when a server asks (``Retry-After``) to
wait longer than ``max_wait`` seconds (default :data:`~judgerisk.extract.http_client.DEFAULT_MAX_WAIT`),
after ``max_failures`` prompts in a row with no answer (default
:data:`~judgerisk.extract.http_client.DEFAULT_MAX_FAILURES`),
or when the run's ``deadline`` passes (default: none). Each stop is one line naming the request
and why (:class:`ServerError`, a :class:`~judgerisk.extract.judge.RunStopped`); rerunning the
same command resumes with the prompts left.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import re
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from judgerisk._util.hashing import sha256_text
from judgerisk.extract._tokens import VerdictTokens, encode_prompts, resolve_verdict_tokens
from judgerisk.extract.http_client import (
    DEFAULT_MAX_FAILURES,
    DEFAULT_MAX_WAIT,
    MAX_RETRIES,
    MAX_TIMEOUT,
    DeadlineReached,
    HTTPClient,
    NoAnswer,
    Refused,
    ServerBusy,
)
from judgerisk.extract.judge import (
    JudgeAnswerError,
    RunStopped,
    VerdictLogprobs,
    render_with_template,
)
from judgerisk.extract.topk import AnswerError, field, match_verdict, parse_answer, top_list

__all__ = [
    "DEFAULT_MAX_FAILURES",
    "OpenAIJudge",
    "ServerAnswerError",
    "ServerError",
    "match_verdict",
    "same_model",
]

_SNAPSHOT = re.compile(r"\d[\d.-]*")


class ServerError(RunStopped):
    """A server that gave no answer after all retries (finished results are kept: resume).

    ``stops_run`` is true when the reason holds for every prompt left (a ``Retry-After``
    longer than ``max_wait``, the run's deadline): the run stops at once.
    """

    stops_run: bool = False


class ServerAnswerError(ServerError, JudgeAnswerError):
    """A server's answer that cannot be used: a redirect, a refusal (4xx), a malformed or
    impossible answer, another model than the one asked for. Not retried; a
    :class:`ValueError` too, so the command line exits with status 2."""


def same_model(requested: str | None, answered: str | None) -> bool:
    """Whether an answer's ``model`` names the requested model.

    Equal names, or the requested name followed by a dated snapshot suffix (``gpt-4o`` answered
    as ``gpt-4o-2024-08-06``: digits, dots and dashes only). An answer without a ``model`` field,
    or a request without a model name, cannot be checked and is accepted.
    """
    if requested is None or answered is None or answered == requested:
        return True
    rest = answered[len(requested) + 1 :] if answered.startswith(requested + "-") else ""
    return bool(_SNAPSHOT.fullmatch(rest))


def _check_number(name: str, value: Any, low: float, high: float, integer: bool = False) -> Any:
    bad = isinstance(value, bool) or not isinstance(value, int | float)
    if not bad and integer and not float(value).is_integer():
        bad = True
    if bad or not math.isfinite(value) or not low <= value <= high:
        kind = "an integer" if integer else "a number"
        raise ValueError(f"{name} must be {kind} in [{low:g}, {high:g}], got {value!r}")
    return int(value) if integer else float(value)


class OpenAIJudge:
    """A judge behind an OpenAI-compatible server, as a :class:`~judgerisk.extract.judge.Judge`.

    Parameters
    ----------
    base_url : str
        Server root, e.g. ``"http://127.0.0.1:8000"`` (a trailing ``/v1`` is accepted). Every
        request goes to this origin only (:mod:`judgerisk.extract.http_client`).
    model : str, optional
        Model name sent with each request (default: the server's first listed model).
    tokenizer : transformers tokenizer, optional
        The judge's tokenizer; needed for the completion endpoint (judgerisk renders the prompt
        and resolves the verdict tokens exactly as in-process).
    chat_template : str, optional
        Jinja chat template overriding the tokenizer's.
    endpoint : {"completions", "chat"}
        See the module docstring.
    top_logprobs : int, default 20
        Size of the top-k list asked for (servers cap it: vLLM's ``--max-logprobs``, 20 by
        default; OpenAI's chat API 20).
    concurrency : int, default 4
        Requests in flight at once.
    timeout : float, default 60
        Seconds for a whole try of one request (connect, send, answer), in ``(0, 86400]``; a
        server that drips its answer is cut off at this deadline.
    retries : int, default 4
        Further tries after a timeout, a refused connection, 408, 409, 425, 429 or 5xx, in
        ``[0, 100]``, waiting ``min(backoff * 2**n, max_wait)`` seconds (or the server's
        ``Retry-After``, capped at ``max_wait``). A request ends within
        ``(retries + 1) * timeout + retries * max_wait`` seconds.
    backoff : float, default 0.5
    max_wait : float, default 60
        Longest wait between two tries (:data:`~judgerisk.extract.http_client.DEFAULT_MAX_WAIT`);
        a ``Retry-After`` asking for more stops the run at once, naming the request.
    max_failures : int, default 5
        Prompts in a row with no answer after their tries that stop the run
        (:data:`~judgerisk.extract.http_client.DEFAULT_MAX_FAILURES`); a prompt with no answer before that is left for a rerun.
    deadline : float, optional
        Seconds the whole run may take, counted from the judge's creation: no try or wait goes
        beyond it, and the run stops when it passes (default: no deadline).
    api_key_env : str, optional
        Name of the environment variable holding the API key (sent as a bearer token to
        ``base_url``'s origin only, never across a redirect). The key itself is never printed,
        logged or recorded: every message masks it, a server's error body included.
    name : str, optional
        Judge name (default: the model name's last path component).

    Notes
    -----
    Each answer is checked (:mod:`judgerisk.extract.topk`): strict JSON, a non-empty top-k list
    of finite log-probabilities that are at most 0 and whose probabilities sum to at most 1.
    Its ``model`` must name the requested model (:func:`same_model`), and the first answer's
    ``model`` and ``system_fingerprint`` are pinned (:meth:`served_identity`): an answer from
    another model or fingerprint stops the run with :class:`ServerAnswerError`, so two models
    are never mixed under one judge name. ``run_judge`` keeps the pinned identity in the output
    folder, so a resumed run is held to it too.
    """

    def __init__(
        self,
        base_url: str,
        model: str | None = None,
        *,
        tokenizer: Any = None,
        chat_template: str | None = None,
        endpoint: str = "completions",
        top_logprobs: int = 20,
        concurrency: int = 4,
        timeout: float = 60.0,
        retries: int = 4,
        backoff: float = 0.5,
        max_wait: float = DEFAULT_MAX_WAIT,
        max_failures: int = DEFAULT_MAX_FAILURES,
        deadline: float | None = None,
        api_key_env: str | None = None,
        name: str | None = None,
    ) -> None:
        if endpoint not in ("completions", "chat"):
            raise ValueError(f"endpoint must be 'completions' or 'chat', got {endpoint!r}")
        if endpoint == "completions" and tokenizer is None:
            raise ValueError(
                "the completion endpoint needs the judge's tokenizer (judgerisk renders the "
                "prompt); pass tokenizer=... or use endpoint='chat'"
            )
        url = str(base_url).rstrip("/")
        self.base_url = url[:-3] if url.endswith("/v1") else url
        self.endpoint = endpoint
        self.tokenizer = tokenizer
        self.chat_template = chat_template
        self.top_logprobs = _check_number("top_logprobs", top_logprobs, 1, 1000, integer=True)
        self.concurrency = _check_number("concurrency", concurrency, 1, 1024, integer=True)
        self.timeout = _check_number("timeout", timeout, 1e-3, MAX_TIMEOUT)
        self.retries = _check_number("retries", retries, 0, MAX_RETRIES, integer=True)
        self.backoff = _check_number("backoff", backoff, 0, MAX_TIMEOUT)
        self.max_wait = _check_number("max_wait", max_wait, 0, MAX_TIMEOUT)
        self.max_failures = _check_number("max_failures", max_failures, 1, 10**9, integer=True)
        self.deadline: float | None = None
        self._deadline_at: float | None = None  # a time.monotonic() time
        if deadline is not None:
            self.deadline = _check_number("deadline", deadline, 1e-3, 1e9)
            self._deadline_at = time.monotonic() + float(deadline)
        self._failures = 0  # prompts in a row with no answer
        self._stopped: str | None = None  # why the run stops (every later prompt is skipped)
        self.last_failure: str | None = None
        self.chunk_size = 4 * self.concurrency
        self.api_key_env = api_key_env
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        key = None
        if api_key_env is not None:
            key = os.environ.get(api_key_env)
            if not key:
                raise ValueError(f"the environment variable {api_key_env} (API key) is not set")
            if not key.isprintable() or any(ch.isspace() for ch in key):
                raise ValueError(
                    f"the API key in {api_key_env} holds white space or control characters "
                    "(a trailing newline?)"
                )
            headers["Authorization"] = "Bearer " + key
        self._http = HTTPClient(
            self.base_url,
            headers=headers,
            timeout=self.timeout,
            retries=self.retries,
            backoff=self.backoff,
            max_wait=self.max_wait,
            secret=key,
        )
        self._model = model
        self._name = name
        self._server: dict | None = None
        self._served: dict | None = None
        self._pinned_by = ""
        self._lock = threading.Lock()
        self._count = itertools.count(1)

    def __repr__(self) -> str:
        return f"OpenAIJudge({self.base_url!r}, model={self._model!r}, endpoint={self.endpoint!r})"

    # ------------------------------------------------------------------ HTTP
    def _request(self, path: str, payload: dict | None = None) -> tuple[Any, str]:
        """The JSON answer of one request and its name for messages (``POST url (request n)``),
        under the client's rules."""
        number = next(self._count)
        what = f"{'GET' if payload is None else 'POST'} {self.base_url}{path} (request {number})"
        try:
            _, _, data = self._http.request(path, payload, deadline=self._deadline_at)
        except NoAnswer as exc:
            text, head = str(exc), f"{what.split(' (request ')[0]}: "
            err = ServerError(f"{what}: {text.removeprefix(head)}")
            err.stops_run = isinstance(exc, ServerBusy | DeadlineReached)
            raise err from None
        except Refused as exc:
            raise ServerAnswerError(f"{exc} (request {number})") from None
        try:
            return parse_answer(data), what
        except AnswerError as exc:
            raise ServerAnswerError(f"{what}: {self._http.mask(str(exc))}") from None

    def server_info(self) -> dict:
        """The server's ``/v1/models`` answer (ids, owners) and version, fetched once."""
        if self._server is None:
            answer, what = self._request("/v1/models")
            try:
                listed = field(answer, "data", "the answer", list)
            except AnswerError as exc:
                raise ServerAnswerError(f"{what}: {self._http.mask(str(exc))}") from None
            models = [
                {k: m.get(k) for k in ("id", "owned_by", "root", "max_model_len") if k in m}
                for m in listed
                if isinstance(m, dict)
            ]
            self._server = {"models": models, **self._version()}
        return self._server

    def _version(self) -> dict:
        """The server's software and version where it says (vLLM's ``/version``, the header)."""
        try:
            status, headers, data = self._http.probe("/version")
        except (OSError, Refused):
            return {"version": None, "software": None}
        software = headers.get("Server")
        version = None
        if 200 <= status < 300:
            try:
                answer = parse_answer(data)
                version = answer.get("version") if isinstance(answer, dict) else None
            except AnswerError:
                pass
        return {
            "version": self._http.mask(version) if isinstance(version, str) else None,
            "software": self._http.mask(software) if software else None,
        }

    @property
    def model(self) -> str | None:
        """Model name sent with each request (the server's first listed one by default)."""
        if self._model is None:
            models = self.server_info()["models"]
            first = models[0].get("id") if models else None
            self._model = first if isinstance(first, str) else None
        return self._model

    @property
    def name(self) -> str:
        """Judge name (the given one, else the model name's last path component)."""
        if self._name is not None:
            return str(self._name)
        base = str(self.model or "server").rstrip("/").split("/")[-1]
        return base[:-5] if base.lower().endswith(".gguf") else base

    def describe(self) -> dict:
        """Backend, endpoint, server model (name, listing), top-k size, chat template hash."""
        template = self.chat_template
        if template is None and self.tokenizer is not None:
            template = getattr(self.tokenizer, "chat_template", None)
        return {
            "backend": "openai",
            "endpoint": self.endpoint,
            "model": self.model,
            "server": self.server_info(),
            "top_logprobs": self.top_logprobs,
            "chat_template_sha256": None if template is None else sha256_text(template),
            "tokenizer": getattr(self.tokenizer, "name_or_path", None),
            "api_key_env": self.api_key_env,
        }

    # ------------------------------------------------------------------ served identity
    def served_identity(self) -> dict | None:
        """``{"model", "system_fingerprint"}`` of the first answer (None before any answer)."""
        with self._lock:
            return None if self._served is None else dict(self._served)

    def expect_served(self, identity: dict) -> None:
        """Hold later answers to ``identity`` (a resumed run: the first run's pinned identity)."""
        seen = {k: identity.get(k) for k in ("model", "system_fingerprint")}
        self._pin(seen, "the output folder", "an earlier run in this folder")

    def _pin(self, seen: dict, what: str, source: str = "the first answer") -> None:
        with self._lock:
            if self._served is None:
                self._served, self._pinned_by = seen, source
                return
            pinned, by = self._served, self._pinned_by
        if seen != pinned:
            changed = ", ".join(
                f"{k} {pinned.get(k)!r} -> {seen.get(k)!r}"
                for k in seen
                if seen[k] != pinned.get(k)
            )
            raise ServerAnswerError(
                f"{what}: the server changed what it serves ({changed}; pinned by {by}); the "
                "numbers would mix two models under one judge. Results finished before the "
                "change are kept; resume once the server serves the first one again, or use a "
                "new output folder"
            )

    def _check_served(self, answer: Any, what: str) -> None:
        model = answer.get("model") if isinstance(answer, dict) else None
        fingerprint = answer.get("system_fingerprint") if isinstance(answer, dict) else None
        seen = {
            "model": self._http.mask(model) if isinstance(model, str) else model,
            "system_fingerprint": (
                self._http.mask(fingerprint) if isinstance(fingerprint, str) else fingerprint
            ),
        }
        if not same_model(self.model, model if isinstance(model, str) else None):
            raise ServerAnswerError(
                f"{what}: the answer comes from model {seen['model']!r}, not the requested "
                f"{self.model!r} (if the server names every model so, pass that name as --model)"
            )
        self._pin(seen, what)

    # ------------------------------------------------------------------ Judge
    def render(
        self, conversations: Sequence[list[dict]], *, assistant_prefill: str = ""
    ) -> list[str]:
        """Rendered prompts (completion endpoint) or JSON of messages + prefill (chat)."""
        if self.endpoint == "chat":
            return [
                json.dumps({"messages": list(c), "prefill": assistant_prefill}, sort_keys=True)
                for c in conversations
            ]
        return render_with_template(self, conversations, assistant_prefill)

    def _payload(self, text: str) -> dict:
        base = {"model": self.model, "max_tokens": 1, "temperature": 0.0}
        if self.endpoint == "completions":
            return {**base, "prompt": text, "logprobs": self.top_logprobs}
        spec = json.loads(text)
        messages = list(spec["messages"])
        extra: dict[str, Any] = {}
        if spec["prefill"]:
            messages.append({"role": "assistant", "content": spec["prefill"]})
            extra = {"continue_final_message": True, "add_generation_prompt": False}
        return {
            **base,
            "messages": messages,
            "logprobs": True,
            "top_logprobs": self.top_logprobs,
            **extra,
        }

    # ------------------------------------------------------------------ the run-level policy
    def _stop(self, reason: str) -> None:
        with self._lock:
            if self._stopped is None:
                self._stopped = reason

    def _failed(self, exc: ServerError) -> None:
        """Count a prompt with no answer; stop the run when the policy says so."""
        with self._lock:
            self._failures += 1
            self.last_failure = str(exc)
            failures = self._failures
        if exc.stops_run:
            self._stop(str(exc))
        elif failures >= self.max_failures:
            self._stop(
                f"{failures} prompt{'s' * (failures > 1)} in a row got no answer (--max-failures "
                f"{self.max_failures}; last: {exc})"
            )

    def _top(self, job: tuple[int, str]) -> tuple[list[tuple[str, float]], int] | None:
        """One prompt's top-k list and prompt length, or None when it got no answer."""
        position, text = job
        if self._deadline_at is not None and time.monotonic() >= self._deadline_at:
            self._stop(f"the run's deadline (--deadline {self.deadline:g} s) passed")
        if self._stopped is not None:
            return None  # left for a rerun
        path = "/v1/completions" if self.endpoint == "completions" else "/v1/chat/completions"
        try:
            try:
                answer, what = self._request(path, self._payload(text))
            except ServerError as exc:
                if isinstance(exc, JudgeAnswerError):
                    raise
                self._failed(exc)
                return None
            try:
                top = top_list(answer)
                usage = answer.get("usage") if isinstance(answer, dict) else None
                used = field(usage, "prompt_tokens", "usage") if isinstance(usage, dict) else 0
                if used is None:
                    used = 0
                if isinstance(used, bool) or not isinstance(used, int) or used < 0:
                    raise AnswerError(f"usage.prompt_tokens is {used!r}, not a count")
            except AnswerError as exc:
                raise ServerAnswerError(f"{what}: {self._http.mask(str(exc))}") from None
            self._check_served(answer, what)
        except JudgeAnswerError as exc:
            self._stop(str(exc))  # the prompts not yet sent are skipped
            exc.position = position
            raise
        with self._lock:
            self._failures = 0
        return top, used

    def verdict_logprobs(
        self, texts: Sequence[str], verdicts: tuple[str, str] = ("A", "B")
    ) -> VerdictLogprobs:
        """Top-k log-probabilities of the two verdicts at the slot after each prompt.

        Requests run ``concurrency`` at a time; results come back in the order given. Missing
        verdicts give the bound of :func:`match_verdict` and are marked in ``bounded``; an
        answer that cannot be used raises :class:`ServerAnswerError` with ``position`` set to
        its prompt's index. A prompt with no answer is marked in ``missing``; when the run-level
        policy stops the run (module docstring), :class:`ServerError` is raised with the
        answers got so far as its ``partial``.
        """
        texts = list(texts)
        if not texts:
            raise ValueError("no prompts")
        if self.tokenizer is not None and self.endpoint == "completions":
            vt = resolve_verdict_tokens(self.tokenizer, texts[0], verdicts)
            exact = [self.tokenizer.decode([vt.id_a]), self.tokenizer.decode([vt.id_b])]
            n_tok = np.array([len(s) for s in encode_prompts(self.tokenizer, texts)], np.int64)
        else:
            vt = VerdictTokens(-1, -1, verdicts[0], verdicts[1])
            exact, n_tok = [None, None], None
        self.model  # noqa: B018 - resolve the default model once, before the threads
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            answers = list(pool.map(self._top, enumerate(texts)))
        out = np.full((len(texts), 2), np.nan)
        bounded = np.zeros((len(texts), 2), bool)
        missing = np.array([a is None for a in answers], bool)
        for r, answer in enumerate(answers):
            if answer is None:
                continue
            for c in range(2):
                out[r, c], bounded[r, c] = match_verdict(answer[0], verdicts[c], exact[c])
        if n_tok is None:
            n_tok = np.array([0 if a is None else a[1] for a in answers], np.int64)
        result = VerdictLogprobs(out, n_tok, vt, bounded, missing if missing.any() else None)
        if self._stopped is not None:
            stop = ServerError(f"{self._stopped}; the run stops")
            stop.stops_run, stop.partial = True, result
            raise stop
        return result
