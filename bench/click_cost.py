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
and with Streamlit's default ``runner.postScriptGC = true`` (the floor the first figures were read
against; the app turns that option off). Ratios are given against both. A third server, ``bench/bare_step_shape.py``,
draws the step page's own elements per click (about 36 where the bare page draws 5) with no model and no app
code: each page's ``vs_bare_step_shape`` reads its click against that, so the part of the cost that is
Streamlit's for the elements shown is told apart from the part that is the app's own work. The click's latency
goal is against the bare page; its CPU goal (the script thread's CPU, beyond the model's pass) against the
step-shaped floor.

Actions: the bare page's Next token (the floor); the step page's Next token; the attention page's
Next token; the sampling lab's temperature slider (one arrow-key step; Streamlit waits for the
slider to rest before it sends the value, so this includes that debounce) and its Draw again (the
one beside the lab's sliders, which reruns only the pipeline section).
The rounds are interleaved (a few clicks of each page in turn), so a machine whose load drifts
affects every page alike. Prints one JSON object: p50/p95 per action, each next to the bare page's,
as ratios, and against the goals (``bench.lib.goals``).

What else is measured for each click, next to the bare page's (``*_ratio_vs_bare``):

* in the browser: bytes the server sent, element containers on the page, the token strip's HTML, and
  the time from the request to the server's last message of the run;
* inside each server (``bench.lib.in_server.run_timer``, installed by PYTHONPATH): every script run's wall
  time and the CPU time of its own thread, which with the batcher on excludes the model's pass (it runs on the batcher's
  worker thread): the click's server cost beyond the model;
* ``script_run`` (``--script-clicks``, in this process under AppTest, without a browser): the same
  Next token clicks timed, the figure JSON bytes, element count and bytes, the strip's HTML, the model
  pass's own time, and with ``--profile-clicks`` a cProfile of the step page's runs. AppTest reruns
  the whole page where a real click reruns the fragment only; the profile names both parts.

    python -m bench.click_cost --no-browser --script-clicks 10 --profile-clicks 10   # no Chromium
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

from bench.lib.browser import CHROMIUM, CHROMIUM_ARGS
from bench.lib.goals import CLICK_GOALS, STEP_SHAPE_CPU_GOALS
from bench.lib.profiles import per_click_profile
from bench.lib.server_hooks import read_runs, timer_env
from bench.lib.servers import ROOT, cpu_seconds, free_port, local_url, start_server, stop_server
from bench.lib.stats import percentile, rounded

CLICK_TIMEOUT_MS = 60_000
# the step page rebuilt from a link: 300 greedy steps on a prompt that does not reach EOS by then
LONG_TEXT_LINK = "step?prompt=Once+upon+a+time&cfg_temperature=0&cfg_max_new=512&steps=300&seg=1~t0~n512"
NO_REQUEST_MS = 5_000  # a click that sent nothing to the server by then was lost: it is done again
RETRIES = 3
# The bare page runs twice: with the app's own config (the floor the app can be held to) and with the
# Streamlit defaults the app turns off (runner.postScriptGC), the floor the first figures were read against.
STREAMLIT_DEFAULTS = ["runner.postScriptGC=true"]

# Installed before the app loads: counts what the page's websocket sends and receives, with times.
WEBSOCKET_JS = """(() => {
  const Native = window.WebSocket;
  window.__wsIn = 0; window.__wsOut = 0; window.__wsLastOut = null; window.__wsInBytes = 0; window.__wsLastIn = null;
  class Counted extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener('message', (event) => {
        window.__wsIn += 1; window.__wsLastIn = performance.now();
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
      if (requested === null && window.__acted !== null && window.__wsOut > out0
          && window.__wsLastOut >= window.__acted) {
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
                 strip ? strip.outerHTML.length : 0, window.__wsLastIn]);
        return;
      }
      const lost = requested === null && performance.now() - started > NO_REQUEST_MS;
      if (lost || performance.now() - started > TIMEOUT_MS) {
        observer.disconnect(); resolve([window.__acted, requested, null, 0, 0, 0, null]); return;
      }
      requestAnimationFrame(frame);
    };
    requestAnimationFrame(frame);
  });
}""".replace("NO_REQUEST_MS", str(NO_REQUEST_MS)).replace("TIMEOUT_MS", str(CLICK_TIMEOUT_MS))


