"""A deterministic stand-in for the question-writing LLM: it reads the passage out of the prompt and
writes a question about its document's rarest words (never a long copied span) with a reference
answer the passage states. It counts its calls and can be told to fail after some of them."""

from __future__ import annotations

import json
import re
from types import SimpleNamespace

from rag_lab.errors import ProviderError


class FakeQuestionLLM:
    def __init__(self, fail_after: int | None = None, reply=None, failure: type[BaseException] = ProviderError) -> None:
        # private: the LLM's identity (a hash of its public fields) is the same however it behaves
        self._calls = 0
        self._fail_after = fail_after
        self._reply = reply  # prompt -> (question, answer), replacing the default
        self._failure = failure  # what the call after ``fail_after`` raises (a provider error, or Ctrl-C)
        self.model_name = "fake-question-writer"

    @property
    def calls(self) -> int:
        return self._calls

    def complete(self, prompt: str, **kwargs):
        if self._fail_after is not None and self._calls >= self._fail_after:
            if self._failure is ProviderError:
                raise ProviderError("Provider fake: HTTP 503 after retries", "try again later")
            raise self._failure()
        self._calls += 1
        passage = prompt.split('"""')[1]
        question, answer = (self._reply or default_reply)(passage)
        return SimpleNamespace(text=json.dumps({"question": question, "answer": answer}),
                               raw={"usage": {"prompt_tokens": len(prompt.split()), "completion_tokens": 20}})


def default_reply(passage: str) -> tuple[str, str]:
    """A question in other words than the passage's, about the first thing it states: a daily rate, an
    income limit or an inspection count, each with its district when the passage names it."""
    if rate := re.search(r"The (\w+) program of (district\d+) reimburses providers (\$[\d.]+) per day in (\d{4})",
                         passage):
        return f"What daily amount did {rate[2]} give {rate[1]} caregivers in {rate[4]}?", rate[3]
    if limit := re.search(r"the (\w+) program of (district\d+) qualify when household income stays below (\d+)", passage):
        return f"Up to which income share can {limit[1]} households in {limit[2]} get help?", f"{limit[3]} percent"
    visits = re.search(r"the (\w+) program of (district\d+) visit facilities (\d+) times", passage)
    return (f"How frequently are {visits[1]} centres in {visits[2]} checked by staff?", f"{visits[3]} times") if visits \
        else ("How frequently are centres checked by county staff?", "twice")
