"""What the tokens page says: the text as the model reads it, and how other scripts tokenize."""
from __future__ import annotations

TITLE = "Tokens: the text as the model reads it"
INTRO = ("The model never sees letters. A tokenizer cuts the text into pieces from a fixed vocabulary and "
         "hands the model their ids. This model's tokenizer works on **bytes** (byte-level BPE): common "
         "words are one token, rare words several, and any character can be spelled out from its UTF-8 "
         "bytes, so nothing is ever unknown.")
BOX = "Text to tokenize"
TABLE_NOTE = ("**piece** is the vocabulary entry itself (this tokenizer writes a leading space as Ġ and a "
              "newline as Ċ); **bytes** are what it stands for; **text** is the characters it completes. A "
              "token that ends in the middle of a character shows its bytes in ⟨ ⟩ instead of a broken '�': "
              "the next token completes the character.")
SCRIPTS_TITLE = "Other scripts cost more tokens"
SCRIPTS_INTRO = ("The same short sentence in several scripts, tokenized live. A vocabulary learned mostly from "
                 "English text has few pieces for other scripts, so they take more tokens per character: "
                 "more decode steps, more KV cache and more cost for the same meaning.")
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


def count_sentence(tokens: int, characters: int, utf8_bytes: int) -> str:
    """One line under the table, from the counts."""
    per = tokens / characters if characters else 0.0
    return (f"{tokens} tokens for {characters} characters ({utf8_bytes} UTF-8 bytes): "
            f"{per:.2f} tokens per character.")


def scripts_sentence(rows) -> str:
    """Which sample costs most and least per character (``rows``: ``tokens.ScriptCount``)."""
    ranked = sorted(rows, key=lambda r: r.tokens_per_character)
    low, high = ranked[0], ranked[-1]
    return (f"Here **{high.name}** takes {high.tokens_per_character:.2f} tokens per character and "
            f"**{low.name}** {low.tokens_per_character:.2f}: "
            f"{high.tokens_per_character / max(low.tokens_per_character, 1e-9):.1f}× as many for each character.")


def token_rows(views) -> list[dict]:
    """One row per token for the table (``views``: ``tokens.TokenView``)."""
    return [{"position": i, "id": v.id, "piece": v.piece, "bytes": v.data.hex(" "),
             "text": v.label, "splits a character": v.partial} for i, v in enumerate(views)]


def script_rows(rows) -> list[dict]:
    """The scripts table."""
    return [{"script": r.name, "text": r.text, "characters": r.characters, "UTF-8 bytes": r.utf8_bytes,
             "tokens": r.tokens, "tokens per character": round(r.tokens_per_character, 2),
             "tokens shown as bytes": r.partial_tokens} for r in rows]


# ---------------------------------------------------------------- vocabulary sizes, with sources
VOCABS_TITLE = "How big are vocabularies?"
VOCABS_INTRO = ("Every logit vector has one entry per vocabulary token, so the vocabulary size is also the width of "
                "the last matrix product of every step. This model's row is read from its tokenizer now; the "
                "others are the published sizes.")
# (model, vocabulary size, where the number is published)
PUBLISHED_VOCABS = (
    ("GPT-2 (2019)", 50_257, "Radford et al. 2019, and the released tokenizer"),
    ("Llama 2 (2023)", 32_000, "Touvron et al. 2023, Llama 2 paper"),
    ("Llama 3 (2024)", 128_256, "Meta, Llama 3 model card and tokenizer config"),
    ("GPT-4o (2024)", 200_000, "OpenAI tiktoken, o200k_base encoding: 200,000 merged pieces, plus a few special tokens"),
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
                 "down to single bytes.")
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
        "The same sentence is counted in tokens per character for each script; a character the vocabulary has "
        "no piece for is spelled out in single bytes.",
        "Compare tokens per character for English and Tamil.",
        "Who pays more for the same message when a service charges per token?"),
    "vocabs": (
        "The loaded model's row is read from its tokenizer now; the other rows are published sizes, with where "
        "each is published.",
        "Find the loaded model among the published ones, then type a sentence in another script above and count "
        "its tokens again.",
        "A bigger vocabulary makes texts shorter in tokens but widens the last matrix product of every step. "
        "What else grows with it?"),
}
