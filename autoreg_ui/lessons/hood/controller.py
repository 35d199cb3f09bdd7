"""The "Under the hood" page's controller: what each section computes, kept under a stamp, and draws.

Every computation runs behind a button, at the server's one measuring gate (``measuring.turn``), and is
kept in the tab's state stamped with the model and the text it was computed on, so a new token or prompt
never shows stale numbers. Functions that keep something take the state as a mapping.
"""
from __future__ import annotations

import math
from collections.abc import Callable, MutableMapping
from functools import lru_cache

import streamlit as st

from autoreg_core.engine.tokens import sequence_text, single_token_view
from autoreg_core.experiments import batch_invariance as invariance
from autoreg_core.experiments import rope as positions
from autoreg_core.experiments import training_loss as loss
from autoreg_core.experiments.teacher_forcing import MAX_TOKENS
from autoreg_ui import guide, measuring
from autoreg_ui import keys as site_keys
from autoreg_ui.app_files import app_folder
from autoreg_ui.charts import show_chart
from autoreg_ui.lessons.hood import figures as figs
from autoreg_ui.lessons.hood import keys, text
from autoreg_ui.sharing import presenter
from autoreg_ui.sharing.presenter import explain
from autoreg_ui.state import EXAMPLE_PROMPTS

MAX_READ = MAX_TOKENS  # the most recent tokens a section reads
LONG_PROMPT_PATH = app_folder() / "assets" / "long_prompt.txt"
SEARCH_STEPS_EACH, SEARCH_MAX_STEPS, SEARCH_BUDGET_S = 8, 48, 90.0  # the flip search's bounds


def mean_or_nan(values: list[float]) -> float:
    return loss.mean(values)


@lru_cache(maxsize=1)
def long_text() -> str:
    return LONG_PROMPT_PATH.read_text(encoding="utf-8").strip()


def other_rows(bundle) -> list[list[int]]:
    """The other tabs of a shared pass: the app's example prompts and the long example's opening (7 rows)."""
    rows = [list(bundle.tokenizer(p)["input_ids"]) for p in EXAMPLE_PROMPTS]
    rows.append(list(bundle.tokenizer(long_text())["input_ids"][:40]))
    return [[int(i) for i in r] for r in rows if len(r) >= 2]


def last_step(session) -> tuple[list[int], int | None]:
    """The text whose last token the learner's last step fed (the step that chose the last generated token
    read ``ids[:context_len]``), and that step's index; without steps, the whole text (the next step)."""
    if session.records:
        record = session.records[-1]
        ids = list(session.ids[:record.context_len])
        index = record.index
    else:
        ids, index = list(session.ids), None
    if len(ids) < 2:
        raise ValueError(text.NOTHING_CACHED)
    return ids[-MAX_READ:], index


def recorded_gap(session) -> float:
    """The top-two logit gap of the last step, from its record: ln(p₁ / p₂) (the softmax keeps logit differences)."""
    if not session.records:
        return float("nan")
    probs = session.records[-1].top_probs
    return math.log(float(probs[0]) / float(probs[1])) if float(probs[1]) > 0 else float("inf")


def run_and_keep(state: MutableMapping, job: site_keys.JobKeys, stamp: tuple, label: str, what: str,
                 compute: Callable[[], object], disabled: bool = False, where=None):
    """The job's button (in ``where``, a column, if given): pressed, ``compute()`` runs at the measuring gate and is
    kept with its stamp. Returns the kept result for ``stamp`` (pressed now or earlier), else None."""
    if (where or st).button(label, key=job.run, disabled=disabled):
        with st.spinner(what):
            try:
                with measuring.turn(what):
                    measuring.keep(state, job.kept, measuring.Kept(stamp, compute()))
            except (ValueError, measuring.Busy) as exc:
                st.warning(str(exc))
    found = measuring.kept(state, job.kept, stamp)
    return None if found is None else found.result


def _label(tokenizer, token_id: int) -> str:
    return single_token_view(tokenizer, int(token_id)).label


