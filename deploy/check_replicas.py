"""Two autoreg replicas behind HAProxy on this machine: are students spread, does each stay put, and does
every member of a class reach the replica that holds the class?

    python deploy/check_replicas.py [--students 6] [--clicks 3] [--class-students 4]

Starts two ``streamlit run app.py`` replicas sharing one cookie secret, each with its own class file
(``AUTOREG_CLASS_DB``) and its own class-code tag (``AUTOREG_REPLICA_TAG``: A on r1, B on r2), HAProxy in
front of them with the cookie affinity and class routing of ``deploy/haproxy.cfg``, then opens one
headless-Chromium context per student. Each student presses Next token a few times (a click that reached the
other replica would find no session there: the token count would start again from 1), then opens the History
tab and downloads the history CSV twice, which only the replica that made it can serve over plain HTTP (each
download is a request of its own for the balancer to route).

Then the class check (``--class-students N``, 0 skips it), twice: a teacher starts a class through the
balancer, N fresh student contexts (no cookie) and one that already holds the other replica's cookie open the
join link the teacher's page shows and join, the teacher steps twice, and each student's Class page must show
the teacher's tokens. Which replica served a tab is read from the balancer itself: this check's copy of the
config adds a response header naming the server (``X-Autoreg-Server``), read from the join page's response
and from the websocket handshake (the Streamlit session lives on the replica at the other end of that
websocket); the ``AUTOREG_REPLICA`` cookie is reported beside it. The second teacher is a fresh tab whose
first request landed on the other replica, so the second class's code carries the other tag: both classes
staying whole shows routing by the code, not luck.

``--without-affinity`` drops the cookie rules and ``--without-class-routing`` the class rules (``ignore-persist``,
``use-server`` and the class link's Set-Cookie), to show what breaks without them. Prints JSON: which replica each
student landed on, the token counts each saw, the downloads, the classes (per student: the replica, joined or refused,
the teacher's tokens seen or not) and the verdicts; a step that does not happen in time (the page changed?) ends the
check within seconds, named in ``failed_step`` (exit 1). Everything runs on 127.0.0.1, is bounded in count and time,
and stops its processes by itself.
"""
from __future__ import annotations

import argparse
import json
import os
import re
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
TAGS = {"r1": "A", "r2": "B"}  # each replica's AUTOREG_REPLICA_TAG: its class codes start with it
SERVED_BY = "X-Autoreg-Server"  # added by this check's copy of the config: the server that answered
# The whole check, whatever the machine's load. 420 s, not 300: the class check adds two classes (a teacher
# and up to 9 students each, every tab a fresh page load on a 2-core machine; the default run takes about
# 110 s here, the test's runs 70-120 s); a failing step still ends within STEP_TIMEOUT_S of its start.
DEADLINE_S = 420
IDLE = "document.querySelector('[data-testid=stApp]')?.dataset.testScriptState === 'notRunning'"
PROMPT = "/step?prompt=The+capital+of+France+is&cfg_temperature=0"  # greedy: every run steps the same tokens
TEACHER_STEPS = 2
FOLLOW_TIMEOUT_S = 20  # how long a student's page may take to show the teacher's tokens (the app: ~1-2 s)


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


CLASS_RULES = ("ignore-persist ", "use-server ")


