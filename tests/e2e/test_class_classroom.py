"""A class in a real classroom, in Chromium: the right teacher key after many wrong ones (one shared
address, and behind the project's HAProxy), a stale teacher address, names kept off, exploring, a tie, a draw
after the text moved on, long pastes; and a student on a phone."""
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from .conftest import ARTIFACTS, _free_port, start_server, stop_server
from .test_accessibility import AXE, _axe, _own

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
HAPROXY = shutil.which("haproxy") or "/usr/sbin/haproxy"
IDLE = "document.querySelector('[data-testid=stApp]')?.dataset.testScriptState === 'notRunning'"
DESK = {"width": 1400, "height": 1000}
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True, "device_scale_factor": 3,
         "user_agent": "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 "
                       "(KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1"}
# everything a page shows as text: its text, the values of its inputs (a select box shows its choice in one)
# and the labels given to screen readers
ALL_SHOWN = """() => [document.body.innerText,
    ...[...document.querySelectorAll('input, textarea')].map(e => e.value),
    ...[...document.querySelectorAll('[aria-label]')].map(e => e.getAttribute('aria-label'))].join('\\n')"""
WRONG_KEYS = 7  # more than the store's 5 wrong keys a minute per source


def _non_loopback_address() -> str | None:
    """An address of this machine that is not loopback: tabs reaching the app through it share one source, as
    a school's students behind one public address do."""
    try:
        out = subprocess.run(["hostname", "-I"], capture_output=True, text=True, timeout=5).stdout.split()
    except OSError:
        return None
    return next((a for a in out if "." in a and not a.startswith("127.")), None)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    db = tmp_path_factory.mktemp("classroom") / "classes.sqlite3"
    proc, url = start_server("streamlit-class-classroom.log", env={"AUTOREG_CLASS_DB": str(db)})
    yield url
    stop_server(proc)


def _idle(page) -> None:
    page.wait_for_function(IDLE)


def _gen(page) -> int:
    return page.locator(".tokstrip .gen").count()


def _new(browser, **kw):
    ctx = browser.new_context(**({"viewport": DESK} | kw))
    page = ctx.new_page()
    page.set_default_timeout(60_000)
    return ctx, page


def _start_class(browser, url: str, steps: int, prompt: str = "The+capital+of+France+is"):
    """A teacher's tab that started a class and took ``steps`` steps on the step page: (context, page, code,
    the teacher's address right after the class started)."""
    ctx, teacher = _new(browser)
    teacher.goto(f"{url}/step?prompt={prompt}&cfg_temperature=0")
    teacher.get_by_role("button", name="Next token").first.wait_for()
    teacher.get_by_role("button", name="Start a class").click()
    teacher.get_by_role("heading", name="Your class").wait_for()
    _idle(teacher)
    start_url = teacher.url
    code = re.search(r"class=([A-Z0-9]{6})", start_url).group(1)
    if steps:
        _teacher_steps(teacher, steps)
        teacher.get_by_role("link", name="Class").first.click()
        teacher.get_by_role("heading", name="Your class").wait_for()
    return ctx, teacher, code, start_url


def _teacher_steps(teacher, steps: int) -> None:
    teacher.get_by_role("link", name="Step through generation").first.click()
    teacher.get_by_role("button", name="Next token").first.wait_for()
    start = _gen(teacher)
    for n in range(start + 1, start + steps + 1):
        _idle(teacher)
        teacher.get_by_role("button", name="Next token").first.click()
        teacher.wait_for_function(f"document.querySelectorAll('.tokstrip .gen').length === {n}")
    _idle(teacher)


def _join(browser, url: str, code: str, nick: str = "", **kw):
    ctx, page = _new(browser, **kw)
    page.goto(f"{url}/?class={code}")
    page.get_by_role("button", name="Join").wait_for()
    _idle(page)
    if nick:
        page.get_by_label("Nickname", exact=False).fill(nick)
    page.get_by_role("button", name="Join").click()
    page.get_by_text(f"You are in class {code}").wait_for()
    return ctx, page


