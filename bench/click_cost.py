"""What one click costs, in the browser and on the server, against a bare page of the same shape.

    python -m bench.click_cost                 # 20 measured clicks per page (after 2 warm-up clicks)
    python -m bench.click_cost --clicks 8

Starts two servers on 127.0.0.1 from the repository root (so both read the same
``.streamlit/config.toml``): the app, and ``bench/bare_page.py`` (a fragment with a button, a token
strip and a 15-bar plotly chart, no model). Drives both from headless Chromium (Debian's, with the
browser tests' flags) and measures, for each action:

* **click to settled**: from the browser's click (or key press) event to the moment Streamlit's
  script state is back to "not running", no element is stale, and two frames have been painted;
* **server CPU per click**: the server process's user + system CPU time over the measured clicks.

The bare page is measured twice: served with the app's own ``.streamlit/config.toml`` (the floor),
and with Streamlit's default ``runner.postScriptGC = true`` (the floor of issue 9's first figures;
the app turns that option off). Ratios are given against both.

Actions: the bare page's Next token (the floor); the step page's Next token; the attention page's
Next token; the sampling lab's temperature slider (one arrow-key step; Streamlit waits for the
slider to rest before it sends the value, so this includes that debounce) and its Draw again (the
one beside the lab's sliders, which reruns only the pipeline section).
The rounds are interleaved (a few clicks of each page in turn), so a machine whose load drifts
affects every page alike. Prints one JSON object: p50/p95 per action, each next to the bare page's,
as ratios, and against the goals of issue 9.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.server import cpu_seconds, free_port, local_url, start_server, stop_server  # noqa: E402

CHROMIUM = os.environ.get("AUTOREG_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
CLICK_TIMEOUT_MS = 60_000
# the step page rebuilt from a link: 300 greedy steps on a prompt that does not reach EOS by then
LONG_TEXT_LINK = "step?prompt=Once+upon+a+time&cfg_temperature=0&cfg_max_new=512&steps=300&seg=1~t0~n512"
NO_REQUEST_MS = 5_000  # a click that sent nothing to the server by then was lost: it is done again
RETRIES = 3
# The bare page runs twice: with the app's own config (the floor the app can be held to) and with the
# Streamlit defaults the app turns off (runner.postScriptGC), the floor issue 9's first figures used.
STREAMLIT_DEFAULTS = ["runner.postScriptGC=true"]
# goals of issue 9, as ratios to the bare page: (latency p50, server CPU); None = no goal
GOALS = {"step_next_token": (1.5, 2.0), "step_next_token_long_text": (1.5, 2.0), "attention_next_token": (2.0, None),
         "lab_slider": (2.0, None), "lab_draw_again": (2.0, None)}

# Installed before the app loads: counts what the page's websocket sends and receives, with times.
WEBSOCKET_JS = """(() => {
  const Native = window.WebSocket;
  window.__wsIn = 0; window.__wsOut = 0; window.__wsLastOut = null; window.__wsInBytes = 0;
  class Counted extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener('message', (event) => {
        window.__wsIn += 1;
        const data = event.data;
        window.__wsInBytes += data.byteLength !== undefined ? data.byteLength
                              : (data.size !== undefined ? data.size : String(data).length);
      });
    }
    send(data) {
      window.__wsOut += 1; window.__wsLastOut = performance.now(); window.__wsInAtLastOut = window.__wsIn;
      return super.send(data);
    }
  }
  window.WebSocket = Counted;
})();"""

# Arm before the action: resolves with (event time, request time, settled time) in the page's clock.
# The request is the browser's message to the server (for a slider, Streamlit sends it once the
# slider rests). Settled: the server has answered since the request, Streamlit's script state is
# not "running", nothing is stale, and two painted frames passed with no new message and no change
# to the page.
ARM_JS = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  window.__acted = null;
  const out0 = window.__wsOut, bytes0 = window.__wsInBytes;
  const mark = () => { if (window.__acted === null) window.__acted = performance.now(); };
  document.addEventListener('pointerdown', mark, {capture: true, once: true});
  document.addEventListener('keydown', mark, {capture: true, once: true});
  window.__settled = new Promise(resolve => {
    let changes = 0, quietFrames = 0, last = '', inAtRequest = null, requested = null;
    const observer = new MutationObserver(() => { changes += 1; });
    observer.observe(app, {childList: true, characterData: true, subtree: true, attributes: true});
    const started = performance.now();
    const frame = () => {
      if (requested === null && window.__acted !== null && window.__wsOut > out0 && window.__wsLastOut >= window.__acted) {
        requested = window.__wsLastOut; inAtRequest = window.__wsInAtLastOut;  // counted when it was sent
      }
      const answered = requested !== null && window.__wsIn > inAtRequest;
      const ready = answered && app.getAttribute('data-test-script-state') !== 'running'
                    && !document.querySelector('[data-stale="true"]');
      const now = `${changes}/${window.__wsIn}`;
      quietFrames = ready && now === last ? quietFrames + 1 : 0;
      last = now;
      if (quietFrames >= 2) {
        observer.disconnect();
        const strip = document.querySelector('.tokstrip');
        resolve([window.__acted, requested, performance.now(), window.__wsInBytes - bytes0,
                 app.querySelectorAll('[data-testid="stElementContainer"]').length,
                 strip ? strip.outerHTML.length : 0]);
        return;
      }
      const lost = requested === null && performance.now() - started > NO_REQUEST_MS;
      if (lost || performance.now() - started > TIMEOUT_MS) {
        observer.disconnect(); resolve([window.__acted, requested, null, 0, 0, 0]); return;
      }
      requestAnimationFrame(frame);
    };
    requestAnimationFrame(frame);
  });
}""".replace("NO_REQUEST_MS", str(NO_REQUEST_MS)).replace("TIMEOUT_MS", str(CLICK_TIMEOUT_MS))