# ---------------------------------------------------------------- 1 · the training loss
def loss_rows(tokenizer, scored: loss.TextLoss, records) -> list[dict]:
    recorded = [-r.logprob for r in records]
    rows = []
    for t, (term, top) in enumerate(zip(scored.losses, scored.top_ids), start=1):
        step = t - scored.prompt_len
        rows.append({"token": t + 1, "text": _label(tokenizer, scored.ids[t]),
                     "part": "prompt" if step < 0 else "generated", "−log p, one pass": round(term, 5),
                     "−log p, recorded by the step": round(recorded[step], 5) if 0 <= step < len(recorded) else None,
                     "model's own top guess": _label(tokenizer, top)})
    return rows


def section_head(explanation: str, derivation: str):
    """A section's explanation and derivation box, and where its button goes: stacked normally; on a projector
    the two closed boxes and the button share one row, so the section's chart starts on the first screen."""
    if presenter.active():
        left, middle, right = st.columns([1, 1.4, 1.4], vertical_alignment="center")
        explain(explanation, where=left)
        return guide.derivation(derivation, where=middle), right
    explain(explanation)
    return guide.derivation(derivation), None


def draw_loss(bundle, session) -> None:
    box, button_at = section_head(text.LOSS_EXPLAIN, text.LOSS_DERIVATION)
    with box:
        st.latex(text.LOSS_LATEX)
        st.markdown(text.NATS)
    ids = list(session.ids)[:MAX_READ]
    scored = run_and_keep(st.session_state, keys.HOOD_LOSS, measuring.stamp(bundle, tuple(ids), session.prompt_len),
                          text.LOSS_RUN, text.LOSS_SPINNER, lambda: loss.text_loss(bundle, ids, session.prompt_len),
                          disabled=len(ids) < 2, where=button_at)
    if scored is None:
        return
    if len(session.ids) > MAX_READ:
        st.caption(text.LOSS_CUT.format(n=MAX_READ))
    records = session.records[:len(scored.generated_losses)]
    labels = [_label(bundle.tokenizer, t) for t in scored.ids[1:]]
    chart_first = presenter.active()  # on a projector the chart comes first, inside the first screen

    def chart() -> None:
        show_chart(figs.loss_figure(labels, scored.losses, len(scored.prompt_losses), [-r.logprob for r in records],
                                    height=figs.PROJECTOR_HEIGHT if chart_first else figs.HEIGHT),
                   key=keys.HOOD_LOSS_FIG, filename="training-loss-terms")

    if chart_first:
        chart()
    cols = st.columns(4)
    cols[0].metric("Loss (cross-entropy)", f"{scored.loss:.3f} nats", help="The mean of every term below.")
    cols[1].metric("Perplexity", f"{scored.perplexity:,.1f}", help="exp(loss)")
    cols[2].metric("Terms from one pass", f"{len(scored.losses):,}", help=f"One forward pass: {scored.ms:.0f} ms.")
    gaps = loss.recorded_gaps(scored, records)
    cols[3].metric("Largest gap to the records", f"{max(gaps):.1e} nats" if gaps else "—",
                   help="|one-pass term + recorded log-prob| over the generated tokens.")
    st.markdown(text.loss_sentence(len(scored.ids), scored.loss, scored.perplexity, scored.hits))
    st.markdown(text.parts_sentence(mean_or_nan(scored.prompt_losses), mean_or_nan(scored.generated_losses),
                                    len(scored.generated_losses)))
    st.markdown(text.records_sentence(max(gaps, default=0.0), len(gaps)))
    if not chart_first:
        chart()
    st.dataframe(loss_rows(bundle.tokenizer, scored, records), hide_index=True, key=keys.HOOD_LOSS.table)


# ---------------------------------------------------------------- 2 · positions
RECENT_STEPS = 8  # steps with a row of their own in the position table


