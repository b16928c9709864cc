"""The HTTP client of the OpenAI-compatible backend: one origin, a total deadline, a secret kept.

Rules (book chapter "Extracting log-probabilities", section on serving engines):

* **One origin.** Every request goes to the scheme, host and port of ``base_url``; nothing else
  is contacted. A redirect (any 3xx answer) is not followed: it is an error naming its
  ``Location``, so the API key is never sent to another address (urllib's default opener
  re-sends every header, ``Authorization`` included, to the host a redirect names). Proxy
  variables are honoured only for ``https`` (a ``CONNECT`` tunnel, so the proxy never sees the
  key); a plain ``http`` server is always contacted directly.
* **A total deadline per try.** ``timeout`` bounds a whole try (connect, send, headers and
  body), not each socket read: a server that drips one byte a second is cut off when the
  deadline passes.
* **Bounded retries.** A timeout, a refused or reset connection, 408, 409, 425, 429 and 5xx are
  tried again up to ``retries`` times, waiting ``min(backoff * 2**n, max_wait)`` seconds, or
  the server's ``Retry-After`` (seconds or an HTTP date) when it is at most ``max_wait``. A
  request therefore ends within ``(retries + 1) * timeout + retries * max_wait`` seconds
  (:attr:`HTTPClient.worst_case_s`).
* **No wait beyond the allowed one.** A ``Retry-After`` longer than ``max_wait`` is not waited
  on, capped or not: the request ends at once with :class:`ServerBusy` naming what the server
  asked (a server saying "come back in three years" stops the run instead of being asked
  again every ``max_wait`` seconds by every prompt).
* **A deadline.** ``request(..., deadline=t)`` (a :func:`time.monotonic` time) tries and waits
  only until ``t``: a try gets at most the time left, a wait that would pass it is not started
  (:class:`DeadlineReached`).
* **The key is never printed.** Every message built from what a server sent (an error body, a
  ``Location``) has the key replaced by ``***`` (also its URL- and JSON-escaped forms) and is
  cut to one line.
* **Bounded answers.** A body longer than :data:`MAX_ANSWER_BYTES` is refused.
"""

from __future__ import annotations

import email.utils
import http.client
import json
import math
import socket
import ssl
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Mapping
from typing import Any

__all__ = [
    "DEFAULT_MAX_FAILURES",
    "DEFAULT_MAX_WAIT",
    "DeadlineReached",
    "HTTPClient",
    "MAX_ANSWER_BYTES",
    "MAX_RETRIES",
    "MAX_TIMEOUT",
    "NoAnswer",
    "RETRY_STATUS",
    "Refused",
    "ServerBusy",
    "mask_secret",
]

#: Statuses tried again (with the capped wait): timeouts, conflicts, rate limits, server errors.
RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
#: Largest ``retries`` accepted (each retry can wait up to ``max_wait`` seconds).
MAX_RETRIES = 100
#: Largest ``timeout`` accepted, in seconds (a day).
MAX_TIMEOUT = 86400.0
#: Longest wait between two tries of a request, in seconds, unless given (``--max-wait``); a
#: ``Retry-After`` asking for more stops the request (:class:`ServerBusy`).
DEFAULT_MAX_WAIT = 60.0
#: Prompts in a row with no answer (after each one's retries) that stop an extraction run,
#: unless given (``--max-failures``): a server that is down is not asked for every prompt left
#: (:class:`judgerisk.extract.remote.OpenAIJudge`).
DEFAULT_MAX_FAILURES = 5
#: Largest answer body read (a top-20 answer is a few kB).
MAX_ANSWER_BYTES = 8 * 1024 * 1024
_SHOWN = 200  # characters of a server's error body shown in a message


class NoAnswer(Exception):
    """No usable answer after every try (the server is down, too slow, or busy)."""


class Refused(Exception):
    """An answer that must not be retried: a redirect, a 4xx, a body that is too long."""


class ServerBusy(NoAnswer):
    """The server asked to wait longer than ``max_wait`` (``Retry-After``): no wait, no retry."""


class DeadlineReached(NoAnswer):
    """The request's deadline passed before an answer came."""


def mask_secret(text: str, secret: str | None) -> str:
    """``text`` with ``secret`` (and its URL- and JSON-escaped forms) replaced by ``***``."""
    if not secret:
        return text
    forms = {
        secret,
        urllib.parse.quote(secret, safe=""),
        urllib.parse.quote_plus(secret),
        json.dumps(secret)[1:-1],
    }
    for form in sorted(forms, key=len, reverse=True):
        if form:
            text = text.replace(form, "***")
    return text