@dataclass
class Action:
    """One measured action: a page of one server and what doing it once means."""

    name: str
    server: str  # "app" or "bare"
    path: str  # the page's url path
    ready: str  # a CSS selector present once the page has loaded
    do: callable
    latencies_ms: list[float] = field(default_factory=list)  # from the click (or key press)
    request_ms: list[float] = field(default_factory=list)  # from the browser's request to the server
    cpu_s: float = 0.0
    lost: int = 0  # clicks the browser never sent (done again)
    page: object = None
    bytes_in: list[int] = field(default_factory=list)  # what the server sent the browser for one click
    elements: int = 0  # Streamlit element containers on the page once settled (the last click)
    strip_html: int = 0  # characters of the token strip's HTML once settled (the last click; 0 = none)


def _press(selector: str):
    return lambda page, i: page.locator(selector).first.click()


def _nudge_slider(selector: str):
    """One arrow-key step, alternating right and left, so the value moves and comes back."""
    def act(page, i):
        thumb = page.locator(selector).first
        thumb.focus()
        thumb.press("ArrowRight" if i % 2 == 0 else "ArrowLeft")
    return act


def actions() -> list[Action]:
    return [
        Action("bare_next_token", "bare", "", ".st-key-bare_next button", _press(".st-key-bare_next button")),
        Action("bare_next_token_streamlit_defaults", "bare_defaults", "", ".st-key-bare_next button",
               _press(".st-key-bare_next button")),
        Action("step_next_token", "app", "step", ".tokstrip", _press(".st-key-step_next button")),
        # the same click once the text is long: the strip (re-sent on every click) has 300 generated chips
        Action("step_next_token_long_text", "app", LONG_TEXT_LINK, ".tokstrip .tok.gen:nth-child(300)",
               _press(".st-key-step_next button")),
        Action("attention_next_token", "app", "attention", ".st-key-att_next button", _press(".st-key-att_next button")),
        Action("lab_slider", "app", "sampling", ".st-key-lab_temperature input[type=range]",
               _nudge_slider(".st-key-lab_temperature input[type=range]")),
        Action("lab_draw_again", "app", "sampling", ".st-key-lab_redraw button", _press(".st-key-lab_redraw button")),
    ]


def measure_once(action: Action, i: int) -> tuple[float, float]:
    """(click to settled, request to settled) in ms; a click the browser did not send is done again."""
    page = action.page
    for _ in range(RETRIES):
        page.evaluate(ARM_JS)
        action.do(page, i)
        acted, requested, settled, bytes_in, elements, strip_html = page.evaluate("window.__settled")
        if requested is None:
            action.lost += 1
            continue
        if acted is None or settled is None:
            break
        action.bytes_in.append(bytes_in)
        action.elements, action.strip_html = elements, strip_html
        return settled - acted, settled - requested
    raise TimeoutError(f"{action.name}: no settled page after {RETRIES} tries (clicks lost: {action.lost}; "
                       f"timeout {CLICK_TIMEOUT_MS / 1000:.0f} s)")


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))]


def summary(action: Action) -> dict:
    n = len(action.latencies_ms)
    return {"clicks": n, "p50_ms": _r(percentile(action.latencies_ms, 50)),
            "p95_ms": _r(percentile(action.latencies_ms, 95)),
            "mean_ms": _r(statistics.fmean(action.latencies_ms)) if n else None,
            "request_to_settled_p50_ms": _r(percentile(action.request_ms, 50)),
            "server_cpu_ms_per_click": _r(action.cpu_s * 1000 / n) if n else None, "lost_clicks_redone": action.lost,
            "bytes_sent_per_click_p50": percentile(action.bytes_in, 50), "elements_on_page": action.elements,
            "token_strip_html_chars": action.strip_html}


def _r(x):
    return None if x is None else round(x, 1)


