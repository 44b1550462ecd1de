"""An ablation grid as a small file (``rag-lab ablate --grid grid.yaml``), equal to the flags.

    # grid.yaml (or grid.toml: the same keys)
    modes: [fusion, hybrid]
    fusion_k: [1, 10, 60]
    prefetch: [25, 100]
    top_k: [5, 10]
    weights: ["1:1", "0.7:1.3"]     # dense:sparse, or [[1, 1], [0.7, 1.3]]
    max_per_doc: [0, 2]

Keys are ``modes`` and the lever table's axes (:func:`rag_lab.retrieve.configuration.axes`), spelt as
the flags (``fusion-k`` or ``fusion_k``); a value may be a list, one value, or the flag's
comma-separated text. A key left out keeps the command's default; an unknown key is an error (a
typo must not silently run the default grid).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rag_lab.errors import ConfigError
from rag_lab.evaluate.ablation.grid import GridSpec
from rag_lab.retrieve.configuration import axes


def grid_keys() -> tuple[str, ...]:
    """A grid's keys: ``modes`` and every axis of the lever table."""
    return ("modes", *(a.key for a in axes()))


def read_grid_file(path: str | Path) -> dict[str, Any]:
    """The file's mapping (YAML for .yaml/.yml, TOML for .toml), keys as in :func:`grid_keys`."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"--grid {path}: cannot read it ({exc.strerror or exc})", "give a YAML or TOML file") from None
    try:
        if path.suffix.lower() == ".toml":
            import tomllib

            data = tomllib.loads(text)
        else:
            import yaml

            data = yaml.safe_load(text)
    except Exception as exc:  # noqa: BLE001 - yaml and tomllib raise their own types; one message for both
        raise ConfigError(f"--grid {path}: not valid {'TOML' if path.suffix.lower() == '.toml' else 'YAML'} "
                          f"({str(exc).splitlines()[0]})", "see rag_lab/evaluate/ablation/grid_file.py") from None
    if data is None:
        data = {}
    if not isinstance(data, Mapping):
        raise ConfigError(f"--grid {path}: expected a mapping of axes (modes, fusion_k, …)",
                          "see rag_lab/evaluate/ablation/grid_file.py")
    return normalise_axes(data, str(path))


def normalise_axes(data: Mapping[str, Any], where: str = "grid") -> dict[str, Any]:
    """Axis name → tuple of values, from a file's or a caller's mapping."""
    out: dict[str, Any] = {}
    keys = grid_keys()
    for key, value in data.items():
        name = str(key).replace("-", "_")
        if name not in keys:
            from rag_lab.retrieve.configuration import renamed_hint

            hint = renamed_hint(name)
            raise ConfigError(f"{where}: {hint}" if hint else f"{where}: unknown grid axis {key!r}",
                              f"axes: {', '.join(keys)}")
        if value is None:
            continue
        out[name] = _values(name, value, where)
    return out


def _values(name: str, value: Any, where: str) -> tuple:
    items = [v.strip() for v in value.split(",") if v.strip()] if isinstance(value, str) else (
        list(value) if isinstance(value, (list, tuple)) else [value])
    axis = next((a for a in axes() if a.key == name), None)
    try:
        values = tuple(str(v) for v in items) if axis is None else tuple(axis.read(v) for v in items)
    except (TypeError, ValueError):
        raise ConfigError(f"{where}: {name} {value!r} is not a list of "
                          + ("names" if axis is None else "DENSE:SPARSE pairs" if axis.pair else "numbers"),
                          "e.g. fusion_k: [1, 10, 60]; weights: [\"1:1\", \"0.7:1.3\"]") from None
    return tuple(dict.fromkeys(values))


def config_axes(config) -> dict[str, tuple]:
    """A tuned configuration (:class:`~rag_lab.retrieve.tuned_config.TunedConfig`, ``--config``) as
    one-value axes: its mode and its value of every axis (fusion k, prefetch, weights, cap, top-k …).
    Its LLM query rewrites are not a grid axis: a file with ``num_queries`` > 1 is refused rather
    than ablated without them."""
    if config.num_queries > 1:
        raise ConfigError(f"the config's num_queries = {config.num_queries} (LLM query rewrites) is not an ablation "
                          "axis: the grid fuses each question's own legs", "use a config with num_queries = 1, "
                          "or compare rewrites with `rag-lab tune`")
    out: dict[str, tuple] = {"modes": (config.mode,)}
    for axis in axes():
        values = tuple(getattr(config, lever, default) for lever, default in
                       zip(axis.lever_names, axis.lab_default() if axis.pair else (axis.lab_default(),)))
        value = values if axis.pair else values[0]
        try:
            out[axis.key] = (axis.read(value),)
        except (TypeError, ValueError):
            raise ConfigError(f"the config's {axis.key} {value!r} is not a value of the grid's {axis.key} axis",
                              "fix the [retrieval] table") from None
    return out


def grid_spec(grid: str | Path | Mapping[str, Any] | None = None, base: Mapping[str, Any] | None = None,
              **axes: Any) -> GridSpec:
    """The :class:`GridSpec` of a file or mapping (``grid``) with ``axes`` on top (None: not given);
    ``base`` (e.g. :func:`config_axes`) gives the axes neither names; every other axis keeps
    GridSpec's default — the same as the flag's."""
    values: dict[str, Any] = dict(base or {})
    if grid is not None:
        values.update(normalise_axes(grid) if isinstance(grid, Mapping) else read_grid_file(grid))
    values.update(normalise_axes({k: v for k, v in axes.items() if v is not None}, "axes"))
    try:
        return GridSpec(**values)
    except ValueError as exc:
        raise ConfigError(str(exc), "fix the grid (see rag-lab ablate --help)") from None
