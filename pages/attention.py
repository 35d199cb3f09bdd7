"""Attention and the KV cache: where the new token looked, the growing causal triangle, the cache."""
from autoreg_ui.lessons.attention import page

page.render()
