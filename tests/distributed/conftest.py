"""A local Ray instance for the scale-out tests: 2 CPUs, no dashboard, loopback only, started
once for the module that asks for it and shut down after it. Ray is a test dependency
(`make test` installs the `ray` extra): a missing Ray fails these tests, it does not skip them."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def local_ray():
    import ray

    ray.init(num_cpus=2, include_dashboard=False, _node_ip_address="127.0.0.1", log_to_driver=False,
             configure_logging=False, object_store_memory=200 * 1024 * 1024,
             runtime_env={"env_vars": {k: v for k, v in __import__("os").environ.items()
                                       if k in ("PYTHONPATH", "HF_HUB_OFFLINE")}})
    yield ray
    ray.shutdown()
