"""Presses in Chromium, as quick as people make them: only an opened address rewinds a tab (the back and forward
buttons do, a late address arriving with a click does not), and a teacher's quick clicks never move the class's
text back."""
import asyncio
import re
import threading

import pytest

from .conftest import start_server, stop_server

pytestmark = pytest.mark.e2e

IDLE = "document.querySelector('[data-testid=stApp]')?.dataset.testScriptState === 'notRunning'"
RUNNING = "document.querySelector('[data-testid=stApp]')?.dataset.testScriptState === 'running'"
DESK = {"width": 1400, "height": 1000}
# every 100 ms, the number of generated tokens the page shows, kept in the page (read at the end)
WATCH = """() => { window.__seen = []; window.__watch = setInterval(() =>
    window.__seen.push(document.querySelectorAll('.tokstrip .gen').length), 100); }"""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    db = tmp_path_factory.mktemp("presses") / "classes.sqlite3"
    proc, url = start_server("streamlit-presses.log", env={"AUTOREG_CLASS_DB": str(db)})
    yield url
    stop_server(proc)


@pytest.fixture(scope="module")
def pg_server():
    """The same app with its classes in a throwaway PostgreSQL (the store replicas share)."""
    from bench.lib import postgres

    if postgres.server_bin() is None:
        pytest.skip("PostgreSQL's server is not installed: Debian's 'postgresql' (make test installs it when it can)")
    cluster = postgres.start_cluster()
    try:
        proc, url = start_server("streamlit-presses-postgres.log", env={"AUTOREG_CLASS_DB": cluster.dsn})
        try:
            yield url
        finally:
            stop_server(proc)
    finally:
        cluster.stop()


@pytest.fixture(params=["sqlite", "postgres"])
def class_server(request):
    """A class-mode server on each store: SQLite (one process) and PostgreSQL."""
    return request.getfixturevalue("server" if request.param == "sqlite" else "pg_server")


def _new(browser):
    ctx = browser.new_context(viewport=DESK)
    page = ctx.new_page()
    page.set_default_timeout(60_000)
    return ctx, page


def _idle(page) -> None:
    page.wait_for_function(IDLE)


def _gen(page) -> int:
    return page.locator(".tokstrip .gen").count()


def _wait_gen(page, n: int, timeout: int = 30_000) -> None:
    page.wait_for_function(f"document.querySelectorAll('.tokstrip .gen').length === {n}", timeout=timeout)


def _settled_gen(page) -> int:
    """The teacher's count once the page is idle and shows the same non-empty strip twice, 300 ms apart (between
    a run and the rerun it asks for, the page can be idle for a moment without its strip)."""
    last = None
    for _ in range(40):
        _idle(page)
        now = _gen(page)
        if now and now == last:
            return now
        last = now
        page.wait_for_timeout(300)
    raise AssertionError(f"the teacher's strip did not settle (last read {last})")


def _steps_in_address(page) -> int:
    found = re.search(r"[?&]steps=(\d+)", page.url)
    return int(found.group(1)) if found else 0


def test_back_and_forward_after_three_steps_replay_two_then_three(browser, server):
    ctx, page = _new(browser)
    try:
        page.goto(f"{server}/step?prompt=The+capital+of+France+is&cfg_temperature=0")
        page.get_by_role("button", name="Next token").first.wait_for()
        for n in (1, 2, 3):
            _idle(page)
            page.get_by_role("button", name="Next token").first.click()
            _wait_gen(page, n)
            page.wait_for_function(f"/[?&]steps={n}(&|$)/.test(location.search)")
        _idle(page)
        page.go_back()
        _wait_gen(page, 2)
        _idle(page)
        assert _steps_in_address(page) == 2
        page.get_by_text("Rebuilt from the link: the prompt and 2 steps").wait_for()
        page.go_forward()
        _wait_gen(page, 3)
        _idle(page)
        assert _steps_in_address(page) == 3 and _gen(page) == 3
    finally:
        ctx.close()


def _start_class(browser, url: str):
    ctx, teacher = _new(browser)
    teacher.goto(f"{url}/step?prompt=The+capital+of+France+is&cfg_temperature=0")
    teacher.get_by_role("button", name="Next token").first.wait_for()
    _idle(teacher)
    teacher.get_by_role("button", name="Next token").first.click()
    _wait_gen(teacher, 1)
    _idle(teacher)
    teacher.get_by_role("button", name="Start a class").click()
    teacher.get_by_role("heading", name="Your class").wait_for()
    _idle(teacher)
    code = re.search(r"class=([A-Z0-9]{6})", teacher.url).group(1)
    return ctx, teacher, code


