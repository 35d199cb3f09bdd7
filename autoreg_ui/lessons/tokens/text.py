"""What the tokens page says: the text as the model reads it, and how other scripts tokenize."""
from __future__ import annotations

from autoreg_ui.strip_text import STRIP_MARKS

TITLE = "Tokens: the text as the model reads it"
INTRO = ("The model never sees letters. A tokenizer cuts the text into pieces from a fixed vocabulary and "
         "hands the model their ids. This model's tokenizer works on **bytes** (byte-level BPE): common "
         "words are one token, rare words several, and any character can be spelled out from its UTF-8 "
         "bytes, so nothing is ever unknown.")
BOX = "Text to tokenize"
TABLE_NOTE = ("**piece** is the vocabulary entry itself (this tokenizer writes a leading space as Ġ and a "
              "newline as Ċ); **bytes** are what it stands for; **text** is the characters it completes. A "
              "token that holds only part of a character shows its bytes in ⟨ ⟩ instead of a broken '�': the "
              "character's other bytes are in the tokens next to it (a character of 2 to 4 UTF-8 bytes can be "
              "split over up to as many tokens).")
SCRIPTS_TITLE = "The same sentence costs more tokens in other scripts"
SCRIPTS_INTRO = ("The same short sentence in several scripts, tokenized live, ranked by its token count against "
                 "English's. A vocabulary learned mostly from English text has few pieces for other scripts, so the "
                 "same sentence takes more tokens there: more decode steps, more KV cache and more cost for the same "
                 "meaning. Tokens per character is a side column only: a Chinese character carries far more of the "
                 "meaning than a Latin letter, so per character it cannot compare cost.")
BASELINE = "English"  # the script every other one is compared with
# The same idea in each script (our own sentences), plus emoji and code.
SAMPLES = {
    "English": "The cat is sleeping on the warm mat.",
    "Chinese": "猫在温暖的垫子上睡觉。",
    "Arabic": "القطة نائمة على الحصيرة الدافئة.",
    "Tamil": "பூனை சூடான பாயில் தூங்குகிறது.",
    "Emoji": "🐈 💤 on a 🔥 mat 🎉",
    "Code": "for cat in mats:\n    print(cat)",
}
EMPTY = "Type some text to see its tokens."


CHUNKS_NOTE = ("Each chip is one token of the text above; its colour only sets it apart from its neighbours. "
               "Hover a chip for its position (from 0, as in the table), id and piece. A chip in ⟨ ⟩ shows the bytes "
               "of a token that holds only part of a character. " + STRIP_MARKS)


def count_sentence(tokens: int, characters: int, utf8_bytes: int) -> str:
    """One line under the coloured tokens, from the counts."""
    per = tokens / characters if characters else 0.0
    return (f"{tokens} tokens for {characters} characters ({utf8_bytes} UTF-8 bytes): "
            f"{per:.2f} tokens per character.")


def versus_baseline(row, rows) -> float:
    """Tokens for the same sentence relative to English's (``rows``: ``tokens.ScriptCount``; nan without English)."""
    base = next((r for r in rows if r.name == BASELINE), None)
    return row.tokens / base.tokens if base is not None and base.tokens else float("nan")


def ranked_scripts(rows) -> list:
    """The scripts by their token count for the same sentence, cheapest first."""
    return sorted(rows, key=lambda r: r.tokens)


def scripts_sentence(rows) -> str:
    """Which script costs most and least for the same sentence, against English (``rows``: ``tokens.ScriptCount``)."""
    ranked = ranked_scripts(rows)
    if not ranked:
        return ""
    base = next((r for r in rows if r.name == BASELINE), None)
    if base is None or not base.tokens:
        low, high = ranked[0], ranked[-1]
        return (f"For the same sentence **{high.name}** takes {high.tokens} tokens and **{low.name}** {low.tokens}: "
                f"{high.tokens / max(low.tokens, 1):.1f}× as many.")
    dearer = [r for r in ranked if r.tokens > base.tokens]
    cheaper = [r for r in ranked if r.tokens < base.tokens]
    text = f"For the same sentence {BASELINE} takes **{base.tokens} tokens**."
    if dearer:
        high = dearer[-1]
        text += (f" The costliest is **{high.name}**: {high.tokens} tokens, **{high.tokens / base.tokens:.1f}×** "
                 f"{BASELINE}'s" + (f"; {', '.join(f'{r.name} {r.tokens / base.tokens:.1f}×' for r in dearer[:-1])}"
                                   if len(dearer) > 1 else "") + ".")
    if cheaper:
        text += " Fewer than English: " + ", ".join(f"{r.name} {r.tokens}" for r in cheaper) + "."
    if not dearer and not cheaper:
        text += " Every script here takes as many."
    return text


def token_rows(views) -> list[dict]:
    """One row per token for the table (``views``: ``tokens.TokenView``)."""
    return [{"position": i, "id": v.id, "piece": v.piece, "bytes": v.data.hex(" "),
             "text": v.label, "splits a character": v.partial} for i, v in enumerate(views)]


