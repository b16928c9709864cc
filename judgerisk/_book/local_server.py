"""Start and stop llama.cpp's OpenAI-compatible server on a free loopback port.

Used by the server tests, the throughput benchmark and the book's extraction chapter to run the
bundled GGUF judge through the ``openai`` backend against a real server (the ``server`` extra:
``llama-cpp-python[server]``).
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from types import TracebackType

__all__ = ["LocalServer", "free_port", "llama_server_available"]


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that is free on ``host`` right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def llama_server_available() -> bool:
    """True when ``llama_cpp.server`` can be imported (the ``server`` extra is installed)."""
    import importlib.util

    return (
        importlib.util.find_spec("llama_cpp") is not None
        and importlib.util.find_spec("uvicorn") is not None
    )


class LocalServer:
    """``python -m llama_cpp.server`` serving one GGUF file on a loopback port.

    Parameters
    ----------
    model : path
        The ``.gguf`` file.
    port : int, optional
        Default: a free port (kept across :meth:`stop` / :meth:`start`).
    n_ctx : int, default 4096
        Context length (prompts of the pairwise template reach about 1,500 tokens).
    n_threads : int, default 2
    startup_timeout : float, default 180
        Seconds to wait for ``/v1/models`` to answer.

    Examples
    --------
    >>> with LocalServer(bundled_gguf()) as server:  # doctest: +SKIP
    ...     judge = OpenAIJudge(server.url, tokenizer=load_tokenizer("smollm2-135m"))
    """

    def __init__(
        self,
        model: str | Path,
        port: int | None = None,
        *,
        host: str = "127.0.0.1",
        n_ctx: int = 4096,
        n_threads: int = 2,
        startup_timeout: float = 180.0,
    ) -> None:
        self.model = Path(model)
        self.host = host
        self.port = port if port is not None else free_port(host)
        self.n_ctx = int(n_ctx)
        self.n_threads = int(n_threads)
        self.startup_timeout = float(startup_timeout)
        self.proc: subprocess.Popen | None = None
        self.log = Path(tempfile.mkstemp(prefix="llama-server-", suffix=".log")[1])

    @property
    def url(self) -> str:
        """``http://host:port``."""
        return f"http://{self.host}:{self.port}"

    def healthy(self) -> bool:
        """True when ``/v1/models`` answers with a model list."""
        try:
            with urllib.request.urlopen(self.url + "/v1/models", timeout=2) as resp:
                return bool(json.loads(resp.read()).get("data"))
        except (OSError, ValueError):
            return False

    def start(self) -> LocalServer:
        """Start the server and wait until it is healthy (RuntimeError with its log otherwise)."""
        if self.proc is not None and self.proc.poll() is None:
            return self
        cmd = [
            sys.executable, "-m", "llama_cpp.server", "--model", str(self.model),
            "--host", self.host, "--port", str(self.port), "--n_ctx", str(self.n_ctx),
            "--n_threads", str(self.n_threads), "--verbose", "false",
        ]  # fmt: skip
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                break
            if self.healthy():
                return self
            time.sleep(0.25)
        self.stop()
        tail = self.log.read_text(errors="replace")[-2000:]
        raise RuntimeError(f"llama.cpp server did not become healthy on {self.url}:\n{tail}")

    def stop(self) -> None:
        """Stop the server (terminate, then kill after 10 s); safe to call twice."""
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)

    def __enter__(self) -> LocalServer:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
