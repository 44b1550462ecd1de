"""A run report opens with its verdict and keeps the settings for last: what a researcher reads
first is which mode won on which metric, and whether the questions were enough to tell."""

from __future__ import annotations

import json
import re

import pytest

from rag_lab.evaluate.statistics.significance import sign_flip_exact
from rag_lab.report.answer_text import cited_line, cut_note, readable_answer
from rag_lab.report.html import build_report
from rag_lab.report.verdict import smallest_adjusted_p, smallest_p

LONG_ANSWER = ("Providers must renew their permit every two years and keep records of each inspection "
               "for the agency. " * 20 + "The last sentence. [Doc 1: rules.pdf, Page 4] [Doc 2: rules.pdf, Page 5] "
               "[Doc 3] [Doc 4] [Doc 5]")


def _eval_run(root, n: int, dense_gain: float, failing: str | None = None):
    """An evaluation run folder of two modes on n questions: dense scores ``dense_gain`` above bm25 on
    key_fact_recall (with per-question noise), the same on rouge_l; ``failing``: a metric every
    sample failed, with its recorded reason."""
    (root / "bm25").mkdir(parents=True)
    (root / "dense").mkdir()
    (root / "manifest.json").write_text(json.dumps({
        "dataset": {"name": "toy"}, "config": {"modes": ["bm25", "dense"], "questions": n, "params": {"top_n": 5}},
        "settings": {"llm_provider": "local", "chunk_words": 500}, "models": {"llm": "local:tiny"}}))
    for mode in ("bm25", "dense"):
        lines = []
        for i in range(n):
            base = 0.2 + 0.013 * (i % 7)
            scores = {"key_fact_recall": base + (dense_gain if mode == "dense" else 0.0), "rouge_l": 0.4 + 0.01 * (i % 3)}
            record = {"id": f"q{i}", "mode": mode, "question": f"How long is permit {i} valid?",
                      "answer": LONG_ANSWER, "cited_sources": [{"doc": "rules.pdf", "page": 4}],
                      "scores": scores, "score_errors": {}}
            if failing:
                record["scores"][failing] = None
                record["score_errors"][failing] = "TimeoutError: the judge took longer than 60 s"
            lines.append(json.dumps(record))
        (root / mode / "samples.jsonl").write_text("\n".join(lines) + "\n")
    return root


def _section_ids(page: str) -> list[str]:
    return re.findall(r'<section id="([^"]+)">', page)


def _text(fragment: str) -> str:
    import html

    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", fragment)))


def test_the_smallest_p_is_what_the_exact_test_gives_at_its_most_extreme():
    """2/2^n is the exact sign-flip p of n differences all of one sign (the most extreme data there is)."""
    for n in range(1, 12):
        assert smallest_p(n) == pytest.approx(sign_flip_exact([0.3] * n))
    assert smallest_p(5) > 0.05 > smallest_p(6)  # no paired test of 5 questions reaches α = 0.05
    assert smallest_adjusted_p(6, 2) == pytest.approx(2 * 2 / 2 ** 6) and smallest_adjusted_p(6, 2) > 0.05
    assert smallest_adjusted_p(2, 10) == 1.0
    # beyond the exact range a randomization test of N permutations cannot go below 1/(N + 1); an analytic one can
    assert smallest_p(40, 2000) == pytest.approx(1 / 2001) and smallest_p(40, None) == pytest.approx(2 / 2 ** 40)


def test_report_opens_with_the_verdict_and_folds_the_settings_last(tmp_path):
    page = build_report(_eval_run(tmp_path / "run", 30, 0.3))
    assert _section_ids(page) == ["verdict", "per-mode-tables", "figures", "worst-questions", "latency-and-cost",
                                  "run-manifest"]
    manifest = page[page.index('<section id="run-manifest">'):]
    assert re.match(r'<section id="run-manifest"><h2>Run manifest</h2>\s*<details><summary>', manifest)
    assert "chunk_words" in manifest and "chunk_words" not in page[:page.index('<section id="run-manifest">')]


def test_a_clear_difference_is_called_with_its_controlled_significance(tmp_path):
    page = build_report(_eval_run(tmp_path / "run", 30, 0.3))
    verdict = page[page.index('<section id="verdict">'):page.index('<section id="per-mode-tables">')]
    headline = _text(re.search(r'<p class="verdict">(.*?)</p>', verdict).group(1))
    assert headline == ("dense is significantly better than bm25 on 1 of 2 metrics (key_fact_recall) — "
                        "n = 30 questions")
    text = _text(verdict)
    assert "dense better than bm25 (Δ +0.300, p < 0.001)" in text
    assert "all modes 0.4" in text and "the same mean in every mode" in text  # rouge_l: the same in both modes
    assert "the tests can tell" in text and "Holm" in text


def test_too_few_questions_say_so_instead_of_p_values(tmp_path):
    page = build_report(_eval_run(tmp_path / "run", 2, 0.3))
    verdict = page[page.index('<section id="verdict">'):page.index('<section id="per-mode-tables">')]
    assert '<p class="verdict">too few questions to tell (n = 2)</p>' in verdict
    text = _text(verdict)
    # the reason in numbers: 2/2^2 = 0.5 per test, Holm over the 2 comparisons → 1
    assert "no paired test can give a two-sided p below 0.5 (2/2^2)" in text
    assert "smallest possible p is 1" in text and "cannot tell at n = 2 (dense Δ +0.300)" in text
    assert "significantly better" not in text


