"""One AppTest click, written once for the page tests: press the button, run the script, and fail on any
exception the page raised."""


def click(at, key: str) -> None:
    at.button(key=key).click()
    at.run()
    assert not at.exception, at.exception
