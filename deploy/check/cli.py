"""Start the replicas, HAProxy and a headless Chromium, run the checks, print JSON."""
from __future__ import annotations

import argparse
import json
import os
import secrets
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from bench.lib import postgres, servers
from bench.lib.browser import CHROMIUM, CHROMIUM_ARGS
from bench.lib.servers import ROOT, free_port
from deploy import check
from deploy.check.affinity import student
from deploy.check.classes import class_check
from deploy.check.haproxy import TAGS, haproxy_binary, haproxy_config
from deploy.check.shared_lesson import shared_lesson
from deploy.check.steps import CheckFailed, check_deadline, log_tails


def wait_healthy(url: str, timeout: float = servers.START_TIMEOUT_S) -> None:
    """Wait for ``url``'s health check; a server that does not answer in time fails the check."""
    if not servers.wait_healthy(url, timeout):
        raise RuntimeError(f"{url} did not become healthy")


def start(stack: ExitStack, args: list[str], log: Path, env: dict | None = None) -> subprocess.Popen:
    """A process of the check, its output in ``log``, stopped (SIGTERM) when ``stack`` closes."""
    handle = stack.enter_context(open(log, "w"))
    proc = subprocess.Popen(args, cwd=ROOT, stdout=handle, stderr=subprocess.STDOUT, env=env)
    stack.callback(lambda: (proc.terminate(), proc.wait(timeout=30)))
    return proc


@contextmanager
def browser_behind_haproxy(stack: ExitStack, tmp: Path, haproxy: Path, front: int, config: str) -> Iterator[tuple]:
    """HAProxy on ``front`` with ``config``, healthy, then a headless Chromium: (the front's URL, the browser)."""
    cfg = tmp / "haproxy.cfg"
    cfg.write_text(config)
    start(stack, [str(haproxy), "-f", str(cfg), "-db"], tmp / "haproxy.log")
    url = f"http://127.0.0.1:{front}"
    wait_healthy(url, timeout=30)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield url, browser
        finally:
            browser.close()