def _one_line(text: str, limit: int = _SHOWN) -> str:
    flat = " ".join("".join(ch if ch.isprintable() else " " for ch in text).split())
    return flat if len(flat) <= limit else flat[:limit] + "..."


def _retry_after(value: str | None, now: float) -> float | None:
    """Seconds a ``Retry-After`` header asks for (delta-seconds or an HTTP date), or None."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when is None:
            return None
        seconds = when.timestamp() - now
    if not math.isfinite(seconds):
        return None
    return max(seconds, 0.0)


class HTTPClient:
    """JSON over HTTP(S) to one origin, under the rules of the module docstring.

    Parameters
    ----------
    base_url : str
        ``http://host:port[/prefix]`` or ``https://...``; no user name, password, query or
        fragment (the key goes in ``secret``).
    headers : mapping
        Sent with every request (``Authorization`` included).
    timeout : float
        Seconds for a whole try (connect, send, answer).
    retries : int
        Further tries after a retryable failure.
    backoff, max_wait : float
        The wait before try ``n + 1`` is ``min(backoff * 2**n, max_wait)``, or the server's
        ``Retry-After`` capped at ``max_wait``.
    secret : str, optional
        Masked in every message (the API key).
    """

    def __init__(
        self,
        base_url: str,
        *,
        headers: Mapping[str, str],
        timeout: float,
        retries: int,
        backoff: float,
        max_wait: float,
        secret: str | None = None,
    ) -> None:
        parts = urllib.parse.urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"base URL {base_url!r}: expected http://host:port or https://host")
        if parts.username is not None or parts.password is not None:
            raise ValueError(
                "the base URL holds a user name or password; pass the key through an "
                "environment variable (--api-key-env) instead"
            )
        if parts.query or parts.fragment:
            raise ValueError(f"base URL {base_url!r}: no query or fragment allowed")
        try:
            port = parts.port
        except ValueError:
            raise ValueError(f"base URL {base_url!r}: the port is not a number") from None
        self.scheme = parts.scheme
        self.host = parts.hostname
        self.port = port or (443 if self.scheme == "https" else 80)
        self.prefix = parts.path.rstrip("/")
        self.origin = f"{self.scheme}://{parts.netloc}"
        self.headers = dict(headers)
        self.timeout = float(timeout)
        self.retries = int(retries)
        self.backoff = float(backoff)
        self.max_wait = float(max_wait)
        self.secret = secret
        self._proxy = self._https_proxy()

    @property
    def worst_case_s(self) -> float:
        """Longest time one request can take, every try and wait included."""
        return (self.retries + 1) * self.timeout + self.retries * self.max_wait

    def mask(self, text: str) -> str:
        """``text`` with the secret masked, cut to one line."""
        return _one_line(mask_secret(str(text), self.secret), 10 * _SHOWN)

    def _https_proxy(self) -> tuple[str, int] | None:
        if self.scheme != "https":
            return None
        proxy = urllib.request.getproxies().get("https")
        if not proxy or urllib.request.proxy_bypass(self.host):
            return None
        parts = urllib.parse.urlsplit(proxy if "://" in proxy else "http://" + proxy)
        if not parts.hostname:
            return None
        return parts.hostname, parts.port or 8080

    # ------------------------------------------------------------------ one try
    def _connection(self, timeout: float) -> http.client.HTTPConnection:
        if self.scheme == "http":
            return http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        context = ssl.create_default_context()
        if self._proxy is None:
            return http.client.HTTPSConnection(
                self.host, self.port, timeout=timeout, context=context
            )
        conn = http.client.HTTPSConnection(*self._proxy, timeout=timeout, context=context)
        conn.set_tunnel(self.host, self.port)
        return conn

    def _once(
        self, method: str, path: str, body: bytes | None, timeout: float | None = None
    ) -> tuple[int, Any, bytes]:
        """One try within ``timeout`` seconds in all (default the client's): (status, headers,
        body).

        A timer shuts the socket down at the deadline, so no read can outlast it (a per-read
        timeout would restart with every byte a dripping server sends).
        """
        timeout = self.timeout if timeout is None else timeout
        conn = self._connection(timeout)
        expired = threading.Event()

        def _expire() -> None:
            expired.set()
            sock = conn.sock
            if sock is not None:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

        timer = threading.Timer(timeout, _expire)
        timer.daemon = True
        timer.start()
        try:
            conn.connect()
            if expired.is_set():
                raise TimeoutError
            conn.request(method, self.prefix + path, body=body, headers=self.headers)
            resp = conn.getresponse()
            data = resp.read(MAX_ANSWER_BYTES + 1)
            if expired.is_set():
                raise TimeoutError
            return resp.status, resp.headers, data
        except (OSError, http.client.HTTPException) as exc:
            if expired.is_set():
                raise TimeoutError(f"no complete answer within {timeout:g} s") from None
            raise exc
        except ValueError as exc:  # http.client's refusal of a header or URL: no retry
            raise Refused(self.mask(f"{method} {self.origin}{self.prefix}{path}: {exc}")) from None
        finally:
            timer.cancel()
            conn.close()

    def probe(self, path: str) -> tuple[int, Any, bytes]:
        """One GET try of ``path``, whatever the status: ``(status, headers, body)``.

        Raises OSError (or :class:`Refused`) when no answer came within ``timeout``.
        """
        try:
            return self._once("GET", path, None)
        except http.client.HTTPException as exc:
            raise OSError(self.mask(str(exc))) from None

    # ------------------------------------------------------------------ a request
    def request(
        self,
        path: str,
        payload: dict | None = None,
        *,
        retry: bool = True,
        deadline: float | None = None,
    ) -> tuple:
        """``(status, headers, body)`` of a 2xx answer to ``path`` (POST with ``payload``).

        ``deadline`` (a :func:`time.monotonic` time) bounds every try and wait.

        Raises
        ------
        Refused
            A redirect (naming its ``Location``), a 4xx other than the retried ones, a 2xx body
            over :data:`MAX_ANSWER_BYTES`.
        ServerBusy
            A retried status whose ``Retry-After`` asks for more than ``max_wait`` seconds.
        DeadlineReached
            ``deadline`` passed (or the next wait would pass it) before an answer.
        NoAnswer
            Every try failed (timeouts, refused connections, retried statuses).
        """
        url = self.origin + self.prefix + path
        body = None if payload is None else json.dumps(payload, allow_nan=False).encode("utf-8")
        method = "GET" if body is None else "POST"
        last, tries = "", self.retries + 1 if retry else 1
        for attempt in range(tries):
            wait = min(self.backoff * 2**attempt, self.max_wait)
            left = math.inf if deadline is None else deadline - time.monotonic()
            if left <= 0:
                raise DeadlineReached(
                    f"{method} {url}: the run's deadline passed ({last or 'no try'})"
                )
            try:
                status, headers, data = self._once(method, path, body, min(self.timeout, left))
            except (OSError, http.client.HTTPException) as exc:
                last = self.mask(f"{type(exc).__name__}: {exc}".rstrip(": "))
            else:
                if len(data) > MAX_ANSWER_BYTES:
                    raise Refused(
                        f"{method} {url}: the answer is longer than {MAX_ANSWER_BYTES} bytes"
                    )
                if 200 <= status < 300:
                    return status, headers, data
                if 300 <= status < 400:
                    where = self.mask(headers.get("Location") or "(no Location)")
                    raise Refused(
                        f"{method} {url}: HTTP {status} redirects to {where}; redirects are not "
                        "followed (the API key would go to another address). Point --base-url at "
                        "the server that answers"
                    )
                text = self.mask(data.decode("utf-8", "replace"))
                if status not in RETRY_STATUS:
                    raise Refused(f"{method} {url}: HTTP {status}: {_one_line(text)}")
                last = f"HTTP {status}"
                given = headers.get("Retry-After")
                asked = _retry_after(given, time.time())
                if asked is not None and asked > self.max_wait:
                    raise ServerBusy(
                        f"{method} {url}: HTTP {status} with Retry-After: "
                        f"{self.mask(given or '')} ({asked:.0f} s), longer than the longest wait "
                        f"allowed (--max-wait {self.max_wait:g} s), so it is not waited on"
                    )
                if asked is not None:
                    wait = asked
            if attempt < tries - 1:
                if deadline is not None and time.monotonic() + wait >= deadline:
                    raise DeadlineReached(
                        f"{method} {url}: the run's deadline passes before the next try "
                        f"(last: {last}; next wait {wait:g} s)"
                    )
                time.sleep(wait)
        raise NoAnswer(
            f"{method} {url}: no answer after {tries} tries (last: {last}; timeout "
            f"{self.timeout:g} s per try, waits capped at {self.max_wait:g} s)"
        )
