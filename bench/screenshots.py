"""Screenshots of the app for the README and docs/, made in one command (``make screenshots``).

The pictures in the docs go stale each time a page changes; this script makes all of them again from the
running app, the way a visitor sees it: every page of ``site_pages.SITE_PAGES`` at 1280×800 on one replayed
session (and the step page at 1280×1000 for the README), the step page in presenter mode at 1280×720 (a
projector), and a class seen from both sides: the teacher's desk at 1280×800 and a student's phone at 390×844.
It starts its own server on a free port with a throwaway class file and stops it at the end. PNG at 1x, so
the pictures stay small.
"""
from __future__ import annotations

import argparse
import json
import re
import signal
import sys
import tempfile
import time
from pathlib import Path

from autoreg_ui.site_pages import SITE_PAGES
from bench.lib.browser import CHROMIUM, CHROMIUM_ARGS
from bench.lib.servers import ROOT, free_port, local_url, start_server, stop_server

OUT = ROOT / "docs" / "img"
DESK = {"width": 1280, "height": 800}
PROJECTOR = {"width": 1280, "height": 720}
README_PICTURE = {"width": 1280, "height": 1000}
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True,
         "device_scale_factor": 1,
         "user_agent": "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 "
                       "(KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1"}
# one session every page opens from: a prompt, greedy decoding and five steps, replayed from the link
SESSION = "prompt=The+capital+of+France+is&cfg_temperature=0&steps=5"
IDLE = "document.querySelector('[data-testid=stApp]')?.dataset.testScriptState === 'notRunning'"
SETTLE_S = 1.5  # plotly draws its charts after the script run ends
CHARTS_DRAWN = "[...document.querySelectorAll('[data-testid=stPlotlyChart]')].every(c => c.querySelector('.main-svg'))"


def _settle(page) -> None:
    """Wait until the script run is over and the charts had time to draw; close any toast (it would cover the
    page's top right corner)."""
    page.wait_for_function(IDLE)
    page.wait_for_load_state("networkidle")
    time.sleep(SETTLE_S)
    page.wait_for_function(IDLE)
    page.wait_for_function(CHARTS_DRAWN)
    for close in page.locator("[data-testid=stToast] button").all():
        close.click()
    if page.locator("[data-testid=stToast]").count():
        page.wait_for_selector("[data-testid=stToast]", state="detached")


def _shot(page, out: Path, name: str) -> Path:
    path = out / name
    page.screenshot(path=str(path))
    return path


def every_page(browser, url: str, out: Path) -> list[Path]:
    """Each page of the registry at 1280×800, opened from the same replayed session."""
    ctx = browser.new_context(viewport=DESK)
    page = ctx.new_page()
    page.set_default_timeout(120_000)
    shots = []
    for site_page in SITE_PAGES:
        page.goto(f"{url}/{site_page.url_path}?{SESSION}")
        _settle(page)
        shots.append(_shot(page, out, f"page-{site_page.url_path}.png"))
    # the README's picture: the step page as it opens, its step row, strip and this step's chart, on a taller window
    page.set_viewport_size(README_PICTURE)
    page.goto(f"{url}/step?{SESSION}")
    _settle(page)
    page.get_by_text("Notice · Try · Ask").first.click()  # fold the guide, so the chart fits
    _settle(page)
    page.evaluate("[window, ...document.querySelectorAll('[data-testid=stMain], section.main')]"
                  ".forEach(el => el.scrollTo(0, 0))")  # the click scrolled to the guide: back to the top
    shots.append(_shot(page, out, "step-after-five-tokens.png"))
    ctx.close()
    return shots


def presenter(browser, url: str, out: Path) -> list[Path]:
    """The step page in presenter mode at a projector's 1280×720."""
    ctx = browser.new_context(viewport=PROJECTOR)
    page = ctx.new_page()
    page.set_default_timeout(120_000)
    page.goto(f"{url}/step?{SESSION}&present=1")
    _settle(page)  # presenter mode reloads once into the dark theme
    page.wait_for_url(re.compile("embed_options=dark_theme"))
    _settle(page)
    shots = [_shot(page, out, "presenter-step.png")]
    ctx.close()
    return shots


def a_class(browser, url: str, out: Path) -> list[Path]:
    """A teacher starts a class and takes three steps; a student joins on a phone and follows; the teacher asks
    the class to guess the next token."""
    teacher_ctx = browser.new_context(viewport=DESK)
    teacher = teacher_ctx.new_page()
    teacher.set_default_timeout(120_000)
    teacher.goto(f"{url}/step?prompt=The+capital+of+France+is&cfg_temperature=0")
    teacher.get_by_role("button", name="Next token").first.wait_for()
    _settle(teacher)
    teacher.get_by_role("button", name="Start a class").click()
    teacher.get_by_role("heading", name="Your class").wait_for()
    _settle(teacher)
    code = re.search(r"class=([A-Z0-9]{6})", teacher.url).group(1)
    teacher.get_by_role("link", name="Step through generation").first.click()
    teacher.get_by_role("button", name="Next token").first.wait_for()
    for n in range(1, 4):
        _settle(teacher)
        teacher.get_by_role("button", name="Next token").first.click()
        teacher.wait_for_function(f"document.querySelectorAll('.tokstrip .gen').length === {n}")

    student_ctx = browser.new_context(**PHONE)
    student = student_ctx.new_page()
    student.set_default_timeout(120_000)
    student.goto(f"{url}/?class={code}")
    student.get_by_role("button", name="Join").wait_for()
    _settle(student)
    shots = [_shot(student, out, "class-student-join-phone.png")]
    student.get_by_role("button", name="Join").click()
    student.get_by_text(f"You are in class {code}").wait_for()
    student.locator("[data-testid=stPlotlyChart]").first.wait_for()  # the teacher's last step, drawn
    _settle(student)
    shots.append(_shot(student, out, "class-student-phone.png"))

    teacher.get_by_role("link", name="Class").first.click()
    teacher.get_by_role("heading", name="Your class").wait_for()
    _settle(teacher)
    shots.append(_shot(teacher, out, "class-teacher.png"))

    # the teacher asks the class to predict the next token: the student's phone shows the guess box
    teacher.get_by_role("button", name="Ask the class").click()
    student.locator("input[aria-label='Your guess']").wait_for()
    _settle(student)
    shots.append(_shot(student, out, "class-student-guess-phone.png"))
    teacher_ctx.close()
    student_ctx.close()
    return shots


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.screenshots", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT, help=f"folder for the PNG files (default {OUT})")
    parser.add_argument("--port", type=int, default=0, help="port for the app (default: a free one)")
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    args.out.mkdir(parents=True, exist_ok=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # a stopped run still stops its server (finally)
    with tempfile.TemporaryDirectory(prefix="autoreg-screenshots-") as tmp:
        env = {"AUTOREG_CLASS_DB": str(Path(tmp) / "classes.sqlite3")}
        proc = start_server(ROOT / "app.py", args.port or free_port(), env=env)
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                url = local_url(proc)
                shots = every_page(browser, url, args.out) + presenter(browser, url, args.out)
                shots += a_class(browser, url, args.out)
                browser.close()
        finally:
            stop_server(proc)
    sizes = {str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path): path.stat().st_size
             for path in shots}
    json.dump({"screenshots": sizes, "total_bytes": sum(sizes.values())}, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
