"""One class across both replicas on PostgreSQL: the teacher on one, students pinned half to each; they follow,
guess and draw; the replica without the teacher restarts mid-lesson; PostgreSQL must still hold everything."""
from __future__ import annotations

import re
import time

from deploy.check.classes import TEACHER_STEPS, join_class, open_teacher, sees_teacher, start_class, teacher_steps
from deploy.check.haproxy import TAGS
from deploy.check.steps import CheckFailed, Tab, check_deadline, pages_now, step, token_ids


def _stored(dsn: str, code: str) -> dict:
    """What PostgreSQL holds of the class: seats, the teacher's steps, guesses and draws."""
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
        # the Class page's own Ask (its key), once the page is there: the step page's desk has an Ask the class
        # too, and a click on it while the Class page loads is lost with the page it was on
        step("teacher", "the Class page opening", lambda t: page.wait_for_url(re.compile(r"/class\b"), timeout=t))
        teacher.idle("the Class page becoming idle")
        ask = page.locator(".st-key-class_ask").get_by_role("button", name="Ask the class")
        step("teacher", "pressing Ask the class", lambda t: ask.click(timeout=t))
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
