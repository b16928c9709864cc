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
stripped of leading white space, equals the verdict string up to case is summed (log-sum-exp).
A verdict not in the list gets the k-th (smallest listed) log-probability, which is an upper
bound of its true value; the cell is marked ``bounded`` and counted by the verdict-mass
diagnostic (book chapter "Extracting log-probabilities", rule for bounded cells).
"""

from __future__ import annotations

import json
import math
import os
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from judgerisk._util.hashing import sha256_text
from judgerisk.extract.judge import VerdictLogprobs, render_with_template
from judgerisk.extract.tokens import VerdictTokens, encode_prompts, resolve_verdict_tokens

__all__ = ["OpenAIJudge", "ServerError", "match_verdict"]

_RETRY_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}


class ServerError(RuntimeError):
    """A server that did not answer after all retries, or answered without log-probabilities."""


def match_verdict(top: dict[str, float], verdict: str, exact: str | None) -> tuple[float, bool]:
    """Log-probability of a verdict in a top-k list, and whether it is only a bound.

    Parameters
    ----------
    top : dict
        Token text -> log-probability (the server's top-k list at the verdict slot).
    verdict : str
        The verdict string (``"A"``).
    exact : str or None
        The verdict token's text as the in-process path resolves it (``" A"`` for ``"ĠA"``);
        None matches leading-space and case variants and sums them.

    Returns
    -------
    (logprob, bounded)
        ``bounded`` is True when the verdict is not listed; the value is then
        :math:`\\min_{t \\in \\text{top-}k} \\log p_t \\ge \\log p_{\\text{verdict}}`.
    """
    if exact is not None:
        hits = [lp for tok, lp in top.items() if tok == exact]
    else:
        want = verdict.strip().casefold()
        hits = [lp for tok, lp in top.items() if tok.lstrip().casefold() == want]
    if hits:
        peak = max(hits)
        return peak + math.log(sum(math.exp(h - peak) for h in hits)), False
    return (min(top.values()) if top else 0.0), True


class OpenAIJudge:
    """A judge behind an OpenAI-compatible server, as a :class:`~judgerisk.extract.judge.Judge`.

    Parameters
    ----------
    base_url : str
        Server root, e.g. ``"http://127.0.0.1:8000"`` (a trailing ``/v1`` is accepted).
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
        Seconds per request.
    retries : int, default 4
        Further tries after a timeout, a refused connection, 429 or 5xx, waiting
        ``backoff * 2**n`` seconds (or the server's ``Retry-After``).
    backoff : float, default 0.5
    api_key_env : str, optional
        Name of the environment variable holding the API key (sent as a bearer token). The key
        itself is never printed, logged or recorded.
    name : str, optional
        Judge name (default: the model name's last path component).
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
        url = base_url.rstrip("/")
        self.base_url = url[:-3] if url.endswith("/v1") else url
        self.endpoint = endpoint
        self.tokenizer = tokenizer
        self.chat_template = chat_template
        self.top_logprobs = int(top_logprobs)
        self.concurrency = int(concurrency)
        self.timeout = float(timeout)
        self.retries = int(retries)
        self.backoff = float(backoff)
        self.chunk_size = 4 * self.concurrency
        self.api_key_env = api_key_env
        self._headers = {"Content-Type": "application/json"}
        if api_key_env is not None:
            key = os.environ.get(api_key_env)
            if not key:
                raise ValueError(f"the environment variable {api_key_env} (API key) is not set")
            self._headers["Authorization"] = "Bearer " + key
        self._model = model
        self._name = name
        self._server: dict | None = None

    def __repr__(self) -> str:
        return f"OpenAIJudge({self.base_url!r}, model={self.model!r}, endpoint={self.endpoint!r})"

    # ------------------------------------------------------------------ HTTP
    def _request(self, path: str, payload: dict | None = None) -> dict:
        url = self.base_url + path
        data = None if payload is None else json.dumps(payload).encode("utf-8")
        last = ""
        for attempt in range(self.retries + 1):
            req = urllib.request.Request(url, data=data, headers=self._headers)
            wait = self.backoff * 2**attempt
            try:
                with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                    return json.loads(resp.read().decode("utf-8"))
            except urllib.error.HTTPError as exc:
                if exc.code not in _RETRY_STATUS:
                    body = exc.read().decode("utf-8", "replace")[:300]
                    raise ServerError(f"{url}: HTTP {exc.code}: {body}") from None
                last = f"HTTP {exc.code}"
                after = exc.headers.get("Retry-After") if exc.headers else None
                if after and after.replace(".", "", 1).isdigit():
                    wait = float(after)
            except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
                reason = getattr(exc, "reason", exc)
                last = f"{type(reason).__name__}: {reason}"
            if attempt < self.retries:
                time.sleep(wait)
        raise ServerError(
            f"{url}: no answer after {self.retries + 1} tries (last: {last}; timeout "
            f"{self.timeout:g} s). Results finished so far are kept; rerun the same command "
            "to resume."
        )

    def server_info(self) -> dict:
        """The server's ``/v1/models`` answer (ids, owners) and version, fetched once."""
        if self._server is None:
            answer = self._request("/v1/models")
            models = [
                {k: m.get(k) for k in ("id", "owned_by", "root", "max_model_len") if k in m}
                for m in answer.get("data", [])
            ]
            self._server = {"models": models, **self._version()}
        return self._server

    def _version(self) -> dict:
        """The server's software and version where it says (vLLM's ``/version``, the header)."""
        req = urllib.request.Request(self.base_url + "/version", headers=self._headers)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                answer = json.loads(resp.read().decode("utf-8"))
                return {"version": answer.get("version"), "software": resp.headers.get("Server")}
        except urllib.error.HTTPError as exc:  # no /version route (llama.cpp): keep the header
            return {"version": None, "software": exc.headers.get("Server") if exc.headers else None}
        except (OSError, ValueError, AttributeError):
            return {"version": None, "software": None}

    @property
    def model(self) -> str | None:
        """Model name sent with each request (the server's first listed one by default)."""
        if self._model is None:
            models = self.server_info()["models"]
            self._model = models[0]["id"] if models else None
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

    def _top(self, text: str) -> tuple[dict[str, float], int]:
        path = "/v1/completions" if self.endpoint == "completions" else "/v1/chat/completions"
        answer = self._request(path, self._payload(text))
        try:
            lp = answer["choices"][0]["logprobs"]
            if self.endpoint == "completions":
                top = dict(lp["top_logprobs"][0])
            else:
                top = {e["token"]: e["logprob"] for e in lp["content"][0]["top_logprobs"]}
        except (KeyError, IndexError, TypeError) as exc:
            raise ServerError(
                f"{self.base_url}{path}: the answer holds no top log-probabilities "
                f"({type(exc).__name__}: {exc}); does the server return logprobs?"
            ) from None
        used = int((answer.get("usage") or {}).get("prompt_tokens") or 0)
        return {str(k): float(v) for k, v in top.items()}, used

    def verdict_logprobs(
        self, texts: Sequence[str], verdicts: tuple[str, str] = ("A", "B")
    ) -> VerdictLogprobs:
        """Top-k log-probabilities of the two verdicts at the slot after each prompt.

        Requests run ``concurrency`` at a time; results come back in the order given. Missing
        verdicts give the bound of :func:`match_verdict` and are marked in ``bounded``.
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
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            answers = list(pool.map(self._top, texts))
        out = np.empty((len(texts), 2))
        bounded = np.zeros((len(texts), 2), bool)
        for r, (top, _) in enumerate(answers):
            for c in range(2):
                out[r, c], bounded[r, c] = match_verdict(top, verdicts[c], exact[c])
        if n_tok is None:
            n_tok = np.array([used for _, used in answers], np.int64)
        return VerdictLogprobs(out, n_tok, vt, bounded)
