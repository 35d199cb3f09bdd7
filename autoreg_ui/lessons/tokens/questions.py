"""The tokens page's predict-then-check questions: scripts, a leading space and an emoji, tokenized live."""
from __future__ import annotations

from autoreg_core.engine.tokens import script_count, token_views
from autoreg_ui import messages
from autoreg_ui.lessons.tokens import text
from autoreg_ui.predict import Checked, Live, Question, answer, bucket


def tokens_script(live: Live) -> Checked:
    tok = live.bundle.tokenizer
    en = script_count(tok, "English", text.SAMPLES["English"])
    ta = script_count(tok, "Tamil", text.SAMPLES["Tamil"])
    right = 2 if abs(en.tokens - ta.tokens) <= 1 else (0 if en.tokens > ta.tokens else 1)
    return Checked(right, answer(text.TOKENS_SCRIPT, en_tokens=en.tokens, en_chars=en.characters,
                                 ta_tokens=ta.tokens, ta_chars=ta.characters))


def tokens_space(live: Live) -> Checked:
    tok = live.bundle.tokenizer
    plain = tok("Paris", add_special_tokens=False)["input_ids"]
    spaced = tok(" Paris", add_special_tokens=False)["input_ids"]
    ids = lambda seq: " + ".join(str(i) for i in seq)  # noqa: E731
    reading = text.SPACE_SAME if plain == spaced else text.SPACE_APART
    return Checked(0 if plain == spaced else 1,
                   answer(text.TOKENS_SPACE, plain_ids=ids(plain), space_ids=ids(spaced), reading=reading))


def tokens_emoji(live: Live) -> Checked:
    tok = live.bundle.tokenizer
    ids = tok("🐈", add_special_tokens=False)["input_ids"]
    pieces = ", ".join(f"“{messages.plain(v.label)}” (id {v.id})" for v in token_views(tok, ids))
    reading = text.EMOJI_ONE_PIECE if len(ids) == 1 else text.EMOJI_BYTES
    return Checked(bucket(len(ids), (1, 4)), answer(text.TOKENS_EMOJI, n=len(ids), pieces=pieces, reading=reading))


QUESTIONS: tuple[Question, ...] = (
    Question("script", text.TOKENS_SCRIPT, tokens_script, needs_session=False),
    Question("space", text.TOKENS_SPACE, tokens_space, needs_session=False),
    Question("emoji", text.TOKENS_EMOJI, tokens_emoji, needs_session=False),
)
