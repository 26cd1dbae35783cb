# Two commands on a fresh machine: `make demo` (the main job) and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

# llama-cpp-python compiles llama.cpp from source (about 15 minutes on 2 cores). Build only
# the library the server needs; pip caches the wheel it builds, so later installs on this
# machine (a new venv, a clean CI checkout) reuse it instead of compiling again.
# GGML_NATIVE=OFF builds for AVX2, not for the building CPU: built natively on a CPU with
# AMX, llama.cpp's AMX kernels crash (SIGSEGV) in a VM that does not grant AMX's state.
export CMAKE_ARGS ?= -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF \
	-DLLAMA_BUILD_SERVER=OFF -DLLAMA_CURL=OFF -DGGML_OPENMP=OFF -DGGML_NATIVE=OFF
export CMAKE_BUILD_PARALLEL_LEVEL ?= $(shell nproc 2>/dev/null || echo 2)

DEMO_ARMS := --arm direct --arm cot --arm react_text --arm react_text:guard=on

.PHONY: install system demo reference test check format clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[dev,local,humaneval,otlp]'
	touch $@

install: $(STAMP)

# Debian packages the tests use: bubblewrap isolates model-written code (coding tasks);
# pdflatex (texlive-latex-recommended, with booktabs) compiles the exported LaTeX tables;
# chromium renders the HTML report headless.
# Installed when running as root with apt-get; elsewhere the sandbox says which weaker
# isolation it falls back to, and the tests needing a missing one are skipped with the reason.
SYSTEM_NEEDS := bwrap:bubblewrap pdflatex:texlive-latex-recommended chromium:chromium

system:
	@missing="$$(for need in $(SYSTEM_NEEDS); do command -v "$${need%%:*}" >/dev/null || \
		echo "$${need#*:}"; done)"; \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
			apt-get install -y -qq $$missing >/dev/null 2>&1 || \
			{ apt-get update -qq && apt-get install -y -qq $$missing >/dev/null; }; \
		else echo "note: not installed: $$missing (the tests needing them are skipped)"; fi; \
	fi

# The depot questions on the embedded local model; cost shown as if served by gpt-5-mini.
# Into a folder holding the demo's runs already, a run resumes: those runs are not made
# again, and the table is theirs; the last line then says how to run the demo afresh.
DEMO_OUT ?= results/demo
demo: install
	@ran=; [ -s "$(DEMO_OUT)/runs.jsonl" ] && ran=1; \
	$(BIN)/loopbench run --tasks depot --repeats 1 --concurrency 1 --out "$(DEMO_OUT)" \
		--price-as gpt-5-mini $(DEMO_ARMS) || exit $$?; \
	if [ -n "$$ran" ]; then echo; \
		echo "$(DEMO_OUT) held runs of an earlier demo, not run again; to run the demo afresh:" \
		"make demo DEMO_OUT=results/demo-2 (or remove $(DEMO_OUT) first)"; fi

# Regenerates the committed reference run in results/reference/local-smollm2/.
reference: install
	rm -rf results/reference/local-smollm2 && mkdir -p results/reference/local-smollm2
	$(BIN)/loopbench run --tasks depot --repeats 1 --concurrency 1 --quiet \
		--out results/reference/local-smollm2 --price-as gpt-5-mini $(DEMO_ARMS) \
		> results/reference/local-smollm2/table.md
	$(BIN)/python bench/local_model.py --results results/reference/local-smollm2 \
		--plot results/reference/local-smollm2/outcomes.png

test: check system
	$(BIN)/python -m pytest

check: install
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .
	$(BIN)/mypy

format: install
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

clean:
	rm -rf $(VENV) build *.egg-info
