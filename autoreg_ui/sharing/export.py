"""Taking a session away: a JSON file that rebuilds it, a CSV that says how it was made, an offline hand-out.

The JSON file is ``replay.export_session`` (prompt, settings, seed, every step's numbers); loading it
replays the recipe and checks the tokens. The hand-out is one HTML file with plotly.js inside, so a
student opens it later without the server and without a network. Everything a model or a learner
wrote is escaped before it goes into HTML.
"""
from __future__ import annotations

import base64
import functools
import html
import json
import re
from collections import OrderedDict
from datetime import UTC, datetime

import pandas as pd
import plotly.graph_objects as go
import plotly.offline
import streamlit as st

from autoreg_core.engine.replay import ReplayError, export_session, recipe_from_dict
from autoreg_core.engine.session import Session, SessionSnapshot
from autoreg_ui import charts, keys, messages, palette, settings, strip_text
from autoreg_ui.sharing import links
from autoreg_ui.sharing.prompt_store import prompt_store, tab_id
from autoreg_ui.state import allowed_models
from autoreg_ui.step_figures import history_frame, logprob_figure, token_strip_html, top_of_record, topn_figure

MAX_FILE_MB = 5
SETTING_COLUMNS = ["temperature", "top_k", "top_p", "min_p", "repetition_penalty", "max_new_tokens",
                   "stop_sequences"]


def session_json(session: Session | SessionSnapshot, config=None) -> str:
    return json.dumps(export_session(session, config), indent=1, ensure_ascii=False)


def session_file_name(session: Session) -> str:
    return f"autoreg-session-{_slug(session.prompt)}.json"


def _slug(text: str) -> str:
    """A few words of the prompt for a file name: 'The capital of France is' → 'the-capital-of-france'."""
    words = re.findall(r"[a-z0-9]+", text.lower())[:4]
    return "-".join(words)[:40] or "prompt"


def history_csv(session: Session | SessionSnapshot) -> str:
    """The step table with what made each step: model, prompt, chat mode, seed and that step's settings
    (read from one snapshot: downloads run outside the tab's script thread, while steps may go on)."""
    session = session.snapshot() if isinstance(session, Session) else session
    frame = history_frame(session.bundle.tokenizer, list(session.records))
    made = pd.DataFrame({"model": session.bundle.name, "prompt": session.prompt, "chat": session.chat,
                         "seed": session.seed}, index=frame.index)
    settings = pd.DataFrame([[_cell(getattr(r.config, name)) for name in SETTING_COLUMNS] for r in session.records],
                            columns=SETTING_COLUMNS, index=frame.index)
    return pd.concat([frame, made, settings], axis=1).to_csv(index=False)


def _cell(value):
    return json.dumps(list(value), ensure_ascii=False) if isinstance(value, tuple) else value


