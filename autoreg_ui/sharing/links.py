"""Links in the app: the URL holds what it takes to rebuild a tab, and opening it rebuilds the tab exactly.

Reading: a page's own parameters (``?layer=3&head=mean`` on the attention page, declared by its lesson:
``link_params``), ``?model=`` for the sidebar, and the whole
session (its format and parsing: ``link_codec``). A link is applied once per distinct link (so moving a
slider afterwards is not undone by the URL still carrying it), and a value that does not fit gets a
message saying what was wrong, never a crash. ``apply_*`` take the query and the state as plain
mappings (tests pass dicts); ``read_on_load``, ``replay_pending`` and ``sync_url`` are the glue.
"""
from __future__ import annotations

import weakref
from collections.abc import Callable, Mapping, MutableMapping
from urllib.parse import urlencode, urlsplit

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from autoreg_core import SamplingConfig
from autoreg_core.engine.replay import Recipe, ReplayError, import_session, recipe_of, replay
from autoreg_ui import keys, messages
from autoreg_ui.settings import SIDEBAR_DEFAULTS, settings_params
from autoreg_ui.sharing import text
from autoreg_ui.sharing.link_codec import (
    EMBED_PARAMS,
    PRESENT,
    RECIPE_PARAMS,
    Link,
    check_others,
    echo,
    is_known,
    parse_index,
    read_recipe,
    recipe_of_link,
    recipe_params,
    values,
    view_slug,
)
from autoreg_ui.sharing.link_params import PageLinkParams
from autoreg_ui.sharing.prompt_store import prompt_store, tab_id


def _new_link(query: Mapping, state: MutableMapping, names: tuple[str, ...], seen_key: str) -> tuple | None:
    """The link's values if this link has not been applied yet (and mark it applied), else None."""
    link = tuple(query.get(name) for name in names)
    if all(v is None for v in link) or state.get(seen_key) == link:
        return None
    state[seen_key] = link
    return link


def apply_page_params(query: Mapping, state: MutableMapping, page: PageLinkParams,
                      sizes: Mapping[str, int]) -> list[str]:
    """A page's own link parameters (``link_params``: ``?layer=&head=`` on the attention page) set the widgets they
    bind to, once per distinct link; ``sizes``: parameter name → how many there are to pick from.

    Bad values leave the widget as it was and queue a warning; the warnings are also returned.
    """
    link = _new_link(query, state, page.names, page.seen_key)
    if link is None:
        return []
    notes = []
    for raw, param in zip(link, page.params):
        value, note = parse_index(raw, sizes[param.name], param.name, param.allow_mean)
        if note:
            notes.append(note)
            messages.say(note, "warning", state)
        elif value is not None:
            state[param.key] = value
    return notes


def apply_view(query: Mapping, state: MutableMapping, labels: list[str], key: str) -> str | None:
    """``?view=`` opens a page's tab by its slug (``link_codec.view_slug``), once per distinct link; an unknown
    name leaves the tabs as they were and returns (and queues) a message naming the views there are."""
    link = _new_link(query, state, ("view",), f"{key}{keys.VIEW_LINK_SEEN_SUFFIX}")
    if link is None or not link[0]:
        return None
    by_slug = {view_slug(label): label for label in labels}
    if link[0] in by_slug:
        state[key] = by_slug[link[0]]
        return None
    note = text.VIEW_MISSING.format(view=echo(str(link[0]), 60), views=", ".join(by_slug))
    messages.say(note, "warning", state)
    return note


def apply_model(query: Mapping, state: MutableMapping, allowed: list[str], default: str) -> str | None:
    """``?model=`` selects an allowed model once; an unknown name keeps ``default`` and returns a message
    (also kept under ``keys.MODEL_LINK_ERROR``, where the sidebar shows it)."""
    link = _new_link(query, state, ("model",), keys.MODEL_LINK_SEEN)
    if link is None or link[0] == "":
        return None
    if link[0] in allowed:
        state[keys.MODEL] = link[0]
        return None
    note = text.UNKNOWN_MODEL.format(model=echo(str(link[0]), 80), default=default, available=", ".join(allowed))
    state[keys.MODEL_LINK_ERROR] = note
    return note