# ---------------------------------------------------------------- defect 1: the right key always works
def _wrong_keys_then_right(browser, front: str, code: str, key: str, name: str) -> dict:
    """WRONG_KEYS tabs with made-up keys, then one with the class's key, all through ``front``."""
    refused = []
    for i in range(WRONG_KEYS):
        ctx, page = _new(browser)
        page.goto(f"{front}/class?class={code}&key=wrong-key-{i}-{'x' * 20}")
        page.get_by_label("Class code").wait_for()
        _idle(page)
        refused.append("Too many wrong teacher keys" in page.locator("body").inner_text())
        ctx.close()
    ctx, page = _new(browser)
    page.goto(f"{front}/class?class={code}&key={key}")
    try:
        page.get_by_role("heading", name="Your class").wait_for(timeout=30_000)
        accepted = True
    except Exception:  # noqa: BLE001 - the refusal is what the test reports
        accepted = False
    body = page.locator("body").inner_text()
    page.screenshot(path=str(ARTIFACTS / f"class-key-after-wrong-keys-{name}.png"))
    ctx.close()
    return {"slowed": refused, "accepted": accepted, "said": body[:300]}


@pytest.fixture
def shared_address_server(tmp_path):
    """The app reached at a non-loopback address of this machine: every tab comes from that one address."""
    address = _non_loopback_address()
    if address is None:
        pytest.skip("this machine has no non-loopback IPv4 address")
    port = _free_port()
    proc, _ = start_server("streamlit-class-shared-address.log", port=port,
                           env={"AUTOREG_CLASS_DB": str(tmp_path / "classes.sqlite3")})
    # the server listens on 127.0.0.1 only: a TCP relay (HAProxy in tcp mode, no headers) on the machine's
    # address, connecting from that address, stands in for a school's NAT
    front = _free_port()
    cfg = tmp_path / "nat.cfg"
    cfg.write_text(f"defaults\n    mode tcp\n    timeout connect 5s\n    timeout client 1h\n    timeout server 1h\n"
                   f"frontend nat\n    bind {address}:{front}\n    default_backend app\n"
                   f"backend app\n    server app 127.0.0.1:{port} source {address}\n")
    relay = _haproxy(cfg, tmp_path / "nat.log")
    yield f"http://{address}:{front}", tmp_path / "classes.sqlite3"
    relay.terminate()
    relay.wait(timeout=10)
    stop_server(proc)


def _haproxy(cfg: Path, log: Path) -> subprocess.Popen:
    if not Path(HAPROXY).exists():
        pytest.skip("haproxy is not installed")
    proc = subprocess.Popen([HAPROXY, "-f", str(cfg), "-db"], stdout=open(log, "w"), stderr=subprocess.STDOUT)
    time.sleep(1.0)
    assert proc.poll() is None, log.read_text()
    return proc


def test_teacher_key_works_after_wrong_keys_from_one_shared_address(browser, shared_address_server):
    from autoreg_server.class_store import ClassStore

    front, db = shared_address_server
    code, key = ClassStore(db).create()
    out = _wrong_keys_then_right(browser, front, code, key, "shared-address")
    assert out["accepted"], out["said"]
    assert out["slowed"][-1], "wrong keys from one address are still slowed"


@pytest.fixture
def proxied_server(tmp_path):
    """The app behind the project's HAProxy config (option forwardfor), the balancer at a non-loopback address
    that the operator names in AUTOREG_TRUSTED_PROXIES."""
    from deploy.check.haproxy import haproxy_config

    address = _non_loopback_address()
    if address is None:
        pytest.skip("this machine has no non-loopback IPv4 address")
    port = _free_port()
    proc, _ = start_server("streamlit-class-proxied.log", port=port,
                           env={"AUTOREG_CLASS_DB": str(tmp_path / "classes.sqlite3"),
                                "AUTOREG_TRUSTED_PROXIES": address})
    template = (ROOT / "deploy" / "haproxy.cfg").read_text()
    assert "option forwardfor" in template
    front = _free_port()
    cfg = haproxy_config(template, front, [port, port])
    cfg = cfg.replace(f"127.0.0.1:{port} check", f"127.0.0.1:{port} source {address} check")
    (tmp_path / "haproxy.cfg").write_text(cfg)
    balancer = _haproxy(tmp_path / "haproxy.cfg", tmp_path / "haproxy.log")
    yield f"http://127.0.0.1:{front}", tmp_path / "classes.sqlite3"
    balancer.terminate()
    balancer.wait(timeout=10)
    stop_server(proc)


