"""`rag-lab label RUN` in real headless Chromium: the command serves the page, Chromium fills in the
form and submits it (DevTools protocol), the verdicts land in RUN/labels.jsonl; blindness, resume after
the command is stopped, and a second `rag-lab label` on the same run refused while the first runs."""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.report.chromium import BROWSER_FLAGS, chromium_binary, MISSING

pytestmark = pytest.mark.slow

# the report tests' flags, less the closed proxy, with 127.0.0.1 let through: this page is served there
FLAGS = [f for f in BROWSER_FLAGS if not f.startswith(("--proxy-server", "--proxy-bypass-list", "--host-resolver-rules"))]
FLAGS.append("--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1")


class Browser:
    """Headless Chromium driven over the DevTools protocol (websocket-client)."""

    def __init__(self, workdir: Path):
        import websocket

        binary = chromium_binary()
        assert binary, MISSING
        profile = workdir / "profile"
        self.process = subprocess.Popen([binary, *FLAGS, f"--user-data-dir={profile}", "--remote-debugging-port=0",
                                         "about:blank"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = profile / "DevToolsActivePort"
        for _ in range(300):
            if port_file.exists() and port_file.read_text().strip():
                break
            time.sleep(0.1)
        port = port_file.read_text().split()[0]
        targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list"))
        page = next(t for t in targets if t["type"] == "page")
        self.socket = websocket.create_connection(page["webSocketDebuggerUrl"], timeout=60, suppress_origin=True)
        self.ids = itertools.count(1)

    def call(self, method: str, **params):
        message_id = next(self.ids)
        self.socket.send(json.dumps({"id": message_id, "method": method, "params": params}))
        while True:
            reply = json.loads(self.socket.recv())
            if reply.get("id") == message_id:
                assert "error" not in reply, reply
                return reply.get("result", {})

    def evaluate(self, expression: str):
        return self.call("Runtime.evaluate", expression=expression, returnByValue=True,
                         awaitPromise=True)["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 30.0):
        deadline = time.time() + timeout
        while time.time() < deadline:
            value = self.evaluate(expression)
            if value:
                return value
            time.sleep(0.1)
        raise AssertionError(f"timed out waiting for {expression}")

    def open(self, url: str) -> str:
        self.call("Page.navigate", url=url)
        return self.wait_for("document.readyState === 'complete' && document.documentElement.outerHTML")

    def close(self):
        self.socket.close()
        self.process.terminate()
        self.process.wait(timeout=30)


def start_label(run: Path, *extra: str) -> tuple[subprocess.Popen, str]:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    process = subprocess.Popen([sys.executable, "-m", "rag_lab", "label", str(run), "--no-browser", "--port", "0", *extra],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    line = process.stdout.readline()
    assert " at http://127.0.0.1:" in line, line + process.stderr.read()
    return process, line.split(" at ")[1].split(" ")[0]


def stop(process: subprocess.Popen) -> None:
    process.send_signal(signal.SIGINT)
    process.wait(timeout=30)


def test_label_page_round_trip_blind_resume_and_refusal(tmp_path):
    from tests.label.conftest import write_toy_run

    run = write_toy_run(tmp_path / "run", questions=6)
    process, url = start_label(run, "--labeller", "ana", "--budget", "6")
    browser = Browser(tmp_path)
    try:
        page = browser.open(url)
        assert "1 of 6" in page and "labeller ana" in page
        text = browser.evaluate("document.body.innerText")
        assert "bm25" not in page and "hybrid" not in page  # blind: no mode anywhere in the page
        scores = [json.loads(line)["scores"] for mode in ("bm25", "hybrid") for line in (run / mode / "samples.jsonl").open()]
        assert not any(str(s["faithfulness"]) in page or str(s["factual_correctness"]) in page for s in scores)
        assert "Contexts the generator read" in text and "Reference" in text
        # a second labelling process on the same run is refused while this one runs, naming it
        second = subprocess.run([sys.executable, "-m", "rag_lab", "label", str(run), "--no-browser"], capture_output=True,
                                text=True, env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
        assert second.returncode == 2 and f"PID {process.pid}, labeller ana" in second.stderr
        # the keyboard shortcuts choose, the form's own submit posts (y: faithful yes, k: correct no)
        for key in ("y", "k"):
            browser.call("Input.dispatchKeyEvent", type="keyDown", key=key, text=key)
            browser.call("Input.dispatchKeyEvent", type="keyUp", key=key)
        browser.evaluate("document.querySelector('textarea[name=note]').value = 'checked in Chromium'")
        browser.evaluate("document.querySelector('button[type=submit]').click()")
        browser.wait_for("document.body.innerText.includes('2 of 6')")
        # the second answer without JavaScript's help: plain radio clicks and the submit button
        browser.evaluate("document.querySelector('input[name=faithful][value=\"0\"]').click();"
                         "document.querySelector('input[name=correct][value=\"na\"]').click();"
                         "document.querySelector('button[type=submit]').click()")
        browser.wait_for("document.body.innerText.includes('3 of 6')")
    finally:
        stop(process)
    labels = [json.loads(line) for line in (run / "labels.jsonl").open()]
    assert [(x["metric"], x["value"], x["labeller"]) for x in labels] == [
        ("faithful", 1, "ana"), ("correct", 0, "ana"), ("faithful", 0, "ana"), ("correct", "na", "ana")]
    assert labels[0]["note"] == "checked in Chromium" and labels[0]["sample_id"].startswith("toy#Q")
    process, url = start_label(run, "--labeller", "ana", "--budget", "6")  # resumed where it stopped
    try:
        assert "3 of 6" in browser.open(url)
    finally:
        stop(process)
        browser.close()