def share_url(base: str | None, session, config: SamplingConfig, model: str | None,
              keep_long: Callable[[str], str]) -> str | None:
    """The link of a session as it is now (what the address bar holds, without presenter mode).

    Built from the session itself, so it can be made away from the page (a download made when clicked).
    """
    from autoreg_ui.state import DEFAULT_PROMPT

    if not base:
        return None
    if not urlsplit(base).path:
        base += "/"
    recipe = recipe_params(recipe_of(session, config), config, DEFAULT_PROMPT, keep_long)
    params: dict[str, str | list[str]] = {**settings_params(config), **recipe}
    if model:
        params["model"] = model
    return base + ("?" + urlencode(params, doseq=True) if params else "")


# ---------------------------------------------------------------- in the app
def asks_for_a_page(query: Mapping) -> bool:
    """Does a link to the app's root carry anything (a prompt, steps, settings…)? Then it is a link written
    before the pages had names, and opens the step page; a bare ``/`` (or only presenter mode) opens Start here."""
    return any(name.lower() not in (PRESENT, *EMBED_PARAMS) for name in query)


def read_on_load(state: MutableMapping, query: Mapping, opened: bool | None = None) -> list[str]:
    """Before the sidebar is drawn: a link not yet applied becomes a pending replay; returns the messages.

    A link is applied once: what the app writes into the URL itself is remembered (``keys.LINK_SEEN``).
    ``opened``: does this run's address come from opening it (``address_opened``, worked out here when None)?
    Only then is an address that differs from the remembered one a link to replay. Any other run (a click, a
    key, a moved widget) carries the address the browser held when the press was sent, which can be one the
    app wrote before its newest write reached the browser: replaying it would take the tab a step back.
    A teacher's tab that has loaded its class keeps the class's text (only its own actions change it), so it
    replays no address it merely opened (back, forward); a lesson path's stop the teacher chose (``expect_link``)
    is such an action, and is replayed.
    """
    chosen = bool(state.get(keys.LINK_EXPECTED))
    if opened is None:
        opened = address_opened(state)
    state.pop(keys.LINK_EXPECTED, None)
    params = values(query)
    notes: list[str] = []
    others = tuple(sorted((k, tuple(v)) for k, v in params.items() if k not in RECIPE_PARAMS))
    if others and others != state.get(keys.LINK_OTHERS_SEEN):  # their messages show once per link
        state[keys.LINK_OTHERS_SEEN] = others
        notes += check_others(params)
    mine = _own(params)
    if not mine or mine == state.get(keys.LINK_SEEN) or not opened:
        return notes
    state[keys.LINK_SEEN] = mine
    if _leads_a_class(state) and not chosen:
        messages.say(text.CLASS_KEEPS_TEXT, "info", state)
        return notes
    link, recipe_notes = read_recipe(params)
    notes += recipe_notes
    if link is not None:
        state[keys.LINK_PENDING] = ("link", link)
    return notes


def address_opened(state: MutableMapping) -> bool:
    """Does this run's address come from opening it, rather than from the app having written it?

    Opened: the tab's first run (a pasted link, a reload, a new tab: nothing written yet), the browser's back
    and forward buttons (Streamlit marks those runs: ``is_history_navigation``), and a page the app itself opens
    with an address of its own making (``expect_link``). Decided by where the run came from, never by timing: a
    sequence number written into the address could not tell the back button from a late click, since both
    bring back an address the app wrote earlier.
    """
    expected = bool(state.pop(keys.LINK_EXPECTED, False))
    if expected or keys.LINK_SEEN not in state:
        return True
    ctx = get_script_run_ctx()
    return ctx is not None and bool(ctx.is_history_navigation)


def expect_link(state: MutableMapping) -> None:
    """The app is about to open a page with an address of its own making that is meant to be replayed (a lesson
    path's stop): the next run reads it as a link."""
    state[keys.LINK_EXPECTED] = True


