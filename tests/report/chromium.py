"""Open an HTML file in headless Debian chromium with every network request blocked, and collect
what it requested (Chromium's NetLog) and the rendered DOM."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

CHROMIUM_NAMES = ("chromium", "chromium-browser")
LOCAL_SCHEMES = ("file:", "data:", "about:", "chrome:", "blob:")
# Headless, no background traffic, and DNS resolving nothing behind a closed local proxy port: no
# request can leave the machine (every chromium call here uses these).
BROWSER_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-default-apps", "--disable-extensions", "--disable-domain-reliability",
                 "--metrics-recording-only", "--no-pings", "--disable-breakpad", "--hide-scrollbars",
                 "--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=127.0.0.1:9", "--proxy-bypass-list=<-loopback>")


MISSING = ("chromium is not installed: `make test` installs Debian's chromium when run as root; "
           "otherwise `sudo apt-get install -y chromium`")


def chromium_binary() -> str | None:
    return next((shutil.which(n) for n in CHROMIUM_NAMES if shutil.which(n)), None)


def open_offline(page: Path, workdir: Path, timeout: int = 90) -> tuple[str, list[dict]]:
    """(rendered DOM, URL requests seen in the NetLog). DNS resolves nothing and the only proxy is
    a closed local port, so no request can leave the machine."""
    binary = chromium_binary()
    assert binary, MISSING
    netlog = workdir / "netlog.json"
    cmd = [binary, *BROWSER_FLAGS, f"--user-data-dir={workdir / 'profile'}", f"--log-net-log={netlog}",
           "--net-log-capture-mode=Everything", "--virtual-time-budget=5000", "--dump-dom", page.resolve().as_uri()]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout, requested_urls(netlog)


def requested_urls(netlog: Path) -> list[dict]:
    """Every URL request the page made (NetLog ``URL_REQUEST_START_JOB`` whose network isolation key
    is the file:// page, not the browser's own background traffic), with its error (0 = none)."""
    text = netlog.read_text(errors="replace").rstrip()
    if not text.endswith("}"):  # a NetLog cut at exit lacks its closing brackets
        text = text.rstrip(",\n") + "]}"
    log = json.loads(text)
    start_job = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
    by_source: dict[int, dict] = {}
    for event in log.get("events", []):
        if event.get("type") != start_job:
            continue
        params = event.get("params") or {}
        source = (event.get("source") or {}).get("id")
        if "url" in params:
            by_source[source] = {"url": params["url"], "page": "file://" in params.get("network_isolation_key", ""),
                                 "net_error": 0}
        elif "net_error" in params and source in by_source:
            by_source[source]["net_error"] = params["net_error"]
    return [r for r in by_source.values() if r["page"]]


def remote(requests: list[dict]) -> list[dict]:
    return [r for r in requests if not r["url"].startswith(LOCAL_SCHEMES)]


# Appended to a copy of a report (reports carry no script): after load, measure what sticks out of
# the window and write it into the DOM, where --dump-dom hands it back.
_MEASURE = """<script>
addEventListener('load', () => {
  const width = window.innerWidth;
  const out = {width, scrollWidth: document.documentElement.scrollWidth, cut: [], tables: 0, figures: 0};
  for (const el of document.querySelectorAll('table, figure, pre, .answer, h1, p')) {
    if (el.tagName === 'TABLE') out.tables += 1;
    if (el.tagName === 'FIGURE') out.figures += 1;
    const box = el.getBoundingClientRect();
    if (box.right > width + 0.5 || el.scrollWidth > el.clientWidth + 1 && el.tagName !== 'TABLE')
      out.cut.push({tag: el.tagName, right: Math.round(box.right), text: el.innerText.slice(0, 60)});
  }
  const pre = document.createElement('pre');
  pre.id = 'rag-lab-layout';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>"""


def measure_layout(page: Path, workdir: Path, width: int = 1400, timeout: int = 90) -> dict:
    """Open ``page`` in a ``width``-px window: ``{width, scrollWidth, cut: [elements past the right
    edge or clipping their content], tables, figures}``."""
    import html as html_lib
    import re

    binary = chromium_binary()
    assert binary, MISSING
    probe = workdir / f"measure-{page.name}"
    probe.write_text(page.read_text(encoding="utf-8").replace("</body>", _MEASURE + "</body>"), encoding="utf-8")
    cmd = [binary, *BROWSER_FLAGS, f"--user-data-dir={workdir / 'profile-measure'}", f"--window-size={width},1000",
           "--virtual-time-budget=5000", "--dump-dom", probe.resolve().as_uri()]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stderr[-2000:]
    found = re.search(r'<pre id="rag-lab-layout">(.*?)</pre>', done.stdout, re.S)
    assert found, "the layout probe did not run"
    return json.loads(html_lib.unescape(found.group(1)))


def screenshot(page: Path, out: Path, workdir: Path, width: int = 1400, height: int = 4000, timeout: int = 90) -> Path:
    """A PNG of the top ``height`` px of ``page`` in a ``width``-px window (for a person to look at)."""
    binary = chromium_binary()
    assert binary, MISSING
    cmd = [binary, *BROWSER_FLAGS, f"--user-data-dir={workdir / 'profile-shot'}", f"--window-size={width},{height}",
           "--virtual-time-budget=5000", f"--screenshot={out.resolve()}", page.resolve().as_uri()]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0 and out.exists(), done.stderr[-2000:]
    return out
