"""Tokens: the prompt as the model reads it (ids, pieces, bytes), and how other scripts tokenize."""
from autoreg_ui.lessons.tokens import page

page.render()
