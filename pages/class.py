"""Class: the teacher leads, the students follow and guess the next token (class_mode.py)."""
from autoreg_ui.classroom import mode as class_mode

class_mode.render()
