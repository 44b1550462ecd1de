"""Multi-turn scenarios (``<dataset>/conversations/**/*.yaml``) through the agent, with history.

Each turn is scored by its expected content: the share of ``expected_answer_contains`` (or
``expected_topics``) strings the answer contains, case-insensitive (``turn_expected_content``),
and whether that reaches the turn's ``min_score`` percent (``turn_pass``). Results go to
``<out>/conversations/samples.jsonl``, one line per turn (id ``<scenario>#T<n>``).
Resuming re-plays an unfinished scenario from its first turn (the history must be rebuilt) but
only appends the turns not yet recorded.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rag_lab.datasets import Dataset
from rag_lab.errors import DatasetError
from rag_lab.evaluate.store.run_folder import SampleLog

FOLDER = "conversations"


@dataclass(frozen=True)
class Turn:
    number: int
    user: str
    expected: tuple[str, ...]
    min_score: float  # percent


@dataclass(frozen=True)
class Scenario:
    id: str
    name: str
    turns: tuple[Turn, ...]


def load_scenarios(dataset: Dataset) -> list[Scenario]:
    import yaml

    folder = dataset.root / FOLDER
    files = sorted(folder.rglob("*.yaml")) + sorted(folder.rglob("*.yml")) if folder.is_dir() else []
    if not files:
        raise DatasetError(f"Dataset {dataset.name!r} has no conversation scenarios",
                           f"add YAML files under {folder} (see datasets/texas_childcare/conversations)")
    scenarios = []
    for path in files:
        try:
            spec = yaml.safe_load(path.read_text(encoding="utf-8"))
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f"line {mark.line + 1}" if mark else "?"
            raise DatasetError(f"{path}: {where}: not valid YAML", "fix the file") from None
        turns = []
        for n, turn in enumerate((spec or {}).get("conversation") or [], start=1):
            if not isinstance(turn, dict) or not str(turn.get("user", "")).strip():
                raise DatasetError(f"{path}: turn {n} has no 'user' text", "each turn needs user: \"...\"")
            expected = turn.get("expected_answer_contains") or turn.get("expected_topics") or []
            turns.append(Turn(int(turn.get("turn", n)), str(turn["user"]), tuple(map(str, expected)),
                              float(turn.get("min_score", 50))))
        if not turns:
            raise DatasetError(f"{path}: no turns under 'conversation'", "add a list of turns")
        scenarios.append(Scenario(path.relative_to(folder).with_suffix("").as_posix(),
                                  str(spec.get("name") or path.stem), tuple(turns)))
    return scenarios


def expected_content(answer: str, expected: tuple[str, ...]) -> float | None:
    if not expected:
        return None
    text = (answer or "").lower()
    return sum(1 for e in expected if e.lower() in text) / len(expected)


def run_conversations(dataset: Dataset, settings: Any, out: Path, *, resume: bool, progress: bool = True,
                      llm: Any = None, **params: Any) -> None:
    from rag_lab.answer.adapter import AgentAnswerer
    from rag_lab.evaluate.plan.answering import answer_fields
    from rag_lab.answer.agent import RagAgent
    from rag_lab.progress import progress_bar

    scenarios = load_scenarios(dataset)
    log = SampleLog(Path(out) / FOLDER, resume=resume)
    todo = [s for s in scenarios if any(f"{s.id}#T{t.number}" not in log.done for t in s.turns)]
    if not todo:
        return
    agent = RagAgent(settings=settings, dataset=dataset, llm=llm, **params)
    answerer = AgentAnswerer(agent.chat)
    for scenario in progress_bar(todo, desc="conversations", unit="scenario", enabled=progress):
        agent.reset()
        for turn in scenario.turns:
            sample_id = f"{scenario.id}#T{turn.number}"
            record: dict[str, Any] = {"id": sample_id, "mode": FOLDER, "scenario": scenario.name, "turn": turn.number,
                                      "question": turn.user, "expected": list(turn.expected), "error": None}
            try:
                record.update(answer_fields(answerer.query(turn.user)))
            except Exception as exc:  # noqa: BLE001 - recorded; the scenario goes on
                record.update(answer=None, contexts=[], latency={}, usage={}, error=f"{type(exc).__name__}: {exc}"[:1000])
            score = expected_content(record.get("answer") or "", turn.expected)
            record["scores"] = {} if score is None else {
                "turn_expected_content": score, "turn_pass": float(100 * score >= turn.min_score)}
            if sample_id not in log.done:
                log.append(record)