def main_postgres(args) -> int:
    """``--class-db postgres``: a throwaway PostgreSQL, two replicas on it (no replica tags), HAProxy with
    ``deploy/haproxy-shared.cfg`` (cookie stickiness only), and ``shared_lesson``. Prints JSON; exit 1 on a
    failed step or a lesson that lost something."""
    haproxy = haproxy_binary()
    if haproxy is None:
        sys.exit("haproxy is not installed (Debian: apt-get install haproxy)")
    started, lesson, failure = time.time(), None, None
    students = max(2, args.class_students or 4)
    if postgres.server_bin() is None:
        sys.exit(postgres.NOT_INSTALLED)
    cluster = postgres.start_cluster()
    try:
        with ExitStack() as stack, tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            env = {**os.environ, "STREAMLIT_SERVER_COOKIE_SECRET": secrets.token_hex(16),
                   "AUTOREG_CLASS_DB": cluster.dsn}
            env.pop("AUTOREG_REPLICA_TAG", None)
            ports = {r: free_port() for r in TAGS}

            def serve(replica: str) -> subprocess.Popen:
                return start(stack, [sys.executable, "-m", "autoreg_ui.serve", "--server.port", str(ports[replica]),
                                     "--server.address", "127.0.0.1", "--server.headless", "true"],
                             tmp / f"{replica}-{time.time():.0f}.log", env)

            procs = {r: serve(r) for r in TAGS}

            def restart(replica: str) -> None:
                procs[replica].terminate()
                procs[replica].wait(timeout=30)
                procs[replica] = serve(replica)
                wait_healthy(f"http://127.0.0.1:{ports[replica]}")

            try:
                for port in ports.values():
                    wait_healthy(f"http://127.0.0.1:{port}")
                front = free_port()
                config = haproxy_config((ROOT / "deploy" / "haproxy-shared.cfg").read_text(), front,
                                        list(ports.values()), class_routing=False)
                with browser_behind_haproxy(stack, tmp, haproxy, front, config) as (url, browser):
                    lesson = shared_lesson(browser, url, students, cluster.dsn, restart, started)
            except (CheckFailed, RuntimeError) as exc:
                failure = str(exc) + log_tails(tmp)
            except Exception as exc:  # noqa: BLE001 - a browser error is a failed step too
                failure = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}" + log_tails(tmp)
    finally:
        cluster.stop()
    ok = lesson is not None and all(lesson[k] for k in ("students_on_both_replicas", "every_student_followed",
                                                        "every_student_guessed_and_drew", "nothing_lost"))
    print(json.dumps({"class_db": "postgres", "balancer": "deploy/haproxy-shared.cfg (cookie stickiness only)",
                      "lesson": lesson, "ok": ok, "failed_step": failure,
                      "seconds": round(time.time() - started, 1)}, indent=2))
    return 0 if ok and not failure else 1


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m deploy.check", description=check.__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=6, choices=range(2, 21), metavar="2..20")
    parser.add_argument("--clicks", type=int, default=3, choices=range(1, 11), metavar="1..10")
    parser.add_argument("--class-students", type=int, default=4, choices=range(0, 9), metavar="0..8",
                        help="fresh students per class in the class check (two classes, each with one more student who "
                             "holds the other replica's cookie; 0 skips it)")
    parser.add_argument("--without-affinity", action="store_true",
                        help="drop the cookie rules, to see what breaks without them")
    parser.add_argument("--without-class-routing", action="store_true",
                        help="drop the class rules (ignore-persist, use-server), to see a class split without them")
    parser.add_argument("--class-db", choices=("sqlite", "postgres"), default="sqlite",
                        help="postgres: one class across both replicas on a throwaway PostgreSQL (shared_lesson)")
    args = parser.parse_args()
    if args.class_db == "postgres":
        return main_postgres(args)
    haproxy = haproxy_binary()
    if haproxy is None:
        sys.exit("haproxy is not installed (Debian: apt-get install haproxy)")
    started, students, classes, failure = time.time(), [], None, None
    with ExitStack() as stack, tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        env = {**os.environ, "STREAMLIT_SERVER_COOKIE_SECRET": secrets.token_hex(16)}
        ports = [free_port(), free_port()]
        for i, (port, tag) in enumerate(zip(ports, TAGS.values()), start=1):
            # each replica: its own class file (as compose.yaml's volumes) and its own class-code tag
            start(stack, [sys.executable, "-m", "autoreg_ui.serve", "--server.port", str(port),
                          "--server.address", "127.0.0.1", "--server.headless", "true"], tmp / f"r{i}.log",
                  {**env, "AUTOREG_REPLICA_TAG": tag, "AUTOREG_CLASS_DB": str(tmp / f"classes-r{i}.sqlite3")})
        try:
            for port in ports:
                wait_healthy(f"http://127.0.0.1:{port}")
            front = free_port()
            config = haproxy_config((ROOT / "deploy" / "haproxy.cfg").read_text(), front, ports,
                                    affinity=not args.without_affinity, class_routing=not args.without_class_routing)
            with browser_behind_haproxy(stack, tmp, haproxy, front, config) as (url, browser):
                for number in range(1, args.students + 1):
                    check_deadline(started, f"student {number}")
                    students.append(student(browser, url, args.clicks, number))
                if args.class_students:
                    classes = class_check(browser, url, args.class_students, started, not args.without_class_routing)
        except (CheckFailed, RuntimeError) as exc:
            failure = str(exc) + log_tails(tmp)
        except Exception as exc:  # noqa: BLE001 - a browser error (a page that crashed...) is a failed step too
            failure = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}" + log_tails(tmp)
    per_replica = {r: sum(s["replica"] == r for s in students) for r in ("r1", "r2")}
    stayed = bool(students) and all(s["tokens_seen"] == list(range(1, args.clicks + 1)) for s in students)
    done = [rows for s in students for rows in s["csv_rows"]]
    right = sum(rows == args.clicks for rows in done)
    print(json.dumps({"affinity": not args.without_affinity, "class_routing": not args.without_class_routing,
                      "students": students, "per_replica": per_replica,
                      "downloads_from_the_right_replica": f"{right}/{len(done)}",
                      "spread_across_both": all(per_replica.values()),
                      "every_session_stayed_put": stayed and right == len(done),
                      "class": classes,
                      "failed_step": failure, "seconds": round(time.time() - started, 1)}, indent=2))
    return 1 if failure else 0


if __name__ == "__main__":
    sys.exit(main())