def _runs(folder: Path, name: str) -> list[tuple[float, float, int]]:
    """A server's timed script runs (``bench.lib.in_server.run_timer``): wall ms, script thread CPU ms, fragment."""
    return [(w, c, f) for w, c, f, _ in read_runs(folder, name)]


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
    server_ms: list[float] = field(default_factory=list)  # from the request to the server's last message
    runs: list[tuple[float, float, int]] = field(default_factory=list)  # the server's script runs (wall, CPU, fragment)


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
        Action("bare_shape_next_token", "bare_shape", "", ".st-key-bare_next button",
               _press(".st-key-bare_next button")),
        Action("step_next_token", "app", "step", ".tokstrip", _press(".st-key-step_next button")),
        # the same click once the text is long: the strip (re-sent on every click) has 300 generated chips
        Action("step_next_token_long_text", "app", LONG_TEXT_LINK, ".tokstrip .tok.gen:nth-child(300)",
               _press(".st-key-step_next button")),
        Action("attention_next_token", "app", "attention", ".st-key-att_next button",
               _press(".st-key-att_next button")),
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
        acted, requested, settled, bytes_in, elements, strip_html, last_in = page.evaluate("window.__settled")
        if requested is None:
            action.lost += 1
            continue
        if acted is None or settled is None:
            break
        action.bytes_in.append(bytes_in)
        if last_in is not None and last_in >= requested:
            action.server_ms.append(last_in - requested)
        action.elements, action.strip_html = elements, strip_html
        return settled - acted, settled - requested
    raise TimeoutError(f"{action.name}: no settled page after {RETRIES} tries (clicks lost: {action.lost}; "
                       f"timeout {CLICK_TIMEOUT_MS / 1000:.0f} s)")


def summary(action: Action) -> dict:
    n = len(action.latencies_ms)
    out = {"clicks": n, "p50_ms": rounded(percentile(action.latencies_ms, 50)),
            "p95_ms": rounded(percentile(action.latencies_ms, 95)),
            "mean_ms": rounded(statistics.fmean(action.latencies_ms)) if n else None,
            "request_to_settled_p50_ms": rounded(percentile(action.request_ms, 50)),
            "server_cpu_ms_per_click": rounded(action.cpu_s * 1000 / n) if n else None,
            "lost_clicks_redone": action.lost,
            "bytes_sent_per_click_p50": percentile(action.bytes_in, 50), "elements_on_page": action.elements,
            "token_strip_html_chars": action.strip_html}
    if action.server_ms:  # the server's run as the browser sees it: its request to the run's last message
        out["request_to_last_message_p50_ms"] = rounded(percentile(action.server_ms, 50))
    if action.runs:  # timed inside the server (run_timer)
        out["server_script_runs_per_click"] = round(len(action.runs) / n, 2) if n else None
        out["server_script_wall_p50_ms"] = rounded(percentile([w for w, _, _ in action.runs], 50))
        out["server_script_thread_cpu_p50_ms"] = rounded(percentile([c for _, c, _ in action.runs], 50))
        out["server_script_fragment_runs"] = sum(f for _, _, f in action.runs)
    return out


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
    import tempfile

    servers = {}
    timers = Path(tempfile.mkdtemp(prefix="autoreg-click-cost-"))
    try:
        servers["app"] = start_server(app_root / "app.py", free_port(), options, cwd=app_root,
                                      env=timer_env(timers, "app"))
        servers["bare"] = start_server(ROOT / "bench" / "bare_page.py", free_port(), options, cwd=app_root,
                                       env=timer_env(timers, "bare"))
        servers["bare_defaults"] = start_server(ROOT / "bench" / "bare_page.py", free_port(),
                                                [*options, *STREAMLIT_DEFAULTS], cwd=app_root,
                                                env=timer_env(timers, "bare_defaults"))
        servers["bare_shape"] = start_server(ROOT / "bench" / "bare_step_shape.py", free_port(), options, cwd=app_root,
                                             env=timer_env(timers, "bare_shape"))
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
                        before, runs_before = cpu_seconds(pid), len(_runs(timers, action.server))
                        for _ in range(n):
                            click_ms, request_ms = measure_once(action, len(action.latencies_ms) + warmup)
                            action.latencies_ms.append(click_ms)
                            action.request_ms.append(request_ms)
                        action.cpu_s += cpu_seconds(pid) - before
                        action.runs += _runs(timers, action.server)[runs_before:]
            finally:
                browser.close()
    finally:
        for proc in servers.values():
            stop_server(proc)
    results = {a.name: summary(a) for a in todo}
    bare = results.pop("bare_next_token")
    bare_defaults = results.pop("bare_next_token_streamlit_defaults")
    shape = results.pop("bare_shape_next_token")
    for name, result in results.items():
        result["vs_bare"] = compare(result, bare, CLICK_GOALS[name])
        result["vs_bare_streamlit_defaults"] = compare(result, bare_defaults, CLICK_GOALS[name])
        result["vs_bare_step_shape"] = same_elements(result, shape, STEP_SHAPE_CPU_GOALS.get(name))
        for key in ("request_to_last_message_p50_ms", "server_script_wall_p50_ms", "server_script_thread_cpu_p50_ms",
                    "bytes_sent_per_click_p50", "elements_on_page", "token_strip_html_chars"):
            mine, floor = result.get(key), bare.get(key)
            if mine and floor:
                result[f"{key.removesuffix('_p50_ms').removesuffix('_p50')}_ratio_vs_bare"] = round(mine / floor, 2)
    return {"bare_page": bare, "bare_page_streamlit_defaults": bare_defaults, "bare_step_shape": shape,
            "pages": results}