# ---------------------------------------------------------------- loading a session file
def read_file(raw: bytes) -> dict:
    """The JSON object in an uploaded file, or a ReplayError that says what is wrong with it."""
    if len(raw) > MAX_FILE_MB * 1024 * 1024:
        raise ReplayError(f"The file is larger than {MAX_FILE_MB} MiB; a session file is much smaller.")
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ReplayError(f"The file is not JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise ReplayError("The file does not hold a session (a JSON object is expected).")
    return data


def widget_values(data: dict) -> dict:
    """The sidebar values a session file ends with (its last settings and its seed), by widget key."""
    recipe = recipe_from_dict(data.get("recipe"))
    if not recipe.segments:
        return {}
    config = recipe.segments[-1].config
    out = {s.key: s.kind(getattr(config, s.field)) for s in settings.SETTINGS}
    out[keys.CFG_SEED] = int(recipe.seed)
    out[keys.CFG_STOPS] = settings.stops_text(config.stop_sequences)
    for setting in settings.SETTINGS:  # what the sidebar's widgets cannot show is left to them
        if not setting.low <= out[setting.key] <= setting.high:
            out.pop(setting.key)
    return out


def on_upload(state=None) -> None:
    """File uploader callback: a readable session file becomes a pending replay (drawn by the page)."""
    state = st.session_state if state is None else state
    upload = state.get(keys.LOAD_SESSION)
    if upload is None:
        return
    try:
        data = read_file(upload.getvalue())
        values = widget_values(data)
    except ReplayError as exc:
        messages.say(f"The session file cannot be loaded: {exc}", "error", state)
        return
    state.update(values)
    state[keys.LINK_PENDING] = ("file", data)


# ---------------------------------------------------------------- the hand-out
HANDOUT_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;max-width:1100px;margin:2rem auto;padding:0 1rem;
color:#1b1f24;line-height:1.5}
h1{font-size:1.8rem}h2{margin-top:2.2rem;border-bottom:1px solid #d0d7de;padding-bottom:.2rem}
pre{background:#f3f5f8;padding:.8rem;border-radius:.4rem;white-space:pre-wrap}
table{border-collapse:collapse;font-size:.85rem}td,th{border:1px solid #d0d7de;padding:.2rem .5rem;text-align:right}
th{background:#f3f5f8}.chart{margin:1rem 0 2rem}.note{color:#57606a;font-size:.9rem}
"""


def handout_charts(session: Session) -> list[tuple[str, go.Figure]]:
    """The session's own charts: the chain rule over its steps and its last step's top tokens."""
    records = list(session.records)
    if not records:
        return []
    last = records[-1]
    top = topn_figure(session.bundle.tokenizer, top_of_record(last, 15),
                      f"Step {last.index}: the 15 most likely tokens and the one chosen")
    return [("The chain rule, running", logprob_figure(records)), (f"Step {last.index}: what could have come", top)]


def handout_html(session: Session | SessionSnapshot, config, shown: list[tuple[str, go.Figure]],
                 link: str | None = None, plotly_js: str | None = None) -> str:
    """One self-contained HTML page: prompt, settings, the text token by token, the steps and the charts.

    ``shown`` are the charts the tab showed (name, figure); the step page's own are rebuilt from the session
    instead. plotly.js goes inline once (no CDN).
    """
    session = session.snapshot() if isinstance(session, Session) else session  # one moment for the whole file
    data = export_session(session, config)
    recipe = data["recipe"]
    records = list(session.records)
    parts = [f"<h1>How {html.escape(session.bundle.name)} wrote this, one token at a time</h1>",
             f'<p class="note">Made with autoreg on {datetime.now(UTC):%Y-%m-%d %H:%M} UTC. '
             "This file works offline: the charts are drawn by the plotly.js copy inside it.</p>"]
    if link:
        parts.append(f'<p>Reopen this moment in the app (needs its server): <a href="{html.escape(link, quote=True)}">'
                     f"{html.escape(link)}</a></p>")
    parts += ["<h2>Prompt and settings</h2>", f"<pre>{html.escape(session.prompt)}</pre>",
              f"<p>Chat mode: {'on' if session.chat else 'off'} · seed {recipe['seed']} · "
              f"{len(records)} decode steps · {len(recipe['forced'])} forced.</p>",
              _segments_table(recipe["segments"])]
    parts += ["<h2>The text, token by token</h2>", token_strip_html(session.views(), records, session.prompt_len),
              '<p class="note">'
              f'{html.escape(strip_text.strip_legend(session.prompt_len, len(records), palette.UNLIKELY))}</p>']
    if records:
        table = history_frame(session.bundle.tokenizer, records).to_html(index=False, escape=True)
        parts += ["<h2>Every step</h2>", table]
    session_kinds = ("autoreg-step-",)  # the step page's charts: drawn again above from the session as it is now
    charts = handout_charts(session) + [(_title(name), fig) for name, fig in shown
                                        if not name.startswith(session_kinds)]
    if charts:
        parts.append("<h2>Charts</h2>")
    for i, (name, fig) in enumerate(charts):
        body = fig.to_html(full_html=False, include_plotlyjs=False, div_id=f"chart{i}",
                           config={"displaylogo": False, "toImageButtonOptions": {"filename": name}})
        parts.append(f'<div class="chart"><h3>{html.escape(name)}</h3>{body}</div>')
    blob = base64.b64encode(json.dumps(data, ensure_ascii=False).encode("utf-8")).decode("ascii")
    parts.append("<h2>Take the session with you</h2><p>Load this file in the app's sidebar (<em>Load a session</em>) "
                 f'to continue from here: <a download="{html.escape(session_file_name(session))}" '
                 f'href="data:application/json;base64,{blob}">save the session file</a>.</p>')
    js = plotly.offline.get_plotlyjs() if plotly_js is None else plotly_js
    title = html.escape(f"autoreg hand-out: {session.prompt[:60]}")
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
            f'<meta name="viewport" content="width=device-width, initial-scale=1"><style>{HANDOUT_CSS}</style>'
            f'<script type="text/javascript">{js}</script></head><body>{"".join(parts)}</body></html>')


def _title(name: str) -> str:
    """'autoreg-attention-layer3-query7' → 'Attention layer3 query7'."""
    return name.removeprefix("autoreg-").replace("-", " ").capitalize()


def _segments_table(segments: list[dict]) -> str:
    if not segments:
        return ""
    rows = [{"from step": s["start"], **{k: _cell(tuple(v)) if isinstance(v, list) else v
                                         for k, v in s["config"].items() if k != "seed"}} for s in segments]
    return pd.DataFrame(rows).to_html(index=False, escape=True)


def handout_of(snapshot: SessionSnapshot, config, shown, base: str | None, model: str | None, keep_long) -> str:
    """The hand-out and its reopen link, both from the same snapshot (made when the button is clicked)."""
    return handout_html(snapshot, config, shown, links.share_url(base, snapshot, config, model, keep_long))


def handout_name(session: Session) -> str:
    return f"autoreg-handout-{_slug(session.prompt)}.html"


# ---------------------------------------------------------------- the sidebar section
def sidebar_tools(where, session: Session | None, config, shown: OrderedDict) -> None:
    """Copy link · Save / load the session · Download the hand-out (files are made only when clicked).

    ``shown`` is the tab's live store of charts: the hand-out takes the ones shown by the time it is clicked.
    """
    where.header("Share and save")
    with where:
        links.copy_link_button()
    if session is not None:
        model = st.session_state.get(keys.MODEL)
        model = None if model in (None, allowed_models()[0]) else model
        # the files are made in another thread, when clicked: what they need from this run is taken now
        base, keep_long = st.context.url, functools.partial(prompt_store().keep, owner=tab_id())
        where.download_button("Save the session (JSON)", data=lambda: session_json(session, config),
                              file_name=session_file_name(session), mime="application/json", key=keys.SAVE_SESSION,
                              on_click="ignore", help="Prompt, settings, seed and every step's numbers; "
                              "load it back to rebuild exactly this session.")
        where.download_button("Hand-out (one HTML file, works offline)",
                              data=lambda: handout_of(session.snapshot(), config, charts.kept_charts(shown), base,
                                                      model, keep_long),
                              file_name=handout_name(session), mime="text/html", key=keys.HANDOUT,
                              on_click="ignore", help="The text, the steps and the charts shown in this tab, with "
                              "plotly.js inside: students open it later without the server.")
    where.file_uploader("Load a session (JSON)", type=["json"], key=keys.LOAD_SESSION, on_change=on_upload,
                        max_upload_size=MAX_FILE_MB, help="A file saved here: the session is replayed and checked.")
