"""``rag-lab label RUN``: a local web page (stdlib ``http.server`` on 127.0.0.1) that shows one answer
at a time and appends the person's verdicts to ``RUN/labels.jsonl``.

One labelling process per run: ``RUN/.label.lock`` (the kernel's ``flock``, released even by SIGKILL)
names the holder's PID and labeller, and a second process is refused. Every verdict is appended and
fsynced before the next page is served, so stopping the page at any time loses nothing, and starting it
again resumes at the first answer this labeller has not labelled.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from urllib.parse import parse_qs

from rag_lab.errors import ConfigError
from rag_lab.evaluate.store.labels import (LABEL_METRICS, Label, answer_digest, append_labels, latest, parse_value,
                                          read_labels)
from rag_lab.evaluate.store.run_lock import exclusive_lock
from rag_lab.report.label.page import render_done, render_item
from rag_lab.report.label.queue import Item

LABEL_LOCK = ".label.lock"
DEFAULT_PORT = 8758


class LabellingBusyError(ConfigError):
    """Another process is labelling this run."""


@contextmanager
def labelling_lock(run: Path, labeller: str) -> Iterator[None]:
    def busy(holder: str) -> LabellingBusyError:
        return LabellingBusyError(f"{run} is being labelled by another `rag-lab label` process ({holder})",
                                  "label in that page, or stop that process first")

    with exclusive_lock(Path(run) / LABEL_LOCK, f"PID {os.getpid()}, labeller {labeller}", busy):
        yield


class Session:
    """The queue of answers, this labeller's verdicts so far, and where to resume."""

    def __init__(self, run_dir: Path, queue: list[Item], labeller: str, known: dict[tuple[str, str], str]) -> None:
        self.run_dir, self.queue, self.labeller = run_dir, queue, labeller
        self.by_token = {item.token: item for item in queue}
        self.done = {(mode, sid) for (who, mode, sid, _), _label in latest(read_labels(run_dir, known)).items()
                     if who == labeller}

    def next_item(self) -> tuple[int, Item] | None:
        remaining = [item for item in self.queue if (item.mode, item.sample_id) not in self.done]
        return (len(self.queue) - len(remaining) + 1, remaining[0]) if remaining else None

    def record(self, form: dict[str, list[str]]) -> str | None:
        """Append one answer's verdicts; a message for the person when the form is not usable."""
        item = self.by_token.get((form.get("sample") or [""])[0])
        if item is None:
            return "that answer is not in this run's queue: the page was out of date, here is the next one"
        try:
            values = {field: parse_value((form.get(field) or [""])[0]) for field in LABEL_METRICS}
        except ValueError:
            return "choose yes, no or not applicable for both faithful and correct"
        note = (form.get("note") or [""])[0].strip()
        now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        digest = answer_digest(item.record.get("answer") or "")
        append_labels(self.run_dir, [Label(item.sample_id, item.mode, field, value, self.labeller, now, note, digest)
                                     for field, value in values.items()])
        self.done.add((item.mode, item.sample_id))
        return None

    def page(self, message: str = "") -> str:
        upcoming = self.next_item()
        if upcoming is None:
            return render_done(len(self.queue), self.labeller, str(self.run_dir))
        return render_item(upcoming[1], upcoming[0], len(self.queue), self.labeller, message)


def make_handler(session: Session) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _send(self, status: int, body: str = "", location: str | None = None) -> None:
            data = body.encode("utf-8")
            self.send_response(status)
            if location:
                self.send_header("Location", location)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            if self.path.split("?")[0] != "/":
                return self._send(404, "<p>not found: the labelling page is at /</p>")
            self._send(200, session.page())

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length") or 0)
            form = parse_qs(self.rfile.read(length).decode("utf-8", "replace"), keep_blank_values=True)
            problem = session.record(form)
            if problem:
                return self._send(400, session.page(problem))
            self._send(303, location="/")  # post/redirect/get: a reload never posts twice

        def log_message(self, format: str, *args) -> None:  # noqa: A002 - quiet: the terminal shows progress
            return

    return Handler


def serve(session: Session, port: int = DEFAULT_PORT, open_browser: bool = True, ready=None) -> None:
    """Serve the page until Ctrl-C (``ready(url)`` is called once listening: tests, the CLI's line)."""
    try:
        server = HTTPServer(("127.0.0.1", port), make_handler(session))
    except OSError as exc:
        raise ConfigError(f"cannot serve the labelling page on 127.0.0.1:{port} ({exc.strerror})",
                          "pass another --port, or --port 0 for any free one") from None
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    if ready:
        ready(url)
    if open_browser:
        import webbrowser

        webbrowser.open(url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
