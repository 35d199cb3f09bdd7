"""Naive vs KV cache: the quadratic-vs-linear argument, counted from the model's shape and measured live."""
from autoreg_ui.lessons.cost import page

page.render()
