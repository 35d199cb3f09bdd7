"""The class check: a teacher starts a class through the balancer, students join by its link (fresh, or holding the
other replica's cookie), the teacher steps, and every student's Class page must show the teacher's tokens; which
replica served each tab is read from the balancer itself."""
from __future__ import annotations

import re
import urllib.request

from deploy.check.haproxy import COOKIE, TAGS
from deploy.check.steps import CheckFailed, Tab, check_deadline, step, token_ids

PROMPT = "/step?prompt=The+capital+of+France+is&cfg_temperature=0"  # greedy: every run steps the same tokens
TEACHER_STEPS = 2
FOLLOW_TIMEOUT_S = 20  # how long a student's page may take to show the teacher's tokens (the app: ~1-2 s)


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
