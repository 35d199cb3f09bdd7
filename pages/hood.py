"""Under the hood: the training loss, positions (rotary embeddings and the cache), nondeterminism and batching."""
from autoreg_ui.lessons.hood import page

page.render()
