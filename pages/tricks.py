"""More serving tricks: speculation's arithmetic, prefix caching, constrained decoding — each measured live."""
from autoreg_ui.lessons.tricks import page

page.render()
