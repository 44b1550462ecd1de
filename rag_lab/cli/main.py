"""`rag-lab` entry point: argument parsing, and one clear message per user error."""

from __future__ import annotations

import argparse
import logging
import os
import sys
import warnings

from rag_lab.errors import RagLabError


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--debug", action="store_true", help="show tracebacks and debug logs")


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("rag-lab")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "(not installed)"


def build_parser() -> argparse.ArgumentParser:
    from rag_lab.cli import commands

    parser = argparse.ArgumentParser(prog="rag-lab", description="Which retrieval strategy works best on this corpus, and why?")
    _common(parser)
    parser.add_argument("--version", action="version", version=f"rag-lab {_version()}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for register in commands.REGISTRY:
        register(sub, _common)
    parser.commands = sub.choices  # each command's own parser, to refuse what it does not know
    return parser


def _parse(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    """``argv`` parsed; a command it does not know is refused with the closest command's name, and an
    argument the command does not know by that command's own parser (its usage, not the top level's),
    with the closest option it has when the argument looks like one."""
    import difflib

    words = [word for word in argv if not word.startswith("-")]
    if words and words[0] not in parser.commands:  # a misspelled command: argparse lists them, without a guess
        close = difflib.get_close_matches(words[0], list(parser.commands), n=1, cutoff=0.6)
        if close:
            parser.error(f"unknown command {words[0]!r} (did you mean {close[0]}?)")
    args, unknown = parser.parse_known_args(bare_json_flags(argv))
    if unknown:
        command = parser.commands[args.command]
        options = [o for action in command._actions for o in action.option_strings if o.startswith("--")]
        close = [match for word in unknown if word.startswith("-")
                 for match in difflib.get_close_matches(word.split("=")[0], options, n=1, cutoff=0.6)]
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        command.error(f"unrecognized arguments: {' '.join(unknown)}{hint}")
    return args


def bare_json_flags(argv: list[str]) -> list[str]:
    """``--json`` followed by a word that is not a ``.json`` path (``search --json texas_childcare "q"``)
    is the flag alone: the word is the command's next argument, not the file to write (``--json=out.txt``
    still names any file)."""
    out: list[str] = []
    for n, word in enumerate(argv):
        out.append(word)
        following = argv[n + 1] if n + 1 < len(argv) else None
        if word == "--json" and following is not None and following != "-" and not following.startswith("-") \
                and not following.lower().endswith(".json"):
            out.append("-")
    return out


def _show_lab_warnings() -> None:
    """rag-lab's own warnings (e.g. a stale index) always reach the user, as one line each."""
    from rag_lab.errors import RagLabWarning

    warnings.filterwarnings("always", category=RagLabWarning)
    default_show = warnings.showwarning

    def show(message, category, filename, lineno, file=None, line=None):
        if issubclass(category, RagLabWarning):
            print(f"warning: {message}", file=file or sys.stderr)
        else:
            default_show(message, category, filename, lineno, file, line)

    warnings.showwarning = show


class _LazyLogFile(logging.Handler):
    """Appends records to ``<data dir>/logs/rag-lab.log``, opened on the first record (most runs
    never write one, and resolving the data dir loads the settings)."""

    def __init__(self) -> None:
        super().__init__(level=logging.WARNING)
        self._file: logging.FileHandler | None = None

    def emit(self, record: logging.LogRecord) -> None:
        if self._file is None:
            try:
                from rag_lab.config import get_settings

                folder = get_settings().data_dir / "logs"
                folder.mkdir(parents=True, exist_ok=True)
                self._file = logging.FileHandler(folder / "rag-lab.log", encoding="utf-8")
                self._file.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
            except Exception:  # noqa: BLE001 - logging must never break a run
                return
        self._file.emit(record)


# Libraries whose error logs are per-call details the run already records (a judged metric that
# failed is NaN with its reason in samples.jsonl): sent to the log file, not to the terminal.
LOGGED_TO_FILE = ("ragas",)


def configure_logging(debug: bool) -> None:
    if not debug:
        # Library chatter (HF, llama.cpp, tqdm-less warnings) is noise for CLI users.
        warnings.filterwarnings("ignore")
        logging.basicConfig(level=logging.ERROR)
        import bm25s  # noqa: F401  (it resets its logger to DEBUG on import: import first, then quiet it)

        for noisy in ("bm25s", "httpx", "sentence_transformers", "transformers"):
            logging.getLogger(noisy).setLevel(logging.ERROR)
        log_file = _LazyLogFile()
        for name in LOGGED_TO_FILE:
            logger = logging.getLogger(name)
            logger.propagate = False
            logger.handlers = [log_file]
    else:
        logging.basicConfig(level=logging.INFO)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    # Parse first: --help and argument errors exit here, before any heavy library is imported.
    parser = build_parser()
    args = _parse(parser, argv)
    configure_logging(debug)
    _show_lab_warnings()
    try:
        return int(args.handler(args) or 0)
    except RagLabError as exc:
        if debug:
            raise
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except ValueError as exc:  # bad user input caught by a library check (empty query, top_k < 1 …)
        if debug:
            raise
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader (`| head`) closed early: the shell's code for it, not a traceback or a gate's 1
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # the flush at exit must not raise again
        except (OSError, ValueError):  # stdout is no file (captured, replaced)
            pass
        return 141
    except Exception as exc:  # an unreachable Qdrant server: one line, not qdrant-client's traceback
        store = sys.modules.get("rag_lab.index.store")
        message = store.unreachable_server_message(exc) if store is not None and not debug else None
        if message is None:
            raise
        print(f"error: {message}", file=sys.stderr)
        return 2
    finally:
        store = sys.modules.get("rag_lab.index.store")  # only if a command opened Qdrant (no import cost)
        if store is not None:
            store.close_all()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
