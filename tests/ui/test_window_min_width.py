"""A page asking for more width than the window has never widens the window (main_window.TABS_MIN_WIDTH)."""

from PySide6.QtWidgets import QLabel


def test_a_page_asking_for_1400_px_does_not_widen_a_1024_px_window(qtbot, window):
    from app.ui.main_window import TABS_MIN_WIDTH

    every = [window.tabs.widget(i).minimumSizeHint().width() for i in range(window.tabs.count())]
    assert max(every) <= TABS_MIN_WIDTH        # the usual pages fit the fixed minimum: none is narrowed below its own
    wide = QLabel("W" * 200)                   # one line that does not wrap: its minimum is its whole width
    assert wide.minimumSizeHint().width() > 1400
    window.tabs.addTab(wide, "wide")
    for w, h in ((1440, 900), (1024, 700)):
        window.resize(w, h)
        qtbot.waitUntil(lambda w=w: window.width() == w, timeout=5_000)
        assert window.minimumSizeHint().width() < w
        assert window.tree.dock.width() >= 240     # the tree keeps its share