def compare(page: dict, bare: dict, goal: tuple[float | None, float | None]) -> dict:
    def ratio(key):
        return round(page[key] / bare[key], 2) if page.get(key) and bare.get(key) else None

    out = {"latency_p50_ratio": ratio("p50_ms"), "latency_p95_ratio": ratio("p95_ms"),
           "server_cpu_ratio": ratio("server_cpu_ms_per_click")}
    latency_goal, cpu_goal = goal
    out["goal_latency_p50_ratio"] = latency_goal
    out["goal_server_cpu_ratio"] = cpu_goal
    met = [out["latency_p50_ratio"] is not None and out["latency_p50_ratio"] <= latency_goal]
    if cpu_goal is not None:
        met.append(out["server_cpu_ratio"] is not None and out["server_cpu_ratio"] <= cpu_goal)
    out["goal_met"] = all(met)
    return out


def run(clicks: int, warmup: int, rounds: int, options: list[str], app_root: Path = ROOT,
        only: list[str] | None = None) -> dict:
    from playwright.sync_api import sync_playwright

    if not (Path(CHROMIUM).exists()):
        raise SystemExit(f"Chromium not found at {CHROMIUM}: install Debian's 'chromium' package.")
    servers = {}
    try:
        servers["app"] = start_server(app_root / "app.py", free_port(), options, cwd=app_root)
        servers["bare"] = start_server(ROOT / "bench" / "bare_page.py", free_port(), options, cwd=app_root)
        servers["bare_defaults"] = start_server(ROOT / "bench" / "bare_page.py", free_port(),
                                                [*options, *STREAMLIT_DEFAULTS], cwd=app_root)
        todo = [a for a in actions() if only is None or a.name in only or a.server.startswith("bare")]
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                for action in todo:
                    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
                    ctx.add_init_script(WEBSOCKET_JS)
                    action.page = ctx.new_page()
                    action.page.set_default_timeout(CLICK_TIMEOUT_MS)
                    action.page.goto(f"{local_url(servers[action.server])}/{action.path}")
                    action.page.locator(action.ready).first.wait_for()
                    for i in range(warmup):
                        action.page.bring_to_front()  # a tab in the background gets no animation frames
                        measure_once(action, i)
                per_round = [clicks // rounds + (r < clicks % rounds) for r in range(rounds)]
                for n in per_round:
                    for action in todo:
                        pid = servers[action.server].pid
                        action.page.bring_to_front()
                        before = cpu_seconds(pid)
                        for _ in range(n):
                            click_ms, request_ms = measure_once(action, len(action.latencies_ms) + warmup)
                            action.latencies_ms.append(click_ms)
                            action.request_ms.append(request_ms)
                        action.cpu_s += cpu_seconds(pid) - before
            finally:
                browser.close()
    finally:
        for proc in servers.values():
            stop_server(proc)
    results = {a.name: summary(a) for a in todo}
    bare = results.pop("bare_next_token")
    bare_defaults = results.pop("bare_next_token_streamlit_defaults")
    for name, result in results.items():
        result["vs_bare"] = compare(result, bare, GOALS[name])
        result["vs_bare_streamlit_defaults"] = compare(result, bare_defaults, GOALS[name])
    return {"bare_page": bare, "bare_page_streamlit_defaults": bare_defaults, "pages": results}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clicks", type=int, default=20, help="measured clicks per action (1..200)")
    parser.add_argument("--warmup", type=int, default=2, help="clicks per action before measuring")
    parser.add_argument("--rounds", type=int, default=4, help="the clicks are split into this many interleaved rounds")
    parser.add_argument("--streamlit-option", action="append", default=[], metavar="NAME=VALUE",
                        help="passed to both servers, e.g. runner.postScriptGC=true")
    parser.add_argument("--app-root", type=Path, default=ROOT,
                        help="run the app from another checkout (e.g. the previous commit, for a before/after); "
                             "both servers read that checkout's .streamlit/config.toml")
    parser.add_argument("--only", action="append", choices=[a.name for a in actions() if a.server == "app"],
                        help="measure only these actions (and the bare page)")
    args = parser.parse_args(argv)
    if not 1 <= args.clicks <= 200 or not 0 <= args.warmup <= 20:
        parser.error("--clicks must lie in 1..200 and --warmup in 0..20")
    load = tuple(round(x, 2) for x in os.getloadavg())
    t0 = time.perf_counter()
    report = run(args.clicks, args.warmup, max(1, min(args.rounds, args.clicks)), args.streamlit_option,
                 args.app_root.resolve(), args.only)
    report["machine"] = {"cpu_count": os.cpu_count(), "load_average_at_start": load,
                         "load_average_at_end": tuple(round(x, 2) for x in os.getloadavg()),
                         "torch_threads_env": os.environ.get("AUTOREG_TORCH_THREADS"),
                         "omp_wait_policy_env": os.environ.get("OMP_WAIT_POLICY")}
    report["settings"] = {"clicks": args.clicks, "warmup": args.warmup, "rounds": args.rounds,
                          "streamlit_options": args.streamlit_option, "app_root": str(args.app_root),
                          "seconds": round(time.perf_counter() - t0, 1)}
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
