"""Students spread over the replicas: each presses Next token a few times and downloads its history CSV twice, which
only the replica that made it can serve (a click or a download that reached the other replica shows)."""
from __future__ import annotations

from pathlib import Path

from deploy.check.haproxy import COOKIE
from deploy.check.steps import step


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
