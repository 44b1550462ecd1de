"""Open an HTML file in headless Debian chromium with every network request blocked, and collect
what it requested (Chromium's NetLog) and the rendered DOM."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

CHROMIUM_NAMES = ("chromium", "chromium-browser")
LOCAL_SCHEMES = ("file:", "data:", "about:", "chrome:", "blob:")


def chromium_binary() -> str | None:
    return next((shutil.which(n) for n in CHROMIUM_NAMES if shutil.which(n)), None)


def open_offline(page: Path, workdir: Path, timeout: int = 90) -> tuple[str, list[dict]]:
    """(rendered DOM, URL requests seen in the NetLog). DNS resolves nothing and the only proxy is
    a closed local port, so no request can leave the machine."""
    binary = chromium_binary()
    assert binary, "chromium is not installed"
    netlog = workdir / "netlog.json"
    cmd = [
        binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-default-apps", "--disable-extensions", "--disable-domain-reliability",
        "--metrics-recording-only", "--no-pings", "--disable-breakpad",
        "--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=127.0.0.1:9", "--proxy-bypass-list=<-loopback>",
        f"--user-data-dir={workdir / 'profile'}", f"--log-net-log={netlog}", "--net-log-capture-mode=Everything",
        "--virtual-time-budget=5000", "--dump-dom", page.resolve().as_uri(),
    ]
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
