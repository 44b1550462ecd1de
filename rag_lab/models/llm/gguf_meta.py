"""Read a GGUF file's header: model name, quantisation, architecture, chat template.

Enough of the GGUF v2/v3 format to verify that a joined file is the model the catalog says it
is, without loading it (pure Python, reads only the key/value header, skips the tensors).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from rag_lab.errors import ConfigError

MAGIC = b"GGUF"
# llama.cpp's `llama_ftype` values for the quantisations the catalog uses (general.file_type).
FILE_TYPES = {0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 8: "Q5_0", 9: "Q5_1", 10: "Q2_K",
              11: "Q3_K_S", 12: "Q3_K_M", 13: "Q3_K_L", 14: "Q4_K_S", 15: "Q4_K_M", 16: "Q5_K_S",
              17: "Q5_K_M", 18: "Q6_K", 32: "BF16"}
_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9
WANTED = ("general.name", "general.architecture", "general.file_type", "tokenizer.chat_template",
          "general.quantization_version")


@dataclass(frozen=True)
class GGUFInfo:
    name: str | None
    architecture: str | None
    quantization: str | None  # "Q4_K_M", from general.file_type
    chat_template: str | None
    version: int

    @property
    def template_kind(self) -> str:
        """"chatml" when the template uses <|im_start|> turns (Qwen, SmolLM2), else "other"."""
        return "chatml" if self.chat_template and "<|im_start|>" in self.chat_template else "other"


def _read(f: BinaryIO, fmt: str) -> Any:
    size = struct.calcsize(fmt)
    data = f.read(size)
    if len(data) != size:
        raise EOFError("truncated GGUF header")
    return struct.unpack(fmt, data)[0]


def _string(f: BinaryIO) -> str:
    return f.read(_read(f, "<Q")).decode("utf-8", errors="replace")


def _value(f: BinaryIO, kind: int, keep: bool) -> Any:
    if kind in _SCALARS:
        return _read(f, _SCALARS[kind])
    if kind == _STRING:
        if keep:
            return _string(f)
        f.seek(_read(f, "<Q"), 1)
        return None
    if kind == _ARRAY:
        item_kind, count = _read(f, "<I"), _read(f, "<Q")
        if item_kind in _SCALARS:  # fixed size: skip in one seek
            f.seek(struct.calcsize(_SCALARS[item_kind]) * count, 1)
        else:
            for _ in range(count):
                _value(f, item_kind, keep=False)
        return None
    raise ValueError(f"unknown GGUF value type {kind}")


def read_gguf_info(path: str | Path) -> GGUFInfo:
    """The header facts of ``path``; a ConfigError naming the file when it is not a GGUF model."""
    path = Path(path)
    try:
        with path.open("rb") as f:
            if f.read(4) != MAGIC:
                raise ValueError("not a GGUF file (bad magic bytes)")
            version = _read(f, "<I")
            if version < 2:
                raise ValueError(f"GGUF version {version} is not supported")
            _read(f, "<Q")  # tensor count
            meta: dict[str, Any] = {}
            for _ in range(_read(f, "<Q")):
                key = _string(f)
                value = _value(f, _read(f, "<I"), keep=key in WANTED)
                if key in WANTED:
                    meta[key] = value
    except (OSError, EOFError, ValueError, struct.error) as exc:
        raise ConfigError(f"Cannot read the GGUF header of {path}: {exc}",
                          "the file is damaged or not a model: delete it and let rag-lab join it again, "
                          "or point RAG_LAB_LLM_MODEL at a valid .gguf") from None
    file_type = meta.get("general.file_type")
    return GGUFInfo(name=meta.get("general.name"), architecture=meta.get("general.architecture"),
                    quantization=FILE_TYPES.get(file_type, str(file_type)) if file_type is not None else None,
                    chat_template=meta.get("tokenizer.chat_template"), version=version)
