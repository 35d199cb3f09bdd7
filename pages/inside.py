"""Inside generation: training vs generation, the logit lens, prefill vs decode in seconds, a full cache."""
from autoreg_ui.lessons.inside import page

page.render()
