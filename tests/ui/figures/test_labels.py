"""Chart labels: cut short with an ellipsis and HTML-escaped (plotly reads them as HTML)."""
from autoreg_ui.labels import escaped, short_label


def test_short_labels_are_cut_and_escaped():
    assert short_label("<b>bold</b>", 20) == "&lt;b&gt;bold&lt;/b&gt;"
    assert short_label("abcdefghijklmnop", 5) == "abcd…"
    assert short_label("·the", 12) == "·the"
    assert escaped(["a&b", "<i>"]) == ["a&amp;b", "&lt;i&gt;"]