def script_rows(rows) -> list[dict]:
    """The scripts table, ranked by tokens for the same sentence; tokens per character is a side column."""
    return [{"script": r.name, "text": r.text, "tokens": r.tokens,
             f"× {BASELINE}": round(versus_baseline(r, rows), 2), "characters": r.characters,
             "UTF-8 bytes": r.utf8_bytes, "tokens per character (side column)": round(r.tokens_per_character, 2),
             "tokens shown as bytes": r.partial_tokens} for r in ranked_scripts(rows)]


# ---------------------------------------------------------------- vocabulary sizes, with sources
VOCABS_TITLE = "How big are vocabularies?"
VOCABS_INTRO = ("Every logit vector has one entry per row of the model's output matrix, one per vocabulary token "
                "(some models add a few unused rows as padding), so the vocabulary size sets the width of the last "
                "matrix product of every step. This model's row is read from its tokenizer now; the others are the "
                "published tokenizer sizes (GPT-4o's output width is not published).")
# (model, vocabulary size, where the number is published)
PUBLISHED_VOCABS = (
    ("GPT-2 (2019)", 50_257, "Radford et al. 2019, and the released tokenizer"),
    ("Llama 2 (2023)", 32_000, "Touvron et al. 2023, Llama 2 paper"),
    ("Llama 3 (2024)", 128_256, "Meta, Llama 3 model card and tokenizer config"),
    ("GPT-4o (2024)", 200_000,
     "OpenAI tiktoken, o200k_base encoding: about 200,000 tokens. Its n_vocab, 200,019, is the largest id + 1: the "
     "special tokens sit at ids 199,999 and 200,018, and the ids between them are unassigned. GPT-4o's output width "
     "(its number of logits) is not published"),
)


def vocab_rows(this_model: str, this_size: int) -> list[dict]:
    """The published sizes and this model's, measured from its tokenizer."""
    rows = [{"model": name, "vocabulary": size, "source": source} for name, size, source in PUBLISHED_VOCABS]
    rows.append({"model": f"{this_model} (running here)", "vocabulary": this_size,
                 "source": "len(tokenizer), read now"})
    return sorted(rows, key=lambda r: r["vocabulary"])


# ---------------------------------------------------------------- predict, then check (questions.py)
# Each question: (ask, choices, answer template). The answer names the right choice itself.
TOKENS_SCRIPT = ("Which needs more tokens for the same sentence: English or Tamil?",
                 ("English", "Tamil", "about the same"),
                 "Tokenized now: English **{en_tokens}** tokens for {en_chars} characters, Tamil **{ta_tokens}** "
                 "for {ta_chars}. A vocabulary learned mostly from English splits other scripts into small pieces, "
                 "down to byte pieces.")
TOKENS_SPACE = ("Are “Paris” and “ Paris” (with a leading space) the same token?",
                ("yes", "no"),
                "{reading}: “Paris” is id {plain_ids} and “ Paris” is id {space_ids}.")
SPACE_APART = ("No. The space belongs to the token that follows it, so the same word has two spellings in the "
               "vocabulary")
SPACE_SAME = "Yes, for this tokenizer: the leading space made no difference here"
TOKENS_EMOJI = ("The cat emoji 🐈 is one character (4 bytes in UTF-8). How many tokens is it for this model?",
                ("1", "2 to 4", "more than 4"),
                "**{n}**, tokenized now: {pieces}. {reading}")
EMOJI_ONE_PIECE = "This vocabulary has a piece for the whole character."
EMOJI_BYTES = ("This vocabulary has no piece for the whole character, so it is spelled out in smaller pieces of its "
               "bytes; a piece that ends inside the character is shown as its bytes in ⟨ ⟩.")


# ---------------------------------------------------------------- Notice · Try · Ask (guide.show)
GUIDES: dict[str, tuple[str, str, str]] = {  # keyed by the view's own heading or tab label
    "tokens": (
        "The model never sees letters: it reads ids, each standing for a piece of text, often a word with its "
        "leading space.",
        "Type the same word with and without a capital, and with and without a leading space.",
        "Why might a model be bad at counting the letters in a word?"),
    "scripts": (
        "The same sentence is counted in tokens for each script and compared with English's; a character the "
        "vocabulary has no piece for is spelled out in byte pieces, so one character can span several tokens "
        "(🐈: a 2-byte piece, then two 1-byte pieces).",
        "Compare the tokens English and Tamil need for the same sentence, then their tokens per character: why do "
        "the two comparisons differ?",
        "Who pays more for the same message when a service charges per token?"),
    "vocabs": (
        "The loaded model's row is read from its tokenizer now; the other rows are published sizes, with where "
        "each is published.",
        "Find the loaded model among the published ones, then type a sentence in another script above and count "
        "its tokens again.",
        "A bigger vocabulary makes texts shorter in tokens but widens the last matrix product of every step. "
        "What else grows with it?"),
}