def test_teacher_key_works_after_wrong_keys_behind_haproxy(browser, proxied_server):
    from autoreg_server.class_store import ClassStore

    front, db = proxied_server
    code, key = ClassStore(db).create()
    out = _wrong_keys_then_right(browser, front, code, key, "haproxy")
    assert out["accepted"], out["said"]
    assert out["slowed"][-1], "wrong keys are slowed per client (the address HAProxy forwarded for)"


# ---------------------------------------------------------------- defect 2: a stale teacher address
def test_a_stale_teacher_address_leaves_the_class_text_and_two_tabs_do_not_fight(browser, server):
    contexts = []
    try:
        ctx, teacher, code, start_url = _start_class(browser, server, steps=3)
        contexts.append(ctx)
        ctx, student = _join(browser, server, code)
        contexts.append(ctx)
        student.wait_for_function("document.querySelectorAll('.tokstrip .gen').length === 3", timeout=15_000)

        ctx, stale = _new(browser)  # the address the teacher's tab had when the class started: 0 steps
        contexts.append(ctx)
        assert "steps=" not in start_url or "steps=0" in start_url
        stale.goto(start_url)
        stale.get_by_role("heading", name="Your class").wait_for()
        _idle(stale)
        time.sleep(4)  # several polls: nothing rewinds
        assert (_gen(student), _gen(teacher)) == (3, 3), "a stale teacher address rewound the class"
        stale.wait_for_function("document.querySelectorAll('.tokstrip .gen').length === 3", timeout=30_000)
        teacher.get_by_text("This tab leads the class").wait_for()
        stale.get_by_text("Another tab with your teacher key moved the class's text last").wait_for()

        # the second tab acts: it leads, the first follows it (no tab publishes back its own older text)
        _teacher_steps(stale, 1)
        student.wait_for_function("document.querySelectorAll('.tokstrip .gen').length === 4", timeout=15_000)
        teacher.get_by_text("Another tab with your teacher key moved the class's text last").wait_for(timeout=15_000)
        teacher.wait_for_function("document.querySelectorAll('.tokstrip .gen').length === 4", timeout=15_000)
        time.sleep(4)
        assert _gen(student) == 4 and _gen(teacher) == 4
        teacher.screenshot(path=str(ARTIFACTS / "class-two-teacher-tabs.png"), full_page=True)

        ctx, stale_step = _new(browser)  # the same stale address, on the step page: it shows the class's text
        contexts.append(ctx)
        stale_step.goto(re.sub(r"/class\?", "/step?", start_url))
        stale_step.wait_for_function("document.querySelectorAll('.tokstrip .gen').length === 4", timeout=30_000)
        time.sleep(3)
        assert _gen(student) == 4
    finally:
        for ctx in contexts:
            ctx.close()


# ---------------------------------------------------------------- defect 3: names stay off
def test_nicknames_stay_off_everywhere_while_off(browser, server):
    contexts = []
    try:
        ctx, teacher, code, _ = _start_class(browser, server, steps=1)
        contexts.append(ctx)
        for nick in ("Annabel", "Bertrand"):
            ctx, _student = _join(browser, server, code, nick)
            contexts.append(ctx)
        teacher.get_by_text("2 joined").wait_for(timeout=15_000)
        _idle(teacher)
        shown = teacher.evaluate(ALL_SHOWN)
        assert "Annabel" not in shown and "Bertrand" not in shown, re.findall(r".*(?:Annabel|Bertrand).*", shown)
        assert "student 1" in shown
    finally:
        for ctx in contexts:
            ctx.close()


