"""RAG_LAB_LLM_RPM: one token bucket per endpoint, shared by threads, over real HTTP (fake server)."""

from __future__ import annotations

import threading
import time

from rag_lab.config import Settings
from rag_lab.models.llm import get_llm
from rag_lab.models.rate_limit import TokenBucket
from tests.models.fake_openai_server import FakeOpenAI


def test_token_bucket_spaces_requests_beyond_its_burst():
    now = [0.0]
    bucket = TokenBucket(rpm=120, clock=lambda: now[0])  # 2 per second, a burst of 2
    assert [bucket.reserve() for _ in range(4)] == [0.0, 0.0, 0.5, 1.0]
    now[0] = 10.0  # refilled, never above its capacity
    assert [bucket.reserve() for _ in range(3)] == [0.0, 0.0, 0.5]


def test_rpm_limit_is_shared_by_the_workers_of_one_endpoint():
    server = FakeOpenAI(reply=lambda prompt: "ok")
    try:
        settings = Settings(_env_file=None, llm_provider="openai_compatible", llm_base_url=server.url,
                            llm_model="rpm-test", llm_rpm=120)
        llms = [get_llm(settings) for _ in range(3)]  # e.g. the generator and two judges, one server
        started = time.monotonic()
        threads = [threading.Thread(target=llm.complete, args=("hi",)) for llm in llms for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        elapsed = time.monotonic() - started
        assert len(server.requests) == 6
        assert elapsed >= 1.9  # 6 requests at 2/s after a burst of 2: the last waits 2 s
    finally:
        server.close()