def _join(browser, url: str, code: str):
    ctx, page = _new(browser)
    page.goto(f"{url}/?class={code}")
    page.get_by_role("button", name="Join").wait_for()
    _idle(page)
    page.get_by_role("button", name="Join").click()
    page.get_by_text(f"You are in class {code}").wait_for()
    return ctx, page


def test_a_teacher_who_reveals_and_samples_at_once_never_moves_the_class_back(browser, class_server):
    """Reveal takes a step; Everyone sample pressed within 50 ms can carry the address from before that step. Ten
    rounds: no student's text ever shows fewer tokens than before, and the teacher's tab never says it was
    rebuilt from a link. (On this machine the class page often drops the Reveal merged with the next press, so
    few rounds step: the test below, with a teacher far from the server, makes the late address certain.)"""
    contexts = []
    try:
        ctx, teacher, code = _start_class(browser, class_server)
        contexts.append(ctx)
        students = []
        for _ in range(2):
            ctx, student = _join(browser, class_server, code)
            contexts.append(ctx)
            _wait_gen(student, 1)
            student.evaluate(WATCH)
            students.append(student)
        rebuilt = []
        for round_ in range(10):
            _idle(teacher)
            if teacher.get_by_role("button", name="Reveal").count() == 0:
                teacher.get_by_role("button", name="Ask the class").click()
                teacher.get_by_role("button", name="Reveal").wait_for()
                _idle(teacher)
            # both presses from the page itself, 40 ms apart (Playwright's own round trips take longer)
            teacher.evaluate("""() => { const button = name => [...document.querySelectorAll('button')]
                .find(b => b.innerText.trim() === name);
                button('Reveal').click(); setTimeout(() => button('Everyone sample').click(), 40); }""")
            teacher.wait_for_timeout(500)
            _idle(teacher)
            teacher.wait_for_timeout(300)
            _idle(teacher)
            now = _settled_gen(teacher)
            for i, student in enumerate(students):
                try:
                    _wait_gen(student, now)
                except Exception as exc:
                    teacher.screenshot(path=f"test-artifacts/presses-teacher-{round_}.png", full_page=True)
                    student.screenshot(path=f"test-artifacts/presses-student-{round_}-{i}.png", full_page=True)
                    raise AssertionError(f"round {round_}: student {i} shows {_gen(student)}, teacher {now}") from exc
            rebuilt.append(teacher.get_by_text("Rebuilt from the link").count())
        teacher.wait_for_timeout(1500)  # a late address would have moved the class by now
        for student in students:
            seen = student.evaluate("() => { clearInterval(window.__watch); return window.__seen; }")
            backs = [(i, a, b) for i, (a, b) in enumerate(zip(seen, seen[1:])) if b < a]
            assert not backs, f"a student's text went back: {backs[:5]} of {len(seen)} samples"
            assert seen[-1] == _gen(teacher) == _gen(student)
        assert rebuilt == [0] * 10
    finally:
        for ctx in contexts:
            ctx.close()


def _slow_link(port: int, lag_s: float):
    """A TCP proxy to ``port`` that delays every byte the server sends by ``lag_s`` (the browser's clicks go out at
    once): a teacher far from the server, whose clicks can leave before the address the app wrote arrives.
    Returns (its port, a function that stops it)."""
    loop = asyncio.new_event_loop()

    async def pipe(reader, writer, lag: float) -> None:
        queue: asyncio.Queue = asyncio.Queue()

        async def pump() -> None:
            while (item := await queue.get()) is not None:
                wait = item[0] + lag - loop.time()
                if wait > 0:
                    await asyncio.sleep(wait)
                writer.write(item[1])
                await writer.drain()
            writer.close()

        pumping = loop.create_task(pump())
        try:
            while data := await reader.read(65536):
                queue.put_nowait((loop.time(), data))
        finally:
            queue.put_nowait(None)
            await pumping

    async def handle(client_reader, client_writer) -> None:
        server_reader, server_writer = await asyncio.open_connection("127.0.0.1", port)
        await asyncio.gather(pipe(client_reader, server_writer, 0.0), pipe(server_reader, client_writer, lag_s),
                             return_exceptions=True)

    ports: list[int] = []
    ready = threading.Event()

    def run() -> None:  # the loop lives in its own thread (Playwright's runs in this one)
        asyncio.set_event_loop(loop)
        server = loop.run_until_complete(asyncio.start_server(handle, "127.0.0.1", 0))
        ports.append(server.sockets[0].getsockname()[1])
        ready.set()
        loop.run_forever()

    threading.Thread(target=run, daemon=True).start()
    ready.wait(10)
    return ports[0], lambda: loop.call_soon_threadsafe(loop.stop)


