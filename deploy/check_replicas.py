"""Two autoreg replicas behind HAProxy on this machine: are students spread, and does each stay put?

    python deploy/check_replicas.py [--students 6] [--clicks 3]

Starts two ``streamlit run app.py`` replicas sharing one cookie secret, HAProxy in front of them
with the cookie affinity of ``deploy/haproxy.cfg``, then opens one headless-Chromium context per
student. Each student presses Next token a few times (a click that reached the other replica would find no
session there: the token count would start again from 1), then opens the History tab and downloads the history CSV twice, which only the replica that made it
can serve over plain HTTP (each download is a request of its own for the balancer to route).
``--without-affinity`` drops the cookie rules to show what breaks. Prints JSON: which replica each
student landed on, the token counts each saw, the downloads, and the verdicts; a step that does not
happen in time (the page changed?) ends the check within seconds, named in ``failed_step`` (exit 1). Everything runs
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
DEADLINE_S = 300  # the whole check, whatever the machine's load


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
        out = "".join(line for line in out.splitlines(keepends=True) if not line.strip().startswith("cookie "))
        out = out.replace(" cookie r1", "").replace(" cookie r2", "")
    for i, port in enumerate(backends, start=1):
        out = out.replace(f"server r{i} replica{i}:8501", f"server r{i} 127.0.0.1:{port}")
    return out


def start(stack: ExitStack, args: list[str], log: Path, env: dict | None = None) -> subprocess.Popen:
    handle = stack.enter_context(open(log, "w"))
    proc = subprocess.Popen(args, cwd=ROOT, stdout=handle, stderr=subprocess.STDOUT, env=env)
    stack.callback(lambda: (proc.terminate(), proc.wait(timeout=30)))
    return proc


class CheckFailed(RuntimeError):
    """A step of the check did not happen in time; the message names the student and the step."""


STEP_TIMEOUT_S = 45  # seconds one step may take (a first page load on a cold replica included)


def step(who: str, what: str, action, timeout_s: float = STEP_TIMEOUT_S):
    """Run one browser step; a time-out becomes a message naming the student and the step."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        return action(int(timeout_s * 1000))
    except PlaywrightTimeout as exc:
        raise CheckFailed(f"{who}: {what} did not happen within {timeout_s:.0f} s "
                          "(has the page changed? see the replicas' logs)") from exc


def student(browser, url: str, clicks: int, number: int, downloads: int = 2) -> dict:
    """One student: open the app, press Next token ``clicks`` times, then download the history CSV
    ``downloads`` times (each download is its own HTTP request, so the balancer routes each one)."""
    who = f"student {number}"
    ctx = browser.new_context(viewport={"width": 1200, "height": 900})
    page = ctx.new_page()
    try:
        step(who, "opening the app", lambda t: page.goto(url, timeout=t))
        step(who, "the token strip appearing", lambda t: page.locator(".tokstrip").first.wait_for(timeout=t))
        seen = []
        for i in range(1, clicks + 1):
            step(who, f"click {i}: the Next token button", lambda t: page.get_by_role(
                "button", name="Next token").first.click(timeout=t))
            step(who, f"click {i}: token {i} appearing in the strip", lambda t: page.wait_for_function(
                f"document.querySelectorAll('.tokstrip .gen').length >= {i}", timeout=t))
            seen.append(page.locator(".tokstrip .gen").count())
        replica = next((c["value"] for c in ctx.cookies() if c["name"] == COOKIE), None)
        # The history (and its Download CSV button) is a lazy tab: drawn only once it is opened.
        step(who, "opening the History tab", lambda t: page.get_by_role("tab", name="History").click(timeout=t))
        step(who, "the Download CSV button appearing", lambda t: page.get_by_role(
            "button", name="Download CSV").wait_for(timeout=t))
        rows = [download_rows(page) for _ in range(downloads)]
    finally:
        ctx.close()
    return {"replica": replica, "tokens_seen": seen, "csv_rows": rows}


def download_rows(page) -> int | None:
    """Rows of the history CSV, fetched over plain HTTP from whichever replica the balancer picks.

    The file exists only on the replica that made it: without affinity some of these fail.
    """
    try:
        with page.expect_download(timeout=15_000) as info:
            page.get_by_role("button", name="Download CSV").click(timeout=15_000)
        path = info.value.path()
    except Exception:  # noqa: BLE001 - a failed download is the finding, not a crash
        return None
    return len(Path(path).read_text(encoding="utf-8").strip().splitlines()) - 1


def _log_tails(folder: Path, lines: int = 5) -> str:
    """The last lines of every process's log, to say why a step failed."""
    out = []
    for log in sorted(folder.glob("*.log")):
        tail = log.read_text(errors="replace").strip().splitlines()[-lines:]
        if tail:
            out.append(f"{log.name}: " + " | ".join(tail))
    return ("; " + "; ".join(out)) if out else ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=6, choices=range(2, 21), metavar="2..20")
    parser.add_argument("--clicks", type=int, default=3, choices=range(1, 11), metavar="1..10")
    parser.add_argument("--without-affinity", action="store_true",
                        help="drop the cookie rules, to see what breaks without them")
    args = parser.parse_args()
    haproxy = shutil.which("haproxy") or "/usr/sbin/haproxy"
    if not Path(haproxy).exists():
        sys.exit("haproxy is not installed (Debian: apt-get install haproxy)")
    started, students, failure = time.time(), [], None
    with ExitStack() as stack, tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        env = {**os.environ, "STREAMLIT_SERVER_COOKIE_SECRET": secrets.token_hex(16)}
        ports = [free_port(), free_port()]
        for i, port in enumerate(ports, start=1):
            start(stack, [sys.executable, "-m", "autoreg_ui.serve", "--server.port", str(port),
                          "--server.address", "127.0.0.1", "--server.headless", "true"], tmp / f"r{i}.log", env)
        try:
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
                try:
                    for number in range(1, args.students + 1):
                        if time.time() - started > DEADLINE_S:
                            raise CheckFailed(f"the whole check passed its {DEADLINE_S} s deadline "
                                              f"after {len(students)} students")
                        students.append(student(browser, url, args.clicks, number))
                finally:
                    browser.close()
        except (CheckFailed, RuntimeError) as exc:
            failure = str(exc) + _log_tails(tmp)
    per_replica = {r: sum(s["replica"] == r for s in students) for r in ("r1", "r2")}
    stayed = bool(students) and all(s["tokens_seen"] == list(range(1, args.clicks + 1)) for s in students)
    done = [rows for s in students for rows in s["csv_rows"]]
    right = sum(rows == args.clicks for rows in done)
    print(json.dumps({"affinity": not args.without_affinity, "students": students, "per_replica": per_replica,
                      "downloads_from_the_right_replica": f"{right}/{len(done)}",
                      "spread_across_both": all(per_replica.values()),
                      "every_session_stayed_put": stayed and right == len(done),
                      "failed_step": failure, "seconds": round(time.time() - started, 1)}, indent=2))
    return 1 if failure else 0


if __name__ == "__main__":
    sys.exit(main())
