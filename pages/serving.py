"""How servers go fast: batching, continuous batching, speculative decoding and precision, measured live."""
from autoreg_ui.lessons.serving import page

page.render()
