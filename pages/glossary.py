"""Glossary: every term the app uses, where to see it, and the units, in one place; a box finds a term."""
from autoreg_ui.lessons.glossary import page

page.render()
