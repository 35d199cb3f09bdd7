"""Under the hood: the training loss, positions (rotary embeddings and the cache), nondeterminism and batching.

The page draws; what each section computes and keeps is the controller's (``controller``).
"""
from __future__ import annotations

from collections.abc import Callable, MutableMapping

import streamlit as st

from autoreg_core.engine.model_spec import dtype_name
from autoreg_core.experiments import batch_invariance as invariance
from autoreg_core.experiments import rope as positions
from autoreg_core.experiments import training_loss as loss
from autoreg_ui import controls, guide, lesson_page, measuring, messages
from autoreg_ui import keys as site_keys
from autoreg_ui.charts import show_chart
from autoreg_ui.family_text import family_name
from autoreg_ui.lessons.hood import controller as hood
from autoreg_ui.lessons.hood import figures as figs
from autoreg_ui.lessons.hood import keys, positions_text, questions, text
from autoreg_ui.sharing import presenter
from autoreg_ui.sharing.presenter import explain
from autoreg_ui.state import EXAMPLE_PROMPTS, session_or_start


def render() -> None:
    """Draw the page; its entry file (``pages/hood.py``) calls this on every run."""
    bundle = lesson_page.set_up(text.TITLE, keys.HOOD_PAGE, questions.QUESTIONS, text.INTRO)
    session = session_or_start()
    if session is None:
        st.stop()
    controls.step_row(keys.HOOD_PAGE)
    messages.show()
    st.text(session.text)
    SECTIONS = {"1 · The training loss": draw_loss,  # the labels are text.LOSS, POSITIONS, DETERMINISM (tested)
                "2 · Positions: rotary embeddings and the cache": draw_positions,
                "3 · Nondeterminism and batch invariance": draw_determinism}
    controls.open_section(SECTIONS, keys.HOOD_SECTION, bundle, session,
                          guides=positions_text.guides_for(hood.positions_kind(bundle.model)))


def run_and_keep(state: MutableMapping, job: site_keys.JobKeys, stamp: tuple, label: str, what: str,
                 compute: Callable[[], object], disabled: bool = False, where=None):
    """The job's button (in ``where``, a column, if given): pressed, ``compute()`` runs at the measuring gate and is
    kept with its stamp. Returns the kept result for ``stamp`` (pressed now or earlier), else None."""
    if (where or st).button(label, key=job.run, disabled=disabled):
        with st.spinner(what):
            failure = hood.compute_and_keep(state, job, stamp, what, compute)
            if failure is not None:
                st.warning(failure)
    return hood.kept_result(state, job, stamp)


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
    ids = list(session.ids)[:hood.MAX_READ]
    scored = run_and_keep(st.session_state, keys.HOOD_LOSS, measuring.stamp(bundle, tuple(ids), session.prompt_len),
                          text.LOSS_RUN, text.LOSS_SPINNER, lambda: loss.text_loss(bundle, ids, session.prompt_len),
                          disabled=len(ids) < 2, where=button_at)
    if scored is None:
        return
    if len(session.ids) > hood.MAX_READ:
        st.caption(text.LOSS_CUT.format(n=hood.MAX_READ))
    records = session.records[:len(scored.generated_losses)]
    labels = [hood.token_label(bundle.tokenizer, t) for t in scored.ids[1:]]
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
    filled = hood.prompt_fills(len(session.ids), scored)
    st.markdown(text.parts_sentence(hood.mean_or_nan(scored.prompt_losses), hood.mean_or_nan(scored.generated_losses),
                                    len(scored.generated_losses), *hood.picks(records), filled=filled))
    st.markdown(text.records_sentence(max(gaps, default=0.0), len(gaps), loss.shared_pass_steps(records[:len(gaps)]),
                                      filled=filled))
    if not chart_first:
        chart()
    st.dataframe(hood.loss_rows(bundle.tokenizer, scored, records), hide_index=True, key=keys.HOOD_LOSS.table)


