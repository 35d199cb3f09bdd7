"""Browser steps that end in seconds when they do not happen, and the tabs they act in.

A step that times out becomes ``CheckFailed`` naming the student and the step; every tab notes which replica
answered it (its page's response and every websocket handshake), read from the header the check's HAProxy config
adds.
"""
from __future__ import annotations

import re
import time
from pathlib import Path

from deploy.check.haproxy import COOKIE, SERVED_BY

# The whole check, whatever the machine's load. 420 s, not 300: the class check adds two classes (a teacher
# and up to 9 students each, every tab a fresh page load on a 2-core machine; the default run takes about
# 110 s here, the test's runs 70-120 s); a failing step still ends within STEP_TIMEOUT_S of its start.
DEADLINE_S = 420
IDLE = "document.querySelector('[data-testid=stApp]')?.dataset.testScriptState === 'notRunning'"


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


def log_tails(folder: Path, lines: int = 5) -> str:
    """The last lines of every process's log, to say why a step failed."""
    out = []
    for log in sorted(folder.glob("*.log")):
        tail = log.read_text(errors="replace").strip().splitlines()[-lines:]
        if tail:
            out.append(f"{log.name}: " + " | ".join(tail))
    return ("; " + "; ".join(out)) if out else ""
