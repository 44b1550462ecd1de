"""The local model catalog: joining parts, sha256 and GGUF header checks, constrained tool replies."""

from __future__ import annotations

import hashlib
import json
import struct
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from rag_lab.errors import ConfigError
from rag_lab.models.llm import catalog, chatml_tools
from rag_lab.models.llm.gguf_meta import read_gguf_info


def _gguf_string(text: str) -> bytes:
    data = text.encode()
    return struct.pack("<Q", len(data)) + data


def make_gguf(name: str = "Tiny Test", file_type: int = 15, template: str = "<|im_start|>{{x}}") -> bytes:
    """A minimal GGUF v3 header: a few key/values (strings, an int, a string array), no tensors."""
    kvs = [
        _gguf_string("general.architecture") + struct.pack("<I", 8) + _gguf_string("qwen2"),
        _gguf_string("general.name") + struct.pack("<I", 8) + _gguf_string(name),
        _gguf_string("general.file_type") + struct.pack("<I", 4) + struct.pack("<I", file_type),
        _gguf_string("tokenizer.ggml.tokens") + struct.pack("<I", 9) + struct.pack("<IQ", 8, 2)
        + _gguf_string("a") + _gguf_string("b"),
        _gguf_string("tokenizer.ggml.scores") + struct.pack("<I", 9) + struct.pack("<IQ", 6, 2) + b"\0" * 8,
        _gguf_string("tokenizer.chat_template") + struct.pack("<I", 8) + _gguf_string(template),
    ]
    return b"GGUF" + struct.pack("<IQQ", 3, 0, len(kvs)) + b"".join(kvs) + b"\0" * 64


def test_header_is_read_past_arrays(tmp_path):
    path = tmp_path / "m.gguf"
    path.write_bytes(make_gguf())
    info = read_gguf_info(path)
    assert (info.name, info.architecture, info.quantization, info.template_kind) == ("Tiny Test", "qwen2", "Q4_K_M", "chatml")


def test_not_a_gguf_names_the_file(tmp_path):
    path = tmp_path / "bad.gguf"
    path.write_bytes(b"PK\x03\x04 not a model")
    with pytest.raises(ConfigError, match=r"bad\.gguf.*bad magic"):
        read_gguf_info(path)


@pytest.fixture
def parted_model(tmp_path, monkeypatch):
    """A catalog entry whose weights come in 3 installed part packages (real modules on sys.path)."""
    blob = make_gguf()
    cuts = [0, 40, 90, len(blob)]
    for number in range(1, 4):
        package = tmp_path / "site" / f"fake_part{number}"
        (package / "data").mkdir(parents=True)
        (package / "data" / "part.bin").write_bytes(blob[cuts[number - 1]:cuts[number]])
        (package / "__init__.py").write_text(
            "import os\ndef get_part_path():\n"
            "    return os.path.join(os.path.dirname(os.path.abspath(__file__)), 'data', 'part.bin')\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    for number in range(1, 4):
        sys.modules.pop(f"fake_part{number}", None)
    model = replace(catalog.QWEN_05B, name="Fake-Model", sha256=hashlib.sha256(blob).hexdigest(), size=len(blob),
                    gguf_name="Tiny Test", packages=("fake-part1==1", "fake-part2==1", "fake-part3==1"),
                    part_modules=("fake_part1", "fake_part2", "fake_part3"))
    monkeypatch.setitem(catalog.CATALOG, model.name, model)
    return model, blob


def test_parts_are_joined_once_and_verified(parted_model, tmp_path):
    model, blob = parted_model
    path, info = catalog.resolve_model_file("fake-model", tmp_path / "data")
    assert path == tmp_path / "data" / "models" / "Fake-Model.gguf" and path.read_bytes() == blob
    assert info.name == "Tiny Test"
    stamp = json.loads(path.with_suffix(".verified.json").read_text())
    assert stamp["sha256"] == model.sha256
    mtime = path.stat().st_mtime_ns
    assert catalog.resolve_model_file("Fake-Model", tmp_path / "data")[0].stat().st_mtime_ns == mtime  # not rejoined


def test_a_changed_file_fails_its_sha256(parted_model, tmp_path):
    model, blob = parted_model
    path, _ = catalog.resolve_model_file(model.name, tmp_path / "data")
    damaged = bytearray(blob)
    damaged[-1] ^= 0xFF  # same size, different bytes: the stamp no longer matches (mtime moves)
    path.write_bytes(bytes(damaged))
    with pytest.raises(ConfigError, match="sha256"):
        catalog.resolve_model_file(model.name, tmp_path / "data")


def test_parts_of_another_model_are_refused(parted_model, tmp_path, monkeypatch):
    model, _ = parted_model
    monkeypatch.setitem(catalog.CATALOG, model.name, replace(model, sha256="0" * 64))
    with pytest.raises(ConfigError, match="expected 0000"):
        catalog.resolve_model_file(model.name, tmp_path / "data")
    assert not (tmp_path / "data" / "models" / "Fake-Model.gguf").exists()


def test_header_mismatch_is_reported(parted_model, tmp_path, monkeypatch):
    model, _ = parted_model
    monkeypatch.setitem(catalog.CATALOG, model.name, replace(model, quantization="Q8_0"))
    with pytest.raises(ConfigError, match="quantisation is 'Q4_K_M', expected 'Q8_0'"):
        catalog.resolve_model_file(model.name, tmp_path / "data")


def test_packaged_smollm2_is_verified(tmp_path):
    path, info = catalog.resolve_model_file("smollm2", tmp_path)
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf" and info.quantization == "Q4_1"
    assert (tmp_path / "models" / "SmolLM2-135M-Instruct.Q4_1.verified.json").is_file()


def test_catalog_pins_match_pyproject():
    text = (Path(__file__).parents[2] / "pyproject.toml").read_text()
    for model in (catalog.QWEN_05B, catalog.QWEN_15B):
        for package in model.packages:
            assert f'"{package}"' in text


WEATHER = [{"type": "function", "function": {"name": "get_weather", "description": "Weather for a city.",
                                              "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                                                             "required": ["city"]}}}]


def test_forced_call_schema_is_the_tool_parameters():
    forced = chatml_tools.resolve_tool_choice(WEATHER, None, tool_required=True)
    assert chatml_tools.tool_schema(WEATHER, forced)["required"] == ["city"]
    assert chatml_tools.interpret_reply('{"city": "Paris"}', WEATHER, forced) == (
        "", [{"name": "get_weather", "arguments": {"city": "Paris"}}])
    assert "Call get_weather now" in chatml_tools.describe_tools(WEATHER, forced)


def test_auto_reply_is_a_call_or_an_answer():
    schema = chatml_tools.tool_schema(WEATHER, "auto")
    assert len(schema["anyOf"]) == 2
    call = '{"name": "get_weather", "arguments": {"city": "Oslo"}}'
    assert chatml_tools.interpret_reply(call, WEATHER, "auto")[1] == [{"name": "get_weather", "arguments": {"city": "Oslo"}}]
    assert chatml_tools.interpret_reply('{"answer": "Hello!"}', WEATHER, "auto") == ("Hello!", [])
    assert chatml_tools.interpret_reply("plain text", WEATHER, "auto") == ("plain text", [])