def draw_positions(bundle, session) -> None:
    kind, family = hood.positions_kind(bundle.model), family_name(bundle.config.model_type)
    if kind != hood.ROTARY:  # learned positions (GPT-2, OPT) or none: no rotation to show
        draw_other_positions(bundle, session, kind, family)
        return
    explain(text.ROPE_EXPLAIN)
    with guide.derivation(text.ROPE_DERIVATION):
        st.latex(text.ROPE_LATEX)
        rope = positions.rope_of(bundle.config)
        st.markdown(text.rope_sentence(rope.base, rope.head_dim, rope.rope_type,  # code in a caption fails contrast
                                       of_head=bundle.spec.head_dim))
    ids = list(session.ids)[-hood.MAX_READ:]
    st.subheader(text.POSITION_IDS_TITLE)
    st.markdown(text.positions_sentence(session.prompt_len, len(session.ids)))
    st.dataframe(hood.position_rows(bundle.tokenizer, session), hide_index=True, key=keys.HOOD_POSITIONS_TABLE)

    st.subheader(text.ANGLES_TITLE)
    limit = max(1, bundle.spec.max_positions - 1)
    pos = int(st.number_input(text.ANGLE_POSITION, 0, limit, min(len(session.ids), limit), key=keys.HOOD_ANGLE_POS))
    angles = positions.angles(rope, pos).tolist()
    st.markdown(text.angles_sentence(pos, angles[0], angles[-1], rope.pairs))
    show_chart(figs.angles_figure([max(a, 1e-12) for a in angles], pos), key=keys.HOOD_ANGLE_FIG,
               filename=f"rope-angles-{pos}")

    cut = text.cut_note(len(ids), len(session.ids))  # the three checks below read ``ids``, from position 0
    st.subheader(text.KEY_TITLE)
    if cut:
        st.caption(cut)
    if not hood.key_check_applies(bundle.model):  # layers the recomputation cannot read
        st.caption(positions_text.key_check_skipped(kind, family))
        draw_shift_and_padding(bundle, ids, cut, learned=False)
        return
    left, right = st.columns(2)
    # a middle position by default: at position 0 the rotation is the identity and the check shows nothing
    at = int(left.number_input(text.KEY_POSITION, 0, len(ids) - 1, len(ids) // 2, key=keys.HOOD_KEY_POS))
    layer = int(right.number_input(text.KEY_LAYER, 0, bundle.spec.n_layers - 1, 0, key=keys.HOOD_KEY_LAYER))
    check = run_and_keep(st.session_state, keys.HOOD_KEY, measuring.stamp(bundle, tuple(ids), at, layer),
                         text.KEY_RUN, text.KEY_RUN, lambda: positions.check_cached_key(bundle, ids, at, layer))
    if check is not None:
        st.markdown(text.key_sentence(check.gap, check.gap_unrotated, check.gap_other_position, at, layer,
                                      hood.key_check_projection(bundle.model), rope.head_dim, bundle.spec.head_dim))
        show_chart(figs.key_figure(check.cached, check.recomputed, check.unrotated), key=keys.HOOD_KEY_FIG,
                   filename=f"cached-key-layer{layer}-pos{at}")

    draw_shift_and_padding(bundle, ids, cut, learned=False)


def draw_other_positions(bundle, session, kind: str, family: str) -> None:
    """The positions section for a model that does not rotate: its learned table (or none), then the same checks."""
    st.caption(positions_text.other_positions_note(kind, family))
    table = hood.position_table(bundle.model)
    if table is not None:
        rows = int(table[0].weight.shape[0]) - table[1]
        explain(positions_text.learned_explain(family, rows, int(table[0].weight.shape[1])))
    else:
        explain(positions_text.no_positions_explain(family))
    ids = list(session.ids)[-hood.MAX_READ:]
    st.subheader(text.POSITION_IDS_TITLE)
    st.markdown(text.positions_sentence(session.prompt_len, len(session.ids)))
    st.dataframe(hood.position_rows(bundle.tokenizer, session), hide_index=True, key=keys.HOOD_POSITIONS_TABLE)
    if table is not None:
        st.subheader(positions_text.VECTOR_TITLE)
        pos = int(st.number_input(text.ANGLE_POSITION, 0, rows - 1, min(len(session.ids), rows - 1),
                                  key=keys.HOOD_ANGLE_POS))
        v = hood.position_vector(bundle.model, pos)
        st.markdown(positions_text.position_vector_sentence(v.position, v.norm, v.next_cosine, v.token_norm))
    st.caption(positions_text.key_check_skipped(kind, family))
    draw_shift_and_padding(bundle, ids, text.cut_note(len(ids), len(session.ids)), learned=kind == hood.LEARNED)


def draw_shift_and_padding(bundle, ids: list[int], cut: str | None, learned: bool) -> None:
    """Off by one, and left padding: the same checks whatever the model's positions (``learned``: how to read them)."""
    st.subheader(text.SHIFT_TITLE)
    if cut:
        st.caption(cut)
    shifted = run_and_keep(st.session_state, keys.HOOD_SHIFT, measuring.stamp(bundle, tuple(ids)), text.SHIFT_RUN,
                           text.SHIFT_RUN, lambda: positions.shifted_step(bundle, ids), disabled=len(ids) < 2)
    if shifted is not None:
        say = positions_text.learned_shift_sentence if learned else text.shift_sentence
        st.markdown(say(shifted.shift, shifted.max_delta_last, shifted.kl_last_bits, shifted.top_changed_last,
                        shifted.max_delta_all, shifted.kl_all_bits))
        st.dataframe(hood.shift_rows(bundle.tokenizer, shifted), hide_index=True, key=keys.HOOD_SHIFT.table)

    st.subheader(text.PAD_TITLE)
    if cut:
        st.caption(cut)
    longer = hood.longer_row(bundle, ids)
    padded = run_and_keep(st.session_state, keys.HOOD_PAD, measuring.stamp(bundle, tuple(ids)), text.PAD_RUN,
                          text.PAD_RUN, lambda: positions.padded_positions(bundle, ids, longer), disabled=len(ids) < 2)
    if padded is not None:
        st.markdown(text.pad_sentence(padded.lengths, padded.width, padded.max_delta_own, padded.max_delta_column,
                                      padded.top_changed_column))
        st.dataframe(hood.pad_rows(padded), hide_index=True, key=keys.HOOD_PAD.table)


def draw_determinism(bundle, session) -> None:
    explain(text.DETERMINISM_EXPLAIN)
    try:
        ids, index = hood.last_step(session)
    except ValueError as exc:
        st.info(str(exc))
        return
    others = hood.other_rows(bundle)
    found = run_and_keep(st.session_state, keys.HOOD_BATCH, measuring.stamp(bundle, tuple(ids)), text.BATCH_RUN,
                         text.SEARCH_SPINNER, lambda: invariance.step_invariance(bundle, ids, others))
    if found is not None:
        which = text.step_label(index is not None, index or 0, hood.step_cut(session))
        st.markdown(text.batch_sentence(which, found.max_delta, found.gap, [s.rows for s in found.sizes]))
        st.markdown(text.flip_sentence(found.gap, found.max_delta, [f.rows for f in found.flipped]))
        st.markdown(text.api_sentence(found.max_delta, found.gap, text.machine_label(str(bundle.device),
                                                                                     dtype_name(bundle.dtype))))
        show_chart(figs.batch_figure([s.rows for s in found.sizes], [s.max_delta for s in found.sizes], found.gap),
                   key=keys.HOOD_BATCH_FIG, filename="solo-vs-shared-pass")
    st.caption(text.search_bounds(len(EXAMPLE_PROMPTS), hood.SEARCH_STEPS_EACH, hood.SEARCH_MAX_STEPS,
                                  hood.SEARCH_BUDGET_S, invariance.BATCH_SIZES))
    prompts = [list(bundle.tokenizer(p)["input_ids"]) for p in EXAMPLE_PROMPTS]
    search = run_and_keep(st.session_state, keys.HOOD_SEARCH, measuring.stamp(bundle, "search"), text.SEARCH_RUN,
                          text.SEARCH_SPINNER,
                          lambda: invariance.search_flip(bundle, prompts, others, hood.SEARCH_STEPS_EACH,
                                                         max_steps=hood.SEARCH_MAX_STEPS,
                                                         budget_s=hood.SEARCH_BUDGET_S))
    if search is not None:
        st.markdown(hood.search_markdown(bundle.tokenizer, search))
