# Two commands set everything up from a fresh clone: `make demo` and `make test`.
# Both install the exact versions of requirements.txt and requirements-dev.txt (pip-compile's locks); `make lock`
# refreshes the locks, `make test-latest` runs the suite on the newest releases pyproject allows.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip --quiet
# The project installs with the locked setuptools, not whatever a build environment would fetch;
# setuptools' notice that an editable install imports from the work tree is what we want.
INSTALL_GE := PYTHONWARNINGS="ignore:Editable installation" $(PIP) install --no-deps --no-build-isolation -e .
LATEST := .venv-latest

.PHONY: demo test lint format docs lock test-latest fuzz clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# Reinstall only when the lock or the packaging changes (the install is editable).
$(VENV)/.installed: requirements.txt pyproject.toml | $(BIN)/python
	$(PIP) install -r requirements.txt
	$(INSTALL_GE)
	touch $@

# pip-sync (pip-tools, in the dev lock) also removes what a refreshed lock no longer lists.
$(VENV)/.installed-dev: requirements-dev.txt pyproject.toml | $(BIN)/python
	$(PIP) install -r requirements-dev.txt
	$(BIN)/pip-sync --quiet requirements-dev.txt
	$(INSTALL_GE)
	touch $(VENV)/.installed $@

demo: $(VENV)/.installed
	$(BIN)/python -m ge.demo

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

test: lint
	$(BIN)/lit -s lit_tests
	$(BIN)/python -m pytest -n auto -q

# The operator tables, then the figures of the ONNX backend suite the tests hold every case to.
# 10,000 fresh examples for each fuzzer and property test (make test runs a fixed 500).
fuzz: $(VENV)/.installed-dev
	GE_HYPOTHESIS_PROFILE=fuzz $(BIN)/python -m pytest -n auto -q tests/fuzz

docs: $(VENV)/.installed-dev
	$(BIN)/python -m ge.tools.supported_ops > docs/supported_ops.md
	$(BIN)/python tests/onnx_conformance/figures.py >> docs/supported_ops.md

format: $(VENV)/.installed-dev
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

# The dev lock is resolved first and constrains the runtime lock and the frontend extras' locks
# (`pip install -r requirements/torch.txt` for ge[torch]), so they agree on every package they
# share; build dependencies (setuptools) and pip itself are pinned too. Every pin
# carries its files' hashes, so pip installs in hash-checking mode: a package the lock does not
# pin, or a file that is not the one locked, is refused. pylock.toml states the dev lock in the
# standard format (PEP 751) for tools that read it, each wheel at its PyPI address (not this
# machine's package cache); only the CPU build of torch comes from /opt/wheels, where every
# machine of this kind has it. uv.lock states the same resolution for uv (pyproject's [tool.uv]);
# uv is installed for the refresh only, and pip-sync takes it out again.
COMPILE := $(BIN)/pip-compile --quiet --upgrade --allow-unsafe --strip-extras --all-build-deps \
	--generate-hashes --no-emit-index-url --no-emit-find-links
lock: $(VENV)/.installed-dev
	$(COMPILE) --extra dev -o requirements-dev.txt pyproject.toml
	$(COMPILE) -c requirements-dev.txt -o requirements.txt pyproject.toml
	$(COMPILE) -c requirements-dev.txt --extra torch -o requirements/torch.txt pyproject.toml
	$(COMPILE) -c requirements-dev.txt --extra tensorflow -o requirements/tensorflow.txt pyproject.toml
	PIP_CONFIG_FILE=/dev/null $(PIP) lock --quiet --index-url https://pypi.org/simple --find-links /opt/wheels \
		-r requirements-dev.txt -o pylock.toml
	$(PIP) install uv==0.13.9
	$(BIN)/uv lock --upgrade
	$(BIN)/pip-sync --quiet requirements-dev.txt

# Not part of CI: finds a breaking release before a lock refresh does.
test-latest:
	rm -rf $(LATEST)
	$(PYTHON) -m venv $(LATEST)
	$(LATEST)/bin/python -m pip install --quiet --upgrade pip
	$(LATEST)/bin/python -m pip install --quiet --upgrade -e '.[dev]'
	$(LATEST)/bin/python -m pip list --format=freeze
	$(LATEST)/bin/lit -s lit_tests
	$(LATEST)/bin/python -m pytest -n auto -q

clean:
	rm -rf $(VENV) $(LATEST) build *.egg-info .pytest_cache .ruff_cache
