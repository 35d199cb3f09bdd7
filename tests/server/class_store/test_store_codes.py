"""Class codes and nicknames as the store keeps them."""
from autoreg_server.class_store.codes import (
    ALPHABET,
    CODE_LENGTH,
    NICKNAME_MAX,
    clean_nickname,
    new_code,
    normal_code,
    replica_tag,
)
from autoreg_server.settings import Settings


def test_the_alphabet_has_no_look_alikes():
    assert not set(ALPHABET) & set("01OIL") and len(set(ALPHABET)) == len(ALPHABET)


def test_a_new_code_is_short_from_the_alphabet_and_starts_with_the_tag():
    codes = {new_code() for _ in range(50)}
    assert len(codes) == 50 and all(len(c) == CODE_LENGTH and set(c) <= set(ALPHABET) for c in codes)
    tagged = new_code("K")
    assert tagged.startswith("K") and len(tagged) == CODE_LENGTH


def tag(value: str) -> str:
    return Settings.from_environ({"AUTOREG_REPLICA_TAG": value}).replica_tag


def test_the_replica_tag_is_one_character_of_the_alphabet_or_none(monkeypatch):
    assert replica_tag() == ""
    assert tag(" b ") == "B"
    assert tag("xyz") == "X"
    assert tag("0") == "" and tag("I") == ""
    monkeypatch.setenv("AUTOREG_REPLICA_TAG", "k")
    assert replica_tag() == "K"


def test_a_typed_code_is_normalised():
    assert normal_code(" ab-c d2 ") == "ABCD2"
    assert normal_code(None) == "" and normal_code("x" * 40) == "X" * 16


def test_a_nickname_is_printable_collapsed_and_bounded():
    assert clean_nickname("  Ann\n\tthe   great ") == "Ann the great"
    assert clean_nickname("A\x00n\x1bn") == "Ann"
    assert len(clean_nickname("y" * 100)) == NICKNAME_MAX and clean_nickname(None) == ""
