"""Step through generation: one decode step per click, with everything the step decided."""
from autoreg_ui.lessons.step import page

page.render()
