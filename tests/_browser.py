"""Open a page in headless Chromium and inspect its live DOM over the DevTools protocol.

Used by the book test to check, in a real browser, that MathJax typeset every formula, that
every figure loaded and sits in a numbered, captioned figure, that no display equation or
table is wider than the text column, and that no raw TeX is left in the text. It also takes
full-page screenshots for a person to look at (:func:`screenshot_pages`). Talks to Chromium with tornado's websocket client (tornado
ships with Jupyter), so no extra dependency is needed.
"""

from __future__ import annotations

import asyncio
import base64
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
    "--window-size=1280,900",
    "--hide-scrollbars",
]

# Evaluated in the page once it has settled: what MathJax left and what the images did.
PAGE_PROBE = """
(() => {
  if (document.readyState !== 'complete' || !document.body) {
    return JSON.stringify({title: '', n_math: 0, n_typeset: 0, raw_math: ['(loading)'],
                           raw_tex: [], images: [], too_wide: [], column_width: 0,
                           mathjax_loaded: false});
  }
  const math = [...document.querySelectorAll('.math')];
  const raw = math.filter(el => !el.querySelector('mjx-container'))
                  .map(el => el.textContent.slice(0, 80));
  const article = document.querySelector('main article') || document.querySelector('main')
                  || document.body;
  const imgs = [...article.querySelectorAll('img')].map(i => {
    const fig = i.closest('figure');
    const cap = fig ? fig.querySelector('figcaption') : null;
    return {src: i.src.split('/').pop(), ok: i.complete && i.naturalWidth > 0,
            alt: i.getAttribute('alt') || '',
            numbered: !!(cap && cap.querySelector('.caption-number')),
            caption: cap ? cap.textContent.trim().slice(0, 80) : '',
            width: i.getBoundingClientRect().width, natural: i.naturalWidth};
  });
  const col = article.getBoundingClientRect();
  const wide = [...article.querySelectorAll('mjx-container[display="true"], table, pre')]
    .filter(el => el.getBoundingClientRect().width > 0)
    .filter(el => el.scrollWidth > el.clientWidth + 1
                  || el.getBoundingClientRect().right > col.right + 1)
    .map(el => ({tag: el.tagName.toLowerCase(), scroll: el.scrollWidth, client: el.clientWidth,
                 text: el.textContent.trim().slice(0, 60)}));
  // Raw TeX left in the text (outside code, math and scripts).
  const walker = document.createTreeWalker(article, NodeFilter.SHOW_TEXT, {
    acceptNode: n => n.parentElement.closest('pre, code, mjx-container, script, style, .math')
      ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT});
  const tex = /\\$[^$\\s][^$]*\\$|\\\\(frac|begin|end|sum|prod|mathcal|mathbf|hat|bar|alpha|sigma|lambda|le|ge)\\b/;
  const rawTex = [];
  while (walker.nextNode()) {
    const t = walker.currentNode.textContent;
    if (tex.test(t)) rawTex.push(t.trim().slice(0, 80));
  }
  return JSON.stringify({
    title: document.title,
    n_math: math.length,
    n_typeset: document.querySelectorAll('mjx-container').length,
    raw_math: raw,
    raw_tex: rawTex,
    images: imgs,
    too_wide: wide,
    column_width: col.width,
    mathjax_loaded: typeof window.MathJax !== 'undefined' && !!window.MathJax.startup,
  });
})()
"""


def chromium_path() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


#: Why the browser test is skipped on a machine without Chromium, and how to get one.
NO_BROWSER = (
    "no Chromium on PATH: make test installs Debian's package with apt-get where there is one; "
    "elsewhere install it (macOS: brew install --cask chromium; Fedora: sudo dnf install chromium)"
    " and rerun. Under CI=true this test runs and fails instead"
)


def browser_required() -> bool:
    """Whether a missing browser is a failure (under CI) rather than a skip."""
    return os.environ.get("CI", "").lower() == "true"


async def _probe(ws_url: str, urls: list[str], settle_s: float, shots=None) -> list[dict]:
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
            if "value" not in value["result"]:
                raise RuntimeError(f"page probe failed on {url}: {value}")
            probe = json.loads(value["result"]["value"])
            settled = (
                not probe["raw_math"]
                and all(i["ok"] for i in probe["images"])
                and probe["mathjax_loaded"]  # a page without math must still load MathJax
            )
            if settled and probe["title"]:
                break
        probe["url"] = url
        if shots is not None:
            metrics = await call("Page.getLayoutMetrics", {}, session)
            size = metrics.get("cssContentSize") or metrics["contentSize"]
            shot = await call(
                "Page.captureScreenshot",
                {
                    "format": "png",
                    "captureBeyondViewport": True,
                    "clip": {
                        "x": 0,
                        "y": 0,
                        "width": 1280,
                        "height": min(size["height"], 16000),
                        "scale": 1,
                    },
                },
                session,
            )
            out = Path(shots) / (Path(url).stem + ".png")
            out.write_bytes(base64.b64decode(shot["data"]))
            probe["screenshot"] = str(out)
        results.append(probe)
    conn.close()
    return results


def inspect_pages(paths: list[Path], settle_s: float = 20.0, screenshots=None) -> list[dict]:
    """Load each HTML file in headless Chromium and return what :data:`PAGE_PROBE` saw.

    With ``screenshots`` (a folder), also save a full-page PNG of each page there.
    """
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
            return asyncio.run(_probe(ws_url, urls, settle_s, screenshots))
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