def position_rows(tokenizer, session) -> list[dict]:
    """The prefill's positions, then one row per recent step: the token it fed and at which position."""
    rows = [{"pass": "prefill", "tokens fed": session.prompt_len, "position ids": f"0 … {session.prompt_len - 1}"}]
    earlier, recent = session.records[:-RECENT_STEPS], session.records[-RECENT_STEPS:]
    if earlier:  # folded into one row, so the ids run on without a gap
        first, last = (positions.step_positions(r.context_len, 1)[0] for r in (earlier[0], earlier[-1]))
        rows.append({"pass": text.earlier_steps(earlier[0].index, earlier[-1].index), "tokens fed": len(earlier),
                     "position ids": f"{first} … {last}" if last > first else str(first)})
    for record in recent:
        rows.append({"pass": f"step {record.index}", "tokens fed": 1,
                     "position ids": str(positions.step_positions(record.context_len, 1)[0]),
                     "token fed": _label(tokenizer, record.token_id)})
    return rows


def draw_positions(bundle, session) -> None:
    explain(text.ROPE_EXPLAIN)
    with guide.derivation(text.ROPE_DERIVATION):
        st.latex(text.ROPE_LATEX)
        rope = positions.rope_of(bundle.config)
        st.markdown(text.rope_sentence(rope.base, rope.head_dim, rope.rope_type))  # code in a caption fails contrast
    ids = list(session.ids)[-MAX_READ:]
    st.subheader(text.POSITION_IDS_TITLE)
    st.markdown(text.positions_sentence(session.prompt_len, len(session.ids)))
    st.dataframe(position_rows(bundle.tokenizer, session), hide_index=True, key=keys.HOOD_POSITIONS_TABLE)

    st.subheader(text.ANGLES_TITLE)
    limit = max(1, bundle.spec.max_positions - 1)
    pos = int(st.number_input(text.ANGLE_POSITION, 0, limit, min(len(session.ids), limit), key=keys.HOOD_ANGLE_POS))
    angles = positions.angles(rope, pos).tolist()
    st.markdown(text.angles_sentence(pos, angles[0], angles[-1], rope.pairs))
    show_chart(figs.angles_figure([max(a, 1e-12) for a in angles], pos), key=keys.HOOD_ANGLE_FIG,
               filename=f"rope-angles-{pos}")

    st.subheader(text.KEY_TITLE)
    left, right = st.columns(2)
    # a middle position by default: at position 0 the rotation is the identity and the check shows nothing
    at = int(left.number_input(text.KEY_POSITION, 0, len(ids) - 1, len(ids) // 2, key=keys.HOOD_KEY_POS))
    layer = int(right.number_input(text.KEY_LAYER, 0, bundle.spec.n_layers - 1, 0, key=keys.HOOD_KEY_LAYER))
    check = run_and_keep(st.session_state, keys.HOOD_KEY, measuring.stamp(bundle, tuple(ids), at, layer),
                         text.KEY_RUN, text.KEY_RUN, lambda: positions.check_cached_key(bundle, ids, at, layer))
    if check is not None:
        st.markdown(text.key_sentence(check.gap, check.gap_unrotated, check.gap_other_position, at, layer))
        show_chart(figs.key_figure(check.cached, check.recomputed, check.unrotated), key=keys.HOOD_KEY_FIG,
                   filename=f"cached-key-layer{layer}-pos{at}")

    st.subheader(text.SHIFT_TITLE)
    shifted = run_and_keep(st.session_state, keys.HOOD_SHIFT, measuring.stamp(bundle, tuple(ids)), text.SHIFT_RUN,
                           text.SHIFT_RUN, lambda: positions.shifted_step(bundle, ids), disabled=len(ids) < 2)
    if shifted is not None:
        st.markdown(text.shift_sentence(shifted.shift, shifted.max_delta_last, shifted.kl_last_bits,
                                        shifted.top_changed_last, shifted.max_delta_all, shifted.kl_all_bits))
        st.dataframe(shift_rows(bundle.tokenizer, shifted), hide_index=True, key=keys.HOOD_SHIFT.table)

    st.subheader(text.PAD_TITLE)
    longer = longer_row(bundle, ids)
    padded = run_and_keep(st.session_state, keys.HOOD_PAD, measuring.stamp(bundle, tuple(ids)), text.PAD_RUN,
                          text.PAD_RUN, lambda: positions.padded_positions(bundle, ids, longer), disabled=len(ids) < 2)
    if padded is not None:
        st.markdown(text.pad_sentence(padded.lengths, padded.width, padded.max_delta_own, padded.max_delta_column,
                                      padded.top_changed_column))
        st.dataframe(pad_rows(padded), hide_index=True, key=keys.HOOD_PAD.table)


def shift_rows(tokenizer, shifted: positions.Shifted) -> list[dict]:
    return [{"rank": i + 1, "right positions": _label(tokenizer, a), "last token one late": _label(tokenizer, b),
             "whole text shifted": _label(tokenizer, c)}
            for i, (a, b, c) in enumerate(zip(shifted.top_right, shifted.top_last_off, shifted.top_all_off))]


def longer_row(bundle, ids: list[int]) -> list[int]:
    """Another tab's text, longer than this one: the long example, cut 16 tokens past this text's length."""
    return [int(i) for i in bundle.tokenizer(long_text())["input_ids"][:len(ids) + 16]]


def pad_rows(padded: positions.PaddedRows) -> list[dict]:
    return [{"row": name, "real tokens cached": n, "pad columns": padded.width - n,
             "position id the batcher feeds": own, "position if columns were counted": col}
            for name, n, own, col in zip(("your text", "a longer text"), padded.lengths, padded.own_positions,
                                         padded.column_positions)]


# ---------------------------------------------------------------- 3 · nondeterminism and batch invariance
def draw_determinism(bundle, session) -> None:
    explain(text.DETERMINISM_EXPLAIN)
    try:
        ids, index = last_step(session)
    except ValueError as exc:
        st.info(str(exc))
        return
    others = other_rows(bundle)
    found = run_and_keep(st.session_state, keys.HOOD_BATCH, measuring.stamp(bundle, tuple(ids)), text.BATCH_RUN,
                         text.SEARCH_SPINNER, lambda: invariance.step_invariance(bundle, ids, others))
    if found is not None:
        which = text.step_label(index is not None, index or 0)
        st.markdown(text.batch_sentence(which, found.max_delta, found.gap, [s.rows for s in found.sizes]))
        st.markdown(text.flip_sentence(found.gap, found.max_delta))
        st.markdown(text.api_sentence(found.max_delta, found.gap))
        show_chart(figs.batch_figure([s.rows for s in found.sizes], [s.max_delta for s in found.sizes], found.gap),
                   key=keys.HOOD_BATCH_FIG, filename="solo-vs-shared-pass")
    st.caption(text.search_bounds(len(EXAMPLE_PROMPTS), SEARCH_STEPS_EACH, SEARCH_MAX_STEPS, SEARCH_BUDGET_S,
                                 invariance.BATCH_SIZES))
    prompts = [list(bundle.tokenizer(p)["input_ids"]) for p in EXAMPLE_PROMPTS]
    search = run_and_keep(st.session_state, keys.HOOD_SEARCH, measuring.stamp(bundle, "search"), text.SEARCH_RUN,
                          text.SEARCH_SPINNER,
                          lambda: invariance.search_flip(bundle, prompts, others, SEARCH_STEPS_EACH,
                                                         max_steps=SEARCH_MAX_STEPS, budget_s=SEARCH_BUDGET_S))
    if search is not None:
        st.markdown(search_markdown(bundle.tokenizer, search))


def search_markdown(tokenizer, search: invariance.FlipSearch) -> str:
    from autoreg_ui.messages import plain

    flip = search.found
    if flip is None:
        return text.search_none(search.texts, search.steps, search.passes, search.stopped, search.smallest_gap,
                                search.largest_delta)
    return text.search_found(flip.rows, plain(_label(tokenizer, flip.solo_top)),
                             plain(_label(tokenizer, flip.batched_top)), flip.gap, flip.max_delta,
                             plain(sequence_text(tokenizer, flip.ids[-12:])))
