"""Ray is an optional extra: imported only under --ray, and its absence is one clear error."""

from __future__ import annotations

import subprocess
import sys

import pytest

from rag_lab.errors import ConfigError


def test_a_missing_ray_says_which_extra_to_install(monkeypatch, lab_settings, tmp_path):
    from rag_lab.datasets import resolve_dataset
    from rag_lab.distributed.cluster import RayCluster
    from rag_lab.distributed.ingest import ray_executor
    from rag_lab.index import build_index

    settings = lab_settings.model_copy(update={"data_dir": tmp_path})  # the failure is recorded there
    monkeypatch.setitem(sys.modules, "ray", None)  # what `import ray` does when it is not installed
    dataset = resolve_dataset("texas_childcare", settings.datasets_dir)
    with pytest.raises(ConfigError) as error:
        build_index(dataset, settings, progress=False, force=True, executor=ray_executor(RayCluster(), settings))
    assert "pip install -e .[ray]" in str(error.value)


def test_the_cli_does_not_import_ray_without_the_flag():
    code = ("import sys; from rag_lab.cli.main import build_parser; build_parser(); "
            "import rag_lab.index.build, rag_lab.evaluate.run.runner; print('ray' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


class _SlowRay:
    """Stands in for the ray module's init/shutdown: the raylet misses Ray's 30 s ``failures`` times."""

    def __init__(self, failures: int) -> None:
        self.failures, self.calls, self.shutdowns = failures, 0, 0

    def init(self, **options) -> None:
        self.calls += 1
        if self.calls <= self.failures:
            raise Exception("The current node timed out during startup. This could happen because ...")

    def shutdown(self) -> None:
        self.shutdowns += 1


def test_a_local_ray_start_that_times_out_is_retried_then_reported():
    from rag_lab.distributed.cluster import _start_local

    slow = _SlowRay(failures=1)
    _start_local(slow, {})
    assert slow.calls == 2 and slow.shutdowns == 1  # the half-started instance is cleaned up first
    with pytest.raises(ConfigError, match="could not start a local Ray instance") as error:
        _start_local(_SlowRay(failures=3), {})
    assert "ray start --head" in error.value.hint
