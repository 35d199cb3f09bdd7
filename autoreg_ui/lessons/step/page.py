"""Step through generation: one decode step per click, with everything the step decided."""
import html

import streamlit as st

from autoreg_core.engine.model_spec import dtype_name
from autoreg_core.experiments.generate_call import generate_snippet, loop_snippet
from autoreg_ui import after_run, controls, lesson_page, lesson_path, messages, palette, strip_text
from autoreg_ui.charts import show_chart
from autoreg_ui.classroom import mode as class_mode
from autoreg_ui.lessons.step import keys
from autoreg_ui.lessons.step import questions as step_questions
from autoreg_ui.lessons.step import text as step_text
from autoreg_ui.prompt import prompt_box
from autoreg_ui.sharing import export, presenter
from autoreg_ui.state import current_config, current_session, keep_widget_values
from autoreg_ui.step_figures import (
    history_frame,
    logprob_figure,
    session_views,
    strip_memo,
    token_strip_html,
    top_of_pipeline,
    top_of_record,
    topn_figure,
    with_click_area,
)


def _running() -> bool:
    """A text has steps (the page's head folds away); presenter mode folds it always."""
    session = current_session()
    return bool(session is not None and session.records) and not presenter.active()


def render() -> None:
    """Draw the page; its entry file (``pages/step.py``) calls this on every run."""
    running = _running()  # once a text is running, the introduction and the prompt fold: the step comes first
    bundle = lesson_page.set_up("Step through generation", "step", step_questions.QUESTIONS, step_text.LOOP,
                                latex=step_text.CHAIN_RULE, latex_label=step_text.CHAIN_RULE_LABEL,
                                fold_intro=running)
    if class_mode.follow_here():  # a student following a class sees the teacher's text here
        st.stop()
    step_slot = st.container() if presenter.active() else None  # on a projector the step comes first, the prompt below
    session = prompt_box(folded=running)
    messages.show()
    if session is None:
        st.info("Fix the prompt above, then press **Start from this prompt**.")
        st.stop()
    session.prefill()  # when the page opens, not at the first click: a class pressing together pays decode steps only


    @after_run.fragment
    def stepper() -> None:
        if _running() != running:  # the first step (or a reset): the whole page again, to fold or unfold its head
            st.rerun()
        n = controls.step_buttons("step")
        notes = st.container() if n else None  # Generate N's messages come after its run, above the strip
        if notes is None:
            messages.show()  # a click's messages (a refused step), drawn right here: no container per click
        strip = st.empty()  # Generate N streams its tokens into the strip as they come

        def draw_strip(_record=None) -> None:
            strip.markdown(token_strip_html(session_views(session), session.records, session.prompt_len,
                                            memo=strip_memo(session)), unsafe_allow_html=True)
        if n:
            controls.generate(n, on_step=draw_strip)
            with notes:
                messages.show()
        records = session.records
        draw_strip()
        if records and records[-1].stop is not None:
            st.success(f"Generation stopped: {records[-1].stop[1]}.")
        view = st.container()  # this step's picture right under the strip; the strip's key and the numbers after it
        legend = strip_text.strip_legend(session.prompt_len, len(records), palette.UNLIKELY)
        st.caption(legend + " " + strip_text.STRIP_MARKS)

        last = records[-1] if records else None
        row = st.container(horizontal=True)  # one block for five metrics: columns would send six (one per column)
        row.metric("Generated tokens", len(records))
        row.metric("Sequence log-prob", f"{session.sequence_logprob():.2f}" if last else "—",
                   help=step_text.LOGPROB_HELP)
        row.metric("Perplexity", f"{session.perplexity():.2f}" if last else "—",
                   help=step_text.PERPLEXITY_HELP)
        row.metric("Entropy of this step", f"{last.entropy_bits:.2f} bits" if last else "—",
                   help=step_text.ENTROPY_HELP)
        row.metric("Last step", f"{last.time_ms:.0f} ms" if last else "—",
                   help=step_text.LAST_STEP_HELP)

        if last is not None:
            st.caption(step_text.pass_note(last.forward_ms, last.pass_rows))
        top_n = st.slider("Bars to show (top-N)", 3, 50, 15, key=keys.TOP_N)
        keep_widget_values(st.session_state, (keys.FORCE_TEXT,))  # typed text is kept while its view is closed
        with view:
            controls.open_section(VIEWS, keys.STEP_VIEW, records, top_n, guides=step_text.GUIDES)  # only the open one


    def this_step(records, top_n: int) -> None:
        """The distribution the last token was drawn from, before and after the filters."""
        last = records[-1] if records else None
        if last is None:
            st.info("Press **Next token** (or the N key) to run the first decode step.")
            return
        how = "forced" if last.forced else ("greedy" if last.config.greedy else "sampled")
        label = html.escape(session_views(session)[-1].label, quote=False)  # a chat's “<|im_end|>” is no tag
        # one line on a projector: the rest is in the strip's hover and the numbers below
        title = step_text.step_title(last.index, how, label, last.prob, last.prob_filtered, last.rank, last.kept,
                                     one_line=presenter.active())
        figure = topn_figure(bundle.tokenizer, top_of_record(last, top_n), title)
        if presenter.active():  # with the step's buttons and strip on one 720 px screen
            on_path = lesson_path.current(st.session_state) is not None  # the path's bar takes the room above
            # the bars are the tokens: no axis title
            figure.update_layout(height=PATH_CHART_PX if on_path else PROJECTOR_CHART_PX, xaxis_title=None)
        show_chart(figure, key=keys.STEP_LAST_CHART, filename=f"step-{last.index}-top-tokens")


    def next_candidates(records, top_n: int) -> None:
        """The next step's candidates before anything is drawn: click one (or type one) to force it."""
        st.caption("Click a bar to force that token as the next one (instead of drawing it).")
        pipeline = session.next_pipeline(current_config())
        event = show_chart(with_click_area(topn_figure(bundle.tokenizer, top_of_pipeline(pipeline, top_n),
                                                       "Candidates for the next token (nothing drawn yet)")),
                           key=f"next_chart_{len(records)}", filename=f"step-{len(records) + 1}-candidates",
                           on_select="rerun", selection_mode="points")  # a new key per step: a fresh selection
        picked = [p.get("customdata") for p in (event.selection.points if event and event.selection else []) or []]
        picked = [i for i in picked if isinstance(i, int) and i >= 0]
        if picked:
            controls.force(picked[0])
            st.rerun(scope="fragment")
        f1, f2 = st.columns([3, 1], vertical_alignment="bottom")
        f1.text_input("…or type one token to force (mind the leading space, e.g. ' mat')", key=keys.FORCE_TEXT)
        f2.button("Force this token", key=keys.FORCE_BUTTON,
                  on_click=lambda: controls.force(st.session_state.get(keys.FORCE_TEXT, "")))


    def chain_rule(records, _top_n: int) -> None:
        """Each step adds log p(token | everything before it) to the sequence's log-prob."""
        if not records:
            st.info("The running log-prob appears after the first step.")
            return
        show_chart(logprob_figure(records), key=keys.STEP_CHAIN_CHART, filename="step-chain-rule")


    def history(records, _top_n: int) -> None:
        """Every step as a row, and the same as a CSV with the prompt and settings."""
        if not records:
            st.info("The table fills in as you step.")
            return
        st.dataframe(history_frame(bundle.tokenizer, records), hide_index=True, key=keys.HISTORY)
        st.download_button("Download CSV (with the prompt and settings of every step)",
                           lambda: export.history_csv(session), file_name="autoreg_steps.csv", mime="text/csv",
                           key=keys.HISTORY_CSV, on_click="ignore")


    PROJECTOR_CHART_PX = 315  # grown by presenter mode's charts.HEIGHT_GROWTH
    PATH_CHART_PX = 260  # the same under a lesson path's bar (one line in presenter mode)


    # One view at a time: a click redraws the strip, the numbers and the open view only.
    VIEWS = {"This step's distribution": this_step, "Force the next token": next_candidates,
             "The chain rule, running": chain_rule, "History": history}

    with step_slot if step_slot is not None else st.container():
        stepper()

    with st.expander("The same generation in one `model.generate` call"):
        st.markdown(step_text.generate_call(bundle.device.type))
        st.code(generate_snippet(current_config(), bundle, session.prompt, session.chat), language="python")

    with st.expander("The same loop written out by hand"):
        st.markdown(step_text.loop_code(bundle.device.type))
        st.code(loop_snippet(current_config(), bundle, session.prompt, session.chat), language="python")

    with st.expander("Around the loop: ideas these steps make visible"):
        last = session.records[-1].time_ms if session.records else None
        st.markdown(step_text.around_the_loop(len(session.records), dtype_name(bundle.dtype), last))
