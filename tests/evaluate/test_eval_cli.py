"""`rag-lab eval` and `rag-lab ir` in-process on the session's texas_childcare index."""

from __future__ import annotations

import json

import pytest

from tests.cli.test_cli import cli  # noqa: F401  (the in-process CLI fixture)
from tests.evaluate.conftest import quoting_answer
from tests.answer.conftest import ScriptedLLM


@pytest.fixture
def scripted_generator(monkeypatch):
    """The CLI's generator replaced by a deterministic one at the factory (the only seam)."""
    llm = ScriptedLLM(script=quoting_answer)
    monkeypatch.setattr("rag_lab.models.llm.get_llm", lambda settings, **kw: llm)
    return llm


def test_eval_prints_every_offline_metric_with_nan_counts(cli, scripted_generator, tmp_path):  # noqa: F811
    out = tmp_path / "runs" / "cli"
    code, stdout, _ = cli("eval", "texas_childcare", "--modes", "bm25,hybrid", "--limit", "2", "--no-rerank",
                          "--out", str(out))
    assert code == 0
    split, header, rule, *rows = stdout.splitlines()[1:]
    assert split == "means over all questions"  # the table says which questions it averages (--split)
    assert header.split()[1:] == ["bm25", "hybrid"]
    names = [row.split()[0] for row in rows]
    for metric in ("id_context_precision", "id_context_recall", "rouge_l", "string_similarity",
                   "semantic_similarity", "key_fact_recall", "citation_precision", "mrr@10", "ndcg@10",
                   "cites_nothing", "latency_p50_s", "latency_p95_s", "total_tokens", "cost_usd"):
        assert metric in names, metric
    rouge = rows[names.index("rouge_l")]
    assert rouge.count("failed 0/2") == 2  # two samples scored per mode, none failed: the count is still shown
    cells = rows[:names.index("cost_usd") + 1]
    assert not [row for row in cells if "nan" in row.lower()], "a cell reads NaN where 'n/a' or 'failed k/m' is meant"
    assert "failed k/m: samples whose metric failed or came back NaN" in stdout  # the label explained once
    assert len((out / "bm25" / "samples.jsonl").read_text().splitlines()) == 2
    assert json.loads((out / "manifest.json").read_text())["config"]["rerank"] is False


def test_eval_reranks_by_the_same_default_as_ask(cli, scripted_generator, tmp_path):  # noqa: F811
    """Local model: no LLM rerank unless --rerank (as `rag-lab ask`); the manifest records which."""
    for flags, expected in (((), False), (("--rerank",), True)):
        out = tmp_path / f"runs-{expected}"
        code, _, _ = cli("eval", "texas_childcare", "--modes", "bm25", "--limit", "1", *flags, "--out", str(out))
        assert code == 0
        assert json.loads((out / "manifest.json").read_text())["config"]["rerank"] is expected
        record = json.loads((out / "bm25" / "samples.jsonl").read_text().splitlines()[0])
        assert (record["rerank"]["status"] != "skipped") is expected


def test_eval_rejects_unknown_modes_and_judges(cli, tmp_path):  # noqa: F811
    code, _, err = cli("eval", "texas_childcare", "--modes", "bm25,vibes", "--out", str(tmp_path / "x"))
    assert code == 2 and "vibes" in err and "choose from" in err
    code, _, err = cli("eval", "texas_childcare", "--modes", "bm25", "--judge", "gpt:4", "--out", str(tmp_path / "x"))
    assert code == 2 and "Unknown judge provider 'gpt'" in err
    # --split dev on a dataset without dev_split.txt: refused before any index build or answer
    code, _, err = cli("eval", "texas_childcare", "--modes", "bm25", "--split", "dev", "--out", str(tmp_path / "y"))
    assert code == 2 and "declares no dev split" in err and not (tmp_path / "y").exists()


def test_ir_works_on_a_folder_dataset_with_document_level_qrels(cli):  # noqa: F811
    code, stdout, _ = cli("ir", "texas_childcare", "--modes", "bm25", "--limit", "5")
    assert code == 0
    row = next(line for line in stdout.splitlines() if line.startswith("bm25"))
    ndcg, recall, mrr = (float(x) for x in row.split()[1:4])
    assert 0.0 < ndcg <= 1.0 and recall == 1.0 and 0.0 < mrr <= 1.0  # 3 PDFs: every source is within 100


def test_a_failed_score_is_counted_beside_the_mean_not_averaged_away():
    from rag_lab.cli.eval import _cell

    assert _cell(0.5, 1, 3) == "0.500 · failed 1/4"
    assert _cell(float("nan"), 2, 0) == "n/a · failed 2/2"