def test_a_teacher_far_from_the_server_never_moves_the_class_back(browser, server):
    """The teacher's tab gets the server's messages 0.8 s late: Everyone sample, pressed once Reveal's step has
    reached the students, leaves with the address from before that step. Six rounds: no student's text ever
    shows fewer tokens than before, and the teacher's tab never says it was rebuilt from a link."""
    port = int(server.rsplit(":", 1)[1])
    slow_port, stop = _slow_link(port, 0.8)
    contexts = []
    try:
        ctx, teacher, code = _start_class(browser, f"http://127.0.0.1:{slow_port}")
        contexts.append(ctx)
        students = []
        for _ in range(2):
            ctx, student = _join(browser, server, code)
            contexts.append(ctx)
            _wait_gen(student, 1)
            student.evaluate(WATCH)
            students.append(student)
        rebuilt = []
        for pause_ms in (100, 250, 400, 100, 250, 400):
            _idle(teacher)
            if teacher.get_by_role("button", name="Reveal").count() == 0:
                teacher.get_by_role("button", name="Ask the class").click()
                teacher.get_by_role("button", name="Reveal").wait_for()
                teacher.wait_for_timeout(1000)
                _idle(teacher)
            before = _gen(students[0])
            teacher.evaluate(CLICK.replace("NAME", "Reveal"))
            students[0].wait_for_function(f"document.querySelectorAll('.tokstrip .gen').length > {before}",
                                          polling=10)
            teacher.wait_for_timeout(pause_ms)  # Reveal's run ends, its address is still on the way
            teacher.evaluate(CLICK.replace("NAME", "Everyone sample"))
            teacher.wait_for_timeout(2500)
            _idle(teacher)
            rebuilt.append(teacher.get_by_text("Rebuilt from the link").count())
        teacher.wait_for_timeout(1500)
        for student in students:
            _wait_gen(student, 7)  # the second student was not waited for: it may still be a poll behind
            seen = student.evaluate("() => { clearInterval(window.__watch); return window.__seen; }")
            backs = [(i, a, b) for i, (a, b) in enumerate(zip(seen, seen[1:])) if b < a]
            assert not backs, f"a student's text went back: {backs[:5]} of {len(seen)} samples"
            assert seen[-1] == _gen(student) == 7 == _settled_gen(teacher)
        assert rebuilt == [0] * 6
    finally:
        for ctx in contexts:
            ctx.close()
        stop()


CLICK = """() => [...document.querySelectorAll('button')].find(b => b.innerText.trim() === 'NAME').click()"""


# ---------------------------------------------------------------- a press is a press
def _open_step(browser, server):
    ctx, page = _new(browser)
    page.goto(f"{server}/step?prompt=Once+upon+a+time&cfg_temperature=0")
    page.get_by_role("button", name="Next token").first.wait_for()
    _idle(page)
    page.wait_for_timeout(500)
    page.evaluate("() => document.activeElement?.blur()")  # the keys go to the page, not to a text box
    page.evaluate(WATCH)
    return ctx, page


def _settled(page, n: int) -> list[int]:
    """Wait until the page shows ``n`` generated tokens and no press is left to run; the counts seen meanwhile."""
    try:
        _wait_gen(page, n, timeout=90_000)
    except Exception as exc:
        raise AssertionError(f"{_gen(page)} generated tokens shown, {n} expected") from exc
    page.wait_for_timeout(800)
    _idle(page)
    assert _gen(page) == n
    return page.evaluate("() => { clearInterval(window.__watch); return window.__seen; }")


@pytest.mark.parametrize("every_ms", [40, 100])
def test_twenty_presses_of_n_give_twenty_tokens(browser, server, every_ms):
    ctx, page = _open_step(browser, server)
    try:
        for _ in range(20):
            page.keyboard.press("n")
            page.wait_for_timeout(every_ms)
        seen = _settled(page, 20)
        assert all(b >= a for a, b in zip(seen, seen[1:])), seen  # the strip never shrinks without Undo
        assert page.get_by_text("still to run").count() == 0
    finally:
        ctx.close()


def test_twenty_quick_clicks_on_next_token_give_twenty_tokens(browser, server):
    ctx, page = _open_step(browser, server)
    try:
        button = page.get_by_role("button", name="Next token").first
        for _ in range(20):
            button.click(delay=0)
            page.wait_for_timeout(40)
        _settled(page, 20)
    finally:
        ctx.close()