def haproxy_config(template: str, front: int, backends: list[int], affinity: bool = True,
                   class_routing: bool = True) -> str:
    """The shipped config with this machine's ports: same rules, loopback addresses (affinity and class routing
    removable), plus one response header naming the server that answered (how the check tells who served a tab)."""
    out = template.replace("bind *:8080", f"bind 127.0.0.1:{front}")
    if not affinity:  # the cookie directive, the servers' cookie values and the class links' Set-Cookie
        out = "".join(line for line in out.splitlines(keepends=True)
                      if not line.strip().startswith("cookie ") and f"{COOKIE}=" not in line)
        out = out.replace(" cookie r1", "").replace(" cookie r2", "")
    if not class_routing:  # ignore-persist, use-server and the class links' Set-Cookie
        out = "".join(line for line in out.splitlines(keepends=True)
                      if not line.strip().startswith(CLASS_RULES) and "txn.class_link" not in line)
    elif not all(f"use-server {r} if {{ urlp(class) -m beg -i {tag} }}" in out for r, tag in TAGS.items()):
        tags = ", ".join(f"{r}: {tag}" for r, tag in TAGS.items())
        raise RuntimeError(f"deploy/haproxy.cfg has no use-server rule per replica tag ({tags}): "
                           "the class check would test nothing")
    out = out.replace("backend autoreg\n", f"backend autoreg\n    http-response set-header {SERVED_BY} %s\n", 1)
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
        # the step page by its name: a bare / opens Start here
        step(who, "opening the step page", lambda t: page.goto(url + "/step", timeout=t))
        step(who, "the token strip appearing", lambda t: page.locator(".tokstrip").first.wait_for(timeout=t))
        seen = []
        for i in range(1, clicks + 1):
            step(who, f"click {i}: the Next token button", lambda t: page.get_by_role(
                "button", name="Next token").first.click(timeout=t))
            step(who, f"click {i}: token {i} appearing in the strip", lambda t, i=i: page.wait_for_function(
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


class Tab:
    """A fresh browser context (no cookie) and its page, noting which server answered it: the page's own
    response and every websocket handshake (read over CDP, since a page cannot see those headers)."""

    def __init__(self, browser, who: str):
        self.who = who
        self.ctx = browser.new_context(viewport={"width": 1200, "height": 900})
        self.page = self.ctx.new_page()
        self.page_from: str | None = None
        self.websockets: list[str | None] = []
        cdp = self.ctx.new_cdp_session(self.page)
        cdp.on("Network.webSocketHandshakeResponseReceived", self._handshake)
        cdp.send("Network.enable")

    def _handshake(self, event: dict) -> None:
        headers = {k.lower(): v for k, v in event.get("response", {}).get("headers", {}).items()}
        self.websockets.append(headers.get(SERVED_BY.lower()))

    def open(self, url: str, what: str) -> None:
        response = step(self.who, what, lambda t: self.page.goto(url, timeout=t))
        self.page_from = response.headers.get(SERVED_BY.lower()) if response else None

    def idle(self, what: str) -> None:
        step(self.who, what, lambda t: self.page.wait_for_function(IDLE, timeout=t))

    def served_by(self) -> str | None:
        """The replica holding this tab's Streamlit session: the far end of its (last) websocket."""
        return self.websockets[-1] if self.websockets else None

    def cookie(self) -> str | None:
        return next((c["value"] for c in self.ctx.cookies() if c["name"] == COOKIE), None)

    def where(self) -> dict:
        return {"cookie": self.cookie(), "page_from": self.page_from, "websocket_to": self.served_by()}

    def close(self) -> None:
        self.ctx.close()


def token_ids(page) -> list[int]:
    """The token ids of the page's first token strip (prompt and generated chips), from the chips' titles."""
    titles = page.eval_on_selector_all(".tokstrip .tok", "els => els.map(e => e.title)")
    return [int(m.group(1)) for m in (re.search(r"\bid (\d+)", t) for t in titles) if m]


def open_teacher(browser, url: str, who: str, avoid: str | None, started: float, attempts: int = 6) -> Tab:
    """A teacher tab on the step page; with ``avoid``, fresh tabs until one's first request lands on the other
    replica (the balancer alternates new visitors, so this takes one or two tries)."""
    for _ in range(attempts):
        check_deadline(started, f"{who}: opening the step page")
        tab = Tab(browser, who)
        try:
            tab.open(url + PROMPT, "opening the step page")
            step(who, "the Next token button appearing",
                 lambda t, tab=tab: tab.page.get_by_role("button", name="Next token").first.wait_for(timeout=t))
            tab.idle("the step page becoming idle")
        except BaseException:
            tab.close()
            raise
        if avoid is None or tab.served_by() not in (avoid, None):
            return tab
        tab.close()
        # without cookie affinity every request is dealt round-robin: a page load that makes an even number of
        # requests would put each fresh tab's websocket on the same replica again, so one plain request in
        # between shifts the turn (with affinity it is one more new visitor, as the rotation expects)
        urllib.request.urlopen(url + "/_stcore/health", timeout=10).read()
    raise CheckFailed(f"{who}: none of {attempts} fresh tabs landed on the replica other than {avoid}")


def start_class(tab: Tab) -> tuple[str, str]:
    """The sidebar's Start a class: the class code and the join link the teacher's page shows."""
    who, page = tab.who, tab.page
    step(who, "pressing Start a class", lambda t: page.get_by_role("button", name="Start a class").click(timeout=t))
    step(who, "the class page appearing", lambda t: page.get_by_role("heading", name="Your class").wait_for(timeout=t))
    shown = page.get_by_text(re.compile(r"/\?class=[A-Z0-9]{6}")).first
    step(who, "the join link appearing", lambda t: shown.wait_for(timeout=t))
    link = re.search(r"\S*/\?class=[A-Z0-9]+", shown.inner_text()).group(0).strip("`")
    return re.search(r"class=([A-Z0-9]+)", link).group(1), link


def join_class(browser, link: str, code: str, number: int, cookie_of: str | None = None) -> tuple[Tab, dict]:
    """A student in a fresh context opens the join link, types a nickname and presses Join: let in, or refused
    (the replica that answered does not hold the class). With ``cookie_of``, the context first holds the
    balancer's cookie for that replica (a student who used the app there before the lesson)."""
    who = f"class {code} student {number}"
    tab = Tab(browser, who)
    page = tab.page
    try:
        if cookie_of:
            tab.ctx.add_cookies([{"name": COOKIE, "value": cookie_of, "url": link.split("/?")[0] + "/"}])
        tab.open(link, "opening the join link")
        tab.idle("the join page becoming idle")
        nickname = page.get_by_label("Nickname", exact=False)
        step(who, "typing a nickname", lambda t: nickname.fill(f"student {number}", timeout=t))
        step(who, "pressing Join", lambda t: page.get_by_role("button", name="Join").click(timeout=t))
        welcome = page.get_by_text(f"You are in class {code}")
        refused = page.locator("[data-testid=stAlertContentError]")
        step(who, "being let in (or refused)", lambda t: welcome.or_(refused).first.wait_for(timeout=t))
        joined = welcome.count() > 0
        out = {"student": number, "came_with_cookie": cookie_of, **tab.where(), "joined": joined,
               "refused_with": None if joined else refused.first.inner_text().strip()}
    except BaseException:
        tab.close()
        raise
    return tab, out


def teacher_steps(tab: Tab, joined: int, steps: int = TEACHER_STEPS) -> tuple[str | None, list[int]]:
    """The teacher sees who joined, then presses Next token ``steps`` times: the class's count line and the
    teacher's token ids."""
    who, page = tab.who, tab.page
    seats = None
    if joined:
        line = page.get_by_text(re.compile(rf"\b{joined} joined · {joined} following"))
        step(who, f"the count of {joined} joined students appearing", lambda t: line.first.wait_for(timeout=t))
        seats = line.first.inner_text().strip()
    step(who, "opening Step through generation", lambda t: page.get_by_role(
        "link", name="Step through generation").first.click(timeout=t))
    for n in range(1, steps + 1):
        step(who, f"step {n}: the Next token button", lambda t: page.get_by_role(
            "button", name="Next token").first.wait_for(timeout=t))
        tab.idle(f"step {n}: the page becoming idle")
        step(who, f"step {n}: pressing Next token", lambda t: page.get_by_role(
            "button", name="Next token").first.click(timeout=t))
        step(who, f"step {n}: token {n} appearing in the strip", lambda t, n=n: page.wait_for_function(
            f"document.querySelectorAll('.tokstrip .gen').length === {n}", timeout=t))
    return seats, token_ids(page)


def sees_teacher(tab: Tab, steps: int = TEACHER_STEPS) -> tuple[int, list[int]]:
    """The token ids the student's Class page shows once it has the teacher's steps (or whatever it shows after
    FOLLOW_TIMEOUT_S: a student who does not follow is the finding, not a failed step)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        tab.page.wait_for_function(f"document.querySelectorAll('.tokstrip .gen').length >= {steps}",
                                   timeout=FOLLOW_TIMEOUT_S * 1000)
    except PlaywrightTimeout:
        pass
    return tab.page.locator(".tokstrip .gen").count(), token_ids(tab.page)


def run_class(browser, url: str, students: int, avoid: str | None, started: float, label: str) -> dict:
    """One class: a teacher (on the replica other than ``avoid``, if given), ``students`` fresh contexts joining
    through the join link and one more that holds the other replica's cookie, two teacher steps; per student,
    the replica that served them and whether they follow."""
    teacher = open_teacher(browser, url, f"teacher of class {label}", avoid, started)
    tabs: list[Tab] = [teacher]
    try:
        code, link = start_class(teacher)
        held_by = next((r for r, tag in TAGS.items() if code.startswith(tag)), None)  # the code names its replica
        other = next((r for r in TAGS if r != held_by), None)
        seats = []
        for number in range(1, students + 2):  # the last one comes back with the other replica's cookie
            check_deadline(started, f"class {code} student {number}: opening the join link")
            tab, seat = join_class(browser, link, code, number, cookie_of=other if number > students else None)
            tabs.append(tab)
            seats.append(seat)
        joined = sum(s["joined"] for s in seats)
        teacher_seats, teacher_ids = teacher_steps(teacher, joined)
        teacher_out = {"replica": teacher.served_by(), "cookie": teacher.cookie(), "sees": teacher_seats,
                       "token_ids": teacher_ids}
        for tab, seat in zip(tabs[1:], seats):
            generated, ids = sees_teacher(tab) if seat["joined"] else (0, [])
            # the replica holding the student's session: the far end of its websocket (no guess from the cookie)
            seat.update(replica=seat["websocket_to"], teacher_tokens_seen=generated,
                        sees_teacher_tokens=bool(ids) and ids == teacher_ids)
    finally:
        for tab in tabs:
            tab.close()
    for seat in seats:
        seat["on_teacher_replica"] = seat["replica"] == held_by
    return {"code": code, "join_link": link, "held_by": held_by,
            "teacher": teacher_out,
            "students": seats,
            "per_replica": {r: sum(s["replica"] == r for s in seats) for r in TAGS}}


def class_check(browser, url: str, students: int, started: float, class_routing: bool) -> dict:
    """Two classes, the second one's teacher on the other replica: each class whole on its own replica?"""
    first = run_class(browser, url, students, None, started, "1")
    second = run_class(browser, url, students, first["held_by"], started, "2")
    classes = [first, second]
    seats = [s for c in classes for s in c["students"]]
    return {"class_routing": class_routing, "replica_tags": TAGS, "classes": classes,
            "classes_on_both_replicas": {c["held_by"] for c in classes} == set(TAGS),
            "students_on_the_wrong_replica": sum(not s["on_teacher_replica"] for s in seats),
            "class_on_one_replica": bool(seats) and all(s["on_teacher_replica"] for s in seats),
            "class_students_following": bool(seats) and all(s["joined"] and s["sees_teacher_tokens"] for s in seats)}


def check_deadline(started: float, next_step: str) -> None:
    if time.time() - started > DEADLINE_S:
        raise CheckFailed(f"the whole check passed its {DEADLINE_S} s deadline before {next_step}")


def pages_now(tabs: list[Tab], chars: int = 600) -> str:
    """What every tab shows when a step failed (its visible text, cut to ``chars``): which page, which notice."""
    out = []
    for tab in tabs:
        try:
            shown = " ".join(tab.page.inner_text("[data-testid=stMain]", timeout=3000).split())
        except Exception as exc:  # noqa: BLE001 - a closed or crashed page says so instead
            shown = f"(no text: {type(exc).__name__})"
        out.append(f"{tab.who} on {tab.served_by()} at {tab.page.url.split('?', 1)[-1]}: {shown[:chars]}")
    return "; pages: " + " || ".join(out)


def _log_tails(folder: Path, lines: int = 5) -> str:
    """The last lines of every process's log, to say why a step failed."""
    out = []
    for log in sorted(folder.glob("*.log")):
        tail = log.read_text(errors="replace").strip().splitlines()[-lines:]
        if tail:
            out.append(f"{log.name}: " + " | ".join(tail))
    return ("; " + "; ".join(out)) if out else ""


# ---------------------------------------------------------------- one class across replicas on PostgreSQL
def _throwaway_postgres():
    """tests/postgres.py's throwaway cluster (initdb in a temp folder, as the postgres user when root)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("autoreg_test_postgres", ROOT / "tests" / "postgres.py")
    module = sys.modules[spec.name] = importlib.util.module_from_spec(spec)  # (its dataclass looks itself up)
    spec.loader.exec_module(module)
    if module.server_bin() is None:
        sys.exit("PostgreSQL's server (initdb, pg_ctl) is not installed (Debian: apt-get install postgresql)")
    return module.start_cluster()


def _stored(dsn: str, code: str) -> dict:
    """What PostgreSQL holds of the class: seats, the teacher's steps, guesses and draws."""
    sys.path.insert(0, str(ROOT))
    from autoreg_server.class_store import ClassStore

    store = ClassStore(dsn)
    try:
        info = store.info(code)
        if info is None:
            return {"class": None}
        questions = [q for q in (store.question(code, qid) for qid in range(1, 1000)) if q is not None][:50]
        return {"version": info.version, "steps": (info.recipe or {}).get("steps"),
                "seats": sorted(s.student for s in store.students(code) if not s.removed),
                "guesses": sorted((q.id, g.student, g.text) for q in questions for g in store.guesses(code, q.id)),
                "draws": sorted((r.id, d.student, d.tokens) for r in store.rounds(code)
                                for d in store.draws(code, r.id))}
    finally:
        store.close()


def _follow(tab: Tab, steps: int, teacher_ids: list[int]) -> dict:
    generated, ids = sees_teacher(tab, steps)
    return {"tokens_seen": generated, "same_text_as_teacher": bool(ids) and ids == teacher_ids}


def _guess(tab: Tab, text: str) -> bool:
    page = tab.page
    box = page.get_by_role("textbox", name="Your guess")
    step(tab.who, "the guess box appearing", lambda t: box.wait_for(timeout=t))
    tab.idle("the guess box becoming idle")
    step(tab.who, "typing a guess", lambda t: box.fill(text, timeout=t))
    step(tab.who, "sending the guess", lambda t: page.get_by_role("button", name="Send my guess").click(timeout=t))
    step(tab.who, "the guess being taken", lambda t: page.get_by_text("is in. You can change it").wait_for(timeout=t))
    return True


def _drew(tab: Tab) -> bool:
    step(tab.who, "drawing for the round", lambda t: tab.page.get_by_text(
        re.compile(r"Your tab drew \(seed \d+\)")).first.wait_for(timeout=t))
    return True


def _teacher_step(teacher: Tab) -> tuple[int, list[int]]:
    """One more Next token on the teacher's step page: (its generated tokens, the teacher's token ids)."""
    page, who = teacher.page, teacher.who
    step(who, "one more step: the Next token button", lambda t: page.get_by_role(
        "button", name="Next token").first.wait_for(timeout=t))
    teacher.idle("one more step: the page becoming idle")
    n = page.locator(".tokstrip .gen").count() + 1
    step(who, f"step {n}: pressing Next token", lambda t: page.get_by_role(
        "button", name="Next token").first.click(timeout=t))
    step(who, f"step {n}: token {n} appearing in the strip", lambda t: page.wait_for_function(
        f"document.querySelectorAll('.tokstrip .gen').length === {n}", timeout=t))
    return n, token_ids(page)


def shared_lesson(browser, url: str, students: int, dsn: str, restart, started: float) -> dict:
    """One class on both replicas: the teacher on one, students pinned half to each (their cookie), every student
    follows two steps, guesses (the reveal takes one more step), draws; then the replica without the teacher
    restarts (``restart(replica)``), its students reload, the teacher steps once more and every student must
    follow it; PostgreSQL must hold every seat, guess and draw it held before the restart."""
    teacher = open_teacher(browser, url, "teacher", None, started)
    tabs: list[Tab] = [teacher]
    try:
        code, link = start_class(teacher)
        seats = []
        for number in range(1, students + 1):  # pinned half to each replica by the balancer's cookie
            check_deadline(started, f"student {number}: opening the join link")
            tab, seat = join_class(browser, link, code, number, cookie_of=f"r{1 + number % 2}")
            tabs.append(tab)
            seats.append(seat)
        pupils = list(zip(tabs[1:], seats))
        joined = sum(s["joined"] for s in seats)
        teacher_seats, teacher_ids = teacher_steps(teacher, joined)
        for tab, seat in pupils:
            seat["before_restart"] = _follow(tab, TEACHER_STEPS, teacher_ids)
        # predict: the teacher asks, every student guesses, the teacher reveals
        page = teacher.page
        step("teacher", "opening the Class page", lambda t: page.get_by_role("link", name="Class").first.click(
            timeout=t))
        step("teacher", "pressing Ask the class", lambda t: page.get_by_role("button", name="Ask the class").click(
            timeout=t))
        for tab, seat in pupils:
            seat["guessed"] = _guess(tab, "Paris")
        step("teacher", f"seeing {joined} answers", lambda t: page.get_by_text(
            f"Answers in: {joined} of {joined}").wait_for(timeout=t))
        step("teacher", "pressing Reveal", lambda t: page.get_by_role("button", name="Reveal").click(timeout=t))
        # sample: every student's tab draws for the round
        step("teacher", "pressing Everyone sample", lambda t: page.get_by_role(
            "button", name="Everyone sample").click(timeout=t))
        step("teacher", f"seeing {joined} draws", lambda t: page.get_by_text(
            f"Draws in: {joined} of {joined}").wait_for(timeout=t), timeout_s=60)
        for tab, seat in pupils:
            seat["drew"] = _drew(tab)
        before = _stored(dsn, code)
        # a replica restarts mid-lesson: the one without the teacher's tab
        held_by = teacher.served_by()
        restarted = next(r for r in TAGS if r != held_by)
        restart_s = time.time()
        restart(restarted)
        restart_s = round(time.time() - restart_s, 1)
        for tab, seat in pupils:
            if seat["websocket_to"] == restarted:
                seat_url = tab.page.url
                tab.open(seat_url, "reloading after the restart")
                welcome = tab.page.get_by_text(f"You are in class {code}")
                step(tab.who, "being in the class again", lambda t, welcome=welcome: welcome.wait_for(timeout=t))
                seat["same_seat_after_restart"] = tab.page.url.split("seat=")[-1] == seat_url.split("seat=")[-1]
        step("teacher", "opening Step through generation", lambda t: page.get_by_role(
            "link", name="Step through generation").first.click(timeout=t))
        steps, teacher_ids = _teacher_step(teacher)
        for tab, seat in pupils:
            seat["after_restart"] = _follow(tab, steps, teacher_ids)
            seat["replica_after"] = tab.served_by()
        after = _stored(dsn, code)
    except CheckFailed as exc:
        raise CheckFailed(str(exc) + pages_now(tabs)) from exc
    finally:
        for tab in tabs:
            tab.close()
    kept = {k: before.get(k) == after.get(k) for k in ("seats", "guesses", "draws")}
    return {"code": code, "join_link": link, "teacher": {"replica": held_by, "sees": teacher_seats,
                                                         "token_ids": teacher_ids, "steps": steps},
            "students": seats, "per_replica": {r: sum(s["websocket_to"] == r for s in seats) for r in TAGS},
            "restarted": restarted, "restart_s": restart_s, "stored_before": before, "stored_after": after,
            "kept_after_restart": kept,
            "students_on_both_replicas": all(any(s["websocket_to"] == r for s in seats) for r in TAGS),
            "every_student_followed": bool(seats) and all(
                s["joined"] and s["before_restart"]["same_text_as_teacher"]
                and s["after_restart"]["same_text_as_teacher"] for s in seats),
            "every_student_guessed_and_drew": bool(seats) and all(s.get("guessed") and s.get("drew") for s in seats),
            "nothing_lost": all(kept.values()) and len(after.get("seats", [])) == len(seats)
            and len(after.get("guesses", [])) == len(seats) and len(after.get("draws", [])) == len(seats)
            and before.get("steps") is not None and before["steps"] < after.get("steps", 0) == steps}


def main_postgres(args) -> int:
    """``--class-db postgres``: a throwaway PostgreSQL, two replicas on it (no replica tags), HAProxy with
    ``deploy/haproxy-shared.cfg`` (cookie stickiness only), and ``shared_lesson``. Prints JSON; exit 1 on a
    failed step or a lesson that lost something."""
    haproxy = shutil.which("haproxy") or "/usr/sbin/haproxy"
    if not Path(haproxy).exists():
        sys.exit("haproxy is not installed (Debian: apt-get install haproxy)")
    started, lesson, failure = time.time(), None, None
    students = max(2, args.class_students or 4)
    cluster = _throwaway_postgres()
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
                cfg = tmp / "haproxy.cfg"
                cfg.write_text(haproxy_config((ROOT / "deploy" / "haproxy-shared.cfg").read_text(), front,
                                              list(ports.values()), class_routing=False))
                start(stack, [haproxy, "-f", str(cfg), "-db"], tmp / "haproxy.log")
                url = f"http://127.0.0.1:{front}"
                wait_healthy(url, timeout=30)
                from playwright.sync_api import sync_playwright

                with sync_playwright() as p:
                    browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                    try:
                        lesson = shared_lesson(browser, url, students, cluster.dsn, restart, started)
                    finally:
                        browser.close()
            except (CheckFailed, RuntimeError) as exc:
                failure = str(exc) + _log_tails(tmp)
            except Exception as exc:  # noqa: BLE001 - a browser error is a failed step too
                failure = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}" + _log_tails(tmp)
    finally:
        cluster.stop()
    ok = lesson is not None and all(lesson[k] for k in ("students_on_both_replicas", "every_student_followed",
                                                        "every_student_guessed_and_drew", "nothing_lost"))
    print(json.dumps({"class_db": "postgres", "balancer": "deploy/haproxy-shared.cfg (cookie stickiness only)",
                      "lesson": lesson, "ok": ok, "failed_step": failure,
                      "seconds": round(time.time() - started, 1)}, indent=2))
    return 0 if ok and not failure else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
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
    haproxy = shutil.which("haproxy") or "/usr/sbin/haproxy"
    if not Path(haproxy).exists():
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
            cfg = tmp / "haproxy.cfg"
            cfg.write_text(haproxy_config((ROOT / "deploy" / "haproxy.cfg").read_text(), front, ports,
                                          affinity=not args.without_affinity,
                                          class_routing=not args.without_class_routing))
            start(stack, [haproxy, "-f", str(cfg), "-db"], tmp / "haproxy.log")
            url = f"http://127.0.0.1:{front}"
            wait_healthy(url, timeout=30)
            from playwright.sync_api import sync_playwright

            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                try:
                    for number in range(1, args.students + 1):
                        check_deadline(started, f"student {number}")
                        students.append(student(browser, url, args.clicks, number))
                    if args.class_students:
                        classes = class_check(browser, url, args.class_students, started,
                                              not args.without_class_routing)
                finally:
                    browser.close()
        except (CheckFailed, RuntimeError) as exc:
            failure = str(exc) + _log_tails(tmp)
        except Exception as exc:  # noqa: BLE001 - a browser error (a page that crashed...) is a failed step too
            failure = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}" + _log_tails(tmp)
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
