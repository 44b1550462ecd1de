"""Shared fixtures: one real index of texas_childcare built once per test session, offline."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def lab_settings(tmp_path_factory):
    from rag_lab.config import load_settings

    data_dir = tmp_path_factory.mktemp("rag_lab_data")  # the local models come from the machine's models folder
    return load_settings(data_dir=data_dir, datasets_dir=REPO / "datasets")


def local_data_dir() -> Path:
    """The developer's data folder (test caches kept across runs live there)."""
    return Path(os.environ.get("RAG_LAB_DATA_DIR") or REPO / ".rag_lab")


# The caches an index build fills: with both, a build re-chunks and re-inserts (seconds) instead of
# parsing the PDFs and embedding every chunk again.
BUILD_CACHES = ("parsed.sqlite", "embeddings.sqlite")


@pytest.fixture(scope="session")
def texas_index(lab_settings, tmp_path_factory):
    """The real texas_childcare index (PDF extraction, MiniLM embeddings, Qdrant local, bm25s).

    Built once per `make test` run, not once per pytest-xdist worker: the first worker builds it and
    leaves the closed index folder and its parse and embedding caches in the folder all workers share;
    the others wait on the lock and copy them (Qdrant's local mode allows one process per folder, so
    each worker keeps its own copy; `build_index` then finds it up to date). The caches are also kept
    in the data folder's ``test-cache/`` for the next run (a fresh clone builds from scratch once)."""
    from filelock import FileLock

    from rag_lab.datasets import resolve_dataset
    from rag_lab.index import CorpusIndex, build_index
    from rag_lab.index.paths import IndexPaths

    shared = run_shared_dir(tmp_path_factory) / "texas_index_caches"
    kept = local_data_dir() / "test-cache"  # across runs: the inner loop's later runs skip parse and embed
    dataset = resolve_dataset("texas_childcare", lab_settings.datasets_dir)
    own_index = IndexPaths.for_dataset(lab_settings, dataset).root
    with FileLock(str(shared) + ".lock"):
        seed = shared if shared.is_dir() else kept
        if seed.is_dir():
            copy_sqlite_files(seed, Path(lab_settings.cache_dir), BUILD_CACHES)
        if (shared / "index").is_dir() and not own_index.exists():
            shutil.copytree(shared / "index", own_index)  # same dataset path, same settings: same folder name
        result = build_index(dataset, lab_settings, progress=False)
        if not shared.is_dir():
            copy_sqlite_files(Path(lab_settings.cache_dir), shared, BUILD_CACHES)
            shutil.copytree(own_index, shared / "index")
            with FileLock(str(kept) + ".lock"):  # another checkout's run may write it too
                copy_sqlite_files(Path(lab_settings.cache_dir), kept, BUILD_CACHES)
    assert result.manifest.n_chunks > 0
    return CorpusIndex.open("texas_childcare", lab_settings)