def same_elements(page: dict, shape: dict, goal: float | None = None) -> dict:
    """A page against ``bench/bare_step_shape.py`` (the step page's elements, no model, no app code): the share of
    the click's cost that is the app's own, beside the element counts that make the comparison fair or not, and
    with ``goal`` the verdict on the script thread's CPU (the click's cost beyond the model's pass)."""
    def ratio(key):
        return round(page[key] / shape[key], 2) if page.get(key) and shape.get(key) else None

    out = {"server_script_thread_cpu_ratio": ratio("server_script_thread_cpu_p50_ms"),
           "server_cpu_ratio": ratio("server_cpu_ms_per_click"), "latency_p50_ratio": ratio("p50_ms"),
           "elements_on_page": page.get("elements_on_page"), "bare_step_shape_elements_on_page":
           shape.get("elements_on_page")}
    if goal is not None:
        cpu = out["server_script_thread_cpu_ratio"]
        out.update(goal_server_script_thread_cpu_ratio=goal, goal_met=None if cpu is None else cpu <= goal)
    return out


# ---------------------------------------------------------------- the server's side of one click, in process
# The same clicks run under Streamlit's AppTest in this process: the script's run is timed on its own
# thread (wall, and that thread's CPU: with the batcher on, the model's pass runs on the batcher's worker
# thread, so the script thread's CPU is the click's cost beyond the model), and what the run sends is
# read from its protobuf elements (figure JSON, element count and bytes, the token strip's HTML). AppTest
# always reruns the whole page, where a real click reruns only the fragment; the profile says which parts
# of the run are the fragment's (``stepper``).
STEP_PAGE_FILE = "pages/step.py"
SCRIPT_PAGES = {  # name → (script, query parameters, the Next token button's key)
    "bare_next_token": ("bench/bare_page.py", {}, "bare_next"),
    "bare_step_shape_next_token": ("bench/bare_step_shape.py", {}, "bare_next"),
    "step_next_token": ("app.py", {}, "step_next"),
    "step_next_token_long_text": ("app.py", dict(urllib.parse.parse_qsl(LONG_TEXT_LINK.partition("?")[2])),
                                  "step_next"),
}


class _ScriptClock:
    """Times every script run of this process on its own thread (and profiles it when asked)."""

    def __init__(self):
        self.runs: list[tuple[float, float]] = []  # (wall ms, script thread CPU ms)
        self.profile = None

    def __enter__(self):
        from streamlit.runtime.scriptrunner import script_runner
        from streamlit.runtime.scriptrunner.script_cache import ScriptCache
        from streamlit.testing.v1 import app_test

        # AppTest compiles every script afresh on each run (a new ScriptCache per run: ~15 ms of a step click,
        # and new code objects that cProfile then counts once); a server compiles each script once.
        shared = ScriptCache()
        self._app_test, self._cache_class = app_test, app_test.ScriptCache
        app_test.ScriptCache = lambda: shared
        self._cls, self._original = script_runner.ScriptRunner, script_runner.ScriptRunner._run_script
        clock, original = self, self._original

        def timed(runner, *args, **kwargs):
            profile = clock.profile
            if profile is not None:
                profile.enable()
            wall, cpu = time.perf_counter(), time.thread_time()
            try:
                return original(runner, *args, **kwargs)
            finally:
                clock.runs.append(((time.perf_counter() - wall) * 1000, (time.thread_time() - cpu) * 1000))
                if profile is not None:
                    profile.disable()

        self._cls._run_script = timed
        return self

    def __exit__(self, *exc):
        self._cls._run_script = self._original
        self._app_test.ScriptCache = self._cache_class


def _elements(node):
    children = getattr(node, "children", None)
    if isinstance(children, dict):
        for child in children.values():
            yield from _elements(child)
    else:
        yield node


def sent(at) -> dict:
    """What the last run drew: elements, their protobuf bytes, the figures' JSON, the token strip's HTML."""
    elements = list(_elements(at._tree))
    sizes = [e.proto.ByteSize() for e in elements if hasattr(getattr(e, "proto", None), "ByteSize")]
    figures = {c.key or f"chart {i}": len(c.proto.spec) for i, c in enumerate(at.get("plotly_chart"))}
    strips = [len(m.value) for m in [*at.markdown, *at.get("html")] if "tokstrip" in str(getattr(m, "value", ""))]
    return {"elements": len(elements), "element_bytes": sum(sizes), "figure_json_bytes": sum(figures.values()),
            "figures": figures, "token_strip_html_chars": max(strips, default=0)}


