"""One progress helper for all long work (indexing, embedding, IR runs, evaluations).

``progress_bar(...)`` gives a tqdm bar when the stream is a terminal, and plain periodic lines
(``embedding: 512/5183 chunks (10%), 41.2 chunks/s, ~1m53s left``) when it is not (CI logs,
pipes, notebooks run by papermill), so logs never fill with carriage-return bars. The interval
between plain lines is ``RAG_LAB_PROGRESS_INTERVAL`` seconds (default 10); a final line is always
written when the work ends.

Usage (both forms)::

    for item in progress_bar(items, desc="dense", unit="query"):
        ...
    with progress_bar(total=n, desc="embedding", unit="chunk") as bar:
        bar.update(len(batch))

``progress_note("…")`` reports an event while work goes on (a provider call being retried): at
once, as its own line above the innermost open bar (or, with no bar open, as an INFO log record);
silent under a bar created with ``enabled=False``.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
import warnings
import weakref
from collections.abc import Iterable, Iterator
from typing import IO, Any, Protocol

DEFAULT_INTERVAL = 10.0
INTERVAL_ENV = "RAG_LAB_PROGRESS_INTERVAL"

log = logging.getLogger("rag_lab.progress")


def quiet_library_progress() -> None:
    """Keep other libraries' progress bars and their notebook warning off stderr, for the CLI and for
    any process that imports rag_lab (a notebook kernel): rag-lab reports its own progress. A user's
    own setting of these variables wins."""
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # transformers' "Loading weights" bars
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")  # the tokenizers' warning after a fork
    # tqdm.auto in a kernel without ipywidgets warns once and falls back to the plain bar; no bar is shown anyway
    warnings.filterwarnings("ignore", message="IProgress not found")
    # bm25s sets its logger to DEBUG when it is imported (later): a filter outlives that, a level would not
    bm25s_log = logging.getLogger("bm25s")
    if not any(isinstance(f, _WarningsAndAbove) for f in bm25s_log.filters):
        bm25s_log.addFilter(_WarningsAndAbove())


class _WarningsAndAbove(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno >= logging.WARNING


# Bars in use (iterating, or inside their ``with``), innermost last: notes go above the innermost.
# A plain list (not a ContextVar): notes come from SDK hooks that may run in another thread or
# event loop than the bar's owner. Weak references: a bar dropped without close() is not kept.
_open_bars: list[weakref.ref] = []
_open_lock = threading.Lock()


def _opened(bar: Any) -> None:
    with _open_lock:
        if not any(ref() is bar for ref in _open_bars):
            _open_bars.append(weakref.ref(bar))


def _closed(bar: Any) -> None:
    with _open_lock:  # by identity: tqdm's == compares positions and fails on other objects
        _open_bars[:] = [ref for ref in _open_bars if ref() is not None and ref() is not bar]


def progress_note(message: str) -> None:
    """Report an event now (e.g. "OpenAI gpt-4o-mini: retry 1 of 3 after HTTP 500")."""
    with _open_lock:
        live = [bar for bar in (ref() for ref in _open_bars) if bar is not None]
        bar = live[-1] if live else None
    if bar is None:
        log.info(message)
    elif isinstance(bar, NoProgress):
        return
    elif isinstance(bar, PlainProgress):
        print(f"{bar.desc + ': ' if bar.desc else ''}{message}", file=bar.stream, flush=True)
    else:  # tqdm: a line above the bar, which stays at the bottom
        bar.write(f"{bar.desc + ': ' if bar.desc else ''}{message}", file=bar.fp)


class Progress(Protocol):
    """What every progress object offers (tqdm satisfies it too)."""

    def update(self, n: int = 1) -> Any: ...
    def close(self) -> None: ...
    def __iter__(self) -> Iterator[Any]: ...


def progress_interval() -> float:
    """Seconds between plain progress lines, from ``RAG_LAB_PROGRESS_INTERVAL`` (default 10)."""
    raw = os.environ.get(INTERVAL_ENV, "").strip()
    if not raw:
        return DEFAULT_INTERVAL
    try:
        value = float(raw)
    except ValueError:
        from rag_lab.errors import ConfigError

        raise ConfigError(f"{INTERVAL_ENV}={raw!r} is not a number of seconds",
                          f"set it to e.g. {INTERVAL_ENV}=5, or unset it for the default ({DEFAULT_INTERVAL:g} s)") from None
    return max(value, 0.0)


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


def _plural(unit: str, n: int) -> str:
    if n == 1 or unit in ("", "it") or unit.endswith("s"):
        return unit
    return unit[:-1] + "ies" if unit.endswith("y") and unit[-2:-1] not in tuple("aeiou") else unit + "s"


class PlainProgress:
    """Periodic one-line progress reports for streams that are not terminals."""

    def __init__(self, iterable: Iterable | None = None, *, total: int | None = None, desc: str = "",
                 unit: str = "it", stream: IO[str] | None = None, interval: float | None = None,
                 clock=time.monotonic) -> None:
        self.iterable = iterable
        if total is None and iterable is not None and hasattr(iterable, "__len__"):
            total = len(iterable)  # type: ignore[arg-type]
        self.total = total
        self.desc = desc
        self.unit = unit
        self.stream = stream if stream is not None else sys.stderr
        self.interval = progress_interval() if interval is None else interval
        self._clock = clock
        self.n = 0
        self._start = clock()
        self._last = self._start
        self._closed = False
        self._shown: int | None = None  # the count of the last line written

    def _line(self) -> str:
        elapsed = self._clock() - self._start
        done = f"{self.n}/{self.total}" if self.total else f"{self.n}"
        parts = [f"{self.desc + ': ' if self.desc else ''}{done} {_plural(self.unit, self.n)}"]
        if self.total:
            parts[0] += f" ({100 * self.n / self.total:.0f}%)"
        rate = self.n / elapsed if elapsed > 0 else 0.0
        if rate > 0:  # a slow run (an answer every 20 s) as seconds per item, not "0.0 sample/s"
            parts.append(f"{rate:.1f} {self.unit}/s" if rate >= 1 else f"{1 / rate:.1f} s/{self.unit}")
        parts.append(f"{_duration(elapsed)} elapsed")
        if self.total and rate > 0 and self.n < self.total:
            parts.append(f"~{_duration((self.total - self.n) / rate)} left")
        return ", ".join(parts)

    def _write(self) -> None:
        print(self._line(), file=self.stream, flush=True)
        self._last = self._clock()
        self._shown = self.n

    def update(self, n: int = 1) -> None:
        self.n += n
        if self._clock() - self._last >= self.interval:
            self._write()

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            _closed(self)
            if (self.n or self.total) and self._shown != self.n:
                self._write()  # the final count, always (once: not again when the last update showed it)

    def __iter__(self) -> Iterator[Any]:
        if self.iterable is None:
            raise TypeError("this progress object was created without an iterable")
        _opened(self)
        try:
            for item in self.iterable:
                yield item
                self.update(1)
        finally:
            self.close()

    def __enter__(self) -> PlainProgress:
        _opened(self)
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class NoProgress(PlainProgress):
    """Progress disabled: counts, iterates, prints nothing."""

    def _write(self) -> None:
        pass


def _is_tty(stream: IO[str]) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # closed or fake streams
        return False


def progress_bar(iterable: Iterable | None = None, *, total: int | None = None, desc: str = "",
                 unit: str = "it", enabled: bool = True, stream: IO[str] | None = None,
                 interval: float | None = None) -> Progress:
    """A tqdm bar on a terminal, plain periodic lines otherwise, nothing when ``enabled`` is False."""
    stream = stream if stream is not None else sys.stderr
    if not enabled:
        return NoProgress(iterable, total=total, desc=desc, unit=unit, stream=stream, interval=float("inf"))
    if _is_tty(stream):
        from tqdm.auto import tqdm

        class NotedTqdm(tqdm):  # registered for progress_note while in use
            def __iter__(self):
                _opened(self)
                return super().__iter__()

            def __enter__(self):
                _opened(self)
                return super().__enter__()

            def close(self) -> None:
                _closed(self)
                super().close()

        return NotedTqdm(iterable, total=total, desc=desc, unit=unit, file=stream)
    return PlainProgress(iterable, total=total, desc=desc, unit=unit, stream=stream, interval=interval)
