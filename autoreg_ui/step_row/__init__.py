"""The step row's presses counted in the browser, so quick presses are all applied (``presses``)."""