# ---------------------------------------------------------------- defect 4: exploring keeps the class's text
def test_explore_on_my_own_keeps_the_class_prompt(browser, server):
    contexts = []
    try:
        ctx, teacher, code, _ = _start_class(browser, server, steps=2)
        contexts.append(ctx)
        ctx, student = _new(browser)
        contexts.append(ctx)
        student.goto(f"{server}/step?prompt=Once+upon+a+time")  # the student's own earlier prompt
        student.get_by_role("button", name="Next token").first.wait_for()
        _idle(student)
        student.goto(f"{server}/?class={code}")
        student.get_by_role("button", name="Join").click()
        student.wait_for_function("document.querySelectorAll('.tokstrip .gen').length === 2", timeout=15_000)
        _idle(student)
        student.get_by_role("button", name="Explore on my own").click()
        student.get_by_role("heading", name="Step through generation").wait_for()
        _idle(student)
        assert student.get_by_label("Prompt").input_value() == "The capital of France is"
        assert student.get_by_text("The prompt box differs").count() == 0
        assert _gen(student) == 2
    finally:
        for ctx in contexts:
            ctx.close()


# ---------------------------------------------------------------- defect 5: a tie is a tie
def test_a_tie_is_not_called_the_most_common_guess(browser, server):
    contexts = []
    try:
        ctx, teacher, code, _ = _start_class(browser, server, steps=1)
        contexts.append(ctx)
        students = []
        for _ in range(3):
            ctx, page = _join(browser, server, code)
            contexts.append(ctx)
            students.append(page)
        teacher.get_by_role("button", name="Ask the class").click()
        for page, guess in zip(students, ("Paris", "Rome", "the")):
            page.get_by_role("textbox", name="Your guess").wait_for()
            _idle(page)
            page.get_by_role("textbox", name="Your guess").fill(guess)
            page.get_by_role("button", name="Send my guess").click()
            page.get_by_text("is in. You can change it").wait_for()
        teacher.get_by_text("Answers in: 3 of 3").wait_for()
        _idle(teacher)
        teacher.get_by_role("button", name="Reveal").click()
        teacher.get_by_text(re.compile(r"The class's most common guess|No single most common guess")).wait_for()
        assert teacher.get_by_text("The class's most common guess").count() == 0, "a tie was called the most common"
        teacher.get_by_text("No single most common guess: ").wait_for()
        students[0].get_by_text("Your guess “Paris” was scored").wait_for(timeout=15_000)  # the guess quoted
    finally:
        for ctx in contexts:
            ctx.close()


# ---------------------------------------------------------------- defect 6: a draw belongs to its text
def test_a_draw_goes_when_the_text_moves_on(browser, server):
    contexts = []
    try:
        ctx, teacher, code, _ = _start_class(browser, server, steps=1)
        contexts.append(ctx)
        ctx, student = _join(browser, server, code)
        contexts.append(ctx)
        _idle(teacher)
        teacher.get_by_role("button", name="Everyone sample").click()
        student.get_by_text(re.compile(r"Your tab drew \(seed \d+\)")).wait_for(timeout=30_000)
        _teacher_steps(teacher, 1)  # the round stays open, the text moves on
        student.wait_for_function("document.querySelectorAll('.tokstrip .gen').length === 2", timeout=15_000)
        _idle(student)
        assert student.get_by_text(re.compile(r"Your tab drew")).count() == 0
        student.get_by_text("has moved on since this sampling round").wait_for()
        ctx, late = _join(browser, server, code)  # a late joiner draws nothing from the old round's text
        contexts.append(ctx)
        late.wait_for_function("document.querySelectorAll('.tokstrip .gen').length === 2", timeout=15_000)
        _idle(late)
        late.get_by_text("has moved on since this sampling round").wait_for()
        assert late.get_by_text(re.compile(r"Your tab drew")).count() == 0
    finally:
        for ctx in contexts:
            ctx.close()