def _leads_a_class(state: Mapping) -> bool:
    """Is this a teacher's tab that has loaded or published its class's text (its text is the class's)?"""
    teacher = bool(state.get(keys.CLASS_CODE) and state.get(keys.CLASS_KEY))
    return teacher and state.get(keys.CLASS_PUBLISHED) is not None


def _own(params: dict[str, list[str]]) -> tuple:
    return tuple((name, tuple(params[name])) for name in RECIPE_PARAMS if name in params)


def replay_pending(bundle, state: MutableMapping, attention: bool = False) -> None:
    """Replay a pending link or session file here, with a progress bar; a bad one gets a message.

    ``attention``: the page shows attention rows, so the replayed steps get theirs too (one full pass after the
    replay, as the attention page's backfill button does), and the page opens with every row captured.

    The pending replay is dropped only once its session is kept: a rerun that interrupts it (a click,
    the page settling its URL) raises out of a progress update, and the next run replays it again.
    """
    from autoreg_ui.state import session_runtime

    pending = state.get(keys.LINK_PENDING)
    if pending is None or bundle is None:
        return
    kind, payload = pending
    bar = st.progress(0.0, text=text.REBUILDING)
    try:
        if kind == "file":
            total = len(payload.get("steps", [])) if isinstance(payload, dict) else 0
            session = import_session(bundle, payload, on_step=_progress(bar, total, text.THE_FILE),
                                     **session_runtime(bundle))
        else:
            recipe = _link_recipe(bundle, payload, state)
            session = replay(bundle, recipe, on_step=_progress(bar, recipe.steps, text.THE_LINK),
                             **session_runtime(bundle))
    except ReplayError as exc:
        state.pop(keys.LINK_PENDING, None)
        bar.empty()
        st.error(messages.plain(text.NOT_REPLAYED.format(error=exc) if kind == "link" else str(exc)))
        return
    if attention:
        _capture_attention(session)
    state[keys.SESSION] = session
    state[keys.PROMPT_KEPT] = state[keys.PROMPT_BOX] = session.prompt
    state[keys.CHAT_KEPT] = state[keys.CHAT_BOX] = session.chat
    state.pop(keys.LINK_PENDING, None)
    bar.empty()
    rebuilt = text.rebuilt_text(text.THE_FILE if kind == "file" else text.THE_LINK, len(session.records))
    if kind == "link" and state.get(keys.PATH) is not None:
        return  # a lesson path's stop set itself up: its own note (the bar's) says what the page holds
    if state.get(keys.PRESENT):
        st.toast(rebuilt)  # on a projector the page's first screen is for the step, not for a banner
    else:
        st.success(rebuilt)


def _capture_attention(session) -> None:
    """The replayed session's attention rows, every one, from one full pass (when the model can give them)."""
    from autoreg_core.experiments import attention_rows as attention_view

    if session.records and attention_view.can_backfill(session)[0]:
        attention_view.backfill(session)


def _link_recipe(bundle, link: Link, state: MutableMapping) -> Recipe:
    from autoreg_ui.state import DEFAULT_PROMPT

    prompt = link.prompt
    if link.prompt_id is not None:
        prompt = prompt_store().get(link.prompt_id)
        if prompt is None:
            raise ReplayError(text.LONG_PROMPT_GONE)
    current = state.get(keys.CONFIG) or SIDEBAR_DEFAULTS
    return recipe_of_link(link, prompt if prompt is not None else DEFAULT_PROMPT, current, bundle.spec.vocab)


def _progress(bar, total: int, source: str) -> Callable:
    def on_step(record) -> None:
        bar.progress(min(1.0, record.index / max(total, 1)), text=text.replaying(source, record.index, total))
    return on_step


SESSION_PARAMS = "link_session_params"  # the session's link parameters and what they were worked out from


