"""The demo's synthetic-question step: ``rag-lab synth`` on texas_childcare, a handful of questions
written under reports/ (the dataset folder is left alone), cached after the first run."""

from __future__ import annotations

from pathlib import Path

DEMO_DATASET = "texas_childcare"
DEMO_QUESTIONS = 3
DEMO_OUT = Path("reports") / "texas_childcare.qa.synthetic.jsonl"


def run_synth_step(settings, banner) -> None:
    from rag_lab.datasets import resolve_dataset
    from rag_lab.errors import RagLabError
    from rag_lab.evaluate.questions import synth
    from rag_lab.evaluate.questions.records import summary_path

    banner(f"Synthetic questions: rag-lab synth {DEMO_DATASET} --n {DEMO_QUESTIONS} --out {DEMO_OUT} "
           "(the lab for a corpus without questions; replies cached: a rerun calls no LLM)")
    try:
        outcome = synth(resolve_dataset(DEMO_DATASET, settings.datasets_dir), settings, n=DEMO_QUESTIONS, out=DEMO_OUT)
    except RagLabError as exc:  # the rest of the demo does not depend on it
        print(f"synth stopped: {exc}")
        return
    print(outcome.line())
    for record in outcome.records:
        print(f"  [{record['kind']}] {record['question']}  → {record['reference_answer']}  ({record['source_chunk']})")
    print(f"wrote {DEMO_OUT} (summary {summary_path(DEMO_OUT)}); score with them: "
          f"rag-lab ir {DEMO_DATASET} --questions {DEMO_OUT}")
