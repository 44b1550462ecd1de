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
    path, info = catalog.resolve_model_file("fake-model", tmp_path / "models")
    assert path == tmp_path / "models" / "Fake-Model.gguf" and path.read_bytes() == blob
    assert info.name == "Tiny Test"
    stamp = json.loads(path.with_suffix(".verified.json").read_text())
    assert stamp["sha256"] == model.sha256
    mtime = path.stat().st_mtime_ns
    assert catalog.resolve_model_file("Fake-Model", tmp_path / "models")[0].stat().st_mtime_ns == mtime  # not rejoined


def test_a_changed_file_fails_its_sha256(parted_model, tmp_path):
    model, blob = parted_model
    path, _ = catalog.resolve_model_file(model.name, tmp_path / "models")
    damaged = bytearray(blob)
    damaged[-1] ^= 0xFF  # same size, different bytes: the stamp no longer matches (mtime moves)
    path.write_bytes(bytes(damaged))
    with pytest.raises(ConfigError, match="sha256"):
        catalog.resolve_model_file(model.name, tmp_path / "models")


def test_parts_of_another_model_are_refused(parted_model, tmp_path, monkeypatch):
    model, _ = parted_model
    monkeypatch.setitem(catalog.CATALOG, model.name, replace(model, sha256="0" * 64))
    with pytest.raises(ConfigError, match="expected 0000"):
        catalog.resolve_model_file(model.name, tmp_path / "models")
    assert not (tmp_path / "models" / "Fake-Model.gguf").exists()


def test_header_mismatch_is_reported(parted_model, tmp_path, monkeypatch):
    model, _ = parted_model
    monkeypatch.setitem(catalog.CATALOG, model.name, replace(model, quantization="Q8_0"))
    with pytest.raises(ConfigError, match="quantisation is 'Q4_K_M', expected 'Q8_0'"):
        catalog.resolve_model_file(model.name, tmp_path / "models")


def test_packaged_smollm2_is_verified(tmp_path):
    path, info = catalog.resolve_model_file("smollm2", tmp_path / "models")
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf" and info.quantization == "Q4_1"
    assert (tmp_path / "models" / "SmolLM2-135M-Instruct.Q4_1.verified.json").is_file()


def test_data_folders_share_the_machines_model_file_joined_once(parted_model, tmp_path, monkeypatch):
    from rag_lab.config import load_settings

    model, blob = parted_model
    monkeypatch.delenv("RAG_LAB_MODELS_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # the default: the user cache folder
    joins = []
    join_parts = catalog.join_parts
    monkeypatch.setattr(catalog, "join_parts", lambda *a: joins.append(a) or join_parts(*a))
    first, second = (load_settings(data_dir=tmp_path / name) for name in ("data_a", "data_b"))
    path_a, _ = catalog.resolve_model_file(model.name, first.models_dir)
    path_b, _ = catalog.resolve_model_file(model.name, second.models_dir)
    assert path_a == path_b == tmp_path / "cache" / "rag-lab" / "models" / "Fake-Model.gguf"
    assert path_a.read_bytes() == blob and len(joins) == 1
    assert not [p for p in tmp_path.glob("data_*/**/*") if p.is_file()]  # no copy in either data folder


def test_models_folder_setting(tmp_path, monkeypatch):
    from rag_lab.config import load_settings

    monkeypatch.setenv("RAG_LAB_MODELS_DIR", str(tmp_path / "shared"))
    assert load_settings().models_dir == tmp_path / "shared"
    monkeypatch.setenv("RAG_LAB_MODELS_DIR", "~/models")
    assert load_settings().models_dir == Path.home() / "models"
    monkeypatch.setenv("RAG_LAB_MODELS_DIR", " ")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert load_settings().models_dir == tmp_path / "cache" / "rag-lab" / "models"


def test_an_unwritable_models_folder_is_one_clear_error(parted_model, tmp_path):
    model, _ = parted_model
    (tmp_path / "a-file").write_text("not a folder")
    with pytest.raises(ConfigError, match=r"models folder .*a-file/models is not writable") as raised:
        catalog.resolve_model_file(model.name, tmp_path / "a-file" / "models")
    assert "RAG_LAB_MODELS_DIR" in raised.value.hint


JOIN_SCRIPT = """
import json, sys
from dataclasses import replace
from rag_lab.models.llm import catalog
spec = json.loads(sys.argv[1])
model = replace(catalog.QWEN_05B, **{k: tuple(v) if isinstance(v, list) else v for k, v in spec.items()})
catalog.CATALOG[model.name] = model
print(catalog.resolve_model_file(model.name, __import__("pathlib").Path(sys.argv[2]))[0])
"""


def test_two_processes_starting_at_once_join_the_parts_once(parted_model, tmp_path):
    import os
    import subprocess

    model, blob = parted_model
    for number in range(1, 4):  # each part takes a moment: without the lock both processes would join
        init = tmp_path / "site" / f"fake_part{number}" / "__init__.py"
        init.write_text("import time\n" + init.read_text().replace("    return", "    time.sleep(0.3)\n    return"))
    spec = {k: getattr(model, k) for k in ("name", "sha256", "size", "gguf_name", "packages", "part_modules")}
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path / "site"), str(Path(__file__).parents[2])])}
    runs = [subprocess.Popen([sys.executable, "-c", JOIN_SCRIPT, json.dumps(spec), str(tmp_path / "models")], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outputs = [run.communicate(timeout=120) for run in runs]
    assert [run.returncode for run in runs] == [0, 0], outputs
    assert {out.strip() for out, _ in outputs} == {str(tmp_path / "models" / "Fake-Model.gguf")}
    assert sum("joining 3 parts" in err for _, err in outputs) == 1  # the other waited, then found it joined
    assert (tmp_path / "models" / "Fake-Model.gguf").read_bytes() == blob


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
