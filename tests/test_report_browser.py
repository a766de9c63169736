"""The HTML report in a real headless browser (Debian chromium), driven over the DevTools
protocol on a pipe (``--remote-debugging-pipe``: JSON messages separated by NUL bytes on
file descriptors 3 and 4), so no extra client library is needed.

Checks: the page loads from file:// with no console errors or exceptions, the charts
decode, a Persian cluster renders right to left (computed ``direction``), "Expand all"
works, and a full-page screenshot is written to the test's tmp dir.
"""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from ._report_data import FA_PAIR, build_index, sample_docs

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
    "--mute-audio",
]


def chromium_path() -> str | None:
    for candidate in (
        os.environ.get("NEARDUP_CHROMIUM"),
        "/usr/bin/chromium",
        shutil.which("chromium"),
    ):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


class DevTools:
    """A minimal DevTools-protocol session with one page of a headless chromium."""

    def __init__(self, exe: str, profile: Path, timeout: float = 30.0):
        self.timeout = timeout
        to_child_r, self._w = os.pipe()
        self._r, from_child_w = os.pipe()

        def wire_fds() -> None:  # the browser reads commands on fd 3 and writes answers on fd 4
            os.dup2(to_child_r, 3)
            os.dup2(from_child_w, 4)

        self.proc = subprocess.Popen(
            [
                exe,
                *CHROMIUM_FLAGS,
                f"--user-data-dir={profile}",
                "--remote-debugging-pipe",
                "about:blank",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=wire_fds,
            pass_fds=(3, 4),
        )
        os.close(to_child_r)
        os.close(from_child_w)
        self._buf = b""
        self._next = 0
        self.events: list[dict] = []
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)[
            "sessionId"
        ]

    def _read_message(self, deadline: float) -> dict:
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._r], [], [], left)[0]:
                raise TimeoutError("chromium did not answer in time")
            chunk = os.read(self._r, 1 << 20)
            if not chunk:
                raise RuntimeError(f"chromium closed the pipe (exit code {self.proc.poll()})")
            self._buf += chunk
        msg, self._buf = self._buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method: str, session: bool = False, **params) -> dict:
        self._next += 1
        msg = {"id": self._next, "method": method, "params": params}
        if session:
            msg["sessionId"] = self.session
        os.write(self._w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            answer = self._read_message(deadline)
            if answer.get("id") == self._next:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return answer.get("result", {})
            self.events.append(answer)

    def page(self, method: str, **params) -> dict:
        return self.call(method, session=True, **params)

    def wait_event(self, name: str) -> dict:
        deadline = time.monotonic() + self.timeout
        for i, e in enumerate(self.events):
            if e.get("method") == name:
                return self.events.pop(i)
        while True:
            e = self._read_message(deadline)
            if e.get("method") == name:
                return e
            self.events.append(e)

    def evaluate(self, expression: str):
        res = self.page(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
        )
        if "exceptionDetails" in res:
            raise AssertionError(f"{expression!r} threw: {res['exceptionDetails']}")
        return res["result"].get("value")

    def problems(self) -> list[str]:
        """Console errors, uncaught exceptions and error log entries seen so far."""
        out = []
        for e in self.events:
            m, p = e.get("method"), e.get("params", {})
            if m == "Runtime.exceptionThrown":
                details = p["exceptionDetails"]
                described = details.get("exception", {}).get("description", "")
                out.append(f"exception: {details.get('text')} {described}")
            elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                args = [a.get("value", a.get("description")) for a in p.get("args", [])]
                out.append(f"console.{p['type']}: {args}")
            elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                out.append(f"log: {p['entry'].get('text')} {p['entry'].get('url', '')}")
        return out

    def close(self) -> None:
        try:
            self.call("Browser.close")
        except (RuntimeError, TimeoutError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._r)
        os.close(self._w)


@pytest.fixture(scope="module")
def report_page(tmp_path_factory):
    exe = chromium_path()
    if exe is None:
        pytest.skip(
            "Debian chromium is not installed (/usr/bin/chromium); .ci/browser.sh installs it "
            "(apt-get install -y chromium), set NEARDUP_CHROMIUM to use another build"
        )
    from neardup.report.html import ReportOptions, write_report

    tmp = tmp_path_factory.mktemp("report-browser")
    nd = build_index(tmp / "index.db")
    try:
        path = write_report(nd, str(tmp / "report.html"), ReportOptions(top=10, members=5))
    finally:
        nd.close()
    dt = DevTools(exe, tmp / "profile")
    try:
        for domain in ("Page", "Runtime", "Log"):
            dt.page(f"{domain}.enable")
        dt.page(
            "Emulation.setDeviceMetricsOverride",
            width=1280,
            height=900,
            deviceScaleFactor=1,
            mobile=False,
        )
        nav = dt.page("Page.navigate", url=Path(path).as_uri())
        assert "errorText" not in nav, nav
        dt.wait_event("Page.loadEventFired")
        yield dt, tmp
    finally:
        dt.close()


def test_page_renders_with_charts_and_no_console_errors(report_page):
    dt, _ = report_page
    assert dt.evaluate("document.title") == "Near-duplicate report"
    assert dt.evaluate("document.getElementById('n-documents').textContent") == str(
        len(sample_docs())
    )
    charts = dt.evaluate("""Array.from(document.querySelectorAll('figure.chart img')).map(
        i => ({ok: i.complete && i.naturalWidth > 100 && i.naturalHeight > 50,
               w: i.getBoundingClientRect().width}))""")
    assert len(charts) == 3 and all(c["ok"] and c["w"] > 100 for c in charts), charts
    assert dt.evaluate("document.querySelectorAll('details.cluster').length") == 3
    assert dt.evaluate("window.__pwned === undefined"), "a title's markup ran as script"
    assert (
        dt.evaluate("document.querySelectorAll('img[onerror], script').length") == 1
    )  # only the page's own script
    assert dt.problems() == []


def test_persian_cluster_renders_right_to_left(report_page):
    dt, _ = report_page
    got = dt.evaluate(f"""(() => {{
        const c = document.querySelector('details.cluster[data-cluster-id="{FA_PAIR[0]}"]');
        c.open = true;
        const m = c.querySelector('details.member');
        m.open = true;
        const texts = Array.from(m.querySelectorAll('.diff .text'));
        const changes = m.querySelector('.changes .text');
        const title = c.querySelector('summary .title');
        const titleDir = getComputedStyle(title).direction;
        title.textContent = 'Windows 10 (64-bit)';  // a Latin title in this Persian cluster
        const en = document.querySelector('details.cluster:not([data-cluster-id^="fa-"]) .text');
        return {{dirs: texts.map(t => getComputedStyle(t).direction), langs: texts.map(t => t.lang),
                 title: titleDir, latinTitle: getComputedStyle(title).direction,
                 changes: getComputedStyle(changes).direction,
                 changed: changes.querySelectorAll('ins, del, .same').length,
                 marks: m.querySelectorAll('mark.shared').length,
                 visible: texts.every(t => t.getBoundingClientRect().height > 20),
                 firstLeft: texts[0].getBoundingClientRect().left,
                 secondLeft: texts[1].getBoundingClientRect().left,
                 en: getComputedStyle(en).direction}};
    }})()""")
    assert got["dirs"] == ["rtl", "rtl"] and got["langs"] == ["fa", "fa"], got
    assert got["title"] == "rtl" and got["latinTitle"] == "ltr", got
    assert got["changes"] == "rtl" and got["changed"] >= 1, got
    assert got["visible"] and got["marks"] >= 1, got
    assert got["firstLeft"] > got["secondLeft"], (
        "in a right-to-left diff the representative is on the right"
    )
    assert got["en"] == "ltr", got
    assert dt.problems() == []


def test_expand_all_and_screenshot(report_page):
    dt, tmp = report_page
    dt.evaluate("document.getElementById('expand-all').click()")
    assert dt.evaluate("Array.from(document.querySelectorAll('details')).every(d => d.open)")
    height = dt.evaluate("Math.ceil(document.documentElement.scrollHeight)")
    dt.page(
        "Emulation.setDeviceMetricsOverride",
        width=1280,
        height=min(height, 12000),
        deviceScaleFactor=1,
        mobile=False,
    )
    shot = base64.b64decode(dt.page("Page.captureScreenshot", format="png")["data"])
    out = tmp / "report.png"
    out.write_bytes(shot)
    assert shot[:8] == b"\x89PNG\r\n\x1a\n" and len(shot) > 20_000
    dt.evaluate("document.getElementById('collapse-all').click()")
    assert dt.evaluate("Array.from(document.querySelectorAll('details')).every(d => !d.open)")
    assert dt.problems() == []
    print(f"screenshot: {out}")
