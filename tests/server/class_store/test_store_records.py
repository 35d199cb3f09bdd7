"""The store's errors and rows: every refusal is a ClassError (the page shows its message), a rate limit says
how long to wait, and rows are frozen values."""
import dataclasses

import pytest

from autoreg_server.class_store.records import (
    ClassError,
    ClassInfo,
    Draw,
    Guess,
    NotTeacher,
    Question,
    RateLimited,
    Round,
    Student,
)


def test_every_refusal_is_a_class_error_with_its_message():
    assert issubclass(NotTeacher, ClassError) and issubclass(RateLimited, ClassError)
    assert issubclass(ClassError, ValueError)
    limited = RateLimited("Too many guesses; wait 12 s.", 12.0)
    assert str(limited) == "Too many guesses; wait 12 s." and limited.retry_after_s == 12.0


@pytest.mark.parametrize("row", [
    ClassInfo("ABC234", 1.0, 2.0, None, 0, False, False, None, 0, None),
    Student("s", "Ann", "following", "", 1.0, False),
    Guess("s", "Paris", 7, 1, 0.5, 1, 90.0),
    Question(1, 3, 1.0, None, {}),
    Round(1, 3, 4, {"temperature": 1.0}, (1, 2), 1.0),
    Draw("s", (5, 6), 11),
])
def test_rows_are_frozen(row):
    field = dataclasses.fields(row)[0].name
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(row, field, None)
    assert row == dataclasses.replace(row)  # compared by value
