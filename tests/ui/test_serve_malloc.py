"""The server gives freed memory back (``serve.tame_malloc``): few malloc arenas, and a periodic ``malloc_trim``."""
import ctypes
import sys

import pytest

from autoreg_ui import serve


class FakeLibc:
    """Records the allocator calls the server makes."""

    def __init__(self):
        self.calls: list[tuple] = []

    def mallopt(self, param, value):
        self.calls.append(("mallopt", param, value))
        return 1

    def malloc_trim(self, pad):
        self.calls.append(("malloc_trim", pad))
        return 1


@pytest.fixture
def no_trimmer(monkeypatch):
    """A fresh trimmer slot, and no thread started for real (its start is recorded instead)."""
    started = []
    monkeypatch.setattr(serve, "_trimmer", [])
    monkeypatch.setattr(serve.threading.Thread, "start", lambda self: started.append(self))
    return started


def test_tame_malloc_caps_the_arenas_and_starts_one_trimmer(no_trimmer):
    libc = FakeLibc()
    assert serve.tame_malloc(30.0, libc) is True
    assert libc.calls == [("mallopt", serve.M_ARENA_MAX, serve.ARENAS)]
    assert len(no_trimmer) == 1 and no_trimmer[0].daemon and no_trimmer[0].name == "malloc-trim"
    assert serve.tame_malloc(30.0, libc) is True  # a second call starts no second thread
    assert len(no_trimmer) == 1 and len(serve._trimmer) == 1


def test_zero_turns_it_off(no_trimmer):
    libc = FakeLibc()
    assert serve.tame_malloc(0, libc) is False
    assert libc.calls == [] and no_trimmer == []


def test_the_trimmer_trims_every_period(monkeypatch):
    libc, slept = FakeLibc(), []
    monkeypatch.setattr(serve.time, "sleep", slept.append)
    serve._trim_forever(libc, 12.5, rounds=3)
    assert slept == [12.5, 12.5, 12.5]
    assert libc.calls == [("malloc_trim", 0)] * 3


def test_the_period_comes_from_the_operators_settings(no_trimmer, monkeypatch):
    monkeypatch.setenv("AUTOREG_MALLOC_TRIM_S", "7")
    serve.tame_malloc(libc=FakeLibc())
    assert no_trimmer[0]._args[1] == 7.0


def test_zero_in_the_settings_turns_it_off(no_trimmer, monkeypatch):
    monkeypatch.setenv("AUTOREG_MALLOC_TRIM_S", "0")
    libc = FakeLibc()
    assert serve.tame_malloc(libc=libc) is False and libc.calls == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's allocator")
def test_glibc_is_found_and_trims_for_real(no_trimmer):
    try:
        ctypes.CDLL("libc.so.6").malloc_trim  # noqa: B018
    except (OSError, AttributeError):
        pytest.skip("not glibc")
    assert serve.tame_malloc(30.0) is True
    assert no_trimmer[0]._args[0].malloc_trim(0) in (0, 1)  # the real call: 1 if memory was released
