"""Start here: what the app teaches and two lesson paths, each stop a link that opens a ready page."""
from autoreg_ui.lessons.start import page

page.render()