def test_the_per_mode_table_defines_each_metric_and_its_cut_off(tmp_path):
    from rag_lab.evaluate.metrics import all_specs

    page = build_report(_eval_run(tmp_path / "run", 4, 0.1, failing="faithfulness"))
    table = page[page.index('<section id="per-mode-tables">'):page.index("Failed metrics")]
    described = {s.name: s.description for s in all_specs()}
    rows = {m: _text(row) for m, row in re.findall(r"<tr><td><b>([\w@]+)</b>(.*?)</tr>", table, re.S)}
    assert set(rows) == {"key_fact_recall", "rouge_l", "faithfulness"}
    for metric, row in rows.items():
        assert described[metric] in row.replace("’", "'"), metric
    assert "whole answer (no cut-off)" in rows["rouge_l"]
    assert "the top-5 chunks the LLM read" in rows["faithfulness"]  # the run's own --top-n
    # nothing scored: n/a and the recorded reason, never a bare NaN or an empty cell
    assert rows["faithfulness"].count("n/a (all 4 failed: TimeoutError: the judge took longer than 60 s)") == 2
    assert rows["faithfulness"].count("4/4") == 2
    assert "<th>bm25 failed</th>" in table and "nan" not in _text(table).lower().replace("came back nan", "")
    # records without latency or price: n/a and why, as in the console
    latency = page[page.index('<section id="latency-and-cost">'):page.index('<section id="run-manifest">')]
    assert "<td>n/a (no price)</td>" in latency and "<td>n/a</td>" in latency and "—" not in latency


def test_worst_answers_are_cut_at_a_word_and_cite_each_source_once(tmp_path):
    page = build_report(_eval_run(tmp_path / "run", 4, 0.1))
    worst = page[page.index('<section id="worst-questions">'):page.index('<section id="latency-and-cost">')]
    answers = [_text(a) for a in re.findall(r"<b>answer:</b>(.*?)<br>", worst, re.S)]
    assert answers
    for answer in answers:
        answer = answer.strip()
        assert answer.endswith("…") and len(answer) <= 1200
        kept = answer[:-1].rstrip()
        assert LONG_ANSWER.startswith(kept) and LONG_ANSWER[len(kept)] == " "  # cut between two words
    assert "[Doc 5]" not in worst and "[Doc 1] rules.pdf, Page 4; [Doc 2] rules.pdf, Page 5" in _text(worst)


def test_readable_answer_drops_the_closing_stamps_and_keeps_a_short_answer_whole():
    short = "The permit lasts two years [Doc 1: rules.pdf, Page 4]. [Doc 1] [Doc 2] [Doc 3] [Doc 4] [Doc 5]"
    assert readable_answer(short) == "The permit lasts two years [Doc 1]."
    assert readable_answer("The based on the Provider handbook", limit=25) == "The based on the…"
    assert readable_answer("[Doc 2: a.pdf, Page 1]") == "[Doc 2]"  # an answer that is only a citation stays
    assert cited_line(short, []) == "[Doc 1] rules.pdf, Page 4"
    two_chunks = "Yes [Doc 1: a.pdf, Page 1] [Doc 2: b.pdf, Page 3] [Doc 3: a.pdf, Page 1]"
    assert cited_line(two_chunks, []) == "[Doc 1, 3] a.pdf, Page 1; [Doc 2] b.pdf, Page 3"
    assert cited_line("no stamps", [{"doc": "a.pdf", "page": 2}, {"doc": "a.pdf", "page": 2}]) == "a.pdf p.2"
    assert cited_line("", None) == "(none cited)"


def test_an_answer_cut_by_the_answer_formats_limit_says_so():
    from rag_lab.answer.prompt import ANSWER_MAX_CHARS

    cut = ("The sliding scale is based on the income " * 20)[:ANSWER_MAX_CHARS - 1].rstrip() + " P"
    assert len(cut) == ANSWER_MAX_CHARS
    stamped = cut + " [Doc 1: a.pdf, Page 1] [Doc 2: b.pdf, Page 2] [Doc 3] [Doc 4] [Doc 5]"
    assert readable_answer(stamped) == cut  # shown as generated, without the five stamps
    assert cut_note(stamped) == f"as generated: stopped at the answer format's {ANSWER_MAX_CHARS}-character limit"
    assert cut_note(cut[:-2] + ".") == "" and cut_note("The permit lasts two years [Doc 1].") == ""


def test_console_table_labels_every_cell(tmp_path):
    from rag_lab.cli.eval import render_eval_table
    from rag_lab.evaluate.store.frames import load_run

    table = render_eval_table(load_run(_eval_run(tmp_path / "run", 2, 0.1, failing="faithfulness")))
    rows = {line.split()[0]: line for line in table.splitlines()[3:] if line.strip()}
    assert rows["rouge_l"].count("· failed 0/2") == 2
    assert rows["faithfulness"].count("n/a · failed 2/2") == 2
    assert "n/a: faithfulness in bm25: every sample failed (TimeoutError: the judge took longer than 60 s)" in table
    assert "cost_usd" in rows and "NaN" not in rows["cost_usd"] and "n/a (no price)" in rows["cost_usd"]
    assert not re.search(r"\bnan\b|\bNaN \d", "\n".join(rows.values()))


def test_ir_console_table_says_n_a_where_a_metric_has_no_value():
    from rag_lab.cli.render import render_ir_table

    table = render_ir_table({"bm25": {"ndcg@10": 0.5, "recall@100": float("nan"), "p50_ms": 12.34}})
    row = table.splitlines()[-1].split()
    assert row == ["bm25", "0.5000", "n/a", "n/a", "n/a", "n/a", "12.3"]
