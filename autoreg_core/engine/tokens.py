"""Showing tokens honestly: the raw vocabulary piece, its bytes, and the text it completes.

Byte-level BPE tokens are bytes, not characters: an emoji can be split over several tokens, and
the first of them on its own is half a UTF-8 character. Decoding each token alone would print
'�'. Instead we feed the bytes of the sequence through an incremental UTF-8 decoder, so every
token shows the characters it completes, and a token that only starts a character says so.
"""
from __future__ import annotations

import codecs
import json
import re
from dataclasses import dataclass
from functools import lru_cache

from transformers.convert_slow_tokenizer import bytes_to_unicode

_BYTE_FALLBACK = re.compile(r"^<0x([0-9A-Fa-f]{2})>$")


@lru_cache(maxsize=1)
def _byte_decoder() -> dict[str, int]:
    """The GPT-2 byte↔unicode table (transformers' own), inverted: printable stand-in character → byte value."""
    return {char: byte for byte, char in bytes_to_unicode().items()}


@dataclass(frozen=True)
class TokenView:
    """One token as the app shows it."""

    id: int
    piece: str  # the raw vocabulary entry, e.g. 'Ġthe'
    data: bytes  # the bytes it stands for
    text: str  # the characters this token completes in context ('' if it only starts one)
    special: bool = False

    @property
    def partial(self) -> bool:
        """True when the token's bytes end in the middle of a UTF-8 character."""
        return bool(self.data) and self.text == ""

    @property
    def label(self) -> str:
        """Text for a token chip: whitespace made visible, partial bytes as hex."""
        if self.special:
            return self.piece
        if self.partial:
            return "⟨" + " ".join(f"{b:02x}" for b in self.data) + "⟩"
        return visible_whitespace(self.text)


def visible_whitespace(text: str) -> str:
    """Spaces as '·', newlines as '↵', tabs as '→', so a token made of whitespace is not blank."""
    return text.replace(" ", "·").replace("\n", "↵").replace("\t", "→").replace("\r", "␍") or "∅"


def _decoder_types(spec: dict) -> set[str]:
    """Every decoder type named in a serialised tokenizers decoder (Sequence included)."""
    types = {spec.get("type", "")}
    for child in spec.get("decoders", []) or []:
        types |= _decoder_types(child)
    return types


@lru_cache(maxsize=16)
def is_byte_level(tokenizer) -> bool:
    """True when the tokenizer's own decoder is byte-level BPE (GPT-2 style pieces such as 'Ġthe').

    Decided by the tokenizer, not by the characters of a piece: a SentencePiece vocabulary also has
    pieces like 'é' that happen to lie in the GPT-2 byte table, and reading those as bytes would
    show '�'.
    """
    decoder = getattr(getattr(tokenizer, "backend_tokenizer", None), "decoder", None)
    if decoder is None:
        return False
    return "ByteLevel" in _decoder_types(json.loads(decoder.__getstate__()))


def token_bytes(tokenizer, token_id: int) -> bytes:
    """The bytes one token id stands for, for byte-level BPE, byte-fallback and plain vocabularies."""
    piece = tokenizer.convert_ids_to_tokens(int(token_id))
    if piece is None:
        return b""
    table = _byte_decoder()
    if is_byte_level(tokenizer):
        return bytes(table[ch] for ch in piece if ch in table)
    m = _BYTE_FALLBACK.match(piece)
    if m:
        return bytes([int(m.group(1), 16)])
    if piece.startswith("▁"):
        piece = " " + piece[1:]
    return piece.replace("▁", " ").encode("utf-8")


def _special_ids(tokenizer) -> frozenset[int]:
    return frozenset(int(i) for i in getattr(tokenizer, "all_special_ids", []) or [])


def token_views(tokenizer, ids: list[int]) -> list[TokenView]:
    """Views for a whole sequence, decoding UTF-8 incrementally across token boundaries."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    specials = _special_ids(tokenizer)
    views = []
    for tid in ids:
        tid = int(tid)
        piece = tokenizer.convert_ids_to_tokens(tid) or ""
        if tid in specials:
            data = piece.encode("utf-8")
            views.append(TokenView(tid, piece, data, piece, special=True))
            continue
        data = token_bytes(tokenizer, tid)
        text = decoder.decode(data)
        views.append(TokenView(tid, piece, data, text))
    return views


def single_token_view(tokenizer, token_id: int) -> TokenView:
    """A token out of context (chart labels): partial characters show as hex bytes."""
    return token_views(tokenizer, [token_id])[0]


def sequence_text(tokenizer, ids: list[int]) -> str:
    """The decoded text of a sequence (special tokens kept, so chat markers stay visible)."""
    return tokenizer.decode([int(i) for i in ids], skip_special_tokens=False)


@dataclass(frozen=True)
class ScriptCount:
    """How one text tokenizes: characters, UTF-8 bytes, tokens, and tokens that split a character."""
    name: str
    text: str
    characters: int
    utf8_bytes: int
    tokens: int
    partial_tokens: int  # tokens whose bytes end inside a character (shown as bytes, never as '�')

    @property
    def tokens_per_character(self) -> float:
        return self.tokens / self.characters if self.characters else 0.0


def script_count(tokenizer, name: str, text: str) -> ScriptCount:
    """Tokenize ``text`` without special tokens and count what a learner compares across scripts."""
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    views = token_views(tokenizer, ids)
    return ScriptCount(name, text, len(text), len(text.encode("utf-8")), len(ids), sum(v.partial for v in views))
