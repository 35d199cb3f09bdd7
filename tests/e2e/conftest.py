"""Start the real app with `streamlit run` and drive it in Debian's headless Chromium."""
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = os.environ.get("AUTOREG_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(log_name: str, port: int | None = None, env: dict | None = None) -> tuple[subprocess.Popen, str]:
    """A fresh app server (the way `make run` starts it) on ``port`` or a free one; waits until it is healthy."""
    port = port or _free_port()
    ARTIFACTS.mkdir(exist_ok=True)
    log = open(ARTIFACTS / log_name, "a" if port else "w")  # a restart on the same port keeps the first log
    proc = subprocess.Popen(
        [sys.executable, "-m", "autoreg_ui.serve", "--server.port", str(port),
         "--server.address", "127.0.0.1", "--server.headless", "true"],
        cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})})
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 120
    while time.time() < deadline:
        try:
            if urllib.request.urlopen(url + "/_stcore/health", timeout=2).read().strip() == b"ok":
                return proc, url
        except OSError:
            time.sleep(0.5)
    proc.terminate()
    pytest.fail(f"the app did not start; see test-artifacts/{log_name}")


def stop_server(proc: subprocess.Popen) -> None:
    proc.terminate()
    proc.wait(timeout=20)


@pytest.fixture(scope="session")
def app_url():
    proc, url = start_server("streamlit-server.log")
    yield url
    stop_server(proc)


@pytest.fixture(scope="session")
def browser():
    if not (Path(CHROMIUM).exists() or shutil.which(CHROMIUM)):
        pytest.skip(f"Chromium not found at {CHROMIUM}: install Debian's 'chromium' package "
                    "(make test does this when it can) to run the browser tests.")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser, app_url):
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = ctx.new_page()
    pg.set_default_timeout(120_000)
    yield pg
    ctx.close()


def start_class(teacher, url: str) -> tuple[str, str]:
    """The teacher opens the step page on the capital-of-France prompt and starts a class: (its code, the join
    link's text as the Class page shows it)."""
    import re

    teacher.goto(f"{url}/step?prompt=The+capital+of+France+is&cfg_temperature=0")
    teacher.get_by_role("button", name="Next token").first.wait_for()
    teacher.get_by_role("button", name="Start a class").click()
    teacher.get_by_role("heading", name="Your class").wait_for()
    join = teacher.get_by_text(re.compile(r"/\?class=[A-Z0-9]{6}")).first.inner_text()
    return re.search(r"class=([A-Z0-9]{6})", join).group(1), join