def run_shared_dir(tmp_path_factory) -> Path:
    """A folder every pytest-xdist worker of this run sees (each worker's own base folder's parent),
    or this process's base folder without xdist."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def copy_sqlite_files(source: Path, target: Path, names) -> None:
    """Copy SQLite caches with SQLite's own backup (consistent even if a connection is still open);
    the target written whole under a temporary name, then renamed into place."""
    import sqlite3

    target.mkdir(parents=True, exist_ok=True)
    for name in names:
        if not (source / name).is_file():
            continue
        partial = target / f"{name}.partial"
        partial.unlink(missing_ok=True)
        with sqlite3.connect(source / name) as src, sqlite3.connect(partial) as dst:
            src.backup(dst)
        src.close()
        dst.close()
        partial.replace(target / name)


# `make test-fast` leaves out the tests marked slow (marker registered in pyproject.toml): every test that
# asks for a real local LLM, a Ray instance or notebook kernels is marked here by the fixtures it uses (a
# new such test is slow without anyone remembering to say so); modules that load a model themselves
# carry `pytestmark = pytest.mark.slow`, a single such test and the browser tests `@pytest.mark.slow`.
SLOW_FIXTURES = frozenset({"real_llm", "default_llm", "local_ray", "notebook_env",
                           "scifact_slice"})  # a second corpus indexed (165 SciFact abstracts embedded): 28 CPU s
# Tests that start other rag-lab processes or load a local model themselves, by node id (parameters
# included), with the CPU seconds each took in `make test-fast` (2026-11-27, shared cores): kept in
# `make test`, left out of the inner loop.
SLOW_TESTS = frozenset({
    "tests/evaluate/test_kill_resume.py::test_sigkill_then_resume_gives_every_sample_once_with_the_same_scores",  # 118
    "tests/index/test_concurrency.py::test_search_and_indexing_while_a_session_holds_the_index",  # 51: 3 processes
    "tests/evaluate/test_run_lock.py::test_a_second_writer_is_refused_naming_the_holders_pid",  # 27: CLI processes
    "tests/evaluate/test_judge_probability.py::"
    "test_probability_verdict_on_the_real_model_orders_a_supported_and_a_changed_number",  # 24: the 1.5B model
})


# `make test` runs on 3 pytest-xdist workers (2 cores), in the units `pytest_xdist_make_scheduler` below makes: each
# test file goes to one worker as a whole (its module fixtures, e.g. an ablation run, are built once),
# except the files in SPLIT_FILES, whose tests are spread one by one (each is long, the module fixture is
# cheap), and tests/distributed, one unit on one worker (one Ray instance; two would fight for the 2
# cores). (xdist's own `--dist loadgroup` marks do nothing under pytest 9: xdist 3.8 renames
# `item._nodeid`, which pytest 9 no longer reads.)
SPLIT_FILES = frozenset({"tests/report/test_notebooks.py"})
RAY_GROUP_DIR = "tests/distributed/"
# Started first, so the longest units do not start last on one worker while the other one idles.
LONG_FILES = ("tests/evaluate/test_kill_resume.py", "tests/index/test_concurrency.py",
              # the longest files of `make test-fast` (`--durations`, 2026-11-28): PDF parsing, report runs
              "tests/ingest/test_rotated.py", "tests/ingest/test_parse_cache.py", "tests/report/test_report_layout.py",
              "tests/evaluate/test_judged_runs.py", "tests/report/test_html_report.py", "tests/ingest/test_loaders.py",
              "tests/answer/test_compress.py")


def _unit(nodeid: str) -> str:
    path = nodeid.split("::")[0]
    if path.startswith(RAY_GROUP_DIR):
        return RAY_GROUP_DIR
    return nodeid if path in SPLIT_FILES else path


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    from xdist.scheduler import LoadScopeScheduling

    class TestUnits(LoadScopeScheduling):
        """Units in the workers' collection order (longest first, see below), not reordered by size."""

        def _split_scope(self, nodeid: str) -> str:
            return _unit(nodeid)

    config.option.loadscopereorder = False
    return TestUnits(config, log)


def pytest_collection_modifyitems(config, items):
    for item in items:
        if SLOW_FIXTURES.intersection(getattr(item, "fixturenames", ())) or item.nodeid.split("[")[0] in SLOW_TESTS:
            item.add_marker(pytest.mark.slow)
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return
    rank: dict[str, int] = {}
    for item in items:
        path = _file(item)
        rank[path] = min(rank.get(path, 2), _start_rank(path, item))
    items.sort(key=lambda item: rank[_file(item)])  # stable: a file's tests keep their order


def _file(item) -> str:
    return item.nodeid.split("::")[0]


def _start_rank(path: str, item) -> int:
    """0 the Ray group, 1 files with a long test (real models, notebooks, subprocess runs), 2 the rest."""
    if path.startswith(RAY_GROUP_DIR):
        return 0
    if path in SPLIT_FILES or path in LONG_FILES or item.get_closest_marker("slow"):
        return 1
    return 2


PROVIDER_VARS = ("KENDRA_INDEX_ID", "KENDRA_REGION", "QDRANT_URL", "QDRANT_API_KEY")


@pytest.fixture
def lab_cli(lab_settings, monkeypatch, tmp_path, capsys):
    """Run ``rag-lab ARGS`` in process against the session data dir; returns (exit code, stdout, stderr)."""
    from rag_lab.cli.main import main
    from rag_lab.config import get_settings

    for name in list(os.environ):
        if name.startswith("RAG_LAB_") or name in PROVIDER_VARS:
            monkeypatch.delenv(name)
    monkeypatch.setenv("RAG_LAB_DATA_DIR", str(lab_settings.data_dir))
    monkeypatch.setenv("RAG_LAB_DATASETS_DIR", str(lab_settings.datasets_dir))
    monkeypatch.chdir(tmp_path)  # no stray .env
    # main() closes every Qdrant client on exit (right for a process); here the session's index
    # shares that client with later tests, so keep it open.
    monkeypatch.setattr("rag_lab.index.store.close_all", lambda: None)
    get_settings.cache_clear()

    def run(*argv: str):
        code = main(list(argv))
        out, err = capsys.readouterr()
        return code, out, err

    yield run
    get_settings.cache_clear()


@pytest.fixture
def fake_openai():
    """``start(**behaviour)`` → a running fake OpenAI-compatible server on 127.0.0.1 (see
    tests/models/fake_openai_server.py); every server started is closed after the test."""
    from tests.models.fake_openai_server import FakeOpenAI

    servers = []

    def start(**behaviour):
        servers.append(FakeOpenAI(**behaviour))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


@pytest.fixture(scope="session", autouse=True)
def _close_qdrant_clients():
    yield
    from rag_lab.index.store import close_all

    close_all()
