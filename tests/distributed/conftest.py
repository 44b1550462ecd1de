"""A local Ray instance for the scale-out tests: 2 CPUs, no dashboard, started
once for this package's tests (index and eval share it: each start costs seconds of raylet and worker
start-up) and shut down after the last of them. Ray is a test dependency
(`make test` installs the `ray` extra): a missing Ray fails these tests, it does not skip them."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(scope="package")
def local_ray():
    import ray

    options = dict(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False,
                   object_store_memory=200 * 1024 * 1024,
                   runtime_env={"env_vars": {k: v for k, v in os.environ.items()
                                             if k in ("PYTHONPATH", "HF_HUB_OFFLINE")}})
    for attempt in range(3):  # Ray gives its raylet 30 s to register; a loaded machine may need retries
        try:
            ray.init(**options)
            break
        except Exception as exc:  # noqa: BLE001 - Ray raises a bare Exception for this
            ray.shutdown()
            if "timed out during startup" not in str(exc) or attempt == 2:
                raise
    yield ray
    ray.shutdown()
