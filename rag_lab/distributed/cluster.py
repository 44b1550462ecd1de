"""Connect to a Ray cluster (``--ray ADDRESS``) or start a local one (``--ray``), lazily importing ray."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from rag_lab.errors import ConfigError

LOCAL = "local"  # ``--ray`` without an address: start a Ray instance on this machine


def import_ray() -> ModuleType:
    try:
        import ray
    except ImportError:
        raise ConfigError("--ray needs Ray, which is an optional extra and is not installed",
                          "pip install -e .[ray]   (or pip install 'ray>=2.9,<3'), or drop --ray") from None
    return ray


@dataclass
class RayCluster:
    """Where Ray work runs. ``address`` None or ``"local"``: a local instance with ``num_cpus`` CPUs
    (default: all) and no dashboard (Ray binds it to this machine's own address, behind Ray's token
    authentication); otherwise ``ray.init(address)``
    (``auto``, ``ray://host:10001``, ``host:6379``). ``workers``: actors (and parse tasks in
    flight); default one per CPU of the cluster. A Ray session already open in this process is
    reused and left open."""

    address: str | None = None
    workers: int | None = None
    num_cpus: int | None = None
    _started: bool = field(default=False, init=False, repr=False)

    def __enter__(self) -> RayCluster:
        ray = import_ray()
        if not ray.is_initialized():
            # The worker processes import rag_lab: give them this process's import path.
            env = {k: os.environ[k] for k in ("PYTHONPATH", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
                   if k in os.environ}
            options: dict[str, Any] = {"runtime_env": {"env_vars": env}, "log_to_driver": False,
                                       "configure_logging": False}
            if self.address in (None, LOCAL):
                options.update(num_cpus=self.num_cpus, include_dashboard=False)
                _start_local(ray, options)
            else:
                try:
                    ray.init(address=self.address, **options)
                except (ConnectionError, RuntimeError, ValueError) as exc:
                    raise ConfigError(f"cannot connect to the Ray cluster at {self.address!r} ({exc})",
                                      "check the address (ray://HOST:10001, HOST:6379 or auto) and that the "
                                      "cluster runs the same Ray and Python versions") from None
            self._started = True
        return self

    def __exit__(self, *exc: object) -> None:
        if self._started:
            import_ray().shutdown()
            self._started = False

    @property
    def worker_count(self) -> int:
        if self.workers is not None:
            return max(1, self.workers)
        cpus = import_ray().cluster_resources().get("CPU", 1)
        return max(1, int(cpus))


def _start_local(ray: ModuleType, options: dict[str, Any], attempts: int = 3) -> None:
    """``ray.init`` of a local instance. Ray gives its raylet 30 s to register (not configurable in
    Ray 2.60), which a busy machine can exceed: retried, then one clear error."""
    for attempt in range(attempts):
        try:
            ray.init(**options)
            return
        except Exception as exc:  # noqa: BLE001 - Ray raises a bare Exception for this
            ray.shutdown()
            if "timed out during startup" not in str(exc):
                raise
    raise ConfigError(f"could not start a local Ray instance: its processes did not come up within Ray's 30 s, "
                      f"{attempts} times (the machine is busy)",
                      "try again when the machine is less loaded, or start Ray yourself (`ray start --head "
                      "--num-cpus N`) and pass --ray auto")


def as_cluster(ray: RayCluster | str | None, workers: int | None = None) -> RayCluster | None:
    """``--ray`` as given (an address, ``"local"``, a :class:`RayCluster`, or None: no Ray)."""
    if ray is None or isinstance(ray, RayCluster):
        return ray
    return RayCluster(address=None if ray == LOCAL else ray, workers=workers)