def test_mixed_presses_of_n_and_u_give_the_net_count(browser, server):
    ctx, page = _open_step(browser, server)
    try:
        presses = "nnnunnuunn"  # 7 N, 3 U: never an Undo with nothing to undo
        for key in presses:
            page.keyboard.press(key)
            page.wait_for_timeout(40)
        seen = _settled(page, presses.count("n") - presses.count("u"))
        drops = [b for a, b in zip(seen, seen[1:]) if b < a]
        assert len(drops) <= presses.count("u") and all(a - b == 1 for a, b in zip(seen, seen[1:]) if b < a), seen
    finally:
        ctx.close()


def _set_generate_n(page, n: int) -> None:
    box = page.get_by_label("N", exact=True)
    box.fill(str(n))
    box.press("Enter")
    page.get_by_role("button", name=re.compile(rf"^Generate {n}\b")).wait_for()
    _idle(page)
    page.evaluate("() => document.activeElement?.blur()")


def test_quick_presses_of_g_n_and_u_each_count_in_order(browser, server):
    """Generate N's presses count too: G, N, G, U at 40 ms give 3 + 1 + 3 − 1 new tokens."""
    ctx, page = _open_step(browser, server)
    try:
        _set_generate_n(page, 3)
        for key in "gngu":
            page.keyboard.press(key)
            page.wait_for_timeout(40)
        seen = _settled(page, 6)
        assert sum(1 for a, b in zip(seen, seen[1:]) if b < a) <= 1, seen  # only the one Undo takes a token back
        assert page.get_by_text("still to run").count() == 0
    finally:
        ctx.close()


def _generate_on_inside(page, server, n: int, press) -> None:
    """Inside generation (its step row is not in a fragment) with a greedy text, Generate ``n`` started by
    ``press()`` and running for 300 ms (the page's script state, not its progress bar: under load the bar's
    drawing and its removal can reach the browser together)."""
    page.goto(f"{server}/inside?prompt=Once+upon+a+time&cfg_temperature=0")
    page.get_by_role("button", name="Next token").first.wait_for()
    _idle(page)
    _set_generate_n(page, n)  # ends idle
    press()
    page.wait_for_function(RUNNING, polling=10)
    page.wait_for_timeout(300)
    assert _steps_in_address(page) == 0  # still running: its address comes at the end of the run


def test_a_press_while_generate_runs_does_not_cut_it_short(browser, server):
    """On a page whose step row is not in a fragment (Inside generation), a press reruns the page and so stops
    the script mid-Generate: Generate 30, then N while it runs, then Generate 30 again give 30 + 1 + 30 steps
    (the address's count; the server's cap is 64): none cut short, none lost, none run twice."""
    ctx, page = _new(browser)
    try:
        _generate_on_inside(page, server, 30, lambda: page.get_by_role("button", name=re.compile(r"^Generate 30\b"))
                            .click())
        page.keyboard.press("n")
        page.wait_for_timeout(40)
        page.get_by_role("button", name=re.compile(r"^Generate 30\b")).click()
        page.wait_for_url(re.compile(r"[?&]steps=61(&|$)"), timeout=120_000)
        page.wait_for_timeout(1500)
        _idle(page)
        assert _steps_in_address(page) == 61
        assert page.get_by_text("still to run").count() == 0
    finally:
        ctx.close()


def test_reset_during_generate_stops_it_and_the_presses_behind_it(browser, server):
    """On a page whose step row is not in a fragment, X while Generate 40 runs (with a press of N waiting behind
    it) leaves the prompt alone: no step of the stopped run, and no queued press, runs after the Reset."""
    ctx, page = _new(browser)
    try:
        _generate_on_inside(page, server, 40, lambda: page.keyboard.press("g"))
        page.keyboard.press("n")
        page.wait_for_timeout(200)
        page.keyboard.press("x")
        page.wait_for_timeout(3000)
        _idle(page)
        page.wait_for_timeout(1500)
        _idle(page)
        assert _steps_in_address(page) == 0, page.url
        assert page.get_by_text("still to run").count() == 0
    finally:
        ctx.close()


def test_a_key_typed_in_a_text_box_is_not_a_press(browser, server):
    ctx, page = _open_step(browser, server)
    try:
        box = page.get_by_role("textbox").first
        box.click()
        box.press("End")
        box.type("nun")
        page.wait_for_timeout(1000)
        _idle(page)
        assert _gen(page) == 0
    finally:
        ctx.close()
