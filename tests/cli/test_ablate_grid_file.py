"""`rag-lab ablate --grid FILE` (YAML or TOML) is the same grid as the flags: the same GridSpec,
and on the real texas_childcare index the same results.csv."""

from __future__ import annotations

import pandas as pd
import pytest

from rag_lab.errors import ConfigError
from rag_lab.evaluate.ablation.grid import GridSpec
from rag_lab.evaluate.ablation.grid_file import grid_spec

FLAGS = ["--modes", "fusion,hybrid", "--fusion-k", "1,60", "--prefetch", "5,20", "--top-k", "3,5",
         "--weights", "1:1,0.7:1.3", "--max-per-doc", "0,2"]
YAML = """\
modes: [fusion, hybrid]
fusion-k: [1, 60]
prefetch: [5, 20]
top_k: [3, 5]
weights: ["1:1", "0.7:1.3"]
max_per_doc: [0, 2]
"""
TOML = """\
modes = ["fusion", "hybrid"]
fusion_k = [1, 60]
prefetch = [5, 20]
top_k = "3,5"
weights = [[1, 1], [0.7, 1.3]]
max_per_doc = [0, 2]
"""


def _spec_of(argv):
    from rag_lab.cli.ablate import grid_from_args
    from rag_lab.cli.main import build_parser

    return grid_from_args(build_parser().parse_args(["ablate", "texas_childcare", *argv]))


def test_a_yaml_or_toml_grid_is_the_flags_grid(tmp_path):
    (tmp_path / "grid.yaml").write_text(YAML, encoding="utf-8")
    (tmp_path / "grid.toml").write_text(TOML, encoding="utf-8")
    from_flags = _spec_of(FLAGS)
    assert from_flags == GridSpec(modes=("fusion", "hybrid"), fusion_k=(1, 60), prefetch=(5, 20), top_k=(3, 5),
                                  weights=((1.0, 1.0), (0.7, 1.3)), max_per_doc=(0, 2))
    assert _spec_of(["--grid", str(tmp_path / "grid.yaml")]) == from_flags
    assert _spec_of(["--grid", str(tmp_path / "grid.toml")]) == from_flags
    # no flag, no file: the defaults; a flag given wins over the file's key
    assert _spec_of([]) == GridSpec() == grid_spec()
    assert _spec_of(["--grid", str(tmp_path / "grid.yaml"), "--top-k", "7"]).top_k == (7,)


@pytest.mark.parametrize("text, message", [
    ("topk: [3]\n", "unknown grid axis 'topk'"),
    ("top_k: [three]\n", "top_k"),
    ("- 1\n- 2\n", "expected a mapping"),
    ("prefetch: [0]\n", "prefetch values must be whole numbers ≥ 1"),
])
def test_a_bad_grid_file_is_one_clear_error(tmp_path, text, message):
    path = tmp_path / "grid.yml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=message):
        grid_spec(path)


def test_ablate_with_a_grid_file_writes_the_same_results_csv(lab_cli, texas_index, tmp_path):
    (tmp_path / "grid.yaml").write_text(YAML, encoding="utf-8")
    common = ["--limit", "6", "--answer-configs", "none", "--seed", "7"]
    code, _, err = lab_cli("ablate", "texas_childcare", *FLAGS, *common, "--out", str(tmp_path / "flags"))
    assert code == 0, err
    code, _, err = lab_cli("ablate", "texas_childcare", "--grid", str(tmp_path / "grid.yaml"), *common,
                           "--out", str(tmp_path / "file"))
    assert code == 0, err
    from_flags = pd.read_csv(tmp_path / "flags" / "results.csv")
    from_file = pd.read_csv(tmp_path / "file" / "results.csv")
    assert len(from_flags) == 2 * 2 * 2 * 2 * 2 * 2 * 6  # configurations × metrics
    pd.testing.assert_frame_equal(from_flags, from_file)
    # and from Python, the same grid as a mapping, the same defaults
    from rag_lab import api
    from rag_lab.config import get_settings

    api.ablate("texas_childcare", tmp_path / "python", grid={"modes": ["fusion", "hybrid"], "fusion_k": [1, 60],
                                                            "prefetch": [5, 20], "top_k": [3, 5],
                                                            "weights": ["1:1", "0.7:1.3"], "max_per_doc": [0, 2]},
               settings=get_settings(), limit=6, seed=7, answer_configs="none")
    pd.testing.assert_frame_equal(from_flags, pd.read_csv(tmp_path / "python" / "results.csv"))
