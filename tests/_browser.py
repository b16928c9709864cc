"""Open a page in headless Chromium and inspect its live DOM over the DevTools protocol.

Used by the book test to check, in a real browser, that MathJax typeset every formula and
that every figure loaded. Talks to Chromium with tornado's websocket client (tornado
ships with Jupyter), so no extra dependency is needed.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--allow-file-access-from-files",
    "--remote-debugging-port=0",
]

# Evaluated in the page once it has settled: what MathJax left and what the images did.
PAGE_PROBE = """
(() => {
  const math = [...document.querySelectorAll('.math')];
  const raw = math.filter(el => !el.querySelector('mjx-container'))
                  .map(el => el.textContent.slice(0, 80));
  const imgs = [...document.images].map(i => ({src: i.src, ok: i.complete && i.naturalWidth > 0}));
  return JSON.stringify({
    title: document.title,
    n_math: math.length,
    n_typeset: document.querySelectorAll('mjx-container').length,
    raw_math: raw,
    images: imgs,
    mathjax_loaded: typeof window.MathJax !== 'undefined' && !!window.MathJax.startup,
  });
})()
"""


def chromium_path() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


async def _probe(ws_url: str, urls: list[str], settle_s: float) -> list[dict]:
    from tornado.websocket import websocket_connect

    conn = await websocket_connect(ws_url, max_message_size=64 * 2**20)
    counter = 0

    async def call(method: str, params: dict | None = None, session: str | None = None):
        nonlocal counter
        counter += 1
        msg = {"id": counter, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        await conn.write_message(json.dumps(msg))
        while True:
            reply = json.loads(await conn.read_message())
            if reply.get("id") == counter:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})

    results = []
    target = await call("Target.createTarget", {"url": "about:blank"})
    attached = await call(
        "Target.attachToTarget", {"targetId": target["targetId"], "flatten": True}
    )
    session = attached["sessionId"]
    for url in urls:
        await call("Page.navigate", {"url": url}, session)
        deadline = time.monotonic() + settle_s
        probe = {}
        while time.monotonic() < deadline:
            await asyncio.sleep(0.5)
            value = await call(
                "Runtime.evaluate", {"expression": PAGE_PROBE, "returnByValue": True}, session
            )
            probe = json.loads(value["result"]["value"])
            settled = (
                not probe["raw_math"]
                and all(i["ok"] for i in probe["images"])
                and probe["mathjax_loaded"]  # a page without math must still load MathJax
            )
            if settled and probe["title"]:
                break
        probe["url"] = url
        results.append(probe)
    conn.close()
    return results


def inspect_pages(paths: list[Path], settle_s: float = 20.0) -> list[dict]:
    """Load each HTML file in headless Chromium and return what :data:`PAGE_PROBE` saw."""
    exe = chromium_path()
    if exe is None:
        raise FileNotFoundError("chromium is not installed (make test installs it)")
    profile = tempfile.mkdtemp(prefix="judgerisk-chromium-")
    try:
        # its own process group, so that the renderer and GPU children die with it
        proc = subprocess.Popen(
            [exe, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "about:blank"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            port_file = Path(profile) / "DevToolsActivePort"
            deadline = time.monotonic() + 30
            while not port_file.exists() or len(port_file.read_text().splitlines()) < 2:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError("chromium did not start its DevTools endpoint")
                time.sleep(0.2)
            port, browser_path = port_file.read_text().splitlines()[:2]
            ws_url = f"ws://127.0.0.1:{port}{browser_path}"
            urls = [Path(p).resolve().as_uri() for p in paths]
            return asyncio.run(_probe(ws_url, urls, settle_s))
        finally:
            _stop_group(proc)
    finally:
        _remove_profile(Path(profile))


def _stop_group(proc: subprocess.Popen) -> None:
    """Terminate Chromium's whole process group, wait for it, kill what is left."""
    try:
        pgid = os.getpgid(proc.pid)
    except ProcessLookupError:
        pgid = None
    for sig, wait_s in ((signal.SIGTERM, 10), (signal.SIGKILL, 10)):
        if pgid is not None:
            try:
                os.killpg(pgid, sig)
            except ProcessLookupError:
                break
        try:
            proc.wait(timeout=wait_s)
            break
        except subprocess.TimeoutExpired:
            continue
    if pgid is not None:  # children may outlive the parent: wait until the group is gone
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                os.killpg(pgid, 0)
            except ProcessLookupError:
                break
            try:
                os.killpg(pgid, signal.SIGKILL)
            except ProcessLookupError:
                break
            time.sleep(0.1)


def _remove_profile(profile: Path) -> None:
    """Delete the temporary profile; retry while late writers finish, never fail the test."""
    for _ in range(5):
        try:
            shutil.rmtree(profile)
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.5)
    shutil.rmtree(profile, ignore_errors=True)