# ---------------------------------------------------------------- defect 7: a long paste says the limit
def test_a_long_paste_says_the_limit(browser, server):
    contexts = []
    try:
        ctx, teacher, code, _ = _start_class(browser, server, steps=1)
        contexts.append(ctx)
        ctx, student = _new(browser)
        contexts.append(ctx)
        student.goto(f"{server}/?class={code}")
        student.get_by_role("button", name="Join").wait_for()
        _idle(student)
        box = student.get_by_label("Nickname", exact=False)
        box.fill("A" * 10_000)
        student.get_by_role("button", name="Join").click()
        student.get_by_text("A nickname is at most 24 characters").wait_for(timeout=15_000)
        box.fill("Ann")
        student.get_by_role("button", name="Join").click()
        student.get_by_text(f"You are in class {code}").wait_for()
        _idle(teacher)
        teacher.get_by_role("button", name="Ask the class").click()
        guess = student.get_by_role("textbox", name="Your guess")
        guess.wait_for()
        _idle(student)
        guess.fill("word " * 2_000)
        student.get_by_role("button", name="Send my guess").click()
        student.get_by_text("A guess is at most 40 characters").wait_for(timeout=15_000)
    finally:
        for ctx in contexts:
            ctx.close()


# ---------------------------------------------------------------- a student on a phone
def _first_screen(page, locator) -> bool:
    box = locator.bounding_box()
    return box is not None and box["y"] >= 0 and box["y"] + box["height"] <= 844


def _no_sideways_scroll(page) -> bool:
    return page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")


def test_a_student_on_a_phone(browser, server):
    shots = Path("/tmp/shots-class")
    shots.mkdir(exist_ok=True)
    contexts = []
    try:
        ctx, teacher, code, _ = _start_class(browser, server, steps=2)
        contexts.append(ctx)
        ctx = browser.new_context(**PHONE)
        contexts.append(ctx)
        phone = ctx.new_page()
        phone.set_default_timeout(60_000)
        phone.goto(f"{server}/?class={code}")
        join = phone.get_by_role("button", name="Join")
        join.wait_for()
        _idle(phone)
        assert _first_screen(phone, join) and _no_sideways_scroll(phone)
        phone.get_by_label("Nickname", exact=False).fill("Ann")
        join.tap()
        phone.get_by_text(f"You are in class {code}").wait_for()
        phone.wait_for_function("document.querySelectorAll('.tokstrip .gen').length === 2", timeout=15_000)

        teacher.get_by_role("button", name="Ask the class").click()  # follow, then guess
        box = phone.get_by_role("textbox", name="Your guess")
        box.wait_for(timeout=15_000)
        _idle(phone)
        phone.evaluate("window.scrollTo(0, 0)")
        assert _first_screen(phone, phone.locator(".tokstrip").first), "the class's text is on the first screen"
        assert _first_screen(phone, box), "the guess box is on the first screen"
        assert _no_sideways_scroll(phone)
        phone.screenshot(path=str(shots / "phone-guess.png"))
        phone.screenshot(path=str(ARTIFACTS / "class-phone-guess.png"))
        box.tap()
        box.fill("Paris")
        phone.get_by_role("button", name="Send my guess").tap()
        phone.get_by_text("Your guess “Paris” is in").wait_for()
        teacher.get_by_text("Answers in: 1 of 1").wait_for(timeout=15_000)
        _idle(teacher)
        teacher.get_by_role("button", name="Reveal").click()
        phone.get_by_text(re.compile(r"points")).first.wait_for(timeout=15_000)  # the score
        phone.wait_for_function("document.querySelectorAll('.tokstrip .gen').length === 3", timeout=15_000)
        _idle(phone)
        phone.evaluate("window.scrollTo(0, 0)")
        assert _first_screen(phone, phone.get_by_text(re.compile(r"Your guess “Paris” was scored")).first)
        _idle(teacher)
        teacher.get_by_role("button", name="Everyone sample").click()  # sample
        phone.get_by_text(re.compile(r"Your tab drew \(seed \d+\)")).wait_for(timeout=30_000)
        _idle(phone)
        assert _no_sideways_scroll(phone)
        phone.screenshot(path=str(shots / "phone-drew.png"))
        phone.screenshot(path=str(shots / "phone-full.png"), full_page=True)
        teacher.screenshot(path=str(shots / "teacher-desk.png"), full_page=True)
        # leaving is apart and confirmed: one tap does not drop the student out
        phone.get_by_role("button", name="Leave the class…").tap()
        phone.get_by_role("button", name="Stay in the class").tap()
        phone.get_by_text(f"You are in class {code}").wait_for()
        _idle(phone)
        if AXE.exists():
            assert _own(_axe(phone), phone) == []
    finally:
        for ctx in contexts:
            ctx.close()
