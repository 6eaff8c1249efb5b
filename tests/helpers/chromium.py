"""A small DevTools-protocol client for Debian's headless `chromium`, over a pipe.

`--remote-debugging-pipe` makes Chromium read protocol messages from fd 3 and write
replies to fd 4, each JSON message ended by a NUL byte: no port, no websocket, no
dependency, and nothing that a socket-blocking test fixture would stop. The network
is off three ways: a proxy that does not exist, a host resolver that resolves nothing,
and the protocol's own offline emulation; every request the page makes is recorded
(`requests`) so a test can also see that it made none.
"""
from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import time
from pathlib import Path

NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--no-default-browser-check",
         "--disable-extensions", "--disable-default-apps", "--mute-audio", "--hide-scrollbars",
         "--proxy-server=127.0.0.1:9", "--proxy-bypass-list=<-loopback>",
         "--host-resolver-rules=MAP * ~NOTFOUND", "--remote-debugging-pipe")


def find_chromium() -> str | None:
    """The browser executable, or None when none is installed."""
    for name in NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


class Chromium:
    """One headless browser with one page, driven over the DevTools protocol."""

    def __init__(self, executable: str, profile: Path, *, width: int = 1280, height: int = 900,
                 timeout: float = 60.0) -> None:
        self.timeout = timeout
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()

        def wire() -> None:   # in the child: the pipe ends Chromium expects at fds 3 and 4
            high_r = fcntl.fcntl(to_browser_r, fcntl.F_DUPFD, 10)   # out of the way of 3 and 4 first
            high_w = fcntl.fcntl(from_browser_w, fcntl.F_DUPFD, 10)
            os.dup2(high_r, 3)
            os.dup2(high_w, 4)

        profile.mkdir(parents=True, exist_ok=True)
        self.log = profile.parent / f"{profile.name}-stderr.log"   # read only when something fails
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen(
                [executable, *FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}", "about:blank"],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log,
                preexec_fn=wire, pass_fds=(3, 4), close_fds=True)   # 3, 4: what wire() made
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict] = []
        self.session = None
        targets = self.call("Target.getTargets")["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        self.session = self.call("Target.attachToTarget", targetId=page["targetId"], flatten=True, browser=True)[
            "sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable")
        self.call("Network.emulateNetworkConditions", offline=True, latency=0, downloadThroughput=-1,
                  uploadThroughput=-1)
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)

    # -- the wire --------------------------------------------------------------------

    def _send(self, message: dict) -> None:
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")

    def _receive(self, deadline: float) -> dict:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("chromium did not answer in time")
            ready, _, _ = select.select([self._from_browser], [], [], left)
            if ready:
                chunk = os.read(self._from_browser, 1 << 20)
                if not chunk:
                    raise RuntimeError("chromium closed the pipe: " + self._stderr())
                self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(raw)

    def _stderr(self) -> str:
        try:
            return self.log.read_text(encoding="utf-8", errors="replace")[-2000:]
        except OSError:
            return ""

    def call(self, method: str, *, browser: bool = False, **params) -> dict:
        """Send one command (to the page's session unless *browser*) and wait for its result."""
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params}
        if self.session is not None and not browser:
            message["sessionId"] = self.session
        self._send(message)
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._receive(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, event: str) -> dict:
        """The first recorded or incoming event named *event*."""
        for seen in self.events:
            if seen.get("method") == event:
                self.events.remove(seen)
                return seen
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._receive(deadline)
            if reply.get("method") == event:
                return reply
            self.events.append(reply)

    # -- what tests use ------------------------------------------------------------------

    def open(self, url: str) -> None:
        """Navigate and wait for the load event."""
        self.events = [e for e in self.events if e.get("method") != "Page.loadEventFired"]
        self.call("Page.navigate", url=url)
        self.wait_for("Page.loadEventFired")

    def evaluate(self, expression: str):
        """The value of a JavaScript expression in the page (DevTools evaluation, not page script)."""
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def errors(self) -> list[str]:
        """Console errors, uncaught exceptions and error log entries seen so far."""
        found = []
        for event in self.events:
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.exceptionThrown":
                found.append(json.dumps(params.get("exceptionDetails"))[:500])
            elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                found.append(json.dumps(params.get("args"))[:500])
            elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
                found.append(json.dumps(params["entry"])[:500])
        return found

    def requests(self) -> list[str]:
        """Every URL the page asked for."""
        return [e["params"]["request"]["url"] for e in self.events if e.get("method") == "Network.requestWillBeSent"]

    def emulate(self, *, dark: bool = False, print_media: bool = False) -> None:
        """Switch the colour scheme / the print media type."""
        self.call("Emulation.setEmulatedMedia", media="print" if print_media else "",
                  features=[{"name": "prefers-color-scheme", "value": "dark" if dark else "light"}])

    def screenshot(self, path: Path, full_page: bool = True) -> Path:
        """A PNG of the page (the whole height when *full_page*)."""
        params = {"format": "png"}
        if full_page:
            metrics = self.call("Page.getLayoutMetrics")
            size = metrics.get("cssContentSize") or metrics["contentSize"]
            params.update(captureBeyondViewport=True,
                          clip={"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1})
        data = self.call("Page.captureScreenshot", **params)["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    def pdf(self) -> bytes:
        """The page printed to PDF (what a person's Print would give)."""
        return base64.b64decode(self.call("Page.printToPDF", printBackground=True)["data"])

    def close(self) -> None:
        """End the browser (the one process this client started)."""
        try:
            self.call("Browser.close", browser=True)
        except Exception:  # noqa: BLE001 - already gone
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)
        for fd in (self._to_browser, self._from_browser):
            try:
                os.close(fd)
            except OSError:
                pass

    def __enter__(self) -> Chromium:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()
