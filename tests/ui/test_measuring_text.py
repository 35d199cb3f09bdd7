"""What the app says about measurements, from their numbers."""
from autoreg_ui import measuring_text as text


def test_the_line_says_who_runs_and_how_many_wait():
    assert text.queued("batching curve", 12.4, 0) == (
        "Another measurement is running on this server (batching curve, started 12 s ago); yours is queued "
        "and starts as soon as it ends. The model is shared by everyone on this server.")
    assert "queued behind 2 others and starts" in text.queued("x", None, 2)
    assert "queued behind 1 other and starts" in text.queued("x", None, 1)


def test_endings_and_a_busy_machine():
    assert text.budget_ran_out(150) == "The 150 s time budget ran out before the end: only part was measured."
    assert text.busy_machine(9.5, 2).startswith("The machine was busy during this measurement (load average 9.5 on 2")
    assert text.failed(ZeroDivisionError("division by zero")) == ("The measurement failed: ZeroDivisionError: "
                                                                  "division by zero")
    assert text.waited_too_long(300, "race").startswith("Waited 300 s for the measurement in progress (race)")