def _forward_ms(at) -> float | None:
    from autoreg_ui import keys

    session = at.session_state[keys.SESSION] if keys.SESSION in at.session_state else None
    records = getattr(session, "records", None)
    return records[-1].forward_ms if records else None


def script_cost(clicks: int, warmup: int = 2, profile_clicks: int = 0, top: int = 20,
                only: list[str] | None = None) -> dict:
    """Each page's Next token click run in process (see the comment above): timings per click, what it sends,
    and, with ``profile_clicks``, the step page's cProfile."""
    import cProfile
    import pstats

    from streamlit.testing.v1 import AppTest

    os.environ.setdefault("AUTOREG_MAX_SESSIONS", "0")  # every AppTest is a new tab
    out: dict = {}
    with _ScriptClock() as clock:
        for name, (script, query, button) in SCRIPT_PAGES.items():
            if only is not None and name not in only and not name.startswith("bare"):
                continue
            at = AppTest.from_file(str(ROOT / script), default_timeout=600)
            if script == "app.py":
                at.switch_page(STEP_PAGE_FILE)  # a bare / opens Start here, which has no Next token
            at.query_params.update(query)
            at.run()
            for _ in range(warmup):
                at.button(key=button).click().run()
            clock.runs.clear()
            forward, process_cpu = [], []
            for _ in range(clicks):
                cpu = time.process_time()
                at.button(key=button).click().run()
                process_cpu.append((time.process_time() - cpu) * 1000)
                forward.append(_forward_ms(at))
            if at.exception:
                raise RuntimeError(f"{name}: {at.exception}")
            walls, cpus = [w for w, _ in clock.runs], [c for _, c in clock.runs]
            row = {"clicks": clicks, "script_wall_p50_ms": rounded(percentile(walls, 50)),
                   "script_thread_cpu_p50_ms": rounded(percentile(cpus, 50)),
                   "process_cpu_p50_ms": rounded(percentile(process_cpu, 50)), **sent(at)}
            if any(f is not None for f in forward):
                row["model_pass_p50_ms"] = rounded(percentile([f for f in forward if f is not None], 50))
                row["script_wall_minus_model_pass_p50_ms"] = rounded(percentile(
                    [w - f for w, f in zip(walls, forward) if f is not None], 50))
            if profile_clicks and not name.startswith("bare"):
                clock.profile = cProfile.Profile()
                for _ in range(profile_clicks):
                    at.button(key=button).click().run()
                profile, clock.profile = clock.profile, None
                row["profile"] = per_click_profile(pstats.Stats(profile), profile_clicks, top)
            out[name] = row
    floors = {"vs_bare": out.get("bare_next_token"), "vs_bare_step_shape": out.get("bare_step_shape_next_token")}
    for name, row in out.items():
        for label, floor in floors.items():
            if floor and not name.startswith("bare"):
                row[label] = {key: round(row[key] / floor[key], 2) if floor.get(key) else None
                              for key in ("script_wall_p50_ms", "script_thread_cpu_p50_ms", "process_cpu_p50_ms",
                                          "elements", "element_bytes", "figure_json_bytes", "token_strip_html_chars")}
    return out


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
    parser.add_argument("--script-clicks", type=int, default=10,
                        help="clicks per page run in process under AppTest (server side: script time, figure JSON, "
                             "elements, strip HTML); 0 = skip")
    parser.add_argument("--profile-clicks", type=int, default=0,
                        help="then profile this many of the step page's clicks with cProfile")
    parser.add_argument("--no-browser", action="store_true", help="only the in-process part (no Chromium)")
    args = parser.parse_args(argv)
    if not 1 <= args.clicks <= 200 or not 0 <= args.warmup <= 20:
        parser.error("--clicks must lie in 1..200 and --warmup in 0..20")
    if not 0 <= args.script_clicks <= 200 or not 0 <= args.profile_clicks <= 200:
        parser.error("--script-clicks and --profile-clicks must lie in 0..200")
    load = tuple(round(x, 2) for x in os.getloadavg())
    t0 = time.perf_counter()
    report = {} if args.no_browser else run(args.clicks, args.warmup, max(1, min(args.rounds, args.clicks)),
                                            args.streamlit_option, args.app_root.resolve(), args.only)
    if args.script_clicks:
        report["script_run"] = script_cost(args.script_clicks, args.warmup, args.profile_clicks, only=args.only)
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
