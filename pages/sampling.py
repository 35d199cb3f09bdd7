"""Sampling lab: what temperature, top-k, top-p, min-p and beam search do to one set of logits."""
from autoreg_ui.lessons.sampling import page

page.render()
