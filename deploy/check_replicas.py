"""Two autoreg replicas behind HAProxy on this machine: are students spread, and does each stay put?

    python deploy/check_replicas.py [--students 6] [--clicks 3]

Starts two ``streamlit run app.py`` replicas sharing one cookie secret, HAProxy in front of them
with the cookie affinity of ``deploy/haproxy.cfg``, then opens one headless-Chromium context per
student. Each student presses Next token a few times (a click that reached the other replica would find no
session there: the token count would start again from 1), then downloads the history CSV, which
only the replica that made it can serve over plain HTTP. ``--without-affinity`` drops the cookie
rules to show what breaks. Prints JSON:
which replica each student landed on, the token counts each saw, and the verdicts. Everything runs
on 127.0.0.1, is bounded in count and time, and stops its processes by itself.
"""
from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from contextlib import ExitStack
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("AUTOREG_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
COOKIE = "AUTOREG_REPLICA"
DEADLINE_S = 600


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_healthy(url: str, timeout: float = 180) -> None:
    end = time.time() + timeout
    while time.time() < end:
        try:
            if urllib.request.urlopen(url + "/_stcore/health", timeout=2).read().strip() == b"ok":
                return
        except OSError:
            time.sleep(0.5)
    raise RuntimeError(f"{url} did not become healthy")


def haproxy_config(template: str, front: int, backends: list[int], affinity: bool = True) -> str:
    """The shipped config with this machine's ports: same rules, loopback addresses (affinity removable)."""
    out = template.replace("bind *:8080", f"bind 127.0.0.1:{front}")
    if not affinity:
        out = "\n".join(line for line in out.splitlines() if not line.strip().startswith("cookie "))
        out = out.replace(" cookie r1", "").replace(" cookie r2", "")
    for i, port in enumerate(backends, start=1):
        out = out.replace(f"server r{i} replica{i}:8501", f"server r{i} 127.0.0.1:{port}")
    return out


def start(stack: ExitStack, args: list[str], log: Path, env: dict | None = None) -> subprocess.Popen:
    handle = stack.enter_context(open(log, "w"))
    proc = subprocess.Popen(args, cwd=ROOT, stdout=handle, stderr=subprocess.STDOUT, env=env)
    stack.callback(lambda: (proc.terminate(), proc.wait(timeout=30)))
    return proc


def student(browser, url: str, clicks: int) -> dict:
    """One student: open the app, press Next token ``clicks`` times, record what the page showed."""
    ctx = browser.new_context(viewport={"width": 1200, "height": 900})
    page = ctx.new_page()
    page.set_default_timeout(180_000)
    page.goto(url)
    page.locator(".tokstrip").first.wait_for()
    seen = []
    for i in range(1, clicks + 1):
        page.get_by_role("button", name="Next token").first.click()
        page.wait_for_function(f"document.querySelectorAll('.tokstrip .gen').length >= {i}")
        seen.append(page.locator(".tokstrip .gen").count())
    replica = next((c["value"] for c in ctx.cookies() if c["name"] == COOKIE), None)
    csv_rows = download_rows(page)
    ctx.close()
    return {"replica": replica, "tokens_seen": seen, "csv_rows": csv_rows}


def download_rows(page) -> int | None:
    """Rows of the history CSV, fetched over plain HTTP from whichever replica the balancer picks.

    The file exists only on the replica that made it: without affinity this fails about half the time.
    """
    try:
        with page.expect_download(timeout=20_000) as info:
            page.get_by_role("button", name="Download CSV").click()
        path = info.value.path()
    except Exception:  # noqa: BLE001 - a failed download is the finding, not a crash
        return None
    return len(Path(path).read_text(encoding="utf-8").strip().splitlines()) - 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=6, choices=range(2, 21), metavar="2..20")
    parser.add_argument("--clicks", type=int, default=3, choices=range(1, 11), metavar="1..10")
    parser.add_argument("--without-affinity", action="store_true",
                        help="drop the cookie rules, to see what breaks without them")
    args = parser.parse_args()
    haproxy = shutil.which("haproxy") or "/usr/sbin/haproxy"
    if not Path(haproxy).exists():
        sys.exit("haproxy is not installed (Debian: apt-get install haproxy)")
    started = time.time()
    with ExitStack() as stack, tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        env = {**os.environ, "STREAMLIT_SERVER_COOKIE_SECRET": secrets.token_hex(16)}
        ports = [free_port(), free_port()]
        for i, port in enumerate(ports, start=1):
            start(stack, [sys.executable, "-m", "autoreg_ui.serve", "--server.port", str(port),
                          "--server.address", "127.0.0.1", "--server.headless", "true"], tmp / f"r{i}.log", env)
        for port in ports:
            wait_healthy(f"http://127.0.0.1:{port}")
        front = free_port()
        cfg = tmp / "haproxy.cfg"
        cfg.write_text(haproxy_config((ROOT / "deploy" / "haproxy.cfg").read_text(), front, ports,
                                      affinity=not args.without_affinity))
        start(stack, [haproxy, "-f", str(cfg), "-db"], tmp / "haproxy.log")
        url = f"http://127.0.0.1:{front}"
        wait_healthy(url, timeout=30)
        from playwright.sync_api import sync_playwright

        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            students = []
            for _ in range(args.students):
                if time.time() - started > DEADLINE_S:
                    break
                students.append(student(browser, url, args.clicks))
            browser.close()
    per_replica = {r: sum(s["replica"] == r for s in students) for r in ("r1", "r2")}
    stayed = all(s["tokens_seen"] == list(range(1, args.clicks + 1)) for s in students)
    downloads = sum(s["csv_rows"] == args.clicks for s in students)
    print(json.dumps({"affinity": not args.without_affinity, "students": students, "per_replica": per_replica,
                      "downloads_from_the_right_replica": f"{downloads}/{len(students)}",
                      "spread_across_both": all(per_replica.values()),
                      "every_session_stayed_put": stayed, "seconds": round(time.time() - started, 1)}, indent=2))


if __name__ == "__main__":
    main()