def sync_url(state: MutableMapping | None = None, query: MutableMapping | None = None) -> None:
    """Write this tab's state into the URL (only the parameters the app owns; bound widgets write themselves).

    The URL is compared with what it should hold on every call (a page switch empties it), but the session's
    part is worked out only when the session or the settings changed since (``_session_params``).
    """
    from autoreg_ui.state import allowed_models, current_config, current_session

    state = st.session_state if state is None else state
    query = st.query_params if query is None else query
    wanted = _session_params(state, current_session(), current_config())
    models = allowed_models()
    if state.get(keys.MODEL) not in (None, models[0]):
        wanted["model"] = str(state[keys.MODEL])
    if state.get(keys.PRESENT):
        wanted[PRESENT] = "1"
    params = values(query)
    for name in params:
        if not is_known(name):
            del query[name]  # said once when the link was opened; the URL keeps only what it means
    changed: dict[str, str | list[str]] = {}
    for name in RECIPE_PARAMS + ("model", PRESENT):
        want = wanted.get(name)
        want_list = None if want is None else ([want] if isinstance(want, str) else list(want))
        if params.get(name) != want_list:
            if want is None:
                del query[name]
            else:
                changed[name] = want
    if changed:  # one update: Streamlit sends the browser one message for it, not one per parameter
        query.update(changed)
    state[keys.LINK_SEEN] = _own({k: ([v] if isinstance(v, str) else list(v)) for k, v in wanted.items()})


def _session_params(state: MutableMapping, session, config: SamplingConfig) -> dict[str, str | list[str]]:
    """The link parameters of ``session`` under ``config`` (a new dict), worked out again only when the session,
    its ``version`` or the settings changed since the last call; a long prompt kept on the server is kept
    again each time, so it stays among the prompt store's newest as long as the tab shows it."""
    from autoreg_ui.state import DEFAULT_PROMPT

    if session is None:
        return {}
    version = session.version  # read first: a change made while the parameters are worked out is not missed
    held = state.get(SESSION_PARAMS)
    if held is not None and held[0]() is session and held[1] == version and held[2] == config:
        for prompt in held[3]:
            prompt_store().keep(prompt, owner=tab_id())
        return dict(held[4])
    kept: list[str] = []

    def keep_long(prompt: str) -> str:
        kept.append(prompt)
        return prompt_store().keep(prompt, owner=tab_id())

    params = recipe_params(recipe_of(session, config), config, DEFAULT_PROMPT, keep_long)
    state[SESSION_PARAMS] = (weakref.ref(session), version, config, tuple(kept), params)
    return dict(params)


COPY_LINK_HTML = r"""
<div class="autoreg-copy"><button type="button" id="autoreg-copy-link">Copy link</button>
<span id="autoreg-copy-done" aria-live="polite"></span></div>
<style>.autoreg-copy button{border:1px solid rgba(128,128,128,.5);border-radius:.5rem;padding:.3rem .8rem;
background:transparent;color:inherit;font:inherit;cursor:pointer}
.autoreg-copy span{margin-left:.5rem;opacity:.8}</style>
<script>
(function () {
  const button = document.getElementById("autoreg-copy-link");
  if (!button || button.dataset.ready) return;
  button.dataset.ready = "1";
  button.addEventListener("click", async function () {
    const kept = window.location.search.replace(/^\?/, "").split("&")  // as written: no re-encoding of ~
      .filter(part => part && !/^(present|embed_options|class|key|seat)=/.test(part));  // never a class role
    const text = window.location.origin + window.location.pathname + (kept.length ? "?" + kept.join("&") : "");
    let done = false;
    try { await navigator.clipboard.writeText(text); done = true; } catch (e) {
      const area = document.createElement("textarea");
      area.value = text; document.body.appendChild(area); area.select();
      try { done = document.execCommand("copy"); } catch (e2) { done = false; }
      area.remove();
    }
    document.getElementById("autoreg-copy-done").textContent = done ? COPIED : COPY_FAILED;
  });
})();
</script>
""".replace("COPIED", text.js_string(text.COPIED)).replace("COPY_FAILED", text.js_string(text.COPY_FAILED))


def copy_link_button() -> None:
    """A button that copies the page's current URL (which always holds the state) without presenter mode and
    without the tab's place in a class (a teacher key or a student's seat is never part of a shared link)."""
    st.html(COPY_LINK_HTML, unsafe_allow_javascript=True)
